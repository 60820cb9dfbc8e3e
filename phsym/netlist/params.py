"""Parameters: the ``.param`` table, name lookup and value words -> sympy.

Parameter names are case-insensitive (``Rs`` and ``RS`` are the same name,
and defining both is an error); the spelling of the definition is kept.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import sympy as sp

from ..common.bounded import NotReal, real_value
from ..common.names import NameTable
from ..errors import Location, NetlistError
from .expressions import parse_expression_at
from .numbers import looks_numeric, parse_number
from .source import Statement, Word
from .spec import Parameter

__all__ = ["ParamTable", "word_expr", "resolve_global_params", "finite_value", "evaluate_parameters",
           "prepare_parameters", "expand_derived", "dependency_order"]


def finite_value(expr: sp.Expr, values: Mapping[sp.Symbol, float]) -> Optional[float]:
    """Evaluate ``expr`` with ``values``; None when not a finite real number.

    Parameters
    ----------
    expr : sympy.Expr
        Expression in parameter symbols.
    values : mapping of sympy.Symbol to float
        Values of those symbols.
    """
    try:        # in floats: evalf may need unbounded precision (sin(exp(exp(100))))
        return real_value(expr, values)
    except NotReal:
        return None


class ParamTable:
    """All parameters of a netlist, in definition order."""

    def __init__(self) -> None:
        self.params: Dict[str, Parameter] = {}
        self.defaults: Dict[sp.Symbol, float] = {}

    def add(self, name: str, default: float, location: Optional[Location],
            expression: Optional[sp.Expr] = None, control: bool = False) -> sp.Symbol:
        key = name.lower()
        if key in self.params:
            first = self.params[key]
            where = f" (first defined at {first.location.describe()})" if first.location else ""
            raise NetlistError(f"parameter name '{name}' is already used by '{first.name}'{where}",
                               location, hint="parameter and element names are case-insensitive; "
                                              "rename one of them")
        symbol = sp.Symbol(name, real=True)
        self.params[key] = Parameter(name, symbol, float(default), expression, location, control)
        self.defaults[symbol] = float(default)
        return symbol

    def add_value(self, name: str, expr: sp.Expr, location: Optional[Location]) -> sp.Symbol:
        """Add a parameter defined by ``expr`` (derived when it references parameters)."""
        value = self.evaluate(expr, location, name)
        derived = expr if expr.free_symbols else None
        return self.add(name, value, location, derived)

    def evaluate(self, expr: sp.Expr, location: Optional[Location], what: str) -> float:
        value = finite_value(expr, self.defaults)
        if value is None:
            raise NetlistError(f"value of '{what}' is not a finite real number ({expr})",
                               location, hint="check the expression and the parameter defaults")
        return value


def word_expr(word: Word, stmt: Statement, names: Mapping[str, sp.Expr], warn: bool = True) -> sp.Expr:
    """A value word as a sympy expression: number, parameter name or ``{expression}``
    (``warn``: about an upper-case ``M``, see :func:`~phsym.netlist.numbers.parse_number`)."""
    if word.kind == "braced":
        base = word.start + 1
        return parse_expression_at(word.inner, names,
                                   lambda off, n: stmt.line.locate(base + off, n))
    loc = stmt.loc(word)
    if looks_numeric(word.text):
        return sp.Float(parse_number(word.text, loc, warn))
    try:
        return names[word.text]
    except KeyError:
        raise NetlistError(f"undefined parameter '{word.text}'", loc,
                           hint=f"define it with .param {word.text}=VALUE, or write a number "
                                "or a {expression}") from None


class _Cycle(Exception):
    """A dependency cycle (internal; callers turn it into their own error)."""

    def __init__(self, keys: List[str]):
        super().__init__(" -> ".join(keys))
        self.keys = keys


def dependency_order(deps: Mapping[str, Sequence[str]]) -> List[str]:
    """Keys ordered so that each follows its dependencies (iterative depth-first search).

    Parameters
    ----------
    deps : mapping of str to sequence of str
        Key -> the keys it depends on (unknown keys are ignored).

    Returns
    -------
    list of str

    Raises
    ------
    _Cycle
        With the keys of a cycle, first key repeated at the end.
    """
    order: List[str] = []
    state: Dict[str, int] = {}          # 1: on the path, 2: done
    for root in deps:
        if state.get(root):
            continue
        path, stack = [root], [iter(deps[root])]
        state[root] = 1
        while stack:
            dep = next(stack[-1], None)
            if dep is None:
                done = path.pop()
                stack.pop()
                state[done] = 2
                order.append(done)
            elif dep in deps and state.get(dep) == 1:
                raise _Cycle(path[path.index(dep):] + [dep])
            elif dep in deps and not state.get(dep):
                state[dep] = 1
                path.append(dep)
                stack.append(iter(deps[dep]))
    return order


def _parameter_deps(parameters: Mapping[str, Parameter]) -> Dict[str, List[str]]:
    if not any(p.expression is not None for p in parameters.values()):
        return dict.fromkeys(parameters, ())        # a large deck's element values: no symbol table
    by_symbol = {p.symbol: name for name, p in parameters.items()}
    return {name: ([by_symbol[s] for s in sorted(p.expression.free_symbols, key=str) if s in by_symbol]
                   if p.expression is not None else [])
            for name, p in parameters.items()}


def prepare_parameters(parameters: Mapping[str, Parameter], error: type = NetlistError) -> tuple:
    """What :func:`evaluate_parameters` needs of the definitions alone (the name table and
    the evaluation order), for callers that evaluate many parameter sets.

    Parameters
    ----------
    parameters : mapping of str to Parameter
        The netlist's parameters by name.
    error : type
        Exception class for cycles.
    """
    try:
        order = dependency_order(_parameter_deps(parameters))
    except _Cycle as cyc:
        raise error("cyclic parameter definitions: " + " -> ".join(cyc.keys)) from None
    return NameTable(parameters, what="parameter"), order


def evaluate_parameters(parameters: Mapping[str, Parameter],
                        overrides: Optional[Mapping[str, float]] = None,
                        error: type = NetlistError, prepared: Optional[tuple] = None) -> Dict[sp.Symbol, float]:
    """Numeric value of every parameter symbol.

    Overridden parameters take the given value; derived parameters
    (``.param b={2*a}``) follow their definition unless overridden
    themselves; the others keep their default.

    Parameters
    ----------
    parameters : mapping of str to Parameter
        The netlist's parameters by name.
    overrides : mapping of str to float, optional
        Values by parameter name (case-insensitive).
    error : type
        Exception class for unknown names, cycles and values outside the
        domain of a definition.
    prepared : tuple, optional
        :func:`prepare_parameters` of ``parameters`` (made here when not given).

    Returns
    -------
    dict of sympy.Symbol to float
    """
    table, order = prepare_parameters(parameters, error) if prepared is None else prepared
    over: Dict[str, float] = {}
    for key, val in (overrides or {}).items():
        name = table.spelling(str(key))
        if name is None:
            raise error(f"unknown parameter {key!r}; known parameters: {', '.join(sorted(parameters))}")
        try:
            over[name] = float(val)
        except (TypeError, ValueError):
            raise error(f"value of parameter {name} is not a number: {val!r}") from None
    values: Dict[sp.Symbol, float] = {}
    for name in order:
        p = parameters[name]
        if name in over:
            values[p.symbol] = over[name]
        elif p.expression is None:
            values[p.symbol] = float(p.default)
        else:
            val = finite_value(p.expression, values)
            if val is None:
                given = ", ".join(f"{k}={v:g}" for k, v in over.items())
                raise error(f"parameter {name} = {p.expression} is not a finite real number "
                            f"with {given or 'the defaults'}")
            values[p.symbol] = val
    return values


def expand_derived(parameters: Mapping[str, Parameter], keep: Sequence[str] = ()) -> Dict[sp.Symbol, sp.Expr]:
    """Derived parameters (except those in ``keep``) as expressions of the independent ones.

    Substituting them makes a derivative with respect to a base parameter
    follow the netlist's ``.param b={2*a}`` definitions (chain rule).

    Parameters
    ----------
    parameters : mapping of str to Parameter
        The netlist's parameters by name.
    keep : sequence of str
        Names treated as independent even if derived (case-insensitive).

    Returns
    -------
    dict of sympy.Symbol to sympy.Expr
    """
    kept = {k.lower() for k in keep}
    out: Dict[sp.Symbol, sp.Expr] = {}
    for name in dependency_order(_parameter_deps(parameters)):
        p = parameters[name]
        if p.expression is not None and name.lower() not in kept:
            out[p.symbol] = sp.sympify(p.expression).xreplace(out)
    return out


def resolve_global_params(defs: List[Tuple[Word, Word, Statement, bool]], table: ParamTable,
                          names: NameTable) -> None:
    """Define all ``.param`` parameters (any order; detects cycles).

    ``defs`` holds (name word, value word, statement, control flag)
    tuples.  On return the parameters are in ``table`` and their symbols in
    ``names``.  A control must be a number: a run replaces it by a signal,
    which a definition in terms of other parameters could not follow.
    """
    seen: Dict[str, Tuple[Word, Statement]] = {}
    symbols: Dict[str, sp.Symbol] = {}
    for name, _value, stmt, _control in defs:
        key = name.text.lower()
        if key in seen:
            first_name, first_stmt = seen[key]
            first_loc = first_stmt.loc(first_name)
            what = ("differs only by case from" if first_name.text != name.text
                    else "is defined twice; first")
            raise NetlistError(f"parameter '{name.text}' {what} '{first_name.text}' "
                               f"at line {first_loc.line}", stmt.loc(name),
                               hint="parameter names are case-insensitive; use one definition")
        seen[key] = (name, stmt)
        symbols[key] = sp.Symbol(name.text, real=True)
        names.set(name.text, symbols[key])
    exprs: Dict[str, sp.Expr] = {}
    controls = set()
    for name, value, stmt, control in defs:
        exprs[name.text.lower()] = word_expr(value, stmt, names)
        if control:
            controls.add(name.text.lower())
            if exprs[name.text.lower()].free_symbols:
                raise NetlistError(f"control '{name.text}' is defined by other parameters", stmt.loc(value),
                                   hint="a control takes a number (its value when no signal drives it)")
    by_symbol = {s: k for k, s in symbols.items()}
    deps = {k: [by_symbol[s] for s in sorted(e.free_symbols, key=str) if s in by_symbol]
            for k, e in exprs.items()}
    try:
        order = dependency_order(deps)
    except _Cycle as cyc:
        name, stmt = seen[cyc.keys[0]]
        raise NetlistError("cyclic parameter definitions: " + " -> ".join(seen[c][0].text for c in cyc.keys),
                           stmt.loc(name),
                           hint="a parameter cannot depend on itself, directly or indirectly") from None
    for key in order:
        name, stmt = seen[key]
        value_word = next(d[1] for d in defs if d[0] is name)
        loc = stmt.loc(value_word)
        expr = exprs[key]
        val = table.evaluate(expr, loc, name.text)
        table.add(name.text, val, stmt.loc(name), expr if expr.free_symbols else None, control=key in controls)
