"""Discrete simulation of ``x' = (J - R) Q x + B u``, ``y = B^T Q x`` and the
exact discrete adjoint gradient of the output-error cost.

The step is the one linear discretisation of phsym
(:func:`phsym.structure.discrete.theta_step`): with ``A = (J - R) Q`` and the
scheme's ``theta``, ``x_{k+1} = Ad x_k + Bd v_k`` where
``Ad = I + M^{-1} A``, ``Bd = M^{-1} B``, ``M = I / h - theta A`` and ``v_k``
the scheme's step input (``u_k``, ``(u_k + u_{k+1})/2`` or ``u_{k+1}``).
Explicit Euler (``theta = 0``) is the seed paper's scheme; the implicit
midpoint rule (Cayley-Tustin) preserves passivity.

The cost is ``Phi = 1/2 sum_k w_k |yhat_k - d_k|^2`` where the model output
``yhat`` is either the output at the grid times, ``C x_k`` (data with
``N + 1`` samples; weights of the rectangle or trapezoidal rule matching
``theta``), or the step value ``C x_theta,k`` (``N`` step values, as the
simulator reports them).  The gradient is the exact derivative of this
discrete ``Phi`` (discrete adjoint ``lam_k = g_k + Ad^T lam_{k+1}``), see
docs/identification-linear.md.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np

from ..common.schemes import Scheme, step_inputs
from ..structure.discrete import state_transition, theta_step
from .data import uniform_step
from .linear_kernels import affine_recurrence, mm, mtm, solve_factored

__all__ = ["SCHEMES", "discretize", "quadrature_weights", "simulate", "cost_and_gradient", "uniform_step"]

#: Schemes of the linear identifier.
SCHEMES = ("midpoint", "backward_euler", "explicit_euler")


def discretize(J: np.ndarray, R: np.ndarray, Q: np.ndarray, B: np.ndarray, h: float,
               scheme: Scheme) -> Tuple[np.ndarray, np.ndarray, tuple]:
    """One-step matrices ``(Ad, Bd, lu)``; ``lu`` factors ``M = I / h - theta A``.

    Parameters
    ----------
    J, R, Q, B : numpy.ndarray
        System matrices.
    h : float
        Step.
    scheme : Scheme
        From :func:`phsym.common.schemes.get_scheme`.
    """
    A = mm(J - R, Q)
    Ad, Bd, lu = state_transition(theta_step(np.eye(A.shape[0]), A, B, h, scheme))
    return Ad, Bd, (np.ascontiguousarray(lu[0]), np.ascontiguousarray(lu[1], dtype=np.int64), lu[2])


def quadrature_weights(N: int, h: float, scheme: Scheme, on_steps: bool = False) -> np.ndarray:
    """Weights of the output-error integral: ``N`` grid samples, or ``N`` step values.

    Parameters
    ----------
    N : int
        Number of output samples.
    h : float
        Step.
    scheme : Scheme
        Rectangle rules for ``theta`` 0 and 1, trapezoidal for 1/2 (grid samples).
    on_steps : bool
        The samples are step values (each weighs ``h``).
    """
    w = np.full(N, h)
    if not on_steps:
        w[0], w[-1] = (1.0 - scheme.theta) * h, scheme.theta * h
    return w


def _mix(X: np.ndarray, theta: float) -> np.ndarray:
    """Step values ``x_theta,k = (1 - theta) x_k + theta x_{k+1}`` of a trajectory (N+1 -> N rows)."""
    return (1.0 - theta) * X[:-1] + theta * X[1:]


def _unmix(R: np.ndarray, theta: float) -> np.ndarray:
    """Adjoint of :func:`_mix` (N -> N+1 rows)."""
    out = np.zeros((R.shape[0] + 1, R.shape[1]))
    out[:-1] += (1.0 - theta) * R
    out[1:] += theta * R
    return out


def simulate(J: np.ndarray, R: np.ndarray, Q: np.ndarray, B: np.ndarray, x0: np.ndarray,
             u: np.ndarray, h: float, scheme: Scheme, on_steps: bool = False) -> Tuple[np.ndarray, np.ndarray]:
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
    scheme : Scheme
        Time-stepping scheme.
    on_steps : bool
        Return step values of the output (``N - 1`` rows) instead of grid values.

    Returns
    -------
    X : numpy.ndarray, shape (N, n)
        States.
    Y : numpy.ndarray, shape (N, m) or (N - 1, m)
        Outputs ``B^T Q x_k`` (or ``B^T Q x_theta,k``).
    """
    Ad, Bd, _ = discretize(J, R, Q, B, h, scheme)
    F = mm(step_inputs(u, scheme), Bd.T)
    X = affine_recurrence(Ad, x0, F)
    C = mm(B.T, Q)
    return X, mm(_mix(X, scheme.theta) if on_steps else X, C.T)


