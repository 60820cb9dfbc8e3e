"""The one discretisation of linear descriptor systems ``E xi' = A xi + B u``.

Every linear time stepper of phsym (:meth:`LinearPHS.discretize`, the
simulator's linear engine, the linear identifier) takes its matrices from
:func:`theta_step`.  For a scheme with parameter ``theta`` (see
:mod:`phsym.common.schemes`) the step ``k -> k+1`` is

    E (xi_{k+1} - xi_k) / h = A xi_theta + B ubar,
    xi_theta = xi_k + theta (xi_{k+1} - xi_k).

Variables whose column of ``E`` is zero are *algebraic*: they carry no state
from step to step and enter as their step value (the value at
``xi_theta``), which is what fixes them exactly on the step (endpoint values
of algebraic variables would ring after input jumps with the midpoint rule).
The other variables are *differential*.  With ``x`` the differential
variables and ``z`` the algebraic step values, the unknowns of a step are
``v = (dx, z)`` and

    M v = Kx x_k + Ku ubar,        M = [E_x / h - theta A_x,  -A_z],

    x_{k+1} = x_k + dx,            xi_theta = Sx x_k + Sv v.

For the midpoint rule this is the Cayley-Tustin transform (exact power
balance for quadratic energies); for backward Euler ``theta = 1``; for
explicit Euler ``theta = 0``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from ..common.lazy import issparse as _issparse
from ..common.schemes import Scheme
from ..errors import StructureError

__all__ = ["ThetaStep", "theta_step", "solve_step", "singular_step", "state_transition"]

if TYPE_CHECKING:
    import scipy.sparse

Matrix = Union[np.ndarray, "scipy.sparse.spmatrix"]



@dataclass
class ThetaStep:
    """Matrices of one step (see the module docstring); dense or sparse like the input.

    Attributes
    ----------
    M, Kx, Ku : matrix
        ``M v = Kx x_k + Ku ubar``.
    Sx, Sv : matrix
        Step values ``xi_theta = Sx x_k + Sv v``.
    differential, algebraic : numpy.ndarray of int
        Indices of the differential and algebraic variables of ``xi``.
    h : float
        Step size.
    scheme : Scheme
        The scheme.
    """

    M: Matrix
    Kx: Matrix
    Ku: Matrix
    Sx: Matrix
    Sv: Matrix
    differential: np.ndarray
    algebraic: np.ndarray
    h: float
    scheme: Scheme


def theta_step(E: Matrix, A: Matrix, B: Matrix, h: float, scheme: Scheme) -> ThetaStep:
    """Step matrices of ``E xi' = A xi + B u`` for ``scheme`` and step ``h``.

    Parameters
    ----------
    E, A : numpy.ndarray or scipy.sparse matrix, shape (n, n)
        Descriptor and system matrices (sparse input gives sparse output).
    B : numpy.ndarray or scipy.sparse matrix, shape (n, m)
        Input matrix.
    h : float
        Step size.
    scheme : Scheme
        From :func:`phsym.common.schemes.get_scheme`.

    Returns
    -------
    ThetaStep

    Examples
    --------
    The midpoint rule on ``x' = a x`` is the bilinear map ``(1 + a h/2) / (1 - a h/2)``:

    >>> import numpy as np
    >>> from phsym.common.schemes import get_scheme
    >>> st = theta_step(np.eye(1), np.array([[-2.0]]), np.ones((1, 1)), 0.1, get_scheme("midpoint"))
    >>> round(float(state_transition(st)[0][0, 0]), 12), round((1 - 0.1) / (1 + 0.1), 12)
    (0.818181818182, 0.818181818182)
    """
    sparse = _issparse(E) or _issparse(A)
    if sparse:
        import scipy.sparse as sps
    Es = sps.csc_matrix(E) if sparse else None
    n = E.shape[0]
    if E.shape != (n, n) or A.shape != (n, n) or B.shape[0] != n:
        raise StructureError(f"theta_step: E {E.shape}, A {A.shape} and B {B.shape} do not fit")
    nonzero_cols = (np.diff(Es.indptr) > 0) if sparse else np.any(np.asarray(E) != 0, axis=0)
    diff = np.flatnonzero(nonzero_cols)
    alg = np.flatnonzero(~nonzero_cols)
    th = float(scheme.theta)
    if sparse:
        Ac = sps.csc_matrix(A)
        Ed, Ad, Az = Es[:, diff], Ac[:, diff], Ac[:, alg]
        M = sps.hstack([Ed / h - th * Ad, -Az], format="csc")
        Pd = sps.csr_matrix((np.ones(diff.size), (diff, np.arange(diff.size))), shape=(n, diff.size))
        Pa = sps.csr_matrix((np.ones(alg.size), (alg, np.arange(alg.size))), shape=(n, alg.size))
        Sv = sps.hstack([th * Pd, Pa], format="csr")
        return ThetaStep(M, Ad.tocsr(), sps.csr_matrix(B), Pd, Sv, diff, alg, float(h), scheme)
    E, A = np.asarray(E, dtype=float), np.asarray(A, dtype=float)
    M = np.hstack([E[:, diff] / h - th * A[:, diff], -A[:, alg]])
    Pd = np.zeros((n, diff.size))
    Pd[diff, np.arange(diff.size)] = 1.0
    Pa = np.zeros((n, alg.size))
    Pa[alg, np.arange(alg.size)] = 1.0
    return ThetaStep(M, A[:, diff], np.asarray(B, dtype=float), Pd, np.hstack([th * Pd, Pa]), diff, alg,
                     float(h), scheme)


def solve_step(step: ThetaStep):
    """Dense ``V = M^{-1} [Kx, Ku]`` (unknowns of a step from ``(x_k, ubar)``) and the row-scaled LU of ``M``.

    Parameters
    ----------
    step : ThetaStep
        From :func:`theta_step` (dense or sparse).

    Raises
    ------
    StructureError
        When the step matrix ``M`` is singular (a constraint the scheme
        cannot resolve, e.g. index > 1 for midpoint).
    """
    M = step.M.toarray() if _issparse(step.M) else step.M
    K = np.hstack([step.Kx.toarray() if _issparse(step.Kx) else step.Kx,
                   step.Ku.toarray() if _issparse(step.Ku) else step.Ku])
    if M.shape[0] == 0:
        return np.zeros((0, K.shape[1])), (M, np.zeros(0, dtype=np.int32))
    # rows scaled to unit maximum first: physical units make rows differ by
    # many orders of magnitude, and only then is a tiny pivot a singularity
    scale = np.max(np.abs(M), axis=1)
    Ms, lu = M / scale[:, None], singular_step(step, scale, M)
    # numpy's solve, not lu_solve with the factors: OpenBLAS's threaded getrs costs 0.4 ms on a
    # 3 x 3 system when the other core is busy (15 us here); a sweep builds a plan per parameter set
    return np.linalg.solve(Ms, K / scale[:, None]), (lu[0], lu[1], scale)


def singular_step(step: ThetaStep, scale: np.ndarray, M: Optional[np.ndarray] = None):
    """LU factors of the row-scaled step matrix, or a :class:`StructureError` when it is singular.

    Parameters
    ----------
    step : ThetaStep
        The step (its ``M`` is used when ``M`` is not given).
    scale : numpy.ndarray
        Row scales (the largest magnitude of each row of ``M``).
    M : numpy.ndarray, optional
        Dense ``M``.
    """
    M = (step.M.toarray() if _issparse(step.M) else step.M) if M is None else M
    if M.shape[0] == 0:
        return (M, np.zeros(0, dtype=np.int32))
    if not np.all(np.isfinite(scale)) or np.any(scale == 0):
        raise StructureError(f"singular step matrix of the {step.scheme.name} scheme (an empty or non-finite row)")
    import scipy.linalg as sla      # here: a netlist's load and the numeric engine never need it
    try:
        lu = sla.lu_factor(M / scale[:, None], check_finite=True)
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise StructureError(f"singular step matrix of the {step.scheme.name} scheme: {exc}") from None
    if np.min(np.abs(np.diag(lu[0])), initial=np.inf) <= 1e-14 * M.shape[0]:
        raise StructureError(f"singular step matrix of the {step.scheme.name} scheme (a constraint of "
                             "index > 1 it cannot resolve?)")
    return lu


def state_transition(step: ThetaStep):
    """Dense ``(Ad, Bd, lu)`` with ``x_{k+1} = Ad x_k + Bd ubar`` (differential variables).

    Parameters
    ----------
    step : ThetaStep
        From :func:`theta_step` (dense or sparse).

    Returns
    -------
    Ad, Bd : numpy.ndarray
        The state transition.
    lu : tuple
        ``(LU, piv, scale)``: LU factors of ``M / scale[:, None]`` (rows scaled
        to unit maximum) in the :func:`scipy.linalg.lu_factor` layout, which
        is also that of :func:`phsym.codegen.kernels.generic.lu_factor`.
    """
    V, lu = solve_step(step)
    nd = step.differential.size
    return np.eye(nd) + V[:nd, :nd], V[:nd, nd:], lu
