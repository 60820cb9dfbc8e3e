"""Subdivision of a step Newton could not take: the Newton loop's last resort.

When the generated loop fails on the step ``k -> k+1`` (no convergence,
a singular Jacobian, a non-finite value), :func:`subdivide` restarts it
from ``x_k`` as two half steps with the inputs interpolated linearly
between ``u_k`` and ``u_{k+1}``, and halves again whichever half fails, up
to :data:`MAX_LEVELS` times (sub-steps of ``h / 1024``).  Each sub-step is
the same structure-preserving step, so its discrete power balance holds;
the step ``k`` then records the time averages of the sub-steps' outputs,
efforts and powers (``P = sum(h_s P_s) / h``), and the balance of the
whole step, ``H_{k+1} - H_k = sum h_s (P_supplied,s - P_diss,s)``, is as
exact as that of any step.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["MAX_LEVELS", "Substeps", "subdivide"]

#: Halvings of one sample at most (the smallest sub-step is h / 2**MAX_LEVELS).
MAX_LEVELS = 10


class Substeps:
    """Time integrals (``sum h_s * value``) over the sub-steps of one step.

    Parameters
    ----------
    n_u, n_e : int
        Ports and effort-vector size.
    rec : bool
        Whether efforts are recorded.
    """

    def __init__(self, n_u: int, n_e: int, rec: bool):
        self.Y, self.E = np.zeros(max(n_u, 1)), np.zeros(max(n_e, 1))
        self.Pd = self.Ps = self.Pc = self.Pn = 0.0
        self.H_end = np.nan
        self.iterations = 0
        self.count = 0
        self.rec = rec

    def add(self, A, j0: int, j1: int, h: float) -> None:
        """Add the sub-steps ``j0 .. j1-1`` of the run arrays ``A`` (step ``h``).

        Parameters
        ----------
        A : RunArrays
            Arrays of a sub-run.
        j0, j1 : int
            Range of converged sub-steps.
        h : float
            Their step.
        """
        if j1 <= j0:
            return
        n_u = A.Y.shape[1]
        self.Y[:n_u] += h * A.Y[j0:j1].sum(axis=0)
        if self.rec:
            self.E[:A.E.shape[1]] += h * A.E[j0:j1].sum(axis=0)
        self.Pd += h * float(A.Pd[j0:j1].sum())
        self.Ps += h * float(A.Ps[j0:j1].sum())
        self.Pc += h * float(A.Pc[j0:j1].sum())
        self.Pn += h * float(A.Pn[j0:j1].sum())
        self.iterations += int(A.IT[j0:j1].sum())
        self.count += j1 - j0
        self.H_end = float(A.Hh[j1])


def subdivide(step: Callable, allocate: Callable, x: np.ndarray, restart: Callable, u0: np.ndarray,
              u1: np.ndarray, h: float, acc: Substeps, level: int = 1) -> bool:
    """Advance ``x`` from input ``u0`` to ``u1`` over ``h`` in two halves, halving
    failed halves again; returns False when a sub-step fails at :data:`MAX_LEVELS`.

    Parameters
    ----------
    step : callable(x, U, h, k0, k1, A) -> int
        The compiled loop (first failed step or -1), never flagging.
    allocate : callable(N, x) -> RunArrays
        Arrays for ``N`` sub-steps from ``x``.
    x : ndarray
        State (updated in place).
    restart : callable(x_at, scale)
        Puts the loop back at the state ``x_at`` with Newton's last converged unknowns, state
        increments scaled by ``scale`` (``x_at=None``: only the scaling, after a finer level
        returned); each engine knows its own carry.
    u0, u1 : ndarray
        Inputs at the start and the end.
    h : float
        The step to subdivide.
    acc : Substeps
        Where the sub-steps are added.
    level : int
        Depth of this subdivision (1 for the halves of a sample).
    """
    U = np.ascontiguousarray(np.vstack([u0, 0.5 * (u0 + u1), u1]))
    A = allocate(2, x)
    hs = 0.5 * h
    j = 0
    while j < 2:
        bad = step(x, U, hs, j, 2, A)
        acc.add(A, j, 2 if bad < 0 else bad, hs)
        if bad < 0:
            return True
        if level >= MAX_LEVELS:
            return False
        x[:] = A.X[bad]
        restart(A.X[bad], 0.5)
        if not subdivide(step, allocate, x, restart, U[bad], U[bad + 1], hs, acc, level + 1):
            return False
        A.X[bad + 1] = x
        restart(None, 2.0)      # back to this level's step for the predictor
        j = bad + 1
    return True
