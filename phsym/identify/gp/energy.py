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

import functools
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lapack

from .kernels import (gram, gram_and_grads, gram_diag, gram_dx, kernel_dx, rbf_hessian_blocks,
                      rbf_hessian_contract)

__all__ = ["EnergyLayout", "EnergyPosterior", "energy_objective", "energy_posterior"]

_LOG2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class EnergyLayout:
    """Hyperparameters ``[log l_H (h), log s^2, log l_A (d), (log c_A), W_A, log v_A, log noise (n)]``.

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
    h_inputs : tuple of int
        States ``H`` depends on (they include ``storage``; default all).
    linear : bool
        The algebraic efforts' kernel has a linear part ``c_A x^T x'``.
    """

    d: int
    storage: Tuple[int, ...]
    algebraic: Tuple[int, ...]
    rank: int
    h_inputs: Tuple[int, ...] = ()
    linear: bool = False

    @property
    def hin(self) -> np.ndarray:
        """Indices of the inputs of ``H``."""
        return np.array(self.h_inputs if self.h_inputs else range(self.d), int)

    @property
    def local(self) -> np.ndarray:
        """Positions of the storage variables among the inputs of ``H``."""
        return np.array([list(self.hin).index(j) for j in self.storage], int)

    @property
    def n(self) -> int:
        """Number of effort components."""
        return len(self.storage) + len(self.algebraic)

    @property
    def size(self) -> int:
        """Length of ``theta``."""
        na = len(self.algebraic)
        return len(self.hin) + self.d + 1 + int(self.linear) + na * self.rank + na + self.n

    def unpack(self, theta: np.ndarray):
        """``l_H, s^2, l_A, W_A, v_A, noise`` from ``theta``.

        Parameters
        ----------
        theta : ndarray
            Flat hyperparameters.
        """
        h, na = len(self.hin), len(self.algebraic)
        i = h + 1 + self.d + int(self.linear)
        j = i + na * self.rank
        return (np.exp(theta[:h]), float(np.exp(theta[h])), np.exp(theta[h + 1:h + 1 + self.d]),
                theta[i:j].reshape(na, self.rank), np.exp(theta[j:j + na]), np.exp(theta[j + na:]))

    def linear_variance(self, theta: np.ndarray) -> Optional[float]:
        """``c_A``, or None without a linear part.

        Parameters
        ----------
        theta : ndarray
            Flat hyperparameters.
        """
        return float(np.exp(theta[len(self.hin) + 1 + self.d])) if self.linear else None


def _prior_parts(layout: EnergyLayout, theta: np.ndarray, kernel: str, X: np.ndarray) -> dict:
    """The factors of the prior: Hamiltonian Hessian blocks ``KH`` (s, N, s, N), ``s2``,
    the algebraic task covariance ``BA``, kernel ``KA`` and its gradients ``dKA``, the noise."""
    ellH, s2, ellA, W, v, noise = layout.unpack(theta)
    out = {"noise": noise, "s2": s2, "W": W, "v": v,
           "KH": rbf_hessian_blocks(X[:, layout.hin], X[:, layout.hin], ellH, layout.local)}
    if layout.algebraic:
        KA, dKA = gram_and_grads(kernel, X, ellA, layout.linear_variance(theta))
        out.update(BA=W @ W.T + np.diag(v), KA=KA, dKA=dKA)
    return out


def _prior(layout: EnergyLayout, theta: np.ndarray, kernel: str, X: np.ndarray):
    """The prior covariance of the efforts ``K_z`` (n, N, n, N) and :func:`_prior_parts`."""
    N, S, Al, out = X.shape[0], list(layout.storage), list(layout.algebraic), _prior_parts(layout, theta, kernel, X)
    Kz = np.zeros((layout.n, N, layout.n, N))
    Kz[np.ix_(S, range(N), S, range(N))] = out["s2"] * out["KH"]
    if Al:
        Kz[np.ix_(Al, range(N), Al, range(N))] = out["BA"][:, None, :, None] * out["KA"][None, :, None, :]
    return Kz, out


