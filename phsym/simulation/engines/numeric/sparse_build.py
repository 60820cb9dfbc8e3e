"""Sparse matrices assembled from triplets, with a part per ``1/h``.

The engine's matrices hold, besides parameters, the step ``h`` (a
capacitor's current is its charge increment over ``h``), and a failed step
is taken again in sub-steps of ``h / 2, h / 4, ...``.  A :class:`Triplets`
keeps each entry's value as ``a + b / h`` and its pattern, so the numbers at
another step are one ``bincount`` (:meth:`Triplets.csr`), not a new build.
"""
from __future__ import annotations

from typing import Iterable, List, Tuple

import numpy as np

__all__ = ["Triplets", "Compressed"]


class Compressed:
    """A CSR (or CSC) pattern and the map from the triplets to its entries.

    Parameters
    ----------
    rows, cols : ndarray of int64
        Triplet coordinates (duplicates are summed).
    shape : tuple of int
        Matrix shape.
    by_column : bool
        CSC instead of CSR.
    """

    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: Tuple[int, int], by_column: bool = False):
        major, minor = (cols, rows) if by_column else (rows, cols)
        n_major = shape[1] if by_column else shape[0]
        order = np.lexsort((minor, major))
        mj, mn = major[order], minor[order]
        new = np.ones(order.size, dtype=bool)
        if order.size:
            new[1:] = (mj[1:] != mj[:-1]) | (mn[1:] != mn[:-1])
        slot = np.cumsum(new) - 1
        self.map = np.empty(order.size, dtype=np.int64)
        self.map[order] = slot
        self.indices = np.ascontiguousarray(mn[new], dtype=np.int64)
        self.indptr = np.zeros(n_major + 1, dtype=np.int64)
        np.add.at(self.indptr, mj[new] + 1, 1)
        self.indptr = np.cumsum(self.indptr)
        self.shape = shape
        self.by_column = by_column
        self.nnz = int(self.indices.size)

    def data(self, values: np.ndarray) -> np.ndarray:
        """The entries of the pattern for the triplets' values (summed)."""
        return np.bincount(self.map, weights=values, minlength=self.nnz).astype(float) if self.nnz else np.zeros(0)

    def position(self, row: int, col: int) -> int:
        """Index of entry ``(row, col)`` in the data (it must be in the pattern)."""
        major, minor = (col, row) if self.by_column else (row, col)
        lo, hi = self.indptr[major], self.indptr[major + 1]
        k = lo + int(np.searchsorted(self.indices[lo:hi], minor))
        if k >= hi or self.indices[k] != minor:
            raise KeyError((row, col))
        return k

    def apply(self, data: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The product of the matrix with ``data`` and the vector ``v`` (without scipy; each row's
        terms summed in their stored order, as scipy's product does)."""
        major = np.repeat(np.arange(self.indptr.size - 1), np.diff(self.indptr))
        if self.by_column:
            return np.bincount(self.indices, weights=data * v[major], minlength=self.shape[0])
        return np.bincount(major, weights=data * v[self.indices], minlength=self.shape[0])

    def matrix(self, data: np.ndarray):
        """The scipy matrix with ``data``."""
        import scipy.sparse as sps      # here: a small circuit's run uses the compressed arrays alone
        cls = sps.csc_matrix if self.by_column else sps.csr_matrix
        return cls((data, self.indices, self.indptr), shape=self.shape)


class StepNumbers:
    """The numbers at a step ``h`` of a system's arrays (:class:`~.system.System` and a snapshot's
    :class:`~.snapshot.FrozenSystem`): ``R`` (:class:`Triplets`), ``J`` (its pattern),
    ``_jconst_map`` (``R``'s triplets in ``J``) and ``_stamp_ab`` (the stamps' ``a + b / h``)."""

    def jacobian_constant(self, h: float) -> np.ndarray:
        """Constant entries of the Jacobian at step ``h`` (in the pattern's data order)."""
        return np.bincount(self._jconst_map, weights=self.R.values(h), minlength=self.J.nnz).astype(float)

    def stamp_coefficients(self, h: float) -> np.ndarray:
        """Each stamp's coefficient at step ``h``."""
        a, b = self._stamp_ab
        return a + b / h


class Triplets:
    """Entries ``(row, col, a + b / h)`` of one matrix (see the module docstring).

    Parameters
    ----------
    shape : tuple of int
        Matrix shape.
    """

    def __init__(self, shape: Tuple[int, int]):
        self.shape = shape
        self.rows: List[int] = []
        self.cols: List[int] = []
        self.a: List[float] = []
        self.b: List[float] = []
        self._pattern = None

    def add(self, row: int, col: int, value: float, per_h: bool = False) -> None:
        """Add ``value`` (or ``value / h`` when ``per_h``) at ``(row, col)``."""
        self.rows.append(row)
        self.cols.append(col)
        self.a.append(0.0 if per_h else value)
        self.b.append(value if per_h else 0.0)

    def add_all(self, row: int, entries: Iterable[Tuple[int, float]], scale: float = 1.0, per_h: bool = False) -> None:
        """Add ``scale * coef`` at ``(row, col)`` for each ``(col, coef)`` of ``entries``."""
        for col, coef in entries:
            self.add(row, col, scale * coef, per_h)

    def extend(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray, per_h: bool = False) -> None:
        """Add many entries at once (arrays of equal length; see :meth:`add`)."""
        vals = np.asarray(values, dtype=float).tolist()
        zeros = [0.0] * len(vals)
        self.rows.extend(np.asarray(rows, dtype=np.int64).tolist())
        self.cols.extend(np.asarray(cols, dtype=np.int64).tolist())
        self.a.extend(zeros if per_h else vals)
        self.b.extend(vals if per_h else zeros)

    def pattern(self, by_column: bool = False) -> Compressed:
        """The compressed pattern (built once)."""
        if self._pattern is None or self._pattern.by_column != by_column:
            self._pattern = Compressed(np.asarray(self.rows, dtype=np.int64), np.asarray(self.cols, dtype=np.int64),
                                       self.shape, by_column)
        return self._pattern

    def values(self, h: float) -> np.ndarray:
        """Each triplet's value at step ``h``."""
        return np.asarray(self.a, dtype=float) + np.asarray(self.b, dtype=float) / h

    def csr(self, h: float):
        """``(indptr, indices, data)`` at step ``h`` (duplicates summed)."""
        p = self.pattern()
        return p.indptr, p.indices, p.data(self.values(h))

    def apply(self, h: float, v: np.ndarray) -> np.ndarray:
        """The product of the matrix at step ``h`` with the vector ``v`` (:meth:`Compressed.apply`)."""
        p = self.pattern()
        return p.apply(p.data(self.values(h)), np.asarray(v, dtype=float))

    def matrix(self, h: float):
        """The scipy CSR matrix at step ``h``."""
        p = self.pattern()
        return p.matrix(p.data(self.values(h)))
