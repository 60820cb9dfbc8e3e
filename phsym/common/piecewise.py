"""Piecewise-linear laws and their exact integrals (sympy ``Piecewise``).

A table is a monotone (non-decreasing) sequence of points ``(x_k, y_k)`` with
strictly increasing ``x_k``.  Between points it is interpolated linearly,
beyond the ends the end segments continue, so the law is defined on the
whole line and stays monotone: a dissipation law through the origin then
absorbs power (``w z(w) >= 0``), and a storage effort law gives a convex
energy.  Code generation prints ``Piecewise`` as plain conditionals; the
energy of an effort law is its exact integral (:func:`piecewise_integral`).

>>> import sympy as sp
>>> v = sp.Symbol("v", real=True)
>>> f = pwl_expression(v, [0.0, 1.0, 2.0], [0.0, 2.0, 3.0])
>>> [f.subs(v, a) for a in (-1, 0.5, 3)]
[-2.00000000000000, 1.00000000000000, 4.00000000000000]
>>> piecewise_integral(f, v).subs(v, 2)
3.50000000000000
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import sympy as sp

__all__ = ["check_points", "pwl_expression", "piecewise_integral", "ite_free"]


def check_points(xs: Sequence[float], ys: Sequence[float]) -> Tuple[List[float], List[float]]:
    """Validated float breakpoints (``ValueError`` with the reason)."""
    xs = [float(a) for a in xs]
    ys = [float(a) for a in ys]
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError(f"a table needs at least two (x, y) points, got {len(xs)} x and {len(ys)} y values")
    if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        raise ValueError("table values must be finite")
    bad = [k for k in range(1, len(xs)) if not xs[k] > xs[k - 1]]
    if bad:
        k = bad[0]
        raise ValueError(f"x values must increase strictly: point {k + 1} has x = {xs[k]:g} after {xs[k - 1]:g}")
    bad = [k for k in range(1, len(ys)) if ys[k] < ys[k - 1]]
    if bad:
        k = bad[0]
        raise ValueError(f"y values must not decrease (a monotone law keeps passivity): point {k + 1} has "
                         f"y = {ys[k]:g} after {ys[k - 1]:g}")
    return xs, ys


def pwl_expression(x: sp.Expr, xs: Sequence[float], ys: Sequence[float]) -> sp.Expr:
    """The piecewise-linear interpolant of ``(xs, ys)`` at ``x`` (end segments continued).

    Parameters
    ----------
    x : sympy.Expr
        Where to evaluate (usually the law's variable).
    xs, ys : sequence of float
        Breakpoints (strictly increasing) and values (non-decreasing).

    Returns
    -------
    sympy.Expr
        A ``Piecewise`` of linear pieces (a line for two points).
    """
    xs, ys = check_points(xs, ys)
    slopes = [(ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k]) for k in range(len(xs) - 1)]
    lines = [sp.Float(ys[k]) + sp.Float(s) * (x - sp.Float(xs[k])) for k, s in enumerate(slopes)]
    if len(lines) == 1:
        return lines[0]
    # collinear neighbours print as the same line: one piece (sympy would join their conditions with Or)
    pieces = [(lines[k], x < sp.Float(xs[k + 1])) for k in range(len(lines) - 1) if lines[k] != lines[k + 1]]
    return sp.Piecewise(*pieces, (lines[-1], True)) if pieces else lines[-1]


def piecewise_integral(expr: sp.Expr, var: sp.Symbol) -> Optional[sp.Expr]:
    """``F(var) = integral of expr from 0 to var`` for a piecewise polynomial, else ``None``.

    ``expr`` must be a polynomial in ``var`` or a ``Piecewise`` whose
    conditions are ``var < c`` with increasing ``c`` (what
    :func:`pwl_expression` builds); the result is continuous and ``F(0) = 0``.

    Parameters
    ----------
    expr : sympy.Expr
        The integrand.
    var : sympy.Symbol
        Its variable.
    """
    if not isinstance(expr, sp.Piecewise):
        return None
    polys, cuts = [], []
    for k, (piece, cond) in enumerate(expr.args):
        if not piece.is_polynomial(var):
            return None
        if cond is sp.true:
            if k != len(expr.args) - 1:
                return None
        elif isinstance(cond, sp.StrictLessThan) and cond.lhs == var and cond.rhs.is_number:
            cuts.append(cond.rhs)
        else:
            return None
        polys.append(sp.integrate(piece, var))
    if len(cuts) != len(polys) - 1 or any(b <= a for a, b in zip(cuts, cuts[1:])):
        return None
    consts = [sp.Integer(0)]
    for k, c in enumerate(cuts):       # continuity at every cut
        consts.append(consts[-1] + polys[k].subs(var, c) - polys[k + 1].subs(var, c))
    at0 = next((k for k, c in enumerate(cuts) if 0 < c), len(cuts))
    shift = polys[at0].subs(var, 0) + consts[at0]
    parts = [sp.expand(p + c - shift) for p, c in zip(polys, consts)]
    return sp.Piecewise(*[(parts[k], var < cuts[k]) for k in range(len(cuts))], (parts[-1], True))




def ite_free(expr):
    """``expr`` with every ``ITE(a, b, c)`` written as ``(a & b) | (~a & c)``.

    sympy folds a ``Piecewise`` inside a condition into an ``ITE``; numpy's
    printer then runs ``simplify_logic`` on each such condition, 10 s for the
    derivatives of one body-effect MOSFET.  The rewrite is exact and instant.
    Lists and tuples are rewritten item by item.

    >>> a, b = sp.symbols("a b", real=True)
    >>> ite_free(sp.ITE(a > 0, b > 0, b < -1))
    ((a <= 0) & (b < -1)) | ((a > 0) & (b > 0))
    """
    if isinstance(expr, (list, tuple)):
        return type(expr)(ite_free(e) for e in expr)
    expr = sp.sympify(expr)
    if not expr.has(sp.ITE):
        return expr
    return expr.replace(lambda e: isinstance(e, sp.ITE),
                        lambda e: sp.Or(sp.And(e.args[0], e.args[1]), sp.And(sp.Not(e.args[0]), e.args[2])))
