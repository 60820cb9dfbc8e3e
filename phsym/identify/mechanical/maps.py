"""Discrete <-> continuous maps of ``M q'' + D q' + K q = L u``.

The midpoint variational integrator is the Cayley-Tustin transform of
``M s^2 + D s + K``: with ``f_d(k) = (h/4) L (u_k + 2 u_{k-1} + u_{k-2})``

    Md q_k + Dd q_{k-1} + Kd q_{k-2} = f_d(k),
    Md = M/h + h K/4 + D/2,  Dd = -(2 M/h - h K/2),  Kd = M/h + h K/4 - D/2,

a *linear* and well-conditioned map with the linear inverse
``M = (h/4)(Md + Kd - Dd)``, ``D = Md - Kd``, ``K = (Md + Kd + Dd)/h``
(in contrast to the matrix logarithm behind ``d2c``, whose error grows as
``h -> 0``).  The zero-order-hold (ZOH) discretisation is exact for inputs
held between samples.  Both are written here as first-order updates of
``x = (q, q')``, ``x_{k+1} = Ad x_k + B0 u_k + B1 u_{k+1}``, with their exact
derivatives with respect to ``(M, D, K, L)``.
"""
from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np
import scipy.linalg as sla

from ...errors import IdentificationError

__all__ = ["midpoint_c2d", "midpoint_d2c", "first_order", "discretise", "discretise_with_derivatives",
           "DISCRETISATIONS"]

DISCRETISATIONS = ("midpoint", "zoh")


def midpoint_c2d(M: np.ndarray, D: np.ndarray, K: np.ndarray, h: float) -> Tuple[np.ndarray, ...]:
    """Discrete midpoint parameters ``(Md, Dd, Kd)`` of ``(M, D, K)``.

    Parameters
    ----------
    M, D, K : numpy.ndarray
        Mass, damping and stiffness matrices.
    h : float
        Sampling time.

    Returns
    -------
    tuple of numpy.ndarray
        ``(Md, Dd, Kd)``.

    Examples
    --------
    >>> import numpy as np
    >>> Md, Dd, Kd = midpoint_c2d(np.eye(1), 0.2 * np.eye(1), 4 * np.eye(1), 0.1)
    >>> [float(x[0, 0]) for x in midpoint_d2c(Md, Dd, Kd, 0.1)]
    [1.0, 0.2, 4.0]
    """
    M, D, K = (np.asarray(a, dtype=float) for a in (M, D, K))
    return M / h + h * K / 4 + D / 2, -(2 * M / h - h * K / 2), M / h + h * K / 4 - D / 2


def midpoint_d2c(Md: np.ndarray, Dd: np.ndarray, Kd: np.ndarray, h: float) -> Tuple[np.ndarray, ...]:
    """Continuous ``(M, D, K)`` of discrete midpoint parameters (inverse of :func:`midpoint_c2d`).

    Parameters
    ----------
    Md, Dd, Kd : numpy.ndarray
        Coefficients of ``q_k``, ``q_{k-1}``, ``q_{k-2}``.
    h : float
        Sampling time.

    Returns
    -------
    tuple of numpy.ndarray
        ``(M, D, K)``.
    """
    Md, Dd, Kd = (np.asarray(a, dtype=float) for a in (Md, Dd, Kd))
    return h / 4 * (Md + Kd - Dd), Md - Kd, (Md + Kd + Dd) / h


def first_order(M: np.ndarray, D: np.ndarray, K: np.ndarray, L: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(A, B)`` of ``x' = A x + B u`` for ``x = (q, q')``.

    Parameters
    ----------
    M, D, K : numpy.ndarray
        Mass, damping and stiffness matrices (n, n).
    L : numpy.ndarray
        Input matrix (n, m).

    Returns
    -------
    tuple of numpy.ndarray
        ``A`` (2n, 2n) and ``B`` (2n, m).
    """
    n = M.shape[0]
    lower = np.linalg.solve(M, np.hstack([-K, -D, L]))
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:] = lower[:, :2 * n]
    B = np.vstack([np.zeros((n, L.shape[1])), lower[:, 2 * n:]])
    return A, B


def discretise(M: np.ndarray, D: np.ndarray, K: np.ndarray, L: np.ndarray, h: float,
               kind: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Ad, B0, B1)`` of ``x_{k+1} = Ad x_k + B0 u_k + B1 u_{k+1}``, ``x = (q, q')``.

    Parameters
    ----------
    M, D, K, L : numpy.ndarray
        Continuous parameters.
    h : float
        Sampling time.
    kind : {"midpoint", "zoh"}
        Implicit midpoint (Cayley-Tustin, input ``(u_k + u_{k+1})/2``) or
        exact zero-order hold (input ``u_k`` held over the step).

    Returns
    -------
    tuple of numpy.ndarray
    """
    return discretise_with_derivatives(M, D, K, L, h, kind, ())[:3]