def cost_and_gradient(J: np.ndarray, R: np.ndarray, Q: np.ndarray, B: np.ndarray,
                      x0: np.ndarray, u: np.ndarray, d: np.ndarray, h: float,
                      scheme: Scheme, grad: bool = True, on_steps: bool = False
                      ) -> Tuple[float, Optional[Dict[str, np.ndarray]]]:
    """Discrete output-error cost and its exact gradient.

    Parameters
    ----------
    J, R, Q, B, x0 : numpy.ndarray
        Current system (no structure assumptions are needed for the formulas).
    u : numpy.ndarray, shape (N, m)
        Inputs on the uniform grid.
    d : numpy.ndarray, shape (N, m) or (N - 1, m)
        Output data: grid samples or step values (``on_steps``).
    h : float
        Time step.
    scheme : Scheme
        Time-stepping scheme.
    grad : bool
        Also return the gradient.
    on_steps : bool
        ``d`` holds step values.

    Returns
    -------
    cost : float
        ``1/2 sum_k w_k |yhat_k - d_k|^2``.
    gradient : dict or None
        Euclidean partial derivatives ``{"J", "R", "Q", "B", "x0"}`` with
        respect to unconstrained matrix entries (the caller projects them onto
        the structured parametrisation).
    """
    th = float(scheme.theta)
    Ad, Bd, lu = discretize(J, R, Q, B, h, scheme)
    V = step_inputs(u, scheme)
    X = affine_recurrence(Ad, x0, mm(V, Bd.T))
    C = mm(B.T, Q)
    Xo = _mix(X, th) if on_steps else X            # what the outputs are taken from
    r = mm(Xo, C.T) - d
    w = quadrature_weights(Xo.shape[0], h, scheme, on_steps)
    wr = w[:, None] * r
    cost = 0.5 * float(np.sum(wr * r))
    if not np.isfinite(cost):
        return float("inf"), None
    if not grad:
        return cost, None
    # discrete adjoint: lam_N = g_N, lam_k = g_k + Ad^T lam_{k+1} with g = dPhi/dx_k
    G = mm(_unmix(wr, th) if on_steps else wr, C)          # (N, n)
    lam_rev = affine_recurrence(Ad.T, G[-1], G[-2::-1])
    Lam = lam_rev[::-1]
    GA = mtm(Lam[1:], X[:-1])                    # dPhi/dAd
    GBd = mtm(Lam[1:], V)                        # dPhi/dBd
    GC = mtm(wr, Xo)                             # dPhi/dC  (m, n)
    # Ad = M^-1 (I/h + (1 - theta) A), Bd = M^-1 B, M = I/h - theta A:
    # dAd = M^-1 dA ((1 - theta) I + theta Ad),  dBd = M^-1 (dB + theta dA Bd)
    n = Ad.shape[0]
    T = mm(GA, ((1.0 - th) * np.eye(n) + th * Ad).T) + th * mm(GBd, Bd.T)
    gA = solve_factored(lu, T, trans=True)
    gB = solve_factored(lu, GBd, trans=True)
    gJ = mm(gA, Q.T)
    return cost, {
        "J": gJ,
        "R": -gJ,
        "Q": mm((J - R).T, gA) + mm(B, GC),
        "B": gB + mm(Q, GC.T),
        "x0": Lam[0].copy(),
    }
