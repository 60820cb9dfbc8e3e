"""What the compiled run loops share (numbers only: no sympy, no scipy).

Three loops share one interface: ``loop.run(x, U, h, rec, progress, chunk)``
steps from the state ``x`` over the inputs ``U`` (``N + 1`` grid samples)
and returns the filled :class:`RunArrays` and the wall time of the
stepping; ``loop.to_arrays()`` / ``Loop.from_arrays(meta, arrays)`` turn a
loop into numbers and back (the warm-start snapshot of
:mod:`phsym.simulation.warm`).

* :class:`~phsym.simulation.engines.generated.NewtonLoop` drives the
  generated module of a model and scheme (:mod:`phsym.codegen.steps`): any model;
* :class:`~phsym.simulation.engines.linear.loops.DenseLinearLoop` the fused
  matrices of a small linear model,
  :class:`~phsym.simulation.engines.linear.loops.SparseLinearLoop` the
  sparse LU factors of a large one (with the engine that builds them,
  :mod:`phsym.simulation.engines.linear.engine`).

This module holds what they share: :class:`RunArrays`, chunked stepping,
the status codes of the generated loop and the recording limit.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ...common import budget
from ...errors import SimulationError

__all__ = ["RECORD_LIMIT", "RunArrays", "STATUS", "stepping", "check_run"]

#: Efforts are recorded (for probes) when steps * size stays below this.
RECORD_LIMIT = 20_000_000

#: Status codes of the generated loop.
STATUS = {1: "Newton did not converge", 2: "non-finite residual", 3: "singular Newton Jacobian",
          4: "non-finite state"}

Progress = Optional[Callable[[int, int], None]]


def check_run(N: int, n_x: int, n_u: int, n_in: int, n_e: int = 0) -> None:
    """Refuse a run whose arrays would not fit in memory, before any is allocated.

    Parameters
    ----------
    N : int
        Steps.
    n_x, n_u, n_in : int
        States, outputs (ports) and input columns.
    n_e : int
        Efforts recorded per step (0 when not recorded).
    """
    parts = {"states": 8.0 * (N + 1) * n_x, "inputs": 8.0 * (N + 1) * n_in, "outputs": 8.0 * N * n_u,
             "powers and counters": 8.0 * 8 * N, "efforts": 8.0 * N * n_e}
    # the result's signals (outputs, port powers, probes) are made from these: count them twice
    budget.check(f"a run of {N} steps recording {n_x} states and {n_u} outputs", 2 * sum(parts.values()), parts,
                 hint="shorten the run or lower the rate, or run it block by block (phsym.simulation.Stream)")


@dataclass
class RunArrays:
    """Arrays one run fills (see :class:`~phsym.simulation.SimulationResult`).

    Attributes
    ----------
    X, Y, Hh, Pd, Ps : ndarray
        States, outputs, energy, dissipated and supplied power.
    Pc : ndarray
        Power of the controls on the storages (part of ``Ps``; zeros unless
        a control changes H).
    Pn : ndarray
        Numerical dissipation of stiff storages stepped to the end (part of
        ``Pd``; zeros without them).
    IT, FL : ndarray of int64
        Newton iterations and status flags per step.
    E : ndarray
        Efforts per step (one dummy row when not recorded).
    """

    X: np.ndarray
    Y: np.ndarray
    Hh: np.ndarray
    Pd: np.ndarray
    Ps: np.ndarray
    Pc: np.ndarray
    Pn: np.ndarray
    IT: np.ndarray
    FL: np.ndarray
    E: np.ndarray

    @classmethod
    def allocate(cls, N: int, x_init: np.ndarray, n_u: int, n_e: int, rec: bool,
                 counters: bool = True) -> "RunArrays":
        """Arrays for ``N`` steps; ``X[0] = x_init``.

        Parameters
        ----------
        N : int
            Number of steps.
        x_init : ndarray
            Initial state.
        n_u, n_e : int
            Number of ports and size of the effort vector.
        rec : bool
            Record the efforts of every step.
        counters : bool
            Allocate ``IT`` and ``FL`` for the loop to write; ``False``
            (linear loops: no Newton) gives read-only zero views instead,
            which cost no memory.
        """
        check_run(N, x_init.shape[0], n_u, 0, n_e if rec else 0)
        # every entry is written by the compiled loop (failed runs raise), so
        # skip zero-filling tens of MB on long runs
        X = np.empty((N + 1, x_init.shape[0]))
        X[0] = x_init
        if counters:
            IT, FL = np.zeros(N, dtype=np.int64), np.zeros(N, dtype=np.int64)
        else:
            IT = FL = np.broadcast_to(np.zeros(1, dtype=np.int64), (N,))
        return cls(X, np.empty((N, n_u)), np.empty(N + 1), np.empty(N), np.empty(N), np.zeros(N), np.zeros(N), IT, FL,
                   np.zeros((N, n_e)) if rec else np.zeros((1, max(n_e, 1))))


def plain_call(fn, types, *args):
    try:
        return fn(*args)
    except Exception as exc:        # numba's compile errors: a model whose code cannot be typed
        if type(exc).__module__.startswith("numba"):
            first = next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
            raise SimulationError(f"the generated code of this model does not compile ({type(exc).__name__}: "
                                  f"{first[:200]}); a law probably has a non-real or out-of-range term: "
                                  "check the laws' constants and powers") from None
        raise


def _chunks(N: int, chunk: int, progress: Progress):
    if chunk <= 0:
        chunk = max(1, N // 50) if progress else N
    for k0 in range(0, N, chunk):
        yield k0, min(N, k0 + chunk)


def stepping(steps, N: int, h: float, progress: Progress, chunk: int,
              failure: Callable[[int], SimulationError]) -> float:
    """Run ``steps(k0, k1)`` (first failed step or -1) chunk by chunk; returns the wall time."""
    t0 = time.perf_counter()
    for k0, k1 in _chunks(N, chunk, progress):
        bad = steps(k0, k1)
        if bad >= 0:
            raise failure(int(bad))
        if progress:
            progress(k1, N)
    return time.perf_counter() - t0
