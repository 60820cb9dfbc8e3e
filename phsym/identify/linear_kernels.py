"""Compiled kernels of the identification hot path.

Both the state recursion ``x_{k+1} = Ad x_k + f_k`` and the discrete adjoint
recursion ``lam_k = g_k + Ad^T lam_{k+1}`` (run on time-reversed arrays) are
affine recurrences ``z_{k+1} = A z_k + f_k``; one numba kernel serves both.
The dense products and triangular solves of the gradient use small compiled
kernels too (:func:`mm`, :func:`mtm`, :func:`solve_factored` with the LU
kernels of :mod:`phsym.codegen.kernels.generic`) instead of BLAS,
because multi-threaded OpenBLAS is very slow for these sizes on a loaded
machine.  All kernels are ``@njit(cache=True)`` on float64 arrays.
"""
from __future__ import annotations

import sys

import numpy as np
from numba import njit

from ..codegen.kernels.generic import lu_solve, lu_solve_t
from ..common.guard import check_numba

__all__ = ["affine_recurrence", "mm", "mtm", "solve_factored"]


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


# --------------------------------------------------------------------------
# Small dense linear algebra without BLAS threads.  For the matrix sizes of
# identification (n <~ 200) multi-threaded OpenBLAS calls are dominated by
# thread wake-up and spinning; on a loaded 2-core machine they were measured
# 30-100x slower than these plain loops.  lu_factor (LAPACK getrf) is not
# threaded for such sizes and is still taken from scipy.
@njit(cache=True, fastmath=True)
def _gemm_nn(A, B, out):  # pragma: no cover - compiled
    p, q = A.shape
    r = B.shape[1]
    for i in range(p):
        for j in range(r):
            out[i, j] = 0.0
        for k in range(q):
            a = A[i, k]
            for j in range(r):
                out[i, j] += a * B[k, j]
    return out


@njit(cache=True, fastmath=True)
def _gemm_tn(P, X, out):  # pragma: no cover - compiled
    # out = P^T X, accumulated in blocks of 8 rows of out kept in L1 cache
    K, p = P.shape
    r = X.shape[1]
    for i0 in range(0, p, 8):
        nb = min(8, p - i0)
        acc = np.zeros((nb, r))
        for k in range(K):
            for ii in range(nb):
                a = P[k, i0 + ii]
                for j in range(r):
                    acc[ii, j] += a * X[k, j]
        for ii in range(nb):
            for j in range(r):
                out[i0 + ii, j] = acc[ii, j]
    return out


@njit(cache=True)
def _solve_columns(LU, piv, B, trans):  # pragma: no cover - compiled
    X = np.empty_like(B)
    col = np.empty(B.shape[0])
    for j in range(B.shape[1]):
        for i in range(B.shape[0]):
            col[i] = B[i, j]
        if trans:
            lu_solve_t(LU, piv, col)
        else:
            lu_solve(LU, piv, col)
        for i in range(B.shape[0]):
            X[i, j] = col[i]
    return X


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def mm(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Matrix product ``A @ B`` of 2-D arrays (compiled loops, no BLAS threads)."""
    A, B = _f64(A), _f64(B)
    return _gemm_nn(A, B, np.empty((A.shape[0], B.shape[1])))


def mtm(P: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``P^T @ X`` for tall ``P`` (K, p) and ``X`` (K, r) (compiled, no BLAS threads)."""
    P, X = _f64(P), _f64(X)
    return _gemm_tn(P, X, np.empty((P.shape[1], X.shape[1])))


def solve_factored(lu: tuple, b: np.ndarray, trans: bool = False) -> np.ndarray:
    """Solve ``A x = b`` (or ``A^T x = b``) with LU factors in LAPACK layout.

    The factors of :func:`scipy.linalg.lu_factor` and of
    :func:`phsym.codegen.kernels.generic.lu_factor` share the layout; the solves are
    the kernels of :mod:`phsym.codegen.kernels.generic`, column by column.

    Parameters
    ----------
    lu : tuple
        ``(LU, piv)`` of ``A``, or ``(LU, piv, scale)`` of ``A / scale[:, None]``
        (rows scaled, as :func:`phsym.structure.discrete.solve_step` factors).
    b : numpy.ndarray
        Right-hand side(s), 1-D or 2-D.
    trans : bool
        Solve with the transpose.
    """
    LU, piv = lu[0], lu[1]
    scale = lu[2] if len(lu) > 2 else None
    b = _f64(b)
    vec = b.ndim == 1
    B = b.reshape(b.shape[0], -1)
    if scale is not None and not trans:          # A x = b  <=>  (A / s) x = b / s
        B = np.ascontiguousarray(B / scale[:, None])
    x = _solve_columns(_f64(LU), np.ascontiguousarray(piv, dtype=np.int64), B, bool(trans))
    if scale is not None and trans:              # A^T x = b  <=>  x = ((A / s)^T)^-1 b / s
        x = x / scale[:, None]
    return x.reshape(-1) if vec else x


# numba reads its cache files at the first call, unguarded: check them now
check_numba(sys.modules[__name__])
