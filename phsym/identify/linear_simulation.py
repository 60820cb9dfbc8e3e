"""Discrete simulation of ``x' = (J - R) Q x + B u``, ``y = B^T Q x`` and the
exact discrete adjoint gradient of the output-error cost.

Two one-step schemes on a uniform grid ``t_k = t_0 + k h``:

``"euler"`` (explicit Euler, as in the seed paper)
    ``x_{k+1} = (I + h A) x_k + h B u_k``.
``"midpoint"`` (implicit midpoint = Cayley-Tustin, passivity preserving)
    ``(I - h A / 2) x_{k+1} = (I + h A / 2) x_k + h B (u_k + u_{k+1}) / 2``.

Both read ``x_{k+1} = Ad x_k + Bd v_k`` with ``A = (J - R) Q``.  The cost is
the quadrature ``Phi = 1/2 sum_k w_k |B^T Q x_k - d_k|^2`` with weights
``w`` = left rectangle rule (euler) or trapezoidal rule (midpoint).  The
gradient is the exact derivative of this discrete ``Phi`` (discrete adjoint
``lam_k = C^T w_k r_k + Ad^T lam_{k+1}``), see docs/identification-linear.md.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np
import scipy.linalg as sla

from ..errors import IdentificationError
from .data import uniform_step
from .linear_kernels import affine_recurrence, lu_solve, mm, mtm

__all__ = ["SCHEMES", "discretize", "input_sequence", "quadrature_weights",
           "simulate", "cost_and_gradient", "uniform_step"]

SCHEMES = ("midpoint", "euler")


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; choose from {SCHEMES}")


def discretize(J: np.ndarray, R: np.ndarray, Q: np.ndarray, B: np.ndarray, h: float,
               scheme: str) -> Tuple[np.ndarray, np.ndarray, Optional[tuple]]:
    """One-step matrices ``(Ad, Bd, lu)``; ``lu`` factors ``I - h A / 2`` (midpoint)."""
    _check_scheme(scheme)
    A = mm(J - R, Q)
    n = A.shape[0]
    if scheme == "euler":
        return np.eye(n) + h * A, h * B, None
    lu = sla.lu_factor(np.eye(n) - 0.5 * h * A, check_finite=False)
    Ad = lu_solve(lu, np.eye(n) + 0.5 * h * A)
    Bd = lu_solve(lu, h * B)
    return Ad, Bd, lu


def input_sequence(u: np.ndarray, scheme: str) -> np.ndarray:
    """Per-step input ``v_k``: ``u_k`` (euler) or ``(u_k + u_{k+1}) / 2`` (midpoint)."""
    _check_scheme(scheme)
    if scheme == "euler":
        return u[:-1]
    return 0.5 * (u[:-1] + u[1:])


def quadrature_weights(N: int, h: float, scheme: str) -> np.ndarray:
    """Quadrature weights of the output-error integral on ``N`` samples."""
    _check_scheme(scheme)
    w = np.full(N, h)
    if scheme == "euler":
        w[-1] = 0.0
    else:
        w[0] = w[-1] = 0.5 * h
    return w


def simulate(J: np.ndarray, R: np.ndarray, Q: np.ndarray, B: np.ndarray, x0: np.ndarray,
             u: np.ndarray, h: float, scheme: str = "midpoint") -> Tuple[np.ndarray, np.ndarray]:
    """Simulate on a uniform grid.

    Parameters
    ----------
    J, R, Q, B : numpy.ndarray
        System matrices.
    x0 : numpy.ndarray, shape (n,)
        Initial state.
    u : numpy.ndarray, shape (N, m)
        Inputs at the grid points.
    h : float
        Time step.
    scheme : {"midpoint", "euler"}
        Time-stepping scheme.

    Returns
    -------
    X : numpy.ndarray, shape (N, n)
        States.
    Y : numpy.ndarray, shape (N, m)
        Outputs ``B^T Q x_k``.
    """
    Ad, Bd, _ = discretize(J, R, Q, B, h, scheme)
    F = mm(input_sequence(u, scheme), Bd.T)
    X = affine_recurrence(Ad, x0, F)
    return X, mm(X, mm(Q.T, B))


def cost_and_gradient(J: np.ndarray, R: np.ndarray, Q: np.ndarray, B: np.ndarray,
                      x0: np.ndarray, u: np.ndarray, d: np.ndarray, h: float,
                      scheme: str = "midpoint", grad: bool = True
                      ) -> Tuple[float, Optional[Dict[str, np.ndarray]]]:
    """Discrete output-error cost and its exact gradient.

    Parameters
    ----------
    J, R, Q, B, x0 : numpy.ndarray
        Current system (no structure assumptions are needed for the formulas).
    u, d : numpy.ndarray, shape (N, m)
        Inputs and output data on the uniform grid.
    h : float
        Time step.
    scheme : {"midpoint", "euler"}
        Time-stepping scheme.
    grad : bool
        Also return the gradient.

    Returns
    -------
    cost : float
        ``1/2 sum_k w_k |B^T Q x_k - d_k|^2``.
    gradient : dict or None
        Euclidean partial derivatives ``{"J", "R", "Q", "B", "x0"}`` with
        respect to unconstrained matrix entries (the caller projects them onto
        the structured parametrisation).
    """
    Ad, Bd, lu = discretize(J, R, Q, B, h, scheme)
    V = input_sequence(u, scheme)
    X = affine_recurrence(Ad, x0, mm(V, Bd.T))
    C = mm(B.T, Q)
    r = mm(X, C.T) - d
    w = quadrature_weights(X.shape[0], h, scheme)
    wr = w[:, None] * r
    cost = 0.5 * float(np.sum(wr * r))
    if not np.isfinite(cost):
        return float("inf"), None
    if not grad:
        return cost, None
    # discrete adjoint: lam_{N-1} = C^T e_{N-1}, lam_k = C^T e_k + Ad^T lam_{k+1}
    G = mm(wr, C)                                # (N, n), row k = C^T e_k
    lam_rev = affine_recurrence(Ad.T, G[-1], G[-2::-1])
    Lam = lam_rev[::-1]
    GA = mtm(Lam[1:], X[:-1])                    # dPhi/dAd
    GBd = mtm(Lam[1:], V)                        # dPhi/dBd
    GC = mtm(wr, X)                              # dPhi/dC  (m, n)
    if scheme == "euler":
        gA = h * GA
        gB = h * GBd
    else:
        n = Ad.shape[0]
        T = mm(GA, (np.eye(n) + Ad).T) + mm(GBd, Bd.T)
        gA = 0.5 * h * lu_solve(lu, T, trans=1)
        gB = h * lu_solve(lu, GBd, trans=1)
    gJ = mm(gA, Q.T)
    out = {
        "J": gJ,
        "R": -gJ,
        "Q": mm((J - R).T, gA) + mm(B, GC),
        "B": gB + mm(Q, GC.T),
        "x0": Lam[0].copy(),
    }
    return cost, out
