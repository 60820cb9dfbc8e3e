"""The transformed multi-task GP with a constant structure matrix (the seed's
model), solved through its Kronecker structure.

Prior ``z ~ GP(0, B ⊗ k)`` (intrinsic coregionalisation, ``B = W W^T +
diag(v)``; with a linear part ``k = s k_stat + x^T x'``); data ``y_i = A z(x_i) + e_i`` with ``A = J - R`` and task noise
``e ~ N(0, diag(d))``.  With ``y`` stacked task-major the covariance is
``C ⊗ K + D ⊗ I`` (``C = A B A^T``).  Whitening by ``D^{-1/2}`` and the
eigendecompositions ``K = U_k diag(l_k) U_k^T``,
``D^{-1/2} C D^{-1/2} = U_c diag(l_c) U_c^T`` give the inverse and the
determinant from ``Lambda[b, a] = l_k[b] l_c[a] + 1`` at ``O(N^3 + n^3)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from .kernels import kernel_and_grads, kernel_dx, kernel_matrix

__all__ = ["IcmLayout", "IcmPosterior", "icm_objective", "icm_posterior"]

_LOG2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class IcmLayout:
    """Where each hyperparameter sits in the flat vector ``theta``.

    Parameters
    ----------
    d : int
        Input dimension (one log length scale each).
    n : int
        Number of tasks (effort components).
    rank : int
        Columns of ``W``.
    linear : bool
        The kernel is the mixture ``w_s k_stat + w_l x^T x'`` with
        ``w_s + w_l = 1`` (the logit ``a = log(w_s / w_l)`` follows the length
        scales) instead of ``k_stat``.  ``B`` carries the overall scale, ``a``
        the balance: when either part is switched off the other one's scale
        is ``B`` alone (with ``B ⊗ (k_stat + c x^T x')`` a switched-off
        ``k_stat`` leaves ``B`` and ``c`` mattering only as a product, a
        diagonal valley of the likelihood).
    """

    d: int
    n: int
    rank: int
    linear: bool = False

    @property
    def size(self) -> int:
        """Length of ``theta``."""
        return self.d + int(self.linear) + self.n * self.rank + 2 * self.n

    def unpack(self, theta: np.ndarray):
        """Length scales, ``W``, ``v`` and the noise variances ``d`` from ``theta``.

        Parameters
        ----------
        theta : ndarray
            Flat hyperparameters.
        """
        i = self.d + int(self.linear)
        j = i + self.n * self.rank
        W = theta[i:j].reshape(self.n, self.rank)
        return (np.exp(theta[:self.d]), W, np.exp(theta[j:j + self.n]), np.exp(theta[j + self.n:]))

    def kernel_weights(self, theta: np.ndarray) -> Tuple[float, float]:
        """Weights ``(w_s, w_l)`` of the stationary and the linear kernel, ``(1, 0)`` without a linear part.

        ``w_s = 1 / (1 + exp(-a))`` and ``w_l = 1 - w_s`` for ``a = theta[d]``.

        Parameters
        ----------
        theta : ndarray
            Flat hyperparameters.
        """
        if not self.linear:
            return 1.0, 0.0
        a = float(theta[self.d])
        ws = 0.5 * (1.0 + np.tanh(0.5 * a))
        return ws, 0.5 * (1.0 - np.tanh(0.5 * a))

    def task_covariance(self, theta: np.ndarray) -> np.ndarray:
        """``B = W W^T + diag(v)``.

        Parameters
        ----------
        theta : ndarray
            Flat hyperparameters.
        """
        _, W, v, _ = self.unpack(theta)
        return W @ W.T + np.diag(v)


def _gram(kernel: str, X1: np.ndarray, X2: np.ndarray, ell: np.ndarray, w: Tuple[float, float]) -> np.ndarray:
    K = kernel_matrix(kernel, X1, X2, ell)
    return w[0] * K + w[1] * (X1 @ X2.T) if w[1] else K


def _factor(K: np.ndarray, C: np.ndarray, noise: np.ndarray):
    lk, Uk = np.linalg.eigh(K)
    lk = np.clip(lk, 0.0, None)
    s = 1.0 / np.sqrt(noise)
    lc, Uc = np.linalg.eigh(C * s[:, None] * s[None, :])
    lc = np.clip(lc, 0.0, None)
    Uct = Uc * s[:, None]                                  # D^{-1/2} U_c
    Lam = lk[:, None] * lc[None, :] + 1.0                   # (N, n)
    return lk, Uk, lc, Uct, Lam


def icm_objective(theta: np.ndarray, layout: IcmLayout, kernel: str, X: np.ndarray,
                  Y: np.ndarray, A: np.ndarray) -> Tuple[float, np.ndarray]:
    """Negative log marginal likelihood and its gradient in ``theta``.

    Parameters
    ----------
    theta : ndarray
        Flat hyperparameters (see :class:`IcmLayout`).
    layout : IcmLayout
        The layout of ``theta``.
    kernel : str
        Kernel name.
    X : ndarray, shape (N, d)
        Standardised inputs.
    Y : ndarray, shape (N, n)
        Scaled targets ``E x' - B u``.
    A : ndarray, shape (n, n)
        ``J - R``.

    Returns
    -------
    value : float
    grad : ndarray
    """
    N, n = Y.shape
    ell, W, v, noise = layout.unpack(theta)
    Bt = W @ W.T + np.diag(v)
    C = A @ Bt @ A.T
    ws, wl = layout.kernel_weights(theta)
    K, dK = kernel_and_grads(kernel, X, ell, extra=int(layout.linear))
    if layout.linear:
        L = X @ X.T
        dK[:-1] *= ws
        np.multiply(K - L, ws * wl, out=dK[-1])             # d K / d a
        K = ws * K + wl * L
    lk, Uk, lc, Uct, Lam = _factor(K, C, noise)
    Yh = Uk.T @ Y @ Uct
    Ma = Uk @ (Yh / Lam) @ Uct.T                            # K_full^{-1} y as (N, n)
    lml = -0.5 * np.sum(Yh * Yh / Lam) - 0.5 * (np.sum(np.log(Lam)) + N * np.sum(np.log(noise))) \
        - 0.5 * N * n * _LOG2PI
    inv = 1.0 / Lam
    GK = 0.5 * (Ma @ C @ Ma.T - (Uk * (inv @ lc)) @ Uk.T)
    GC = 0.5 * (Ma.T @ K @ Ma - (Uct * (lk @ inv)) @ Uct.T)
    GD = 0.5 * (np.sum(Ma * Ma, axis=0) - (Uct * Uct) @ inv.sum(axis=0))
    GB = A.T @ GC @ A
    grad = np.concatenate([np.einsum("ij,qij->q", GK, dK), (2.0 * GB @ W).ravel(),
                           np.diag(GB) * v, GD * noise])
    return -float(lml), -grad


@dataclass
class IcmPosterior:
    """The fitted quantities ``predict`` needs.

    Parameters
    ----------
    kernel : str
        Kernel name.
    X : ndarray
        Standardised training inputs.
    ell : ndarray
        Length scales.
    c : float or None
        Variance of the linear kernel part.
    A, Bt : ndarray
        Structure matrix and task covariance.
    Ma : ndarray
        ``K_full^{-1} y`` as an (N, n) matrix.
    Uk, Uct, Lam : ndarray
        The factorisation (see the module docstring).
    """

    kernel: str
    X: np.ndarray
    ell: np.ndarray
    w: Tuple[float, float]
    A: np.ndarray
    Bt: np.ndarray
    Ma: np.ndarray
    Uk: np.ndarray
    Uct: np.ndarray
    Lam: np.ndarray

    def mean(self, Xs: np.ndarray) -> np.ndarray:
        """Posterior mean of ``z`` at standardised points, shape (M, n).

        Parameters
        ----------
        Xs : ndarray, shape (M, d)
            Standardised points.
        """
        return _gram(self.kernel, Xs, self.X, self.ell, self.w) @ (self.Ma @ self.A @ self.Bt)

    def mean_dx(self, Xs: np.ndarray) -> np.ndarray:
        """Jacobian of the posterior mean in the standardised inputs, shape (M, n, d).

        Parameters
        ----------
        Xs : ndarray, shape (M, d)
            Standardised points.
        """
        dk = self.w[0] * kernel_dx(self.kernel, Xs, self.X, self.ell)
        if self.w[1]:
            dk = dk + self.w[1] * self.X[None, :, :]
        return np.einsum("mbq,bj->mjq", dk, self.Ma @ self.A @ self.Bt)

    def variance(self, Xs: np.ndarray, transformed: bool = False) -> np.ndarray:
        """Posterior variance of ``z`` (or of ``A z``), shape (M, n).

        Parameters
        ----------
        Xs : ndarray, shape (M, d)
            Standardised points.
        transformed : bool
            Variance of ``(J - R) z`` instead of ``z``.
        """
        cross = self.A @ self.Bt @ self.A.T if transformed else self.A @ self.Bt
        prior = np.diag(self.A @ self.Bt @ self.A.T if transformed else self.Bt)
        P = self.Uct.T @ cross
        Kk = self.Uk.T @ _gram(self.kernel, self.X, Xs, self.ell, self.w)
        S = (Kk * Kk).T @ (1.0 / self.Lam)
        prior_k = self.w[0] + self.w[1] * np.sum(Xs * Xs, axis=1)
        return np.clip(np.broadcast_to(prior_k, (Xs.shape[0],))[:, None] * prior[None, :] - S @ (P * P), 0.0, None)


def icm_posterior(theta: np.ndarray, layout: IcmLayout, kernel: str, X: np.ndarray,
                  Y: np.ndarray, A: np.ndarray) -> IcmPosterior:
    """Condition the prior at ``theta`` on the data.

    Parameters
    ----------
    theta : ndarray
        Flat hyperparameters.
    layout : IcmLayout
        Layout of ``theta``.
    kernel : str
        Kernel name.
    X : ndarray, shape (N, d)
        Standardised inputs.
    Y : ndarray, shape (N, n)
        Scaled targets.
    A : ndarray, shape (n, n)
        ``J - R``.

    Returns
    -------
    IcmPosterior
    """
    ell, W, v, noise = layout.unpack(theta)
    Bt = W @ W.T + np.diag(v)
    w = layout.kernel_weights(theta)
    K = _gram(kernel, X, X, ell, w)
    lk, Uk, lc, Uct, Lam = _factor(K, A @ Bt @ A.T, noise)
    Ma = Uk @ ((Uk.T @ Y @ Uct) / Lam) @ Uct.T
    return IcmPosterior(kernel, X, ell, w, A, Bt, Ma, Uk, Uct, Lam)
