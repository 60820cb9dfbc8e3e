"""The dense linear loop of large models, skipping the zeros of its matrices.

The step of the dense linear loop multiplies the rows of the fused
matrices (``x' = G z``, outputs ``Yc z``, port efforts ``Wc z``, energy
``x^T Q x / 2``, efforts ``Ec z`` with ``z = (x, u)``); for a 50-cell chain at 48 kHz the energy matrix ``Q`` is
diagonal (100 of 10 000 entries), and ``G``, ``Wc`` and ``Yc`` hold exact
zeros too, so half of its arithmetic was ``0 * z``.  This kernel takes the
same rows in compressed form (``indptr, indices, data`` of the nonzeros, in
column order).  The results are the same floats for finite values: a sum
starts at ``+0.0`` and never becomes ``-0.0``, so adding ``0 * z = +-0``
leaves it unchanged; only a non-finite ``z`` (``0 * inf``) could differ,
and that step is a failed one either way.
"""
from __future__ import annotations

import sys

import numpy as np
from numba import njit

from ...common.guard import check_numba
from .generic import step_input

__all__ = ["compress", "run_linear_csr"]


def compress(A: np.ndarray) -> tuple:
    """``(indptr, indices, data)`` of the nonzeros of ``A`` row by row, columns ascending.

    Parameters
    ----------
    A : ndarray (m, n)
        Dense matrix.
    """
    A = np.asarray(A, dtype=float)
    rows, cols = np.nonzero(A)          # row-major order: columns ascending within a row
    ptr = np.zeros(A.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=A.shape[0]), out=ptr[1:])
    return ptr, cols.astype(np.int64), np.ascontiguousarray(A[rows, cols])


@njit(cache=True, nogil=True)
def _row(ptr, idx, dat, i, z):
    s = 0.0
    for j in range(ptr[i], ptr[i + 1]):
        s += dat[j] * z[idx[j]]
    return s


@njit(cache=True, nogil=True)
def run_linear_csr(x, U, k0, k1, inputs, Gp, Gi, Gx, Yp, Yi, Yx, Wp, Wi, Wx, pd_w, Qp, Qi, Qx, Ep, Ei, Ex,
                   X, Y, Hh, Pd, Ps, E, rec_e):
    """The dense linear step on compressed rows (the operations of full rows on their nonzeros, in
    the same order; tests/test_sweep_batch.py keeps the full-row loop as its reference).  The
    dissipation rows may read ``x_{k+1}`` (columns ``nx + nu`` on).  Returns ``-1`` or the first
    step with a non-finite energy."""
    nx = x.shape[0]
    nu = U.shape[1]
    nw = Wp.shape[0] - 1
    ne = Ep.shape[0] - 1
    # z = (x_k, ubar, x_{k+1}): the last part for dissipation rows read at the state point
    z = np.empty(2 * nx + nu)
    xn = z[nx + nu:]
    for i in range(nx):
        z[i] = x[i]
    for k in range(k0, k1):
        for i in range(nu):
            z[nx + i] = step_input(U, k, i, inputs)
        ps = 0.0
        for i in range(nu):
            s = _row(Yp, Yi, Yx, i, z)
            Y[k, i] = s
            ps += s * z[nx + i]
        Ps[k] = ps
        if rec_e:
            for i in range(ne):
                E[k, i] = _row(Ep, Ei, Ex, i, z)
        for i in range(nx):
            xn[i] = _row(Gp, Gi, Gx, i, z)
        pdis = 0.0
        for i in range(nw):
            s = _row(Wp, Wi, Wx, i, z)
            pdis += pd_w[i] * s * s
        Pd[k] = pdis
        hh = 0.0
        for i in range(nx):
            z[i] = xn[i]
            X[k + 1, i] = xn[i]
        for i in range(nx):
            hh += 0.5 * xn[i] * _row(Qp, Qi, Qx, i, xn)
        Hh[k + 1] = hh
        if not np.isfinite(hh):
            for i in range(nx):
                x[i] = z[i]
            return k
    for i in range(nx):
        x[i] = z[i]
    return -1


# numba reads its cache files at the first call, unguarded: check them now
check_numba(sys.modules[__name__])
