"""The energy-consistent variant: the storage efforts are the gradient of one
learned Hamiltonian (a scalar GP with the gradient kernel, after Beckers et
al., "Gaussian process port-Hamiltonian systems"), the algebraic efforts an
intrinsic-coregionalisation GP as in the seed.

Prior: ``H ~ GP(0, s^2 k_rbf)`` on all (standardised) states,
``z_S = dH/dx_S`` (so ``Cov(z_i(x), z_j(x')) = s^2 d^2k/dx_i dx'_j``) and,
independently, ``z_A ~ GP(0, B_A ⊗ k_A)``.  The data covariance
``(A ⊗ I) K_z (A ⊗ I)^T + D ⊗ I`` is not a Kronecker product any more: it is
assembled and factorised densely (``O((nN)^3)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .kernels import kernel_and_grads, kernel_dx, kernel_matrix, rbf_hessian_blocks

__all__ = ["EnergyLayout", "EnergyPosterior", "energy_objective", "energy_posterior"]

_LOG2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class EnergyLayout:
    """Hyperparameters ``[log l_H (d), log s^2, log l_A (d), W_A, log v_A, log noise (n)]``.

    Parameters
    ----------
    d : int
        Input dimension.
    storage : tuple of int
        Effort components that are gradients of ``H`` (the differential variables).
    algebraic : tuple of int
        The other effort components.
    rank : int
        Columns of ``W_A``.
    """

    d: int
    storage: Tuple[int, ...]
    algebraic: Tuple[int, ...]
    rank: int

    @property
    def n(self) -> int:
        """Number of effort components."""
        return len(self.storage) + len(self.algebraic)

    @property
    def size(self) -> int:
        """Length of ``theta``."""
        na = len(self.algebraic)
        return 2 * self.d + 1 + na * self.rank + na + self.n

    def unpack(self, theta: np.ndarray):
        """``l_H, s^2, l_A, W_A, v_A, noise`` from ``theta``.

        Parameters
        ----------
        theta : ndarray
            Flat hyperparameters.
        """
        d, na = self.d, len(self.algebraic)
        i = 2 * d + 1
        j = i + na * self.rank
        return (np.exp(theta[:d]), float(np.exp(theta[d])), np.exp(theta[d + 1:i]),
                theta[i:j].reshape(na, self.rank), np.exp(theta[j:j + na]), np.exp(theta[j + na:]))


def _prior(layout: EnergyLayout, theta: np.ndarray, kernel: str, X: np.ndarray, grads: bool):
    N, n = X.shape[0], layout.n
    S, Al = np.array(layout.storage, int), np.array(layout.algebraic, int)
    ellH, s2, ellA, W, v, noise = layout.unpack(theta)
    Kz = np.zeros((n, N, n, N))
    out = {"noise": noise, "s2": s2, "W": W, "v": v}
    if grads:
        KH, dKH = rbf_hessian_blocks(X, X, ellH, S, with_grads=True)
        out["KH"], out["dKH"] = KH, dKH
    else:
        KH = rbf_hessian_blocks(X, X, ellH, S)
    Kz[np.ix_(S, range(N), S, range(N))] = s2 * KH
    if len(Al):
        BA = W @ W.T + np.diag(v)
        KA, dKA = kernel_and_grads(kernel, X, ellA)
        Kz[np.ix_(Al, range(N), Al, range(N))] = BA[:, None, :, None] * KA[None, :, None, :]
        out.update(BA=BA, KA=KA, dKA=dKA)
    return Kz, out


def energy_objective(theta: np.ndarray, layout: EnergyLayout, kernel: str, X: np.ndarray,
                     Y: np.ndarray, A: np.ndarray) -> Tuple[float, np.ndarray]:
    """Negative log marginal likelihood and its gradient.

    Parameters
    ----------
    theta : ndarray
        Flat hyperparameters (see :class:`EnergyLayout`).
    layout : EnergyLayout
        Layout of ``theta``.
    kernel : str
        Kernel of the algebraic efforts.
    X : ndarray, shape (N, d)
        Standardised inputs.
    Y : ndarray, shape (N, n)
        Scaled targets.
    A : ndarray, shape (n, n)
        ``J - R`` with the storage columns scaled to standardised inputs.

    Returns
    -------
    value : float
    grad : ndarray
    """
    N, n = Y.shape
    Kz, p = _prior(layout, theta, kernel, X, grads=True)
    Sig = np.einsum("ij,jblc,kl->ibkc", A, Kz, A).reshape(n * N, n * N)
    Sig[np.diag_indices_from(Sig)] += np.repeat(p["noise"], N)
    cf = cho_factor(Sig, lower=True)
    y = Y.T.ravel()
    alpha = cho_solve(cf, y)
    lml = -0.5 * y @ alpha - np.sum(np.log(np.diag(cf[0]))) - 0.5 * n * N * _LOG2PI
    G = 0.5 * (np.outer(alpha, alpha) - cho_solve(cf, np.eye(n * N)))
    G4 = G.reshape(n, N, n, N)
    Gz = np.einsum("ij,ibkc,kl->jblc", A, G4, A)
    S, Al = np.array(layout.storage, int), np.array(layout.algebraic, int)
    GS = Gz[np.ix_(S, range(N), S, range(N))]
    parts = [p["s2"] * np.einsum("jblc,qjblc->q", GS, p["dKH"]), [p["s2"] * np.sum(GS * p["KH"])]]
    if len(Al):
        GA = Gz[np.ix_(Al, range(N), Al, range(N))]
        GKA = np.einsum("jl,jblc->bc", p["BA"], GA)
        GBA = np.einsum("jblc,bc->jl", GA, p["KA"])
        GBA = 0.5 * (GBA + GBA.T)
        parts += [np.einsum("bc,qbc->q", GKA, p["dKA"]), (2.0 * GBA @ p["W"]).ravel(), np.diag(GBA) * p["v"]]
    else:
        parts += [np.zeros(layout.d)]
    parts.append(np.einsum("ibib->i", G4) * p["noise"])
    return -float(lml), -np.concatenate(parts)


@dataclass
class EnergyPosterior:
    """The fitted quantities of the energy-consistent variant.

    Parameters
    ----------
    layout : EnergyLayout
        Hyperparameter layout.
    theta : ndarray
        Fitted hyperparameters.
    kernel : str
        Kernel of the algebraic efforts.
    X : ndarray
        Standardised training inputs.
    A : ndarray
        Scaled structure matrix.
    beta : ndarray, shape (n, N)
        ``(A ⊗ I)^T Sigma^{-1} y``.
    chol : tuple
        Cholesky factor of the data covariance.
    """

    layout: EnergyLayout
    theta: np.ndarray
    kernel: str
    X: np.ndarray
    A: np.ndarray
    beta: np.ndarray
    chol: tuple

    def _cross(self, Xs: np.ndarray) -> np.ndarray:
        """``Cov(z(Xs), z(X))`` as (n, M, n, N)."""
        lay = self.layout
        S, Al = np.array(lay.storage, int), np.array(lay.algebraic, int)
        ellH, s2, ellA, W, v, _ = lay.unpack(self.theta)
        M, N = Xs.shape[0], self.X.shape[0]
        Kc = np.zeros((lay.n, M, lay.n, N))
        Kc[np.ix_(S, range(M), S, range(N))] = s2 * rbf_hessian_blocks(Xs, self.X, ellH, S)
        if len(Al):
            BA = W @ W.T + np.diag(v)
            KA = kernel_matrix(self.kernel, Xs, self.X, ellA)
            Kc[np.ix_(Al, range(M), Al, range(N))] = BA[:, None, :, None] * KA[None, :, None, :]
        return Kc

    def mean(self, Xs: np.ndarray) -> np.ndarray:
        """Posterior mean of the (scaled) efforts, shape (M, n).

        Parameters
        ----------
        Xs : ndarray, shape (M, d)
            Standardised points.
        """
        return np.einsum("jmlb,lb->mj", self._cross(Xs), self.beta)

    def hamiltonian(self, Xs: np.ndarray) -> np.ndarray:
        """Posterior mean of ``H`` (zero-mean prior: defined up to a constant), shape (M,).

        Parameters
        ----------
        Xs : ndarray, shape (M, d)
            Standardised points.
        """
        ellH, s2 = self.layout.unpack(self.theta)[:2]
        S = np.array(self.layout.storage, int)
        dk = kernel_dx("rbf", Xs, self.X, ellH)[:, :, S]          # dk/dx*, = -dk/dx'
        return -s2 * np.einsum("mbl,lb->m", dk, self.beta[S])

    def mean_dx(self, Xs: np.ndarray) -> np.ndarray:
        """Jacobian of the posterior mean in the standardised inputs, shape (M, n, d).

        Parameters
        ----------
        Xs : ndarray, shape (M, d)
            Standardised points.
        """
        lay = self.layout
        S, Al = np.array(lay.storage, int), np.array(lay.algebraic, int)
        ellH, s2, ellA, W, v, _ = lay.unpack(self.theta)
        out = np.zeros((Xs.shape[0], lay.n, lay.d))
        Delta = Xs[:, None, :] - self.X[None, :, :]
        k = np.exp(-0.5 * np.sum((Delta / ellH) ** 2, axis=2))
        a = Delta / ellH ** 2                                      # (M, N, d)
        inv2 = 1.0 / ellH ** 2
        bS = self.beta[S]                                          # (s, N)
        # d/dx*_q of k (delta_jl/l_j^2 - a_j a_l), contracted with beta_l
        ab = np.einsum("mbl,lb->mb", a[:, :, S], bS)               # sum_l a_l beta_l
        for jj, j in enumerate(S):
            base = k * (inv2[j] * bS[jj][None, :] - a[:, :, j] * ab)  # (M, N): M_jl beta_l
            term = -a * base[:, :, None]
            term[:, :, j] -= (k * ab * inv2[j])
            extra = np.zeros_like(term)
            extra[:, :, S] = -(k * a[:, :, j])[:, :, None] * (bS.T[None, :, :] * inv2[S][None, None, :])
            out[:, j, :] = s2 * np.sum(term + extra, axis=1)
        if len(Al):
            BA = W @ W.T + np.diag(v)
            dk = kernel_dx(self.kernel, Xs, self.X, ellA)
            out[:, Al, :] = np.einsum("mbq,jl,lb->mjq", dk, BA, self.beta[Al])
        return out

    def _point_prior(self) -> np.ndarray:
        """Prior covariance of ``z`` at one point (the same everywhere for stationary kernels)."""
        lay = self.layout
        S, Al = np.array(lay.storage, int), np.array(lay.algebraic, int)
        ellH, s2, ellA, W, v, _ = lay.unpack(self.theta)
        Bz = np.zeros((lay.n, lay.n))
        Bz[np.ix_(S, S)] = s2 * np.diag(1.0 / ellH[S] ** 2)
        if len(Al):
            Bz[np.ix_(Al, Al)] = W @ W.T + np.diag(v)
        return Bz

    def variance(self, Xs: np.ndarray, transformed: bool = False) -> np.ndarray:
        """Posterior variance of the scaled efforts (or of ``A z``), shape (M, n).

        Parameters
        ----------
        Xs : ndarray, shape (M, d)
            Standardised points.
        transformed : bool
            Variance of ``A z`` instead of ``z``.
        """
        n, M, N = self.layout.n, Xs.shape[0], self.X.shape[0]
        Kc = np.einsum("jmlb,il->jmib", self._cross(Xs), self.A)      # Cov(z(Xs), y)
        Bz = self._point_prior()
        if transformed:
            Kc = np.einsum("kj,jmib->kmib", self.A, Kc)
            Bz = self.A @ Bz @ self.A.T
        Kc = Kc.reshape(n * M, n * N)
        red = np.sum(Kc * cho_solve(self.chol, Kc.T).T, axis=1).reshape(n, M)
        return np.clip(np.diag(Bz)[:, None] - red, 0.0, None).T


def energy_posterior(theta: np.ndarray, layout: EnergyLayout, kernel: str, X: np.ndarray,
                     Y: np.ndarray, A: np.ndarray) -> EnergyPosterior:
    """Condition the prior at ``theta`` on the data.

    Parameters
    ----------
    theta : ndarray
        Flat hyperparameters.
    layout : EnergyLayout
        Layout of ``theta``.
    kernel : str
        Kernel of the algebraic efforts.
    X : ndarray, shape (N, d)
        Standardised inputs.
    Y : ndarray, shape (N, n)
        Scaled targets.
    A : ndarray, shape (n, n)
        Scaled structure matrix.

    Returns
    -------
    EnergyPosterior
    """
    N, n = Y.shape
    Kz, p = _prior(layout, theta, kernel, X, grads=False)
    Sig = np.einsum("ij,jblc,kl->ibkc", A, Kz, A).reshape(n * N, n * N)
    Sig[np.diag_indices_from(Sig)] += np.repeat(p["noise"], N)
    cf = cho_factor(Sig, lower=True)
    alpha = cho_solve(cf, Y.T.ravel()).reshape(n, N)
    beta = A.T @ alpha
    return EnergyPosterior(layout, np.asarray(theta, float), kernel, X, A, beta, cf)
