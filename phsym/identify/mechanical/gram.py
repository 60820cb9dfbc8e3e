"""``J^T J`` and ``J^T r`` of the output error without forming the Jacobian J.

The sensitivity of the positions to parameter p obeys
``S_{k+1} = Ad S_k + dAd_p x_k + dB0_p u_k + dB1_p u_{k+1}``.  In modal
coordinates ``Ad = V diag(lambda) V^-1`` every mode a is the first-order
filter ``1 / (z - lambda_a)``, and the forcing is a fixed combination of
the few signals ``z = (x_k, u_k[, u_{k+1}])``.  By linearity

    dy_o[k] / dtheta_p = Re sum_a sum_b  Cm[o, a] T[a, b, p] s_ab[k],
    s_ab = filter_a(z_b),   T = V^-1 [dAd_p, dB_p],   Cm = C V (one mode per conjugate pair),

so ``J^T J`` needs only the sums ``sum_k s_i s_j`` and ``sum_k s_i conj(s_j)``
over the complex basis ``s`` (192 signals for eight degrees of freedom),
not the (samples x outputs, parameters) Jacobian.  Those sums need not be
formed sample by sample either: the filter recursion gives the discrete
Lyapunov identity

    (1 - l_a l_c) sum_k s_ab s_cd = l_a A[ab, d] + l_c A[cd, b] + <z_b, z_d> - l_a l_c s_ab[K] s_cd[K],
    A[ab, d] = sum_k s_ab[k - 1] z_d[k],

so one product of the basis with the few signals (``(basis, samples) x
(samples, signals)``) replaces the Gram matrix of the basis, eight times
fewer operations for eight degrees of freedom.  When a pair of modes makes
``1 - l_a l_c`` too small for that division the sums are formed directly.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
from numba import njit

__all__ = ["modal_normal_equations"]

#: Condition number of the eigenvector matrix above which the modal form is not trusted.
MAX_MODAL_COND = 1e8
#: Smallest ``|1 - l_a l_c|`` for which the Lyapunov identity replaces the direct sums.
MIN_LYAPUNOV_GAP = 1e-7


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
    Z = np.ascontiguousarray(np.vstack([X[:, :-1], sig.T]))      # (signals, K), K = N - 1
    dZ = np.concatenate([dAd, dB], axis=1)                        # (2n, signals, P)
    lk = np.ascontiguousarray(lam[keep])
    na, nb = lk.size, Z.shape[0]
    Sr, Si = _modal_filter(lk, Z)                                 # real, imaginary parts (na nb, K), rows (a, b)
    T = np.tensordot(Vi[keep], dZ, axes=([1], [0])).reshape(na * nb, P)
    Cm = C @ (V[:n, keep] * weight)                               # (output, mode)
    Pm, Qm = _basis_sums(lk, Sr, Si, Z)
    # sum_o sum_k Re(x_op) Re(x_oq), x_op = sum_a Cm[o, a] h_ap: Re(x)Re(y) = (Re(x y) + Re(x conj y)) / 2
    Cc = np.repeat(np.repeat(Cm.T @ Cm, nb, axis=0), nb, axis=1)
    Dc = np.repeat(np.repeat(Cm.T @ Cm.conj(), nb, axis=0), nb, axis=1)
    JTJ = 0.5 * (T.T @ ((Cc * Pm) @ T) + T.T @ ((Dc * Qm) @ T.conj())).real
    rk = np.ascontiguousarray(r[1:])
    Rs = Sr @ rk + 1j * (Si @ rk)                                 # (basis, output): sum_k s_i[k] r_o[k + 1]
    JTr = (T.T @ np.einsum("oa,abo->ab", Cm, Rs.reshape(na, nb, -1)).reshape(-1)).real
    return 0.5 * (JTJ + JTJ.T), JTr


def _basis_sums(lam: np.ndarray, Sr: np.ndarray, Si: np.ndarray, Z: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(sum_k s_i s_j, sum_k s_i conj(s_j))`` over the basis, by the Lyapunov identity of the filters."""
    na, nb = lam.size, Z.shape[0]
    l = np.repeat(lam, nb)                                        # pole of each basis row
    gap_p = 1.0 - l[:, None] * l[None, :]
    gap_q = 1.0 - l[:, None] * l.conj()[None, :]
    if min(np.abs(gap_p).min(), np.abs(gap_q).min()) < MIN_LYAPUNOV_GAP:
        S = Sr + 1j * Si
        return S @ S.T, S @ S.conj().T
    Zn = np.ascontiguousarray(Z[:, 1:].T)
    A = (Sr[:, :-1] @ Zn + 1j * (Si[:, :-1] @ Zn)).reshape(na, nb, nb)   # A[a, b, d] = sum_k s_ab[k - 1] z_d[k]
    ZZ = Z @ Z.T
    sK = Sr[:, -1] + 1j * Si[:, -1]
    # F[(a, b), (c, d)] = l_a A[a, b, d]; its transpose is the second term l_c A[c, d, b]
    F = np.broadcast_to((lam[:, None, None] * A)[:, :, None, :], (na, nb, na, nb)).reshape(na * nb, na * nb)
    base = np.broadcast_to(ZZ[None, :, None, :], (na, nb, na, nb)).reshape(na * nb, na * nb)
    P = (F + F.T + base - l[:, None] * l[None, :] * np.outer(sK, sK)) / gap_p
    Q = (F + F.conj().T + base - l[:, None] * l.conj()[None, :] * np.outer(sK, sK.conj())) / gap_q
    return P, Q


@njit(cache=True)
def _modal_filter(lam: np.ndarray, Z: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Rows ``(a, b)``: ``s_{k} = lam_a s_{k-1} + Z[b, k]``, ``s_{-1} = 0``, for k = 0 .. K - 1,
    as real and imaginary parts (two real arrays feed BLAS without copies)."""
    na, (nb, K) = lam.size, Z.shape
    re = np.empty((na * nb, K))
    im = np.empty((na * nb, K))
    for a in range(na):
        la = lam[a]
        for b in range(nb):
            g = 0j
            row = a * nb + b
            for k in range(K):
                g = la * g + Z[b, k]
                re[row, k] = g.real
                im[row, k] = g.imag
    return re, im
