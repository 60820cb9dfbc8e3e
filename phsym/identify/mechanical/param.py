"""Parametrisation of ``(M, D, K, L)`` that holds the structure by construction.

``M = Fm Fm^T`` and ``K = Fk Fk^T`` with lower-triangular factors whose
diagonals are ``exp(theta)`` (so M, K are symmetric positive definite for
every ``theta``), ``D = Fd Fd^T`` with a plain lower-triangular factor
(symmetric positive semidefinite), and, when the input matrix is estimated,
its entries except ``L[0, 0]``, which is fixed to keep the scale
``(M, D, K, L) -> c (M, D, K, L)`` (invisible in the data) out of the fit.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

__all__ = ["Parametrisation"]


class Parametrisation:
    """Map between ``theta`` and ``(M, D, K, L)``.

    Parameters
    ----------
    n : int
        Degrees of freedom.
    m : int
        Inputs.
    L_fixed : numpy.ndarray, optional
        Known input matrix; ``None`` estimates L with ``L[0, 0]`` held at
        the value of the initial guess.
    """

    def __init__(self, n: int, m: int, L_fixed: Optional[np.ndarray] = None):
        self.n, self.m = n, m
        self.L_fixed = L_fixed
        self.rows, self.cols = np.tril_indices(n)
        self.n_tri = self.rows.size
        self.diag = self.rows == self.cols
        self.n_L = 0 if L_fixed is not None else n * m - 1
        self.size = 3 * self.n_tri + self.n_L
        self.L00 = 1.0

    def names(self) -> List[str]:
        """Parameter names (``M.F[i,j]``: entry of the factor; ``log`` on the diagonals)."""
        out = []
        for mat in "MDK":
            for i, j in zip(self.rows, self.cols):
                log = "log " if (i == j and mat != "D") else ""
                out.append(f"{log}{mat}.F[{i},{j}]")
        out += [f"L[{i},{j}]" for i in range(self.n) for j in range(self.m) if (i, j) != (0, 0)][:self.n_L]
        return out

    def _factor(self, v: np.ndarray, log_diag: bool) -> np.ndarray:
        F = np.zeros((self.n, self.n))
        vals = np.where(self.diag, np.exp(v), v) if log_diag else v
        F[self.rows, self.cols] = vals
        return F

    def unpack(self, theta: np.ndarray) -> Tuple[np.ndarray, ...]:
        """``(M, D, K, L)`` and the factors ``(Fm, Fd, Fk)``."""
        t = self.n_tri
        Fm = self._factor(theta[:t], True)
        Fd = self._factor(theta[t:2 * t], False)
        Fk = self._factor(theta[2 * t:3 * t], True)
        if self.L_fixed is not None:
            L = self.L_fixed
        else:
            flat = np.concatenate([[self.L00], theta[3 * t:]])
            L = flat.reshape(self.n, self.m)
        return Fm @ Fm.T, Fd @ Fd.T, Fk @ Fk.T, L, (Fm, Fd, Fk)

    def pack(self, M: np.ndarray, D: np.ndarray, K: np.ndarray, L: np.ndarray) -> np.ndarray:
        """``theta`` of symmetric positive definite ``M, D, K`` (D made definite by a tiny shift) and ``L``."""
        t = self.n_tri
        theta = np.zeros(self.size)
        for k, (A, log) in enumerate(((M, True), (D, False), (K, True))):
            A = 0.5 * (A + A.T)
            w, V = np.linalg.eigh(A)
            floor = max(abs(w).max(), 1e-300) * (1e-3 if not log else 1e-8)
            A = (V * np.maximum(w, floor)) @ V.T
            F = np.linalg.cholesky(0.5 * (A + A.T))
            v = F[self.rows, self.cols]
            if log:
                v = v.copy()
                v[self.diag] = np.log(v[self.diag])
            theta[k * t:(k + 1) * t] = v
        if self.L_fixed is None:
            self.L00 = float(L[0, 0])
            theta[3 * t:] = L.reshape(-1)[1:]
        return theta

    def directions(self, theta: np.ndarray):
        """``(dM, dD, dK, dL)`` per parameter (exact derivatives of :meth:`unpack`)."""
        t = self.n_tri
        n, m = self.n, self.m
        *_, (Fm, Fd, Fk) = self.unpack(theta)
        z, zL = np.zeros((n, n)), np.zeros((n, m))
        out = []
        for k, (F, log) in enumerate(((Fm, True), (Fd, False), (Fk, True))):
            for i, j, dg in zip(self.rows, self.cols, self.diag):
                E = np.zeros((n, n))
                E[i, j] = F[i, j] if (dg and log) else 1.0
                dS = E @ F.T + F @ E.T
                d = [z, z, z, zL]
                d[k] = dS
                out.append(tuple(d))
        for idx in range(1, 1 + self.n_L):
            E = np.zeros(n * m)
            E[idx] = 1.0
            out.append((z, z, z, E.reshape(n, m)))
        return out

    def matrix_jacobian(self, theta: np.ndarray) -> np.ndarray:
        """Jacobian of ``(vech M, vech D, vech K, vec L)`` with respect to ``theta``."""
        t = self.n_tri
        cols = []
        for dM, dD, dK, dL in self.directions(theta):
            cols.append(np.concatenate([dM[self.rows, self.cols], dD[self.rows, self.cols],
                                        dK[self.rows, self.cols], dL.reshape(-1)]))
        return np.array(cols).T if cols else np.zeros((3 * t + self.n * self.m, 0))
