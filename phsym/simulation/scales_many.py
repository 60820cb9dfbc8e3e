"""State scales of many parameter sets at once (the Newton plans of a sweep).

:func:`~phsym.simulation.initial.state_scales` brackets and bisects each
state's unit-effort crossing with a few dozen scalar evaluations of its
gradient: about 70 us per parameter set for the diode clipper, most of a
sweep's plan.  For a quadratic storage the gradient is plain arithmetic in
the state and the parameters, so the same bracketing and bisection run here
on arrays over the parameter sets: the same operations in the same order on
each element (IEEE arithmetic is elementwise), so the same floats.  Any set
where an evaluation is not finite (where the scalar code may have taken its
exception path) and every non-quadratic state get the scalar code.
"""
from __future__ import annotations

from typing import List, Mapping, Sequence

import numpy as np
import sympy as sp

from ..structure.dirac import Structure
from .initial import _gradient_functions, state_scales

__all__ = ["state_scales_many"]


def _crossing_many(f, n: int):
    """``(z, good)``: the scalar ``_crossing`` of ``z -> f(z) - 1`` for ``n`` sets; ``good`` False where
    the scalar code must decide."""
    good = np.ones(n, dtype=bool)

    def ok(z):
        v = np.broadcast_to(np.asarray(f(z), dtype=float), (n,)) - 1.0
        fin = np.isfinite(v)
        good[:] &= fin
        return fin & (v >= 0)

    first = ok(np.ones(n))
    lo, hi = np.where(first, 0.5, 1.0), np.where(first, 1.0, 2.0)
    active = np.ones(n, dtype=bool)
    for _ in range(300):
        st = ok(np.where(first, lo, hi))
        shrink, grow = active & first & st, active & ~first & ~st
        lo, hi = np.where(shrink, 0.5 * lo, np.where(grow, hi, lo)), np.where(shrink, lo, np.where(grow, 2.0 * hi, hi))
        active = shrink | grow
        if not active.any():
            break
    good &= ~active          # the scalar code gives up after 300 (None): let it say so
    todo = hi - lo > 1e-6 * hi
    while todo.any():
        mid = 0.5 * (lo + hi)
        st = ok(mid)
        hi, lo = np.where(todo & st, mid, hi), np.where(todo & ~st, mid, lo)
        todo = hi - lo > 1e-6 * hi
    return hi, good


def state_scales_many(S: Structure, values: Sequence[Mapping[sp.Symbol, float]]) -> List[np.ndarray]:
    """:func:`~phsym.simulation.initial.state_scales` of every parameter set in ``values`` (the same floats).

    Parameters
    ----------
    S : Structure
        The structure.
    values : sequence of mapping of sympy.Symbol to float
        Parameter values of each set (the same symbols in every set).
    """
    n = len(values)
    if n == 0:
        return []
    out = np.ones((n, S.n_x))
    scalar = np.zeros(n, dtype=bool)
    linear = {s for st in S.storages if st.is_quadratic for s in st.states}
    if any(s not in linear for s in S.states):
        return [state_scales(S, v) for v in values]
    for i, ((gf, params), s) in enumerate(zip(_gradient_functions(S, frozenset(values[0])), S.states)):
        args = [np.array([float(v[t]) for v in values]) for t in params]
        try:
            with np.errstate(all="ignore"):
                z, good = _crossing_many(lambda zz: gf(zz, *args), n)
        except Exception:        # not array arithmetic (a math function): the scalar code
            scalar[:] = True
            break
        good &= np.isfinite(z) & (z > 0)
        out[:, i] = np.where(good, z, 1.0)
        scalar |= ~good
    rows = [out[j].copy() for j in range(n)]
    for j in np.flatnonzero(scalar):
        rows[j] = state_scales(S, values[j])
    return rows