def _cholesky(Sig: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of the symmetric ``Sig``, Fortran-ordered (LAPACK then needs no copies)."""
    L, info = lapack.dpotrf(Sig.T, lower=1, clean=1)      # Sig.T: the same matrix, Fortran order
    if info != 0:
        raise np.linalg.LinAlgError(f"covariance not positive definite (potrf {info})")
    return L


def _cholesky_inverse(L: np.ndarray) -> np.ndarray:
    """``(L L^T)^{-1}`` from the lower factor by LAPACK potri (faster than trtri + gemm or potrs)."""
    inv, info = lapack.dpotri(L, lower=1)     # the lower triangle; the upper one stays 0 (L is clean)
    if info != 0:
        raise np.linalg.LinAlgError(f"potri failed ({info})")
    full = inv + inv.T
    full[np.diag_indices_from(full)] = np.diag(inv)
    return full


def _sandwich(M: np.ndarray, K: np.ndarray) -> np.ndarray:
    """``out[i,b,k,c] = sum_{j,l} M[i,j] K[j,b,l,c] M[k,l]`` (batched products from 4 components)."""
    n, N = K.shape[0], K.shape[1]
    if n <= 3:
        return np.einsum("ij,jblc,kl->ibkc", M, K, M)
    T = (M @ K.reshape(n, -1)).reshape(n * N, n, N)
    return np.matmul(M, T).reshape(n, N, n, N)


def _effort_space(A: np.ndarray, layout: EnergyLayout):
    """:func:`_effort_space_of`, memoised (the optimiser evaluates hundreds of times)."""
    return _effort_space_of(np.ascontiguousarray(A, float).tobytes(), A.shape, layout)


@functools.lru_cache(maxsize=8)
def _effort_space_of(key: bytes, shape: Tuple[int, int], layout: EnergyLayout):
    """``A^{-1}`` (read-only), ``log|det A|`` and the diagonal blocks (component groups) of the
    effort-space covariance, or None for a singular ``A``.

    With ``A`` invertible, ``Sigma = (A ⊗ I)(K_z + C ⊗ I)(A ⊗ I)^T`` with
    ``C = A^{-1} D A^{-T}``: the likelihood is evaluated on ``K_z + C ⊗ I``
    and ``(A^{-1} ⊗ I) y`` without the two ``(A ⊗ I)`` products.  When every
    column of ``A^{-1}`` lies in the storage or in the algebraic components
    (the pendulum: ``A`` a signed permutation), ``C`` never couples them and
    the covariance splits into the storage block and the algebraic one,
    factorised separately (the cubic cost falls by ``(s / n)^3``).
    """
    A = np.frombuffer(key).reshape(shape)
    if np.linalg.cond(A) > 1e8:
        return None
    Ainv = np.linalg.inv(A)
    S, Al = list(layout.storage), list(layout.algebraic)
    nz = np.abs(Ainv) > 1e-14 * np.abs(Ainv).max()
    split = bool(Al) and all(not (nz[S, i].any() and nz[Al, i].any()) for i in range(A.shape[0]))
    Ainv.setflags(write=False)
    return Ainv, float(np.linalg.slogdet(A)[1]), [S, Al] if split else [list(range(A.shape[0]))]


def _add_diagonal(K4: np.ndarray, C: np.ndarray) -> None:
    """``K4 += C ⊗ I`` in place for ``K4`` of shape (n, N, n, N)."""
    K4[:, np.arange(K4.shape[1]), :, np.arange(K4.shape[1])] += C


def _block_terms(K4: np.ndarray, C: np.ndarray, y: np.ndarray):
    """``(y^T Sig^{-1} y, log det Sig, Sig^{-1} y, 1/2 (alpha alpha^T - Sig^{-1}))`` for
    ``Sig = K4 + C ⊗ I`` (``K4`` (k, N, k, N) is overwritten)."""
    k, N = K4.shape[:2]
    _add_diagonal(K4, C)
    L = _cholesky(K4.reshape(k * N, k * N))
    alpha = cho_solve((L, True), y)
    G = _cholesky_inverse(L)
    G -= np.outer(alpha, alpha)
    G *= -0.5
    return y @ alpha, 2.0 * np.sum(np.log(np.diag(L))), alpha, G.reshape(k, N, k, N)


def energy_objective(theta: np.ndarray, layout: EnergyLayout, kernel: str, X: np.ndarray,
                     Y: np.ndarray, A: np.ndarray) -> Tuple[float, np.ndarray]:
    """Negative log marginal likelihood and its gradient.

    Evaluated in effort space when ``A`` is invertible, on the storage and
    algebraic blocks separately when they do not couple (see
    :func:`_effort_space`), in target space otherwise.

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
    S, Al = np.array(layout.storage, int), np.array(layout.algebraic, int)
    es = _effort_space(A, layout)
    if es is not None and len(es[2]) == 2:          # separate storage and algebraic blocks
        (Ainv, logdet_a, _), p = es, _prior_parts(layout, theta, kernel, X)
        noise = p["noise"]
        C, yz = (Ainv * noise) @ Ainv.T, (Y @ Ainv.T).T
        fit_s, ld_s, _, GS = _block_terms(p["s2"] * p["KH"], C[np.ix_(S, S)], yz[S].ravel())
        KA4 = p["BA"][:, None, :, None] * p["KA"][None, :, None, :]
        fit_a, ld_a, _, GA = _block_terms(KA4, C[np.ix_(Al, Al)], yz[Al].ravel())
        quad, logdet = fit_s + fit_a, ld_s + ld_a
        T = np.zeros((n, n))
        T[np.ix_(S, S)] = np.einsum("ibjb->ij", GS)
        T[np.ix_(Al, Al)] = np.einsum("ibjb->ij", GA)
    else:
        Kz, p = _prior(layout, theta, kernel, X)
        noise = p["noise"]
        if es is None:
            Ainv, logdet_a = None, 0.0
            Kz = _sandwich(A, Kz)
            C, y = np.diag(noise), Y.T.ravel()
        else:
            Ainv, logdet_a, _ = es
            C, y = (Ainv * noise) @ Ainv.T, (Y @ Ainv.T).T.ravel()
        quad, logdet, _, G4 = _block_terms(Kz, C, y)
        Gz = G4 if es is not None else _sandwich(A.T, G4)
        GS = Gz[np.ix_(S, range(N), S, range(N))]
        GA = Gz[np.ix_(Al, range(N), Al, range(N))] if len(Al) else None
        T = np.einsum("ibjb->ij", G4)
    lml = -0.5 * quad - 0.5 * logdet - N * logdet_a - 0.5 * n * N * _LOG2PI
    Xh = X[:, layout.hin]
    parts = [p["s2"] * rbf_hessian_contract(Xh, Xh, layout.unpack(theta)[0], layout.local, GS),
             [p["s2"] * np.sum(GS * p["KH"])]]
    if len(Al):
        GKA = np.tensordot(p["BA"], GA, axes=([0, 1], [0, 2]))
        GBA = np.tensordot(GA, p["KA"], axes=([1, 3], [0, 1]))
        GBA, dKA = 0.5 * (GBA + GBA.T), p["dKA"]
        parts += [dKA.reshape(len(dKA), -1) @ GKA.ravel(), (2.0 * GBA @ p["W"]).ravel(), np.diag(GBA) * p["v"]]
    else:
        parts += [np.zeros(layout.d + int(layout.linear))]
    if Ainv is None:
        parts.append(np.diag(T) * noise)
    else:                   # dC / d log noise_i = noise_i c_i c_i^T, c_i the columns of A^{-1}
        parts.append(np.einsum("ai,ab,bi->i", Ainv, T, Ainv) * noise)
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
        Cholesky factor of the data covariance (of the effort-space
        covariance ``K_z + C ⊗ I`` when ``effort_space``).
    effort_space : bool
        ``chol`` factorises the effort-space covariance (``A`` invertible).
    """

    layout: EnergyLayout
    theta: np.ndarray
    kernel: str
    X: np.ndarray
    A: np.ndarray
    beta: np.ndarray
    chol: tuple
    effort_space: bool = False

    def _cross(self, Xs: np.ndarray) -> np.ndarray:
        """``Cov(z(Xs), z(X))`` as (n, M, n, N)."""
        lay = self.layout
        S, Al = np.array(lay.storage, int), np.array(lay.algebraic, int)
        ellH, s2, ellA, W, v, _ = lay.unpack(self.theta)
        M, N = Xs.shape[0], self.X.shape[0]
        Kc = np.zeros((lay.n, M, lay.n, N))
        hin = lay.hin
        Kc[np.ix_(S, range(M), S, range(N))] = s2 * rbf_hessian_blocks(Xs[:, hin], self.X[:, hin], ellH, lay.local)
        if len(Al):
            BA = W @ W.T + np.diag(v)
            KA = gram(self.kernel, Xs, self.X, ellA, lay.linear_variance(self.theta))
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
        S, hin = np.array(self.layout.storage, int), self.layout.hin
        dk = kernel_dx("rbf", Xs[:, hin], self.X[:, hin], ellH)[:, :, self.layout.local]  # dk/dx* = -dk/dx'
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
        hin, loc = lay.hin, lay.local
        Delta = Xs[:, hin][:, None, :] - self.X[:, hin][None, :, :]
        k = np.exp(-0.5 * np.sum((Delta / ellH) ** 2, axis=2))
        a = Delta / ellH ** 2                                      # (M, N, d)
        inv2 = 1.0 / ellH ** 2
        bS = self.beta[S]                                          # (s, N)
        # d/dx*_q of k (delta_jl/l_j^2 - a_j a_l), contracted with beta_l
        ab = np.einsum("mbl,lb->mb", a[:, :, loc], bS)             # sum_l a_l beta_l
        for jj, (j, jl) in enumerate(zip(S, loc)):
            base = k * (inv2[jl] * bS[jj][None, :] - a[:, :, jl] * ab)  # (M, N): M_jl beta_l
            term = -a * base[:, :, None]
            term[:, :, jl] -= (k * ab * inv2[jl])
            extra = np.zeros_like(term)
            extra[:, :, loc] = -(k * a[:, :, jl])[:, :, None] * (bS.T[None, :, :] * inv2[loc][None, None, :])
            out[:, j, hin] = s2 * np.sum(term + extra, axis=1)
        if len(Al):
            BA = W @ W.T + np.diag(v)
            dk = gram_dx(self.kernel, Xs, self.X, ellA, lay.linear_variance(self.theta))
            out[:, Al, :] = np.einsum("mbq,jl,lb->mjq", dk, BA, self.beta[Al])
        return out

    def _prior_diag(self, Xs: np.ndarray, transformed: bool) -> np.ndarray:
        """Prior variance of ``z`` (or ``A z``) at each point, shape (n, M)."""
        lay = self.layout
        S, Al = np.array(lay.storage, int), np.array(lay.algebraic, int)
        ellH, s2, ellA, W, v, _ = lay.unpack(self.theta)
        BS = np.zeros((lay.n, lay.n))
        BS[np.ix_(S, S)] = s2 * np.diag(1.0 / ellH[lay.local] ** 2)
        BA = np.zeros((lay.n, lay.n))
        if len(Al):
            BA[np.ix_(Al, Al)] = W @ W.T + np.diag(v)
        if transformed:
            BS, BA = self.A @ BS @ self.A.T, self.A @ BA @ self.A.T
        g = gram_diag(Xs, lay.linear_variance(self.theta))
        return np.diag(BS)[:, None] + np.diag(BA)[:, None] * g[None, :]

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
        Kc = self._cross(Xs)                                           # Cov(z(Xs), z)
        if not self.effort_space:
            Kc = np.einsum("jmlb,il->jmib", Kc, self.A)                # Cov(z(Xs), y)
        if transformed:
            Kc = np.einsum("kj,jmib->kmib", self.A, Kc)
        Kc = Kc.reshape(n * M, n * N)
        red = np.sum(Kc * cho_solve(self.chol, Kc.T).T, axis=1).reshape(n, M)
        return np.clip(self._prior_diag(Xs, transformed) - red, 0.0, None).T


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
    Kz, p = _prior(layout, theta, kernel, X)
    es = _effort_space(A, layout)
    if es is None:
        Sig = _sandwich(A, Kz)
        _add_diagonal(Sig, np.diag(p["noise"]))
        cf = cho_factor(Sig.reshape(n * N, n * N), lower=True)
        beta = A.T @ cho_solve(cf, Y.T.ravel()).reshape(n, N)
    else:                   # as the likelihood: (A ⊗ I)^T Sigma^{-1} y = (K_z + C ⊗ I)^{-1} (A^{-1} ⊗ I) y
        Ainv = es[0]
        _add_diagonal(Kz, (Ainv * p["noise"]) @ Ainv.T)
        cf = cho_factor(Kz.reshape(n * N, n * N), lower=True)
        beta = cho_solve(cf, (Y @ Ainv.T).T.ravel()).reshape(n, N)
    return EnergyPosterior(layout, np.asarray(theta, float), kernel, X, A, beta, cf, es is not None)
