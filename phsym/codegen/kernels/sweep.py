"""Compiled summaries and signals of a run (the batch path, :mod:`phsym.simulation.sweeps.batch`).

One pass over a finished run gives what a sweep keeps besides the signals:
the power-balance residual and scale (the floats of
``SimulationResult.max_balance_error``) and the Newton iteration maximum and sum, without the numpy temporaries and
calls (about 60 us a run on the 2-core test machine, against 50 us asked
for a run's whole overhead).
"""
from __future__ import annotations

import sys

import numpy as np
from numba import njit

from ...common.guard import check_numba

__all__ = ["probe_signal", "run_summary", "write_signals"]


@njit(cache=True, nogil=True)
def run_summary(H, Pd, Ps, h, IT, newton):
    """``(max |balance|, power scale, max iterations, sum of iterations)``; NaN for the first two when a
    value is not finite (the caller then takes numpy's expression).

    The residual ``(H[k+1] - H[k]) / h + Pd[k] - Ps[k]`` and the scale (the
    largest of ``|dH/dt|``, ``|Pd|``, ``|Ps|`` and ``max |H| / (N h)``, or 1)
    are computed with the
    operations of ``SimulationResult.max_balance_error``; maxima of exact
    values do not depend on the order.  Finiteness is checked once, on a
    running sum (a NaN or an infinity anywhere makes it non-finite; a finite
    overflow only sends the run to the ordinary path).
    """
    mb = 0.0
    scale = 0.0
    acc = 0.0
    n = Pd.shape[0]
    hmax = 0.0
    for k in range(H.shape[0]):
        ah = abs(H[k])
        if ah > hmax:
            hmax = ah
    for k in range(n):
        dh = (H[k + 1] - H[k]) / h
        b = dh + Pd[k] - Ps[k]
        acc += b          # b is finite only when dh, Pd and Ps are
        ab, adh, apd, aps = abs(b), abs(dh), abs(Pd[k]), abs(Ps[k])
        if ab > mb:
            mb = ab
        if adh > scale:
            scale = adh
        if apd > scale:
            scale = apd
        if aps > scale:
            scale = aps
    itmax = 0
    itsum = 0
    if newton:
        for k in range(IT.shape[0]):
            itsum += IT[k]
            if IT[k] > itmax:
                itmax = IT[k]
    if not np.isfinite(acc):
        return np.nan, np.nan, itmax, itsum
    if n:       # at least max |H| over the duration, as SimulationResult.power_scale
        floor = hmax / (n * h)
        if floor > scale:
            scale = floor
    return mb, (scale if scale > 0 else 1.0), itmax, itsum


@njit(cache=True, nogil=True)
def probe_signal(E, c, out):
    """``out[k] = E[k] @ c``: the signal of a probe vector ``c`` from the recorded efforts ``E``.

    The sums are taken term by term in one fixed order, the order of
    ``SimulationResult``'s numpy loop over the columns, so a probe is the
    same float in a sweep and in a single run (tested; BLAS's ``gemv``
    orders its sums by shape and library).
    """
    m = c.shape[0]
    for k in range(E.shape[0]):
        s = 0.0
        for j in range(m):
            s += E[k, j] * c[j]
        out[k] = s


@njit(cache=True, nogil=True)
def write_signals(kinds, cols, C, r, out, g, X, U, Y, Hh, Pd, Ps, E):
    """The signals of run ``r`` into ``out[:, g]`` from its arrays (the generated ``run_many`` drivers).

    ``kinds[l]`` says where signal ``l`` comes from (codes in
    :data:`phsym.codegen.batch_driver.KINDS`), ``cols[l]`` its column,
    ``C[r, l]`` its probe vector.  Step quantities have no value at ``t = 0``:
    NaN there, as in a single run's signals.
    """
    N = U.shape[0] - 1
    for l in range(kinds.shape[0]):
        k = kinds[l]
        c = cols[l]
        row = out[l, g]
        if k == 0:
            for i in range(N + 1):
                row[i] = X[i, c]
        elif k == 1:
            for i in range(N + 1):
                row[i] = U[i, c]
        elif k == 3:
            for i in range(N + 1):
                row[i] = Hh[i]
        else:
            row[0] = np.nan
            if k == 2:
                for i in range(N):
                    row[i + 1] = Y[i, c]
            elif k == 4:
                for i in range(N):
                    row[i + 1] = Pd[i]
            elif k == 5:
                for i in range(N):
                    row[i + 1] = Ps[i]
            else:
                probe_signal(E, C[r, l], row[1:])


# numba reads its cache files at the first call, unguarded: check them now
check_numba(sys.modules[__name__])
