"""Second-order matrices from a discrete state-space model (ZOH inverse + extraction).

Used twice: as the start of the estimator when the sampling is coarse
(the midpoint relation is then a poor model of held-input data), and by the
benchmark's ``n4sid + d2c`` baseline.  The discrete model is mapped back by
the matrix logarithm of ``[[Ad, Bd], [0, I]]`` (exact inverse of the ZOH;
ill-conditioned as ``h -> 0``), then brought to the coordinates
``(q, q')`` with ``T = [C; C A]``, where ``A = [[0, I], [A21, A22]]`` and
``B = [0; M^-1 L]`` give ``M = (B2 L^+)^-1``, ``K = -M A21``, ``D = -M A22``
(symmetrised).  The second-order ARX model
``y_k = A1 y_{k-1} + A2 y_{k-2} + B1 u_{k-1} + B2 u_{k-2}`` of ZOH-sampled
positions is fitted by least squares on prefiltered data.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import scipy.linalg as sla
import scipy.signal as ss

from ...errors import IdentificationError

__all__ = ["d2c_second_order", "tustin_second_order", "second_order", "arx_zoh"]


def d2c_second_order(Ad: np.ndarray, Bd: np.ndarray, C: np.ndarray, h: float,
                     L: np.ndarray) -> Tuple[np.ndarray, ...]:
    """``(M, D, K, L)`` of a ZOH-sampled model ``x+ = Ad x + Bd u``, ``q = C x``.

    Parameters
    ----------
    Ad, Bd, C : numpy.ndarray
        Discrete model with 2n states, n outputs (positions).
    h : float
        Sampling time.
    L : numpy.ndarray
        Known input matrix (n, m) of full row rank.

    Returns
    -------
    tuple of numpy.ndarray
        ``(M, D, K)``, symmetrised.
    """
    n2, m = Bd.shape
    n = C.shape[0]
    if n2 != 2 * n:
        raise IdentificationError(f"need 2n = {2 * n} states, got {n2}")
    Z = np.zeros((n2 + m, n2 + m))
    Z[:n2, :n2], Z[:n2, n2:], Z[n2:, n2:] = Ad, Bd, np.eye(m)
    logZ = sla.logm(Z)
    if np.iscomplexobj(logZ):
        logZ = logZ.real          # a negative real discrete pole has no real logarithm: keep the real part
    return second_order(logZ[:n2, :n2] / h, logZ[:n2, n2:] / h, C, L)


def tustin_second_order(Ad: np.ndarray, Bd: np.ndarray, C: np.ndarray, h: float,
                        L: np.ndarray) -> Tuple[np.ndarray, ...]:
    """``(M, D, K)`` whose midpoint (Tustin) model has the poles of ``x+ = Ad x + Bd u``, ``q = C x``.

    ``A = (2/h)(Ad - I)(Ad + I)^-1`` inverts the Cayley transform exactly;
    the midpoint model drives the state with ``Bm (u_k + u_{k+1})``, so
    ``Bm = Bd / 2`` (same static gain) and ``B = (2/h)(I - h A / 2) Bm``.
    The start of a midpoint refinement from a fitted ZOH model.

    Parameters
    ----------
    Ad, Bd, C : numpy.ndarray
        Discrete model with 2n states, n outputs (positions); ``Bd`` the
        total input matrix of one step.
    h : float
        Sampling time.
    L : numpy.ndarray
        Known input matrix (n, m) of full row rank.

    Returns
    -------
    tuple of numpy.ndarray
        ``(M, D, K)``, symmetrised.
    """
    I = np.eye(Ad.shape[0])
    A = 2.0 / h * np.linalg.solve((Ad + I).T, (Ad - I).T).T
    B = 2.0 / h * (I - h / 2 * A) @ (Bd / 2)
    return second_order(A, B, C, L)


def second_order(A: np.ndarray, B: np.ndarray, C: np.ndarray, L: np.ndarray) -> Tuple[np.ndarray, ...]:
    """``(M, D, K)`` of a continuous model ``x' = A x + B u``, ``q = C x`` with 2n states.

    Parameters
    ----------
    A, B, C : numpy.ndarray
        Continuous model.
    L : numpy.ndarray
        Known input matrix (n, m) of full row rank.

    Returns
    -------
    tuple of numpy.ndarray
        ``(M, D, K)``, symmetrised.
    """
    n = C.shape[0]
    T = np.vstack([C, C @ A])
    Ti = np.linalg.inv(T)
    Ac, Bc = T @ A @ Ti, T @ B
    A21, A22, B2 = Ac[n:, :n], Ac[n:, n:], Bc[n:]
    M = np.linalg.inv(B2 @ np.linalg.pinv(L))
    M = 0.5 * (M + M.T)
    K = -M @ A21
    D = -M @ A22
    return M, 0.5 * (D + D.T), 0.5 * (K + K.T)


def arx_zoh(u: np.ndarray, q: np.ndarray, h: float, cutoff: Optional[float] = None) -> Tuple[np.ndarray, ...]:
    """Least-squares second-order ARX model of ZOH-sampled positions, as ``(Ad, Bd, C)``.

    Parameters
    ----------
    u : numpy.ndarray
        Inputs (N, m).
    q : numpy.ndarray
        Positions (N, n).
    h : float
        Sampling time.
    cutoff : float, optional
        Cut-off [Hz] of a zero-phase low-pass prefilter applied to u and q.

    Returns
    -------
    tuple of numpy.ndarray
        Observer-form ``Ad = [[A1, I], [A2, 0]]``, ``Bd = [B1; B2]``, ``C = [I, 0]``.
    """
    N, n = q.shape
    m = u.shape[1]
    trim = 0
    if cutoff is not None and cutoff < 0.4 / h:
        sos = ss.butter(4, cutoff * 2 * h, output="sos")
        q = ss.sosfiltfilt(sos, q, axis=0)
        u = ss.sosfiltfilt(sos, u, axis=0)
        trim = min(int(np.ceil(4.0 / (cutoff * h))), N // 8)
    q, u = q[trim:N - trim], u[trim:N - trim]
    Phi = np.hstack([q[1:-1], q[:-2], u[1:-1], u[:-2]])
    scale = np.linalg.norm(Phi, axis=0)
    scale[scale == 0] = 1.0
    Theta = np.linalg.lstsq(Phi / scale, q[2:], rcond=None)[0] / scale[:, None]
    A1, A2, B1, B2 = (Theta[i:j].T for i, j in ((0, n), (n, 2 * n), (2 * n, 2 * n + m), (2 * n + m, 2 * n + 2 * m)))
    Ad = np.block([[A1, np.eye(n)], [A2, np.zeros((n, n))]])
    Bd = np.vstack([B1, B2])
    C = np.hstack([np.eye(n), np.zeros((n, n))])
    return Ad, Bd, C
