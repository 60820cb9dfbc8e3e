"""Splitting a kernel's expressions into what changes with Newton and what is fixed over a step.

A step kernel is evaluated at every Newton iteration, but much of it reads
only the step's constants and the placeholders: a junction's start-point
charge ``(1 + v0/VJ)^M`` and exponential ``exp(v0 / (N Vt))``, the energy at
the step's start in a discrete gradient, ``1 / (N Vt)``.  :func:`hoist`
replaces each largest such subexpression by a symbol ``_w<k>``; the kernel's
``prepare`` function computes them once per step (see :mod:`.abi`).
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Set, Tuple

import sympy as sp

__all__ = ["hoist"]


def _worth(e: sp.Basic) -> bool:
    """Whether precomputing ``e`` saves work: an expression beyond a symbol or a number's multiple
    (a load costs about what a negation or a scaling does)."""
    if not isinstance(e, sp.Expr) or e.is_Atom or e.is_number:
        return False
    if e.is_Mul and len(e.args) == 2 and e.args[0].is_Number and e.args[1].is_Atom:
        return False
    return True


def hoist(exprs: Sequence[sp.Expr], fixed: Set[sp.Symbol]) -> Tuple[List[sp.Expr], List[sp.Expr]]:
    """Replace the largest subexpressions of ``exprs`` in ``fixed`` symbols only by new symbols.

    Within a sum or product, the terms or factors in fixed symbols only are grouped first
    (``a*v + b*c`` keeps ``b*c`` as one symbol).  Conditions (relations) are left as they are:
    their operands are hoisted.

    Parameters
    ----------
    exprs : sequence of sympy.Expr
        Expressions in ``fixed`` and other (moving) symbols.
    fixed : set of sympy.Symbol
        The symbols constant over the step (the step's constants and the placeholders).

    Returns
    -------
    (list of sympy.Expr, list of sympy.Expr)
        The expressions in the moving symbols and ``_w0, _w1, ...``, and the expression of each ``_w<k>``
        in the fixed symbols.
    """
    table: Dict[sp.Expr, sp.Symbol] = {}
    memo: Dict[sp.Basic, sp.Basic] = {}

    def fixed_only(e: sp.Basic) -> bool:
        return isinstance(e, sp.Expr) and e.free_symbols <= fixed

    def name(e: sp.Expr) -> sp.Symbol:
        s = table.get(e)
        if s is None:
            s = table[e] = sp.Symbol(f"_w{len(table)}", real=True)
        return s

    def walk(e: sp.Basic) -> sp.Basic:
        hit = memo.get(e)
        if hit is not None:
            return hit
        if e.is_Atom or not e.args:
            out = e
        elif fixed_only(e) and _worth(e):
            out = name(e)
        elif isinstance(e, (sp.Add, sp.Mul)):
            still = [a for a in e.args if fixed_only(a)]
            moving = [walk(a) for a in e.args if not fixed_only(a)]
            if len(still) >= 2:
                g = e.func(*still)
                still = [name(g) if _worth(g) else g]
            else:
                still = [walk(a) for a in still]
            out = e.func(*still, *moving)
        else:
            out = e.func(*[walk(a) for a in e.args])
        memo[e] = out
        return out

    moved = [walk(sp.sympify(e)) for e in exprs]
    return moved, list(table)
