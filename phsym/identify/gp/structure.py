"""The constant structure ``E, J, R, B`` of the pH-DAE whose effort is learned:
validation, the differential / algebraic split and what is identifiable."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, List

import numpy as np

from ...errors import IdentificationError, PhsymWarning

__all__ = ["StructureMatrices", "UnidentifiableEffortWarning", "check_structure", "warn_if_singular"]


class UnidentifiableEffortWarning(PhsymWarning):
    """``J - R`` is singular: effort components in its null space are not informed by data.

    Parameters
    ----------
    message : str
        The warning text.
    null_space : ndarray, shape (n, k)
        Orthonormal basis of the null space of ``J - R``.

    Attributes
    ----------
    null_space : ndarray
        The basis.
    """

    def __init__(self, message: str, null_space: Any = None):
        super().__init__(message)
        self.null_space = np.zeros((0, 0)) if null_space is None else np.asarray(null_space)


@dataclass(frozen=True)
class StructureMatrices:
    """Validated structure.

    Parameters
    ----------
    E, J, R, B : ndarray
        The matrices.
    A : ndarray
        ``J - R``.
    differential : list of int
        States whose column of E is nonzero.
    algebraic : list of int
        The others.
    null : ndarray, shape (n, k)
        Orthonormal basis of the null space of ``J - R`` (``k = 0`` if regular).
    """

    E: np.ndarray
    J: np.ndarray
    R: np.ndarray
    B: np.ndarray
    A: np.ndarray
    differential: List[int]
    algebraic: List[int]
    null: np.ndarray


def _matrix(a: Any, name: str) -> np.ndarray:
    if a is None:
        raise IdentificationError(f"the structure matrix {name} is required")
    m = np.asarray(a, dtype=float)
    if m.ndim == 1:
        m = m[:, None]
    if m.ndim != 2 or not np.all(np.isfinite(m)):
        raise IdentificationError(f"{name} must be a finite 2-D array, got shape {np.shape(a)}")
    return m


def check_structure(E: Any, J: Any, R: Any, B: Any, tol: float = 1e-10) -> StructureMatrices:
    """Validate a constant pH-DAE structure.

    Parameters
    ----------
    E, J, R, B : array_like
        E (n, n), J skew (n, n), R symmetric positive semi-definite (n, n), B (n, m).
    tol : float
        Relative tolerance of the symmetry, definiteness and rank tests.

    Returns
    -------
    StructureMatrices

    Raises
    ------
    IdentificationError
        For wrong shapes, a J that is not skew or an R that is not symmetric
        positive semi-definite.
    """
    E, J, R, B = (_matrix(a, k) for a, k in ((E, "E"), (J, "J"), (R, "R"), (B, "B")))
    n = J.shape[0]
    for m, k in ((E, "E"), (J, "J"), (R, "R")):
        if m.shape != (n, n):
            raise IdentificationError(f"{k} must be {n} x {n}, got {m.shape}")
    if B.shape[0] != n:
        raise IdentificationError(f"B must have {n} rows, got {B.shape[0]}")
    scale = max(1.0, np.abs(J).max(initial=0.0), np.abs(R).max(initial=0.0))
    if np.abs(J + J.T).max(initial=0.0) > tol * scale:
        raise IdentificationError("J must be skew-symmetric")
    if np.abs(R - R.T).max(initial=0.0) > tol * scale or np.linalg.eigvalsh(0.5 * (R + R.T)).min() < -tol * scale:
        raise IdentificationError("R must be symmetric positive semi-definite")
    A = J - R
    u, s, vt = np.linalg.svd(A)
    null = vt[s <= tol * max(s.max(initial=0.0), 1.0)].T
    differential = [j for j in range(n) if np.any(E[:, j] != 0.0)]
    algebraic = [j for j in range(n) if j not in differential]
    return StructureMatrices(E, J, R, B, A, differential, algebraic, null)


def warn_if_singular(S: StructureMatrices) -> None:
    """Issue :class:`UnidentifiableEffortWarning` if ``J - R`` is singular.

    Parameters
    ----------
    S : StructureMatrices
        Checked structure.
    """
    if S.null.shape[1]:
        warnings.warn(UnidentifiableEffortWarning(
            f"J - R is singular (rank {S.A.shape[0] - S.null.shape[1]} of {S.A.shape[0]}): the effort "
            f"components along its null space {np.round(S.null.T, 6).tolist()} are not informed by the "
            "data; predict returns the prior there", S.null), stacklevel=3)