def discretise_with_derivatives(M: np.ndarray, D: np.ndarray, K: np.ndarray, L: np.ndarray, h: float, kind: str,
                                directions: Sequence[Tuple[np.ndarray, ...]]):
    """:func:`discretise` and its directional derivatives.

    Parameters
    ----------
    M, D, K, L : numpy.ndarray
        Continuous parameters.
    h : float
        Sampling time.
    kind : {"midpoint", "zoh"}
        Discretisation.
    directions : sequence of tuple of numpy.ndarray
        Perturbations ``(dM, dD, dK, dL)``.

    Returns
    -------
    tuple
        ``(Ad, B0, B1, dAd, dB0, dB1)``; the derivatives stacked on a last
        axis, one slice per direction.
    """
    n, m = L.shape
    N2 = 2 * n
    A, B = first_order(M, D, K, L)
    P = len(directions)
    dA = np.zeros((N2, N2, P))
    dB = np.zeros((N2, m, P))
    if P:
        Minv = np.linalg.inv(M)
        KDL = np.hstack([-K, -D, L])
        low = Minv @ KDL
        for j, (dM, dD, dK, dL) in enumerate(directions):
            d = Minv @ (np.hstack([-dK, -dD, dL]) - dM @ low)
            dA[n:, :, j] = d[:, :N2]
            dB[n:, :, j] = d[:, N2:]
    if kind == "midpoint":
        E = np.eye(N2) - h / 2 * A
        lu = sla.lu_factor(E)
        Ad = sla.lu_solve(lu, np.eye(N2) + h / 2 * A)
        Bd = sla.lu_solve(lu, h / 2 * B)
        if P:
            IA = np.eye(N2) + Ad
            dAd = h / 2 * sla.lu_solve(lu, _right(dA, IA).reshape(N2, -1)).reshape(N2, N2, P)
            rhs = h / 2 * (dB + _right(dA, Bd))
            dBd = sla.lu_solve(lu, rhs.reshape(N2, -1)).reshape(N2, m, P)
        else:
            dAd, dBd = dA, dB
        return Ad, Bd, Bd, dAd, dBd, dBd
    if kind == "zoh":
        Z = np.zeros((N2 + m, N2 + m))
        Z[:N2, :N2] = A * h
        Z[:N2, N2:] = B * h
        E = sla.expm(Z)
        dZ = np.zeros((N2 + m, N2 + m, P))
        dZ[:N2, :N2] = dA * h
        dZ[:N2, N2:] = dB * h
        dE = _expm_frechet_all(Z, E, dZ)
        dAd, dBd = dE[:N2, :N2], dE[:N2, N2:]
        zero = np.zeros((N2, m))
        return E[:N2, :N2], E[:N2, N2:], zero, dAd, dBd, np.zeros((N2, m, P))
    raise IdentificationError(f"unknown discretisation {kind!r}; choose from {DISCRETISATIONS}")


def _expm_frechet_all(Z: np.ndarray, E: np.ndarray, dZ: np.ndarray) -> np.ndarray:
    """Frechet derivatives of ``expm`` at Z in the directions ``dZ[:, :, j]``.

    Through the eigendecomposition ``Z = V diag(l) V^-1``:
    ``V (W o (V^-1 dZ V)) V^-1`` with the divided differences
    ``W_ij = (e^l_i - e^l_j) / (l_i - l_j)``; all directions in one pass.
    Falls back to :func:`scipy.linalg.expm_frechet` when V is ill-conditioned.
    """
    P = dZ.shape[2]
    if P == 0:
        return dZ
    lam, V = np.linalg.eig(Z)
    if np.linalg.cond(V) > 1e8:
        return np.stack([sla.expm_frechet(Z, dZ[:, :, j], compute_expm=False) for j in range(P)], axis=2)
    Vi = np.linalg.inv(V)
    d = lam[:, None] - lam[None, :]
    el = np.exp(lam)
    small = np.abs(d) < 1e-8
    dd = np.where(small, 1.0, d)
    W = np.where(small, el[None, :] * (1 + d / 2), el[None, :] * np.expm1(d) / dd)
    G = np.tensordot(Vi, _right(dZ, V), axes=([1], [0])) * W[:, :, None]
    return np.tensordot(V, _right(G, Vi), axes=([1], [0])).real


def _right(T: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``T[:, :, p] @ B`` for every p."""
    return np.moveaxis(np.tensordot(T, B, axes=([1], [0])), 2, 1)
