"""Bounded work on user expressions: sizes, a float evaluator and a deadline.

Netlist expressions reach sympy operations whose cost grows without bound
in the input (``(q+1)^(2^64)`` expands to more terms than any memory holds;
``sin(exp(exp(100)))`` needs a precision of 10^43 bits to evaluate).  phsym
bounds that cost in three ways:

* **sizes, before the work**: :func:`size_problem` measures an expression
  (tree nodes, integer exponents of symbolic powers, the number of terms a
  full expansion would have and its degree, counted without expanding)
  against :data:`MAX_NODES`, :data:`MAX_EXPONENT`, :data:`MAX_TERMS` and
  :data:`MAX_GRADIENT`; callers
  refuse an expression over a limit with their own error, naming the
  element and the expression;
* **floats, not arbitrary precision**: :func:`real_value` evaluates an
  expression in double precision with :mod:`math` (a few microseconds a
  node, overflow and domain errors reported as such), where sympy's
  ``evalf`` may need unbounded precision;
* **a deadline, where no size bound predicts the cost**: :func:`deadline`
  (:mod:`phsym.common.deadline`, re-exported here) interrupts a symbolic
  operation after ``PHSYM_SYMBOLIC_TIMEOUT`` seconds, in any thread.

Examples
--------
>>> import sympy as sp
>>> q = sp.Symbol("q")
>>> size_problem((q + 1) ** 2 ** 64) is not None
True
>>> real_value(sp.sqrt(2) * q, {q: 2.0})
2.8284271247461903
"""
from __future__ import annotations

import math
from typing import Mapping, Optional

import sympy as sp

from .deadline import CODEGEN_TIMES, DEFAULT_TIMEOUT, TIMEOUT_ENV, deadline, timeout  # noqa: F401 (one import for callers)

__all__ = ["MAX_NODES", "MAX_EXPONENT", "MAX_TERMS", "MAX_GRADIENT", "TIMEOUT_ENV", "DEFAULT_TIMEOUT", "CODEGEN_TIMES", "NotReal",
           "GRID", "nonreal_points", "size_problem", "expansion_terms", "polynomial_degree", "node_count", "real_value", "constant_problem",
           "timeout", "deadline"]

#: Tree nodes of one expression (a ``Piecewise`` table counts one node a piece).
MAX_NODES = 20_000
#: Largest integer exponent of a symbolic power: laws are expanded (discrete
#: gradients), and binomial coefficients beyond this leave 64-bit integers.
MAX_EXPONENT = 64
#: Terms a full expansion of an expression may have.
MAX_TERMS = 10_000
#: Terms of an expanded polynomial times half its degree: about the size of its discrete gradient,
#: which the simulators compile ((q+1)^30 is 465; (q+1)^40, 820, took 100 s to simulate, (q+1)^64 minutes).
MAX_GRADIENT = 500


class NotReal(ValueError):
    """An expression has no finite real value (the message says why).

    Attributes
    ----------
    domain : bool
        True when a step leaves the real numbers (``sqrt(-1)``, ``log(-2)``,
        a division by zero), False when it overflows.
    """

    def __init__(self, message: str, domain: bool = True):
        super().__init__(message)
        self.domain = domain


def node_count(expr: sp.Basic, cap: int = MAX_NODES + 1) -> int:
    """Nodes of ``expr``'s tree, counting stops past ``cap`` (a long table counts a node a piece)."""
    n, stack = 0, [expr]
    while stack and n <= cap:
        e = stack.pop()
        n += 1
        if isinstance(e, sp.Piecewise) and len(e.args) > 16:     # a pwl table: linear pieces
            n += len(e.args)
            continue
        stack.extend(e.args)
    return n


def expansion_terms(expr: sp.Basic, cap: int = MAX_TERMS + 1) -> int:
    """Terms a full multinomial expansion of ``expr`` would have (an upper bound, capped at ``cap``).

    Counted on the tree, without expanding: a sum adds its terms' counts, a
    product multiplies them, ``s^n`` of a sum of ``k`` terms has
    ``binomial(n + k - 1, k - 1)``; any other node is one term.
    """
    memo: dict = {}

    def terms(e) -> int:
        if e in memo:
            return memo[e]
        if e.is_Add:
            n = min(cap, sum(terms(a) for a in e.args))
        elif e.is_Mul:
            n = 1
            for a in e.args:
                n = min(cap, n * terms(a))
        elif e.is_Pow and e.exp.is_Integer and e.exp > 1 and not e.base.is_number:
            k = terms(e.base)
            m = int(e.exp) if e.exp <= 10 * cap else cap
            n = 1 if k == 1 else (cap if m >= cap else min(cap, math.comb(m + k - 1, k - 1)))
        else:
            n = 1
        memo[e] = n
        return n
    return terms(expr)


