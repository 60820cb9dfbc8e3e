"""Equation-error least squares of the midpoint model (initial estimate).

With every position measured, the midpoint relation divided by h,

    M (q_k - 2 q_{k-1} + q_{k-2}) / h^2 + D (q_k - q_{k-2}) / (2h)
        + K (q_k + 2 q_{k-1} + q_{k-2}) / 4 = L (u_k + 2 u_{k-1} + u_{k-2}) / 4,

is linear in symmetric ``(M, D, K)`` (and L).  Noise on q enters the
regressors, so the plain fit is biased at low SNR (errors in variables).
Filtering q and u with the same zero-phase low-pass filter keeps the
relation (it is shift invariant) while removing most of the out-of-band
noise; the cut-off comes from where the output spectrum meets its noise
floor and is then set from the natural frequencies of a first estimate.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import scipy.signal as ss

from ...errors import IdentificationError

__all__ = ["equation_error", "noise_band", "natural_frequencies"]


def _sym_basis(n: int) -> np.ndarray:
    """(n*n, n(n+1)/2) map from ``vech`` (lower triangle, row-major) to the flattened symmetric matrix."""
    r, c = np.tril_indices(n)
    T = np.zeros((n * n, r.size))
    for k, (i, j) in enumerate(zip(r, c)):
        T[i * n + j, k] = 1.0
        T[j * n + i, k] = 1.0
    return T


def _unvech(v: np.ndarray, n: int) -> np.ndarray:
    return (_sym_basis(n) @ v).reshape(n, n)


def noise_band(q: np.ndarray, h: float) -> float:
    """Highest frequency [Hz] at which the smoothed output spectrum stands 10x above its white-noise floor.

    Parameters
    ----------
    q : numpy.ndarray
        Outputs (N, n).
    h : float
        Sampling time.
    """
    f, P = ss.welch(q - q.mean(axis=0), fs=1.0 / h, nperseg=min(q.shape[0], 512), axis=0)
    P = P.sum(axis=1)
    floor = np.median(P[3 * P.size // 4:])
    above = np.flatnonzero(P > 10.0 * floor)
    return float(f[above[-1]]) if above.size else float(f[-1])


def natural_frequencies(M: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Undamped natural frequencies [rad/s] (``K v = w^2 M v``).

    Parameters
    ----------
    M, K : numpy.ndarray
        Mass and stiffness matrices.
    """
    import scipy.linalg as sla
    w2 = sla.eigvals(K, M).real
    return np.sqrt(np.abs(w2))


def equation_error(u: np.ndarray, q: np.ndarray, h: float, L: Optional[np.ndarray] = None,
                   cutoff: Optional[float] = None) -> Tuple[np.ndarray, ...]:
    """Least-squares ``(M, D, K, L)`` of the midpoint relation.

    Parameters
    ----------
    u : numpy.ndarray
        Inputs (N, m).
    q : numpy.ndarray
        Positions (N, n).
    h : float
        Sampling time.
    L : numpy.ndarray, optional
        Known input matrix; ``None`` estimates it with ``M[0, 0] = 1``.
    cutoff : float, optional
        Cut-off [Hz] of the zero-phase Butterworth prefilter applied to q and
        u (none when omitted or at/above 0.8 Nyquist).

    Returns
    -------
    tuple of numpy.ndarray
        ``(M, D, K, L)``, symmetric but not projected on the definite cones.
    """
    N, n = q.shape
    m = u.shape[1]
    trim = 0
    if cutoff is not None and cutoff < 0.4 / h:
        sos = ss.butter(4, cutoff * 2 * h, output="sos")
        q = ss.sosfiltfilt(sos, q, axis=0)
        u = ss.sosfiltfilt(sos, u, axis=0)
        trim = min(int(np.ceil(4.0 / (cutoff * h))), N // 8)   # filter transients at both ends
    if N - 2 * trim < 3:
        raise IdentificationError("too few samples for the equation-error estimate")
    sl = slice(trim, N - trim)
    q, u = q[sl], u[sl]
    a = (q[2:] - 2 * q[1:-1] + q[:-2]) / h ** 2
    b = (q[2:] - q[:-2]) / (2 * h)
    c = (q[2:] + 2 * q[1:-1] + q[:-2]) / 4
    g = (u[2:] + 2 * u[1:-1] + u[:-2]) / 4
    T = _sym_basis(n)
    nv = T.shape[1]
    # Every block of rows i of the regression is Z = [a, b, c(, -g)] times a column of the
    # unknowns, so one thin QR of Z (N x 3n) compresses the N n rows to n * 3n exactly.
    Z = np.hstack([a, b, c] + ([-g] if L is None else []))
    Q, R = np.linalg.qr(Z)
    I = np.eye(n)

    def block(z):       # rows (i, j) of the compressed system, columns vech: (M R_z)_i
        return np.einsum("ir,jc->ijrc", I, z).reshape(-1, n * z.shape[1])

    w = 3 * n
    cols = [block(R[:, k * n:(k + 1) * n]) @ T for k in range(3)]
    if L is None:
        cols.append(block(R[:, w:]))
        Phi = np.hstack(cols)
        target = -Phi[:, 0]            # M[0, 0] = 1 moves to the right-hand side
        Phi = Phi[:, 1:]
        scale = np.linalg.norm(Phi, axis=0)
        scale[scale == 0] = 1.0
        sol = np.linalg.lstsq(Phi / scale, target, rcond=None)[0] / scale
        sol = np.concatenate([[1.0], sol])
        Lhat = sol[3 * nv:].reshape(n, m)
    else:
        Phi = np.hstack(cols)
        target = (Q.T @ (g @ L.T)).T.reshape(-1)
        scale = np.linalg.norm(Phi, axis=0)
        scale[scale == 0] = 1.0
        sol = np.linalg.lstsq(Phi / scale, target, rcond=None)[0] / scale
        Lhat = L
    M, D, K = (_unvech(sol[k * nv:(k + 1) * nv], n) for k in range(3))
    return M, D, K, Lhat
