"""Compiled time-stepping kernel shared by the forward and adjoint sweeps.

Both the state recursion ``x_{k+1} = Ad x_k + f_k`` and the discrete adjoint
recursion ``lam_k = g_k + Ad^T lam_{k+1}`` (run on time-reversed arrays) are
affine recurrences ``z_{k+1} = A z_k + f_k``; one numba kernel serves both.
Everything else (discretisation, solves, gradient sums) is done with BLAS
matrix products in :mod:`phsym.identify.linear_simulation`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["affine_recurrence"]


@njit(cache=True, fastmath=True)
def _recurrence(A, z0, F, out):  # pragma: no cover - compiled
    n = A.shape[0]
    steps = F.shape[0]
    for i in range(n):
        out[0, i] = z0[i]
    for k in range(steps):
        for i in range(n):
            s = F[k, i]
            for j in range(n):
                s += A[i, j] * out[k, j]
            out[k + 1, i] = s
    return out


def affine_recurrence(A: np.ndarray, z0: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Solve ``z_{k+1} = A z_k + F_k`` for ``k = 0..K-1``.

    Parameters
    ----------
    A : numpy.ndarray, shape (n, n)
        Constant transition matrix.
    z0 : numpy.ndarray, shape (n,)
        Initial value.
    F : numpy.ndarray, shape (K, n)
        Forcing sequence.

    Returns
    -------
    numpy.ndarray, shape (K + 1, n)
        The trajectory ``z_0 .. z_K``.
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    z0 = np.ascontiguousarray(z0, dtype=np.float64)
    F = np.ascontiguousarray(F, dtype=np.float64)
    out = np.empty((F.shape[0] + 1, A.shape[0]), dtype=np.float64)
    return _recurrence(A, z0, F, out)
