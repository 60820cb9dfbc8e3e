"""Stationary kernels with anisotropic length scales, their derivatives in the
log length scales (for the marginal-likelihood gradient) and in the first
argument (for efforts that are gradients, and for Newton on learned laws).

Inputs are already standardised by the estimator; the kernels have unit
variance (the signal variances live in the task covariance).
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ...errors import IdentificationError

__all__ = ["rbf_hessian_contract", "KERNELS", "gram", "gram_and_grads", "gram_diag", "gram_dx", "kernel_matrix", "kernel_and_grads",
           "kernel_dx", "rbf_hessian_blocks"]

KERNELS = ("rbf", "matern52")
_S5 = np.sqrt(5.0)


def _check(kernel: str) -> str:
    name = str(kernel).lower()
    if name not in KERNELS:
        raise IdentificationError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNELS)}")
    return name


def _scaled_sq(X1: np.ndarray, X2: np.ndarray, ell: np.ndarray) -> np.ndarray:
    """Per-dimension squared scaled differences, shape (N1, N2, d)."""
    D = (X1[:, None, :] - X2[None, :, :]) / ell
    return D * D


def kernel_matrix(kernel: str, X1: np.ndarray, X2: np.ndarray, ell: np.ndarray) -> np.ndarray:
    """k(X1, X2) for unit variance.

    Parameters
    ----------
    kernel : str
        ``"rbf"`` (squared exponential) or ``"matern52"``.
    X1, X2 : ndarray, shapes (N1, d) and (N2, d)
        Points.
    ell : ndarray, shape (d,)
        Length scales.

    Returns
    -------
    ndarray, shape (N1, N2)
    """
    r2 = _scaled_sq(X1, X2, ell).sum(axis=2)
    if _check(kernel) == "rbf":
        return np.exp(-0.5 * r2)
    r = np.sqrt(r2)
    return (1.0 + _S5 * r + 5.0 / 3.0 * r2) * np.exp(-_S5 * r)


def kernel_and_grads(kernel: str, X: np.ndarray, ell: np.ndarray, extra: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """k(X, X) and its derivatives in ``log ell``.

    Parameters
    ----------
    kernel : str
        Kernel name.
    X : ndarray, shape (N, d)
        Points.
    ell : ndarray, shape (d,)
        Length scales.
    extra : int
        Further (uninitialised) slots at the end of ``dK`` for the caller.

    Returns
    -------
    K : ndarray, shape (N, N)
    dK : ndarray, shape (d + extra, N, N)
        ``dK[i] = dK / d log ell[i]``.
    """
    name = _check(kernel)
    N, d = X.shape
    dK = np.empty((d + extra, N, N))
    r2 = np.zeros((N, N))
    for q in range(d):           # one contiguous (N, N) slab per dimension: no (N, N, d) temporaries
        D = np.subtract.outer(X[:, q], X[:, q]) / ell[q]
        np.multiply(D, D, out=dK[q])
        r2 += dK[q]
    if name == "rbf":
        K = np.exp(-0.5 * r2)
        f = K
    else:
        r = np.sqrt(r2)
        e = np.exp(-_S5 * r)
        K = (1.0 + _S5 * r + 5.0 / 3.0 * r2) * e
        f = 5.0 / 3.0 * (1.0 + _S5 * r) * e
    dK[:d] *= f
    return K, dK


def kernel_dx(kernel: str, X1: np.ndarray, X2: np.ndarray, ell: np.ndarray) -> np.ndarray:
    """Derivative of k(x1, x2) in x1.

    Parameters
    ----------
    kernel : str
        Kernel name.
    X1, X2 : ndarray, shapes (N1, d) and (N2, d)
        Points.
    ell : ndarray, shape (d,)
        Length scales.

    Returns
    -------
    ndarray, shape (N1, N2, d)
    """
    Dl = (X1[:, None, :] - X2[None, :, :]) / (ell * ell)
    r2 = _scaled_sq(X1, X2, ell).sum(axis=2)
    if _check(kernel) == "rbf":
        return -np.exp(-0.5 * r2)[:, :, None] * Dl
    r = np.sqrt(r2)
    f = 5.0 / 3.0 * (1.0 + _S5 * r) * np.exp(-_S5 * r)
    return -f[:, :, None] * Dl


def rbf_hessian_blocks(X1: np.ndarray, X2: np.ndarray, ell: np.ndarray, dims: np.ndarray,
                       with_grads: bool = False):
    """Cov(dH/dx_i(x1), dH/dx_j(x2)) for H ~ GP(0, rbf), i, j in ``dims``.

    ``d^2 k / dx1_i dx2_j = k (delta_ij / l_i^2 - a_i a_j)`` with
    ``a = (x1 - x2) / l^2``.

    Parameters
    ----------
    X1, X2 : ndarray, shapes (N1, d) and (N2, d)
        Points.
    ell : ndarray, shape (d,)
        Length scales.
    dims : ndarray of int
        Input dimensions differentiated (the storage variables).
    with_grads : bool
        Also return the derivatives in ``log ell``.

    Returns
    -------
    K : ndarray, shape (s, N1, s, N2)
        ``s = len(dims)``.
    dK : ndarray, shape (d, s, N1, s, N2)
        Only with ``with_grads``.
    """
    dims = np.asarray(dims, dtype=int)
    if not with_grads:
        return _rbf_hessian_only(X1, X2, ell, dims)
    Delta = X1[:, None, :] - X2[None, :, :]
    S = (Delta / ell) ** 2
    k = np.exp(-0.5 * S.sum(axis=2))
    A = Delta[:, :, dims] / (ell[dims] ** 2)                       # (N1, N2, s)
    s = len(dims)
    eye = np.eye(s)
    inv2 = 1.0 / ell[dims] ** 2
    M = eye[None, None] * inv2[None, None, None, :] - A[:, :, :, None] * A[:, :, None, :]  # (N1,N2,s,s)
    K = np.transpose(k[:, :, None, None] * M, (2, 0, 3, 1))
    d = X1.shape[1]
    dK = np.empty((d,) + K.shape)
    for q in range(d):
        extra = np.zeros_like(M)
        hit = np.nonzero(dims == q)[0]
        for i in hit:
            extra[:, :, i, i] -= 2.0 * inv2[i]
            extra[:, :, i, :] += 2.0 * A[:, :, i, None] * A
            extra[:, :, :, i] += 2.0 * A * A[:, :, i, None]
        dq = k[:, :, None, None] * (S[:, :, q, None, None] * M + extra)
        dK[q] = np.transpose(dq, (2, 0, 3, 1))
    return K, dK


def _rbf_hessian_only(X1: np.ndarray, X2: np.ndarray, ell: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """:func:`rbf_hessian_blocks` without gradients, written block by block into a C-ordered
    (s, N1, s, N2) array (the likelihood reshapes it to a matrix without a copy); symmetric
    blocks are computed once."""
    a = [(X1[:, q, None] - X2[None, :, q]) / ell[q] for q in range(X1.shape[1])]
    k = np.exp(-0.5 * sum(x * x for x in a))
    s = len(dims)
    A = [a[q] * (k / ell[q]) for q in dims]                        # k a_i with a_i = Delta_i / l_i^2
    B = [a[q] / ell[q] for q in dims]
    K = np.empty((s, X1.shape[0], s, X2.shape[0]))
    for i in range(s):
        for j in range(i, s):
            blk = -A[i] * B[j]
            if i == j:
                blk += k / ell[dims[i]] ** 2
            K[i, :, j, :] = blk
            if j != i:
                K[j, :, i, :] = blk
    return K


def rbf_hessian_contract(X1: np.ndarray, X2: np.ndarray, ell: np.ndarray, dims: np.ndarray,
                         G: np.ndarray) -> np.ndarray:
    """``sum G * dK[q]`` for every ``q`` (``dK`` of :func:`rbf_hessian_blocks` with grads) without forming dK.

    With ``P = G k`` (as ``(N1, N2, s, s)``) and ``M = diag(1/l^2) - a a^T``,
    ``dK_q = k (S_q M + E_q)`` where ``S_q = (x1_q - x2_q)^2 / l_q^2`` and
    ``E_q`` (only for a differentiated input) ``= -2/l^2 e_i e_i^T + 2 a_i (e_i a^T + a e_i^T)``:
    the log-likelihood gradient costs ``O(N1 N2 s^2)`` instead of ``O(d N1 N2 s^2)`` memory traffic.

    Parameters
    ----------
    X1, X2 : ndarray, shapes (N1, d) and (N2, d)
        Points.
    ell : ndarray, shape (d,)
        Length scales.
    dims : ndarray of int
        Input dimensions differentiated.
    G : ndarray, shape (s, N1, s, N2)
        The weights (the likelihood's ``1/2 (alpha alpha^T - K^{-1})`` in effort space).

    Returns
    -------
    ndarray, shape (d,)
    """
    dims = np.asarray(dims, dtype=int)
    Delta = X1[:, None, :] - X2[None, :, :]
    S = (Delta / ell) ** 2
    k = np.exp(-0.5 * S.sum(axis=2))
    A = Delta[:, :, dims] / (ell[dims] ** 2)
    inv2 = 1.0 / ell[dims] ** 2
    P = np.transpose(G, (1, 3, 0, 2)) * k[:, :, None, None]             # (N1, N2, s, s)
    PA = np.einsum("bcjl,bcl->bcj", P, A)                                 # sum_l P_jl a_l
    AP = np.einsum("bcjl,bcj->bcl", P, A)                                 # sum_j a_j P_jl
    PM = np.einsum("bcjj,j->bc", P, inv2) - np.einsum("bcj,bcj->bc", PA, A)
    out = np.einsum("bc,bcq->q", PM, S)
    for i, q in enumerate(dims):
        out[q] += (-2.0 * inv2[i] * P[:, :, i, i].sum() + 2.0 * np.sum(A[:, :, i] * PA[:, :, i])
                   + 2.0 * np.sum(A[:, :, i] * AP[:, :, i]))
    return out


def gram(kernel: str, X1: np.ndarray, X2: np.ndarray, ell: np.ndarray, c: Optional[float]) -> np.ndarray:
    """``k(X1, X2) + c X1 X2^T``: the stationary kernel plus an optional linear one.

    Parameters
    ----------
    kernel : str
        Kernel name.
    X1, X2 : ndarray
        Points.
    ell : ndarray
        Length scales.
    c : float or None
        Variance of the linear part (None: no linear part).
    """
    K = kernel_matrix(kernel, X1, X2, ell)
    return K if c is None else K + c * (X1 @ X2.T)


def gram_and_grads(kernel: str, X: np.ndarray, ell: np.ndarray, c: Optional[float]):
    """:func:`gram` at ``(X, X)`` and its derivatives in ``log ell`` (and ``log c`` last).

    Parameters
    ----------
    kernel : str
        Kernel name.
    X : ndarray
        Points.
    ell : ndarray
        Length scales.
    c : float or None
        Variance of the linear part.
    """
    if c is None:
        return kernel_and_grads(kernel, X, ell)
    K, dK = kernel_and_grads(kernel, X, ell, extra=1)
    np.multiply(X @ X.T, c, out=dK[-1])
    return K + dK[-1], dK


def gram_dx(kernel: str, X1: np.ndarray, X2: np.ndarray, ell: np.ndarray, c: Optional[float]) -> np.ndarray:
    """Derivative of :func:`gram` in its first argument, shape (N1, N2, d).

    Parameters
    ----------
    kernel : str
        Kernel name.
    X1, X2 : ndarray
        Points.
    ell : ndarray
        Length scales.
    c : float or None
        Variance of the linear part.
    """
    D = kernel_dx(kernel, X1, X2, ell)
    return D if c is None else D + c * X2[None, :, :]


def gram_diag(X: np.ndarray, c: Optional[float]) -> np.ndarray:
    """Prior variance ``k(x, x) + c |x|^2`` at each point, shape (N,).

    Parameters
    ----------
    X : ndarray
        Points.
    c : float or None
        Variance of the linear part.
    """
    return np.ones(X.shape[0]) if c is None else 1.0 + c * np.sum(X * X, axis=1)
