"""``J^T J`` and ``J^T r`` of the output error without forming the Jacobian J.

The sensitivity of the positions to parameter p obeys
``S_{k+1} = Ad S_k + dAd_p x_k + dB0_p u_k + dB1_p u_{k+1}``.  In modal
coordinates ``Ad = V diag(lambda) V^-1`` every mode a is the first-order
filter ``1 / (z - lambda_a)``, and the forcing is a fixed combination of
the few signals ``z = (x_k, u_k[, u_{k+1}])``.  By linearity

    dy_k / dtheta_p = Re sum_a sum_b  C V[:, a] (V^-1 [dAd_p, dB_p])[a, b]  Phi_ab[k],
    Phi_ab = filter_a(z_b),

so J is ``Psi^T Coef`` with a basis ``Psi`` of ``2 * modes * signals`` real
filtered signals that does not depend on p (384 for eight degrees of
freedom, against 108 parameters times eight outputs).  Hence
``J^T J = sum_o Coef_o^T (Psi Psi^T) Coef_o``: one Gram matrix of the basis
per iteration replaces a sensitivity recursion per parameter and the
(samples x outputs, parameters) Jacobian.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
from numba import njit
from scipy.linalg.blas import dsyrk

__all__ = ["modal_normal_equations"]

#: Condition number of the eigenvector matrix above which the modal form is not trusted.
MAX_MODAL_COND = 1e8


def modal_normal_equations(Ad: np.ndarray, B0: np.ndarray, B1: np.ndarray, dAd: np.ndarray, dB0: np.ndarray,
                           dB1: np.ndarray, u: np.ndarray, X: np.ndarray, C: np.ndarray,
                           r: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """``(J^T J, J^T r)`` of the residuals ``C q_sim - y``, or None when Ad is not safely diagonalisable.

    Parameters
    ----------
    Ad, B0, B1 : numpy.ndarray
        Update matrices of ``x_{k+1} = Ad x_k + B0 u_k + B1 u_{k+1}`` (x of size 2n).
    dAd, dB0, dB1 : numpy.ndarray
        Their derivatives, one slice per parameter on the last axis.
    u : numpy.ndarray
        Inputs (N, m).
    X : numpy.ndarray
        Simulated states (2n, N) from rest.
    C : numpy.ndarray
        Output matrix (n_out, n) on the positions.
    r : numpy.ndarray
        Residuals (N, n_out).

    Returns
    -------
    tuple of numpy.ndarray or None
        ``J^T J`` (P, P) and ``J^T r`` (P,).
    """
    n2, P = Ad.shape[0], dAd.shape[2]
    n = n2 // 2
    lam, V = np.linalg.eig(Ad)
    if not np.all(np.isfinite(lam)) or np.linalg.cond(V) >= MAX_MODAL_COND:
        return None
    Vi = np.linalg.inv(V)
    keep = np.flatnonzero(lam.imag >= 0)          # one mode of each conjugate pair (Ad is real)
    weight = np.where(lam[keep].imag > 0, 2.0, 1.0)
    # forcing signals z_b and their coefficient matrices dZ[:, b, p]
    if not np.any(dB1):                           # zero-order hold
        sig, dB = u[:-1], dB0
    elif dB1 is dB0 or np.array_equal(dB1, dB0):  # midpoint: B0 = B1 act on u_k + u_{k+1}
        sig, dB = u[:-1] + u[1:], dB0
    else:
        sig, dB = np.hstack([u[:-1], u[1:]]), np.concatenate([dB0, dB1], axis=1)
    Z = np.vstack([X[:, :-1], sig.T])             # (signals, N - 1)
    dZ = np.concatenate([dAd, dB], axis=1)        # (2n, signals, P)
    na, nb = keep.size, Z.shape[0]
    Psi = _modal_filter(np.ascontiguousarray(lam[keep]), np.ascontiguousarray(Z))   # (2 na nb, N - 1)
    T = np.tensordot(Vi[keep], dZ, axes=([1], [0]))                 # (mode, signal, p)
    Cm = C @ (V[:n, keep] * weight)                                   # (output, mode)
    Coef = Cm[:, :, None, None] * T[None]                             # (output, mode, signal, p)
    no = Cm.shape[0]
    Coef = np.concatenate([Coef.real, -Coef.imag], axis=1).reshape(no, 2 * na * nb, P)
    G = dsyrk(1.0, Psi.T, trans=1)                                    # upper triangle of Psi Psi^T
    G = np.triu(G) + np.triu(G, 1).T
    JTJ = np.einsum("oip,oiq->pq", Coef, np.matmul(G, Coef), optimize=True)
    Pr = Psi @ r[1:]                                                  # (basis, output)
    JTr = np.einsum("oip,io->p", Coef, Pr)
    return 0.5 * (JTJ + JTJ.T), JTr


@njit(cache=True)
def _modal_filter(lam: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Rows ``(part, a, b)``: real (part 0) and imaginary (part 1) parts of
    ``g_{k+1} = lam_a g_k + Z[b, k]``, ``g_0 = 0``, stored at k."""
    na, (nb, K) = lam.size, Z.shape
    out = np.empty((2 * na * nb, K))
    for a in range(na):
        la = lam[a]
        for b in range(nb):
            g = 0j
            re, im = a * nb + b, (na + a) * nb + b
            for k in range(K):
                g = la * g + Z[b, k]
                out[re, k] = g.real
                out[im, k] = g.imag
    return out
