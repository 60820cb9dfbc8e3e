"""Sympy products of plain factors without sympy's flattening.

Loading a deck of tens of thousands of resistors and capacitors makes as
many products ``R * i`` and ``q**2 / (2 C)``; sympy's ``Mul`` spends most of
its time there deciding what the factors have in common.  When they are
distinct symbols (or integer powers of distinct symbols) there is nothing to
combine, and the canonical product is the factors in sympy's own order.
"""
from __future__ import annotations

from functools import cmp_to_key

import sympy as sp

__all__ = ["product"]

_ORDER = cmp_to_key(sp.Basic.compare)       # the order sympy's Mul keeps its commutative factors in


def _base(f: sp.Expr):
    if f.is_Symbol and f.is_commutative:
        return f
    if f.is_Pow and f.base.is_Symbol and f.base.is_commutative and f.exp.is_Integer:
        return f.base
    return None


def product(*factors: sp.Expr) -> sp.Expr:
    """``sympy.Mul(*factors)``, built directly when nothing in it combines.

    Parameters
    ----------
    *factors : sympy.Expr
        The factors: at most one rational number, the others symbols or
        integer powers of symbols with distinct bases take the direct path;
        anything else is multiplied by sympy.

    Returns
    -------
    sympy.Expr
        The product, equal (``==``, same hash) to sympy's.
    """
    coeff = [f for f in factors if f.is_Rational]
    rest = [f for f in factors if not f.is_Rational]
    bases = [_base(f) for f in rest]
    if len(coeff) > 1 or len(rest) < 2 or any(b is None for b in bases) or len(set(bases)) < len(bases) \
            or (coeff and coeff[0] in (0, 1)):
        return sp.Mul(*factors)
    return sp.Mul._from_args(tuple(coeff) + tuple(sorted(rest, key=_ORDER)))
