"""Law forms: a law with its parameters taken out.

Two diodes of one ``.model``, a thousand capacitors ``H={q^4/4}`` or the
base-emitter ports of every transistor of a gate chain have laws that differ
only in the numbers and parameter symbols they hold.  :func:`canonical`
writes such a law as a *form* in positional variables ``_v0, _v1, ...`` and
placeholders ``_p0, _p1, ...`` and returns, apart, what each placeholder
stands for in this instance (an expression of parameter symbols, or a
number).  Laws with the same form share one compiled kernel
(:mod:`phsym.codegen.laws`); the placeholders become a row of numbers per
instance (:func:`placeholder_values`).

What becomes a placeholder: every maximal part of the law that reads no
variable and holds a float or a parameter symbol (``IS``, ``1/(N*VT)``,
``2*C``); the parameter-free parts of an ``Add`` or ``Mul`` are taken out
together.  Integers and rationals stay in the form: exponents, the order
of a derivative, the key of a learned law are structure, not values.

Examples
--------
>>> import sympy as sp
>>> v, IS, N = sp.symbols("v IS N", real=True)
>>> form, ph = canonical([IS * (sp.exp(v / (N * 0.02585)) - 1)], [v])
>>> form.exprs
(_p1*(exp(_p0*_v0) - 1),)
>>> ph
(38.6847195357834/N, IS)
>>> a = canonical([1e-14 * (sp.exp(v / 0.0517) - 1)], [v])
>>> b = canonical([2e-15 * (sp.exp(v / 0.03) - 1)], [v])
>>> a[0].key == b[0].key, b[1]
(True, (2.00000000000000e-15, 33.3333333333333, -2.00000000000000e-15))
"""
from __future__ import annotations

import hashlib
from typing import Dict, List, Sequence, Tuple

import sympy as sp

from ...version import __version__
from .form import PAR, VAR, Form, placeholder, variable
from .values import linear_hessians, placeholder_values

__all__ = ["Form", "canonical", "placeholder_values", "linear_hessians", "VAR", "PAR"]


def _valued(e: sp.Basic) -> bool:
    """Whether a variable-free part holds a value to take out (a float or a parameter symbol)."""
    logic = (sp.logic.boolalg.BooleanAtom, sp.logic.boolalg.BooleanFunction, sp.core.relational.Relational)
    return isinstance(e, sp.Expr) and not isinstance(e, logic) and (bool(e.free_symbols) or e.has(sp.Float))


class _Walker:
    """One pass of :func:`canonical` over a set of expressions (shared placeholders)."""

    def __init__(self, variables: Sequence[sp.Symbol]):
        self.varmap = {s: variable(i) for i, s in enumerate(variables)}
        self.varset = frozenset(variables)
        self.found: Dict[sp.Basic, sp.Symbol] = {}
        self.temps: List[sp.Symbol] = []
        self.order: List[sp.Basic] = []
        self._has: Dict[sp.Basic, bool] = {}

    def has_var(self, e: sp.Basic) -> bool:
        got = self._has.get(e)
        if got is None:
            got = e in self.varset if e.is_Symbol else any(self.has_var(a) for a in e.args)
            self._has[e] = got
        return got

    def placeholder(self, e: sp.Basic) -> sp.Symbol:
        # equal parameter symbols are one value wherever they occur; equal floats are a coincidence
        # of this instance (CJO = GMIN = 1p): sharing them would split the form by value
        s = None if e.has(sp.Float) else self.found.get(e)
        if s is None:
            s = sp.Symbol(f"_t{len(self.order)}", real=True)
            if not e.has(sp.Float):
                self.found[e] = s
            self.temps.append(s)
            self.order.append(e)
        return s

    def walk(self, e: sp.Basic) -> sp.Basic:
        if e in self.varmap:
            return self.varmap[e]
        if not self.has_var(e):
            if _valued(e):
                return self.placeholder(e)
            if e.args and not isinstance(e, sp.Expr):      # a Piecewise's (1/ROFF, True): values inside
                return e.func(*[self.walk(a) for a in e.args])
            return e
        if e.is_Add or e.is_Mul:
            const = [a for a in e.args if not self.has_var(a)]
            vary = [self.walk(a) for a in e.args if self.has_var(a)]
            if any(_valued(a) for a in const):
                return e.func(*vary, self.placeholder(e.func(*const)))
            return e.func(*vary, *const)
        if not e.args:
            return e
        return e.func(*[self.walk(a) for a in e.args])


_GENERIC = sp.Symbol("_P", real=True)


def _order(exprs: Sequence[sp.Basic], temps: Sequence[sp.Symbol]) -> List[sp.Symbol]:
    """The placeholders in a canonical order: a preorder walk in which the terms of a sum and the
    factors of a product are visited by their shape with every placeholder the same symbol (sympy
    orders them by name, which would make the numbering depend on the values or symbols they stood
    for)."""
    wanted = set(temps)
    generic = {t: _GENERIC for t in temps}
    shapes: Dict[sp.Basic, str] = {}

    def shape(e):
        got = shapes.get(e)
        if got is None:
            got = shapes[e] = sp.srepr(e.xreplace(generic))
        return got
    out: List[sp.Symbol] = []
    seen = set()

    def visit(e):
        if e in wanted:
            if e not in seen:
                seen.add(e)
                out.append(e)
            return
        args = e.args
        if e.is_Add or e.is_Mul:
            args = sorted(args, key=shape)
        for a in args:
            visit(a)
    for e in exprs:
        visit(e)
    return out


_MEMO: Dict[tuple, Tuple[Form, Tuple[sp.Expr, ...]]] = {}
_MEMO_LIMIT = 20000


def canonical(exprs: Sequence[sp.Expr], variables: Sequence[sp.Symbol],
              tag: str = "") -> Tuple[Form, Tuple[sp.Expr, ...]]:
    """The form of ``exprs`` in ``variables`` and what its placeholders stand for here.

    Parameters
    ----------
    exprs : sequence of sympy.Expr
        The laws of one element (they share placeholders).
    variables : sequence of sympy.Symbol
        The symbols that vary (port variables, states, efforts), in the
        order of the form's ``_v0, _v1, ...``.
    tag : str
        Extra text for the key (what the expressions mean to their user).

    Returns
    -------
    form : Form
    placeholders : tuple of sympy.Expr
        The expression of each placeholder (parameter symbols and numbers).
    """
    mkey = (tuple(exprs), tuple(variables), tag)
    hit = _MEMO.get(mkey)
    if hit is not None:
        return hit
    w = _Walker(variables)
    out = [w.walk(sp.sympify(e)) for e in exprs]
    temps = list(w.temps)
    values = dict(zip(temps, w.order))
    ordered = _order(out, temps)      # a placeholder sympy folded away (0*p) is simply gone
    new = [placeholder(i) for i in range(len(ordered))]
    out = [o.xreplace(dict(zip(ordered, new))) for o in out]
    values = [values[t] for t in ordered]
    temps = new
    text = sp.srepr(tuple(out)) + "|" + tag + "|" + str(len(variables))
    key = hashlib.sha256((__version__ + "|" + text).encode()).hexdigest()[:20]
    form = Form(tuple(out), len(variables), len(temps), key)
    result = (form, tuple(values))
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[mkey] = result
    return result
