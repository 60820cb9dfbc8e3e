"""The two systems of the seed (Zaspel & Günther), as data generators for
tests and benchmarks: the RC circuit with a nonlinear capacitor (index 1) and
the planar pendulum (index 3).  Each returns the structure, the sampled
states, inputs, exact derivatives and the exact effort function.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["SeedSystem", "rc_circuit", "pendulum"]


@dataclass
class SeedSystem:
    """A seed benchmark: structure, data on the time grid, exact efforts.

    Parameters
    ----------
    name : str
        ``"rc"`` or ``"pendulum"``.
    E, J, R, B : ndarray
        Structure of ``E x' = (J - R) z(x) + B u``.
    t : ndarray, shape (N,)
        Sample times.
    X : ndarray, shape (N, n)
        States (algebraic variables included).
    U : ndarray, shape (N, m)
        Inputs.
    Xdot : ndarray, shape (N, n)
        Exact derivatives of the data (the right-hand side at the samples).
    effort : callable
        Exact ``z(X)``, shape (M, n).
    """

    name: str
    E: np.ndarray
    J: np.ndarray
    R: np.ndarray
    B: np.ndarray
    t: np.ndarray
    X: np.ndarray
    U: np.ndarray
    Xdot: np.ndarray
    effort: Callable[[np.ndarray], np.ndarray]

    def targets(self, X: np.ndarray, U: np.ndarray, Xdot: np.ndarray) -> np.ndarray:
        """``E x' - B u`` for given samples.

        Parameters
        ----------
        X, U, Xdot : ndarray
            States, inputs and derivatives.
        """
        return Xdot @ self.E.T - U @ self.B.T


def rc_circuit(G: float = 1.0, a: float = 1.0, w: float = 1.0, steps: int = 3000,
               x0: float = 2.0, X1: np.ndarray = None, t: np.ndarray = None) -> SeedSystem:
    """RC circuit with the charge law ``q = u_C^2 / 2``: x = (q_C, u_2, I_V).

    ``x_1' = G (u - sqrt(2 x_1))`` by explicit Euler with ``steps`` steps on
    ``[0, 10 pi / w]`` (the seed's data); ``x_2 = u`` and ``x_3`` the source
    current ``G (u - sqrt(2 x_1))`` (the seed prints ``G (x_1 - x_2)``, which
    does not satisfy its own second equation).  A trajectory ``X1`` on times
    ``t`` (for instance from an accurate integrator) replaces the Euler data.

    Parameters
    ----------
    G : float
        Conductance.
    a, w : float
        Input ``u = a (1 + sin(w t))``.
    steps : int
        Euler steps.
    x0 : float
        Initial charge.
    X1 : ndarray, optional
        Charge samples replacing the Euler solution.
    t : ndarray, optional
        Their times.
    """
    if X1 is None:
        t = np.linspace(0.0, 10.0 * np.pi / w, steps + 1)
        h = t[1] - t[0]
        X1 = np.empty(t.size)
        X1[0] = x0
        for k in range(steps):
            X1[k + 1] = X1[k] + h * G * (a * (1 + np.sin(w * t[k])) - np.sqrt(2.0 * X1[k]))
    u = a * (1.0 + np.sin(w * t))
    i_v = G * (u - np.sqrt(2.0 * X1))
    X = np.column_stack([X1, u, i_v])
    Xdot = np.column_stack([i_v, np.zeros_like(u), np.zeros_like(u)])
    E = np.diag([1.0, 0.0, 0.0])
    J = np.array([[0.0, 0, 0], [0, 0, 1], [0, -1, 0]])
    R = np.array([[G, -G, 0], [-G, G, 0], [0, 0, 0]])
    B = np.array([[0.0], [0.0], [1.0]])

    def effort(Xe: np.ndarray) -> np.ndarray:
        Xe = np.atleast_2d(Xe)
        return np.column_stack([np.sqrt(2.0 * Xe[:, 0]), Xe[:, 1], Xe[:, 2]])

    return SeedSystem("rc", E, J, R, B, t, X, u[:, None], Xdot, effort)


def pendulum(m: float = 1.0, l: float = 1.0, g: float = 1.0, beta: float = 1.0, tau: float = 1.0,
             h: float = 0.01, t_end: float = 30.0, alpha: np.ndarray = None, dalpha: np.ndarray = None,
             t: np.ndarray = None) -> SeedSystem:
    """Planar pendulum as an index-3 pH-DAE: x = (q_1, q_2, p_1, p_2, lambda).

    The seed's data: ``alpha'' = -(g - u) sin(alpha) / l``, ``alpha(0) = pi/4``,
    ``alpha'(0) = 0``, explicit Euler with step ``h`` on ``[0, t_end]``,
    ``u = beta g cos(2 pi t / tau)``; ``q``, ``p``, ``lambda`` reconstructed from
    the angle.  Given ``alpha``, ``dalpha`` on ``t`` replace the Euler data.

    Parameters
    ----------
    m, l, g : float
        Mass, length, gravity.
    beta, tau : float
        Input amplitude (relative to g) and period.
    h, t_end : float
        Euler step and horizon.
    alpha, dalpha : ndarray, optional
        Angle and angular velocity replacing the Euler solution.
    t : ndarray, optional
        Their times.
    """
    if alpha is None:
        t = np.arange(0.0, t_end + 0.5 * h, h)
        alpha, dalpha = np.empty(t.size), np.empty(t.size)
        alpha[0], dalpha[0] = np.pi / 4, 0.0
        for k in range(t.size - 1):
            uk = beta * g * np.cos(2 * np.pi * t[k] / tau)
            alpha[k + 1] = alpha[k] + h * dalpha[k]
            dalpha[k + 1] = dalpha[k] - h * (g - uk) * np.sin(alpha[k]) / l
    u = beta * g * np.cos(2 * np.pi * t / tau)
    s, c = np.sin(alpha), np.cos(alpha)
    q = l * np.column_stack([s, -c])
    p = m * l * dalpha[:, None] * np.column_stack([c, s])
    lam = m / (2 * l) * (c * (u - g) - l * dalpha ** 2)
    X = np.column_stack([q, p, lam])
    b = np.array([0.0, m])
    qdot = p / m
    pdot = np.array([0.0, -m * g]) + 2 * q * lam[:, None] + np.outer(u, b)
    Xdot = np.column_stack([qdot, pdot, np.zeros_like(u)])
    E = np.diag([1.0, 1, 1, 1, 0])
    J = np.zeros((5, 5))
    J[0:2, 2:4] = np.eye(2)
    J[2:4, 0:2] = -np.eye(2)
    R = np.zeros((5, 5))
    R[4, 4] = 1.0
    B = np.zeros((5, 1))
    B[2:4, 0] = b

    def effort(Xe: np.ndarray) -> np.ndarray:
        Xe = np.atleast_2d(Xe)
        qe, pe, le = Xe[:, 0:2], Xe[:, 2:4], Xe[:, 4]
        zq = np.array([0.0, g * m]) - 2 * qe * le[:, None]
        return np.column_stack([zq, pe / m, np.sum(qe * qe, axis=1) - l * l])

    return SeedSystem("pendulum", E, J, R, B, t, X, u[:, None], Xdot, effort)
