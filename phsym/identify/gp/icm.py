"""The transformed multi-task GP with a constant structure matrix (the seed's
model), solved through its Kronecker structure.

Prior ``z ~ GP(0, B ⊗ k)`` (intrinsic coregionalisation, ``B = W W^T +
diag(v)``); data ``y_i = A z(x_i) + e_i`` with ``A = J - R`` and task noise
``e ~ N(0, diag(d))``.  With ``y`` stacked task-major the covariance is
``C ⊗ K + D ⊗ I`` (``C = A B A^T``).  Whitening by ``D^{-1/2}`` and the
eigendecompositions ``K = U_k diag(l_k) U_k^T``,
``D^{-1/2} C D^{-1/2} = U_c diag(l_c) U_c^T`` give the inverse and the
determinant from ``Lambda[b, a] = l_k[b] l_c[a] + 1`` at ``O(N^3 + n^3)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .kernels import gram, gram_and_grads, gram_diag, gram_dx

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
        The kernel has a linear part ``c x^T x'`` (``log c`` follows the length scales).
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

    def linear_variance(self, theta: np.ndarray) -> Optional[float]:
        """``c`` of the linear kernel part, or None.

        Parameters
        ----------
        theta : ndarray
            Flat hyperparameters.
        """
        return float(np.exp(theta[self.d])) if self.linear else None

    def task_covariance(self, theta: np.ndarray) -> np.ndarray:
        """``B = W W^T + diag(v)``.

        Parameters
        ----------
        theta : ndarray
            Flat hyperparameters.
        """
        _, W, v, _ = self.unpack(theta)
        return W @ W.T + np.diag(v)


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
    K, dK = gram_and_grads(kernel, X, ell, layout.linear_variance(theta))
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
    c: Optional[float]
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
        return gram(self.kernel, Xs, self.X, self.ell, self.c) @ (self.Ma @ self.A @ self.Bt)

    def mean_dx(self, Xs: np.ndarray) -> np.ndarray:
        """Jacobian of the posterior mean in the standardised inputs, shape (M, n, d).

        Parameters
        ----------
        Xs : ndarray, shape (M, d)
            Standardised points.
        """
        dk = gram_dx(self.kernel, Xs, self.X, self.ell, self.c)
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
        Kk = self.Uk.T @ gram(self.kernel, self.X, Xs, self.ell, self.c)
        S = (Kk * Kk).T @ (1.0 / self.Lam)
        return np.clip(gram_diag(Xs, self.c)[:, None] * prior[None, :] - S @ (P * P), 0.0, None)


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
    c = layout.linear_variance(theta)
    K = gram(kernel, X, X, ell, c)
    lk, Uk, lc, Uct, Lam = _factor(K, A @ Bt @ A.T, noise)
    Ma = Uk @ ((Uk.T @ Y @ Uct) / Lam) @ Uct.T
    return IcmPosterior(kernel, X, ell, c, A, Bt, Ma, Uk, Uct, Lam)