def size_problem(expr: sp.Basic) -> Optional[str]:
    """What makes ``expr`` too large for symbolic work, or ``None``.

    Parameters
    ----------
    expr : sympy.Basic

    Returns
    -------
    str or None
        E.g. ``"an integer power 18446744073709551616 (at most 64)"``.
    """
    n, stack, expands = 0, [expr], False
    while stack:        # one walk: nodes, exponents, and whether anything multiplies out
        e = stack.pop()
        n += 1
        if n > MAX_NODES:
            return f"more than {MAX_NODES} terms and operations"
        if isinstance(e, sp.Piecewise) and len(e.args) > 16:     # a pwl table: linear pieces
            n += len(e.args)
            continue
        if e.is_Pow:
            x = e.exp
            if x.is_Integer and not e.base.is_number:
                if abs(x) > MAX_EXPONENT:
                    return f"an integer power {x} (at most {MAX_EXPONENT})"
                expands = expands or (x > 1 and not e.base.is_Symbol)
        elif e.is_Mul:
            expands = expands or any(a.is_Add for a in e.args)
        stack.extend(e.args)
    if not expands and n <= 64:         # nothing multiplies out: terms and degree stay small
        return None
    terms = expansion_terms(expr)
    if terms > MAX_TERMS:
        return f"more than {MAX_TERMS} terms once expanded"
    degree = polynomial_degree(expr)
    if terms * degree // 2 > MAX_GRADIENT:
        return (f"about {terms} terms of degree up to {degree} once expanded, a discrete gradient of about "
                f"{terms * degree // 2} terms (at most {MAX_GRADIENT})")
    return None


def polynomial_degree(expr: sp.Basic) -> int:
    """Total degree of ``expr`` as a polynomial in its symbols, counted on the tree (an upper bound; any
    other function of symbols counts 1)."""
    memo: dict = {}

    def deg(e) -> int:
        if e in memo:
            return memo[e]
        if e.is_number:
            n = 0
        elif e.is_Symbol:
            n = 1
        elif e.is_Add:
            n = max(deg(a) for a in e.args)
        elif e.is_Mul:
            n = sum(deg(a) for a in e.args)
        elif e.is_Pow and e.exp.is_Integer and e.exp > 0:
            n = int(min(e.exp, MAX_TERMS)) * deg(e.base)
        else:
            n = 1
        memo[e] = n
        return n
    return deg(expr)


def _sign(x: float) -> float:
    return float(x > 0) - float(x < 0)


_FUNCS: dict = {
    sp.exp: math.exp, sp.log: math.log, sp.sin: math.sin, sp.cos: math.cos, sp.tan: math.tan,
    sp.sinh: math.sinh, sp.cosh: math.cosh, sp.tanh: math.tanh, sp.asin: math.asin, sp.acos: math.acos,
    sp.atan: math.atan, sp.asinh: math.asinh, sp.acosh: math.acosh, sp.atanh: math.atanh,
    sp.Abs: abs, sp.sign: _sign, sp.atan2: math.atan2, sp.Min: min, sp.Max: max,
}
_RELATIONS: dict = {
    sp.StrictLessThan: lambda a, b: a < b, sp.StrictGreaterThan: lambda a, b: a > b,
    sp.LessThan: lambda a, b: a <= b, sp.GreaterThan: lambda a, b: a >= b,
    sp.Eq: lambda a, b: a == b, sp.Ne: lambda a, b: a != b,
}


