"""Subspace identification (PO-MOESP) of a discrete model from rest: the coarse-sampling start.

The past-output MOESP scheme: the LQ factorisation of the stacked block
Hankel matrices of future inputs, past inputs, past outputs and future
outputs isolates the part of the future outputs driven by the past; its
leading left singular vectors span the extended observability matrix, which
gives C (first block row) and A (shift invariance).  B then enters the
outputs of the system started at rest linearly: in modal coordinates
``A = V diag(lambda) V^-1`` every regressor is the input filtered by
``1 / (z - lambda_a)`` (:func:`.gram._modal_filter`), so B comes from one
least-squares problem instead of a simulation per entry.  A short horizon
suffices at coarse sampling, where this start matters (the output-error
refinement then needs a few iterations instead of dozens from the ARX
start); as ``h -> 0`` the poles crowd at ``z = 1`` and the midpoint
equation-error start takes over.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

from ...errors import IdentificationError
from .gram import MAX_MODAL_COND, _modal_filter

__all__ = ["moesp"]


def _hankel(z: np.ndarray, rows: int, cols: int) -> np.ndarray:
    return np.vstack([z[r:r + cols].T for r in range(rows)])


def moesp(u: np.ndarray, y: np.ndarray, order: int, horizon: int = 8) -> Tuple[np.ndarray, ...]:
    """``(Ad, Bd, C)`` of ``x_{k+1} = Ad x_k + Bd u_k``, ``y_k = C x_k``, ``x_0 = 0``.

    Parameters
    ----------
    u : numpy.ndarray
        Inputs (N, m).
    y : numpy.ndarray
        Outputs (N, ny).
    order : int
        State dimension.
    horizon : int
        Block rows of the past and future Hankel matrices (raised to
        ``order // ny + 2`` when smaller).

    Returns
    -------
    tuple of numpy.ndarray

    Raises
    ------
    IdentificationError
        Too few samples for the horizon, or an A without a well-conditioned eigenbasis.
    """
    N, m = u.shape
    ny = y.shape[1]
    i = max(int(horizon), order // ny + 2)
    j = N - 2 * i + 1
    if j < 4 * i * (m + ny):
        raise IdentificationError(f"{N} samples are too few for a subspace horizon of {i}")
    H = np.vstack([_hankel(u[i:], i, j), _hankel(u, i, j), _hankel(y, i, j), _hankel(y[i:], i, j)])
    R = np.linalg.qr(H.T, mode="r").T                   # H = R Q, R lower triangular
    a, b = i * m, i * (2 * m + ny)
    U, s, _ = np.linalg.svd(R[b:, a:b], full_matrices=False)
    G = U[:, :order] * np.sqrt(s[:order])              # extended observability matrix
    C = G[:ny]
    A = np.linalg.lstsq(G[:-ny], G[ny:], rcond=None)[0]
    lam, V = np.linalg.eig(A)
    if not np.all(np.isfinite(lam)) or np.linalg.cond(V) >= MAX_MODAL_COND:
        raise IdentificationError("the subspace estimate of A has no well-conditioned eigenbasis")
    Vi = np.linalg.inv(V)
    na = lam.size
    Fr, Fi = _modal_filter(np.ascontiguousarray(lam), np.ascontiguousarray(u[:-1].T))   # rows (a, i)
    F = (Fr + 1j * Fi).reshape(na, m * (N - 1))                                      # filter_a(u_i) at samples 1..N-1
    W = (C @ V)[:, :, None] * Vi[None]                                    # (output, mode, state)
    Reg = (W.transpose(0, 2, 1) @ F).real.reshape(ny, order, m, N - 1)   # d y_k[o] / d B[s, i]
    Reg = Reg.transpose(3, 0, 1, 2).reshape((N - 1) * ny, order * m)
    scale = np.linalg.norm(Reg, axis=0)
    scale[scale == 0] = 1.0
    Rs = Reg / scale
    sol = np.linalg.lstsq(Rs.T @ Rs, Rs.T @ y[1:].reshape(-1), rcond=None)[0] / scale
    return A, sol.reshape(order, m), C
