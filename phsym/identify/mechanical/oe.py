"""Output-error residuals of a discretised mechanical model and their exact Jacobian.

The model ``x_{k+1} = Ad x_k + B0 u_k + B1 u_{k+1}``, ``y_k = C q_k`` starts
at rest (``x_0 = 0``).  Forward sensitivities ``S_k = dx_k / dtheta`` obey
the same recursion driven by ``dAd x_k + dB0 u_k + dB1 u_{k+1}``, which gives
the Jacobian exactly (up to round-off) in one pass.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import scipy.signal as ss

from .gram import modal_normal_equations
from .maps import discretise_with_derivatives
from .param import Parametrisation

__all__ = ["simulate_positions", "OutputError"]


def simulate_positions(Ad: np.ndarray, B0: np.ndarray, B1: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Positions ``q_k`` (N, n) of the discrete model from rest.

    Parameters
    ----------
    Ad, B0, B1 : numpy.ndarray
        Update matrices.
    u : numpy.ndarray
        Inputs (N, m) on the grid.

    Returns
    -------
    numpy.ndarray
    """
    N = u.shape[0]
    n = Ad.shape[0] // 2
    w = u[:-1] @ B0.T + u[1:] @ B1.T
    out = np.zeros((N, n))
    out[1:] = _recursion(Ad, w.T[:, None, :], n)[:, 0, :].T
    return out


class OutputError:
    """Residuals ``C q_sim - y`` (flattened) and Jacobian for a parametrisation.

    Parameters
    ----------
    par : Parametrisation
        The parameter map.
    u : numpy.ndarray
        Inputs (N, m).
    y : numpy.ndarray
        Measured outputs (N, n).
    h : float
        Sampling time.
    kind : {"midpoint", "zoh"}
        Discretisation.
    C : numpy.ndarray, optional
        Output matrix (identity by default).
    """

    def __init__(self, par: Parametrisation, u: np.ndarray, y: np.ndarray, h: float, kind: str,
                 C: Optional[np.ndarray] = None):
        self.par, self.u, self.y, self.h, self.kind = par, u, y, h, kind
        self.C = np.eye(par.n) if C is None else C
        self.n_evals = 0
        self._cache: Tuple = (None, None)

    def _model(self, theta: np.ndarray, derivatives: bool):
        M, D, K, L, _ = self.par.unpack(theta)
        dirs = self.par.directions(theta) if derivatives else ()
        return discretise_with_derivatives(M, D, K, L, self.h, self.kind, dirs)

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        """Flattened residuals (N * n,); infinite where theta gives no finite model (a step too far)."""
        self.n_evals += 1
        try:
            Ad, B0, B1, *_ = self._model(theta, False)
            q = simulate_positions(Ad, B0, B1, self.u)
        except (ValueError, np.linalg.LinAlgError):
            return np.full(self.y.size, np.inf)
        return (q @ self.C.T - self.y).reshape(-1)

    def normal_equations(self, theta: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(J^T J, J^T r)`` at theta, through the modal Gram matrix (:mod:`.gram`) without forming J.

        Falls back to :meth:`jacobian` when Ad is not safely diagonalisable.
        """
        Ad, B0, B1, dAd, dB0, dB1 = self._model(theta, True)
        u = self.u
        N, n2 = u.shape[0], Ad.shape[0]
        w = (u[:-1] @ B0.T + u[1:] @ B1.T).T
        X = np.zeros((n2, N))
        X[:, 1:] = _recursion(Ad, w[:, None, :])[:, 0, :]
        r = X[:n2 // 2].T @ self.C.T - self.y
        out = modal_normal_equations(Ad, B0, B1, dAd, dB0, dB1, u, X, self.C, r)
        if out is None:
            J = self.jacobian(theta)
            return J.T @ J, J.T @ r.reshape(-1)
        return out

    def jacobian(self, theta: np.ndarray) -> np.ndarray:
        """Exact Jacobian (N * n, P) of :meth:`residuals`."""
        Ad, B0, B1, dAd, dB0, dB1 = self._model(theta, True)
        u = self.u
        N, n2, P = u.shape[0], Ad.shape[0], dAd.shape[2]
        n = n2 // 2
        w = (u[:-1] @ B0.T + u[1:] @ B1.T).T
        X = np.zeros((n2, N))
        X[:, 1:] = _recursion(Ad, w[:, None, :])[:, 0, :]
        U0, U1 = u[:-1].T, u[1:].T
        Jq = np.zeros((n, P, N))
        step = max(1, 2 ** 21 // max(N * n2, 1))          # parameters per block (bounded memory)
        for p0 in range(0, P, step):
            sl = slice(p0, min(p0 + step, P))
            F = (np.tensordot(dAd[:, :, sl], X[:, :-1], axes=([1], [0]))
                 + np.tensordot(dB0[:, :, sl], U0, axes=([1], [0]))
                 + np.tensordot(dB1[:, :, sl], U1, axes=([1], [0])))
            Jq[:, sl, 1:] = _recursion(Ad, F, n)
        J = np.tensordot(self.C, Jq, axes=([1], [0]))                # (output, p, k)
        return np.ascontiguousarray(J.transpose(2, 0, 1)).reshape(N * n, P)


def _recursion(Ad: np.ndarray, F: np.ndarray, rows: Optional[int] = None) -> np.ndarray:
    """``S_0 = 0``, ``S_{k+1} = Ad S_k + F_k``: F (n2, P, K) -> (S_1 .. S_K) as (rows, P, K).

    In modal coordinates every mode is a first-order recursion that
    :func:`scipy.signal.lfilter` runs in compiled code (one mode of each
    complex-conjugate pair suffices: Ad is real); a plain loop when Ad is not
    safely diagonalisable.
    """
    n2, P, K = F.shape
    r = n2 if rows is None else rows
    lam, V = np.linalg.eig(Ad)
    if np.linalg.cond(V) < 1e8:
        Vi = np.linalg.inv(V)
        keep = np.flatnonzero(lam.imag >= 0)
        weight = np.where(lam[keep].imag > 0, 2.0, 1.0)
        G = np.tensordot(Vi[keep], F, axes=([1], [0]))           # (mode, p, k)
        for a, i in enumerate(keep):
            G[a] = ss.lfilter([1.0], [1.0, -lam[i]], G[a], axis=-1)
        return np.tensordot(V[:r, keep] * weight, G, axes=([1], [0])).real
    S = np.zeros((r, P, K))
    s = np.zeros((n2, P))
    for k in range(K):
        s = Ad @ s + F[:, :, k]
        S[:, :, k] = s[:r]
    return S