def real_value(expr: sp.Basic, values: Optional[Mapping[sp.Symbol, float]] = None) -> float:
    """``expr`` in double precision, with ``values`` for its symbols.

    Parameters
    ----------
    expr : sympy.Basic
        Built from numbers, symbols, arithmetic, the functions of the
        netlist language and ``Piecewise``; other functions are evaluated
        by sympy at 15 digits.
    values : mapping of sympy.Symbol to float, optional

    Returns
    -------
    float
        Finite.

    Raises
    ------
    NotReal
        When a step overflows, leaves the real domain (``sqrt(-1)``,
        ``log(-2)``) or is not finite; the message names the sub-expression.
    """
    values = values or {}

    def ev(e) -> float:
        if e.is_Number:
            if e.is_Integer or e.is_Rational:
                return e.p / e.q            # exact big-integer division, OverflowError past 1e308
            if e.is_Float:
                return float(e)
            raise NotReal(f"{e} is not a finite real number")
        if e.is_Symbol:
            if e not in values:
                raise NotReal(f"{e} has no value", domain=False)
            return float(values[e])
        if e.is_Add:
            return math.fsum(ev(a) for a in e.args)
        if e.is_Mul:
            out = 1.0
            for a in e.args:
                out *= ev(a)
            return out
        if e.is_Pow:
            b, x = ev(e.base), ev(e.exp)
            if b == 0.0 and x < 0:
                raise NotReal(f"{e}: division by zero")
            return math.pow(b, x)
        if isinstance(e, sp.Piecewise):
            for value, cond in e.args:
                if cond is sp.true or truth(cond):
                    return ev(value)
            raise NotReal(f"{e}: no piece applies")
        f = _FUNCS.get(type(e))
        if f is not None:
            return f(*(ev(a) for a in e.args))
        if e is sp.pi:
            return math.pi
        if e is sp.E:
            return math.e
        if e.is_number is False and e.free_symbols:
            e = e.xreplace({s: sp.Float(values[s]) for s in e.free_symbols if s in values})
        try:
            z = complex(sp.N(e, 15))
        except TypeError:
            raise NotReal(f"{e} is not a finite real number") from None
        if z.imag:
            raise NotReal(f"{e} is not real")
        return z.real

    def truth(c) -> bool:
        if c is sp.true or c is sp.false:
            return bool(c)
        if type(c) in _RELATIONS:
            return _RELATIONS[type(c)](ev(c.lhs), ev(c.rhs))
        if isinstance(c, sp.And):
            return all(truth(a) for a in c.args)
        if isinstance(c, sp.Or):
            return any(truth(a) for a in c.args)
        if isinstance(c, sp.Not):
            return not truth(c.args[0])
        raise NotReal(f"cannot decide {c}", domain=False)

    try:
        out = ev(expr)
    except NotReal:
        raise
    except OverflowError:
        raise NotReal(f"{expr} overflows (beyond 1e308)", domain=False) from None
    except (ValueError, ZeroDivisionError):
        raise NotReal(f"{expr} is not a finite real number (outside the domain of a function)") from None
    except (ArithmeticError, TypeError, RecursionError) as exc:
        raise NotReal(f"{expr} cannot be evaluated ({type(exc).__name__})", domain=False) from None
    if not math.isfinite(out):
        raise NotReal(f"{expr} is not finite ({out})", domain=math.isnan(out))
    return out


#: Where laws are sampled for realness: 0 and +-10^k, k = -9..3.
GRID = tuple(sorted([0.0] + [s * 10.0 ** k for s in (-1.0, 1.0) for k in range(-9, 4)]))


def nonreal_points(expr: sp.Basic, variable: sp.Symbol, values: Mapping[sp.Symbol, float],
                   grid=GRID) -> list:
    """The points of ``grid`` where ``expr`` of ``variable`` is not real (a domain error, not an overflow).

    Parameters
    ----------
    expr : sympy.Basic
        A law in ``variable`` and parameter symbols.
    variable : sympy.Symbol
    values : mapping of sympy.Symbol to float
        Parameter values.
    grid : sequence of float

    Returns
    -------
    list of float
        Empty for a law real everywhere it was sampled.
    """
    bad = []
    for x in grid:
        try:
            real_value(expr, {**values, variable: x})
        except NotReal as exc:
            if exc.domain:
                bad.append(x)
    return bad


def constant_problem(expr: sp.Basic, values: Optional[Mapping[sp.Symbol, float]] = None,
                     variables=()) -> Optional[tuple]:
    """The first sub-expression of ``expr`` free of ``variables`` that has no finite real value.

    Parameters
    ----------
    expr : sympy.Basic
    values : mapping of sympy.Symbol to float, optional
        Parameter values: a sub-expression in these symbols only is a constant too.
    variables : collection of sympy.Symbol
        The law's variables.

    Returns
    -------
    tuple of (sympy.Expr, str) or None
        The sub-expression and why (``sqrt(-1)``: not real; ``exp(exp(exp(10)))``: overflows).
    """
    if _plain(expr):
        return None         # numbers and names in sums and products (most values): nothing to evaluate
    values = values or {}
    known, variables = set(values), set(variables)
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, sp.Expr) and not (e.is_Float or e.is_Rational or e.is_Symbol):
            free = e.free_symbols
            if free <= known and not free & variables:
                try:
                    real_value(e, values)
                except NotReal as exc:
                    return e, str(exc)
                continue
        stack.extend(e.args)
    return None


def _plain(expr: sp.Basic) -> bool:
    """Whether ``expr`` is built of symbols, floats and rationals by ``+`` and ``*`` only."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if e.is_Add or e.is_Mul:
            stack.extend(e.args)
        elif not (e.is_Symbol or e.is_Float or e.is_Rational):
            return False
    return True
