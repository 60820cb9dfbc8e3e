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

from ...structure.dirac import Structure
from ..initial import _gradient_functions, state_scales

__all__ = ["state_scales_many"]


def _crossing_many(f, f2, n: int):
    """``(z, good)``: the scalar ``crossing`` of ``z -> f(z) - 1`` for ``n`` sets; ``good`` False where
    the scalar code must decide.  ``f2`` is ``f`` on ``(n, k)`` arrays (row ``i`` of set ``i``)."""
    good = np.ones(n, dtype=bool)

    def ok(z):
        v = np.asarray(f(z), dtype=float)
        if v.shape != (n,):         # a gradient that does not read the state (broadcast_to costs 10 us)
            v = np.broadcast_to(v, (n,))
        v = v - 1.0
        fin = np.isfinite(v)
        good[:] &= fin
        return fin & (v >= 0)

    first = ok(np.ones(n))
    # the scalar bracketing halves (or doubles) from 1 until the sign flips: its brackets are
    # [2^-j, 2^-(j-1)] (or [2^(j-1), 2^j]) for the first such j; the steps j are tried K at a time
    lo, hi = np.where(first, 0.5, 1.0), np.where(first, 1.0, 2.0)
    active = np.ones(n, dtype=bool)
    K = 16
    for j0 in range(1, 301, K):
        rows = np.flatnonzero(active)
        js = np.arange(j0, min(j0 + K, 301), dtype=float)
        z = np.where(first[rows, None], 2.0 ** -js, 2.0 ** js)
        v = np.broadcast_to(np.asarray(f2(z, rows), dtype=float), z.shape) - 1.0
        fin = np.isfinite(v)
        st = fin & (v >= 0)
        stop = np.where(first[rows, None], ~st, st)
        hit = stop.any(axis=1)
        at = np.where(hit, stop.argmax(axis=1), js.size - 1)      # the last step the scalar code takes
        seen = np.arange(js.size) <= at[:, None]
        good[rows] &= (fin | ~seen).all(axis=1)
        j = js[at]
        lo[rows] = np.where(hit, np.where(first[rows], 2.0 ** -j, 2.0 ** (j - 1)), lo[rows])
        hi[rows] = np.where(hit, np.where(first[rows], 2.0 ** -(j - 1), 2.0 ** j), hi[rows])
        active[rows[hit]] = False
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
                z, good = _crossing_many(lambda zz: gf(zz, *args),
                                         lambda zz, rows: gf(zz, *[a[rows, None] for a in args]), n)
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
