"""Parameters: the ``.param`` table, name lookup and value words -> sympy.

Parameter names are case-insensitive (``Rs`` and ``RS`` are the same name,
and defining both is an error); the spelling of the definition is kept.
"""
from __future__ import annotations

import cmath
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

import sympy as sp

from ..errors import Location, NetlistError
from .expressions import parse_expression_at
from .numbers import looks_numeric, parse_number
from .source import Statement, Word
from .spec import Parameter

__all__ = ["Names", "ParamTable", "word_expr", "resolve_global_params", "finite_value"]


class Names(Mapping):
    """Case-insensitive name -> sympy object mapping (exact-case names win)."""

    def __init__(self, base: Optional["Names"] = None):
        self._exact: Dict[str, sp.Expr] = dict(base._exact) if base else {}
        self._lower: Dict[str, sp.Expr] = dict(base._lower) if base else {}

    def set(self, name: str, value: sp.Expr, exact_only: bool = False) -> None:
        self._exact[name] = value
        if not exact_only:
            self._lower[name.lower()] = value

    def __getitem__(self, name: str) -> sp.Expr:
        if name in self._exact:
            return self._exact[name]
        return self._lower[name.lower()]

    def __contains__(self, name) -> bool:  # type: ignore[override]
        return isinstance(name, str) and (name in self._exact or name.lower() in self._lower)

    def __iter__(self) -> Iterator[str]:
        return iter(self._exact)

    def __len__(self) -> int:
        return len(self._exact)


def finite_value(expr: sp.Expr, values: Mapping[sp.Symbol, float]) -> Optional[float]:
    """Evaluate ``expr`` with ``values``; None when not a finite real number.

    Parameters
    ----------
    expr : sympy.Expr
        Expression in parameter symbols.
    values : mapping of sympy.Symbol to float
        Values of those symbols.
    """
    try:
        num = complex(expr.xreplace({s: sp.Float(values[s]) for s in expr.free_symbols}).evalf())
    except (TypeError, ValueError, KeyError, ArithmeticError, RecursionError):
        return None
    if abs(num.imag) > 1e-12 * max(1.0, abs(num.real)) or not cmath.isfinite(num):
        return None
    return num.real


class ParamTable:
    """All parameters of a netlist, in definition order."""

    def __init__(self) -> None:
        self.params: Dict[str, Parameter] = {}
        self.defaults: Dict[sp.Symbol, float] = {}

    def add(self, name: str, default: float, location: Optional[Location],
            expression: Optional[sp.Expr] = None) -> sp.Symbol:
        key = name.lower()
        if key in self.params:
            first = self.params[key]
            where = f" (first defined at {first.location.describe()})" if first.location else ""
            raise NetlistError(f"parameter name '{name}' is already used by '{first.name}'{where}",
                               location, hint="parameter and element names are case-insensitive; "
                                              "rename one of them")
        symbol = sp.Symbol(name, real=True)
        self.params[key] = Parameter(name, symbol, float(default), expression, location)
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


def word_expr(word: Word, stmt: Statement, names: Mapping[str, sp.Expr]) -> sp.Expr:
    """A value word as a sympy expression: number, parameter name or ``{expression}``."""
    if word.kind == "braced":
        base = word.start + 1
        return parse_expression_at(word.inner, names,
                                   lambda off, n: stmt.line.locate(base + off, n))
    loc = stmt.loc(word)
    if looks_numeric(word.text):
        return sp.Float(parse_number(word.text, loc))
    try:
        return names[word.text]
    except KeyError:
        raise NetlistError(f"undefined parameter '{word.text}'", loc,
                           hint=f"define it with .param {word.text}=VALUE, or write a number "
                                "or a {expression}") from None


def resolve_global_params(defs: List[Tuple[Word, Word, Statement]], table: ParamTable,
                          names: Names) -> None:
    """Define all ``.param`` parameters (any order; detects cycles).

    ``defs`` holds (name word, value word, statement) triples.  On return the
    parameters are in ``table`` and their symbols in ``names``.
    """
    seen: Dict[str, Tuple[Word, Statement]] = {}
    symbols: Dict[str, sp.Symbol] = {}
    for name, _value, stmt in defs:
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
    for name, value, stmt in defs:
        exprs[name.text.lower()] = word_expr(value, stmt, names)
    by_symbol = {s: k for k, s in symbols.items()}
    deps = {k: [by_symbol[s] for s in sorted(e.free_symbols, key=str) if s in by_symbol]
            for k, e in exprs.items()}
    order: List[str] = []
    state: Dict[str, int] = {}  # 1 visiting, 2 done

    def visit(key: str, path: List[str]) -> None:
        # iterative-safe enough: depth bounded by the number of parameters
        if state.get(key) == 2:
            return
        if state.get(key) == 1:
            cycle = path[path.index(key):] + [key]
            name, stmt = seen[cycle[0]]
            raise NetlistError("cyclic parameter definitions: "
                               + " -> ".join(seen[c][0].text for c in cycle), stmt.loc(name),
                               hint="a parameter cannot depend on itself, directly or indirectly")
        state[key] = 1
        for dep in deps[key]:
            visit(dep, path + [key])
        state[key] = 2
        order.append(key)

    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3 * len(defs) + 200))
    try:
        for key in exprs:
            visit(key, [])
    finally:
        sys.setrecursionlimit(limit)
    for key in order:
        name, stmt = seen[key]
        value_word = next(v for n, v, s in defs if n is name)
        loc = stmt.loc(value_word)
        expr = exprs[key]
        val = table.evaluate(expr, loc, name.text)
        table.add(name.text, val, stmt.loc(name), expr if expr.free_symbols else None)
