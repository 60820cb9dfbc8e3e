"""Prior means of the efforts: a least-squares quadratic Hamiltonian."""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["quadratic_energy", "quadratic_form"]


def quadratic_energy(Xs: np.ndarray, Ys: np.ndarray, A: np.ndarray, storage: Sequence[int],
                      hin: Sequence[int]) -> np.ndarray:
    """Slope of the storage efforts of a least-squares quadratic Hamiltonian.

    Efforts ``z = pinv(A) y`` per sample, ``z_S ~ c + x_H G`` by least squares;
    the block of G among the storage states is symmetrised (a Hessian).  The
    GP then models the remainder: without it a nearly quadratic energy needs
    huge variances and length scales, and the learned law's sum of bumps
    cancels to a small result (inaccurate in floating point).
    """
    n = A.shape[0]
    S, H = list(storage), list(hin)
    Z = Ys @ np.linalg.pinv(A).T
    design = np.column_stack([np.ones(len(Xs)), Xs[:, H]])
    coef = np.linalg.lstsq(design, Z[:, S], rcond=None)[0][1:]     # (h, s)
    slope = np.zeros((n, n))
    slope[np.ix_(S, H)] = coef.T
    block = slope[np.ix_(S, S)]
    slope[np.ix_(S, S)] = 0.5 * (block + block.T)
    return slope


def quadratic_form(slope: np.ndarray, storage: Sequence[int]) -> np.ndarray:
    """Symmetric Q with ``(Q x)_S = slope[S] x`` (zero among the other states)."""
    Q = np.zeros_like(slope)
    S = list(storage)
    Q[S, :] = slope[S, :]
    Q[:, S] = slope[S, :].T
    return Q
