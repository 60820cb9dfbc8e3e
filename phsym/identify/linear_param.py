"""Structure-preserving parametrisation of a linear port-Hamiltonian system.

A point is a dict of blocks

``J``  skew-symmetric (n, n)                 -> J exactly skew
``L``  (n, r) factor with ``R = L L^T``        -> R symmetric PSD of rank <= r
``Q``  symmetric positive definite (n, n)
``B``  (n, m)
``x0`` (n,)

Two coordinate systems are offered on top of these blocks:

* the *manifold* view used by the Riemannian CG (J in the skew matrices,
  L in R^{n x r}, Q on the SPD manifold with the affine-invariant metric,
  B and x0 flat), see :mod:`phsym.identify.linear_optim`;
* a *flat* vector used by L-BFGS: strict upper triangle of J
  (``J = S - S^T``), entries of L, lower-triangular ``M`` with
  ``Q = M M^T + q_floor I`` and entries of B and x0.

Every point representable in either view is port-Hamiltonian, so the structure
holds at every iterate (and every line-search trial point).
"""
from __future__ import annotations

from typing import Dict, Sequence, Tuple

import numpy as np

from ..errors import IdentificationError
from .linear_kernels import mm

__all__ = ["BLOCKS", "Point", "skew", "sym", "R_of", "FlatMap"]

BLOCKS = ("J", "R", "Q", "B", "x0")
Point = Dict[str, np.ndarray]


def skew(a: np.ndarray) -> np.ndarray:
    """Skew part ``(a - a^T) / 2`` (exactly skew in floating point)."""
    s = 0.5 * (a - a.T)
    return s


def sym(a: np.ndarray) -> np.ndarray:
    """Symmetric part ``(a + a^T) / 2`` (exactly symmetric in floating point)."""
    return 0.5 * (a + a.T)


def R_of(L: np.ndarray) -> np.ndarray:
    """``R = L L^T`` symmetrised exactly (PSD up to round-off of the product)."""
    return sym(mm(L, L.T))


class FlatMap:
    """Pack/unpack the free blocks into one real vector (the L-BFGS coordinates).

    Parameters
    ----------
    n, m, r : int
        State, port and dissipation-rank dimensions.
    free : sequence of str
        Free blocks among ``"J", "R", "Q", "B", "x0"`` (``"R"`` means its
        factor ``L`` is free).
    q_floor : float
        ``Q = M M^T + q_floor I`` keeps Q positive definite.
    """

    def __init__(self, n: int, m: int, r: int, free: Sequence[str], q_floor: float):
        self.n, self.m, self.r = n, m, r
        self.free = tuple(b for b in BLOCKS if b in free)
        self.q_floor = float(q_floor)
        self.iu = np.triu_indices(n, 1)
        self.il = np.tril_indices(n)
        sizes = {"J": len(self.iu[0]), "R": n * r, "Q": len(self.il[0]), "B": n * m, "x0": n}
        self.slices: Dict[str, slice] = {}
        pos = 0
        for b in self.free:
            self.slices[b] = slice(pos, pos + sizes[b])
            pos += sizes[b]
        self.size = pos

    def to_vector(self, p: Point) -> np.ndarray:
        """Flat coordinates of a point (Q is Cholesky-factored after removing the floor)."""
        v = np.empty(self.size)
        for b in self.free:
            s = self.slices[b]
            if b == "J":
                v[s] = p["J"][self.iu]
            elif b == "R":
                v[s] = p["L"].ravel()
            elif b == "Q":
                shifted = p["Q"] - self.q_floor * np.eye(self.n)
                try:
                    M = np.linalg.cholesky(sym(shifted))
                except np.linalg.LinAlgError:
                    raise IdentificationError("initial Q must exceed q_floor * I") from None
                v[s] = M[self.il]
            elif b == "B":
                v[s] = p["B"].ravel()
            else:
                v[s] = p["x0"]
        return v

    def to_point(self, v: np.ndarray, base: Point) -> Tuple[Point, Dict[str, np.ndarray]]:
        """Point for flat coordinates ``v`` (fixed blocks copied from ``base``).

        Returns the point and auxiliary factors (``M``) needed by the gradient.
        """
        p = dict(base)
        aux: Dict[str, np.ndarray] = {}
        n = self.n
        for b in self.free:
            s = self.slices[b]
            if b == "J":
                S = np.zeros((n, n))
                S[self.iu] = v[s]
                p["J"] = S - S.T
            elif b == "R":
                p["L"] = v[s].reshape(n, self.r).copy()
            elif b == "Q":
                M = np.zeros((n, n))
                M[self.il] = v[s]
                aux["M"] = M
                p["Q"] = sym(mm(M, M.T)) + self.q_floor * np.eye(n)
            elif b == "B":
                p["B"] = v[s].reshape(n, self.m).copy()
            else:
                p["x0"] = v[s].copy()
        return p, aux

    def pull_back(self, g: Dict[str, np.ndarray], p: Point, aux: Dict[str, np.ndarray]) -> np.ndarray:
        """Chain rule: Euclidean block gradients (J, R, Q, B, x0) -> flat gradient."""
        out = np.empty(self.size)
        for b in self.free:
            s = self.slices[b]
            if b == "J":
                out[s] = (g["J"] - g["J"].T)[self.iu]
            elif b == "R":
                out[s] = mm(g["R"] + g["R"].T, p["L"]).ravel()
            elif b == "Q":
                out[s] = mm(g["Q"] + g["Q"].T, aux["M"])[self.il]
            elif b == "B":
                out[s] = g["B"].ravel()
            else:
                out[s] = g["x0"]
        return out
