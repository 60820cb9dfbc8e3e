"""Step constants: the expensive parts of a step's residual that Newton does not change.

Within one step the residual ``F(v)`` is evaluated once per Newton
iteration (and per line-search trial, and twice more per junction limit),
but many of its subexpressions depend only on the state ``x`` at the start
of the step, the step's inputs ``ub``, the parameters and ``h``: the energy
``H(x)`` of a divided difference, ``exp(x / C)`` of a heat capacity, the
voltage ``v(Q)`` of a junction charge at the step's start (an inner
Newton iteration).  :func:`step_constants` finds the
maximal subexpressions of that kind that are worth computing once per step
(function calls and non-integer powers); the generated ``run`` computes them
after the step's inputs and passes them to ``resjac`` and ``junc`` as the
tuple ``kc`` (the efforts after convergence read them too).  Measured on the overdrive stage (two diodes with transit
time): 1.37e4 -> 1.78e4 steps/s, the same arrays (docs/benchmarks.md; when Newton still
solved for the charge).
"""
from __future__ import annotations

import re
from typing import Dict, List, Sequence

import sympy as sp

from .printing import block

__all__ = ["step_constants", "hoisted_lines"]

#: Runtime names a step constant may depend on (``x_i``, ``xs_i``, ``p_i``, ``ub_i`` and ``h``).
_CONSTANT = re.compile(r"(x|xs|p|ub)_\d+|h")
#: Cheap functions: not worth a slot of ``kc``.
_CHEAP = (sp.Abs, sp.sign)


def _worth(e: sp.Expr) -> bool:
    if isinstance(e, sp.Pow):
        return not e.exp.is_Integer
    return isinstance(e, sp.Function) and not isinstance(e, _CHEAP)


def step_constants(exprs: Sequence[sp.Expr]) -> Dict[sp.Expr, sp.Symbol]:
    """Maximal subexpressions of ``exprs`` worth computing once per step -> their symbols ``kc_j``.

    Parameters
    ----------
    exprs : sequence of sympy.Expr
        The residual, its Jacobian and the junction variables, in the
        runtime symbols (``v_i`` are the Newton unknowns).
    """
    found: Dict[sp.Expr, sp.Symbol] = {}

    def visit(e: sp.Basic) -> None:
        if e.is_Atom or e in found:
            return
        free = e.free_symbols
        if free and _worth(e) and all(_CONSTANT.fullmatch(s.name) for s in free):
            found[e] = sp.Symbol(f"kc_{len(found)}", real=True)
            return
        for a in e.args:
            visit(a)

    for ex in exprs:
        visit(sp.sympify(ex))
    return found


def hoisted_lines(consts: Dict[sp.Expr, sp.Symbol], sizes: Dict[str, int], indent: str) -> List[str]:
    """Lines of ``run`` computing the step constants and the tuple ``kc`` (after the step's inputs).

    Parameters
    ----------
    consts : dict of sympy.Expr to sympy.Symbol
        From :func:`step_constants`.
    sizes : dict of str to int
        Runtime arrays and their lengths (for the loads).
    indent : str
        Indentation of the step loop's body.
    """
    lines = block([(str(s), e) for e, s in consts.items()], {k: n for k, n in sizes.items() if k not in ("v", "kc")},
                  indent)
    return lines + [f"{indent}kc = (" + "".join(f"{s}, " for s in consts.values()) + ")"]
