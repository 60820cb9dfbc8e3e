"""Where the runs of a sweep execute: threads, any executor, or a dask cluster.

Every run is the run :meth:`phsym.simulation.Simulator.run` makes (the
batch path calls the same compiled loop with the same numbers, and remakes
any run it cannot finish through ``Simulator.run``) and is reduced to a
:class:`RunRecord`: a few summaries and the requested signals (or their rows
in the batch path's blocks), or the error that stopped it.  One run
failing never stops the others.

* In-process (the default): one simulator; the batch path
  (:mod:`phsym.simulation.sweeps.batch`) computes the numbers of all sets, then
  steps the runs through the compiled loop on every core (it releases the
  GIL) into preallocated signal blocks; sweeps it does not cover run as a
  loop of single runs on a thread pool.  Nothing is pickled.
* Another process (a ``concurrent.futures`` process pool, dask workers):
  tasks carry a :class:`ModelSpec` (the netlist path, or the model itself
  when it has no file) and chunks of parameter rows, run on the batch
  path.  Each process builds its simulator once (:data:`_SIMULATORS`); the generated module comes from the
  on-disk cache (``PHSYM_CACHE_DIR``) under its content key, so a worker that
  shares the cache directory imports it and one with its own cache
  generates the identical file once.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import threading
import time
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...common.parallel import is_dask_client, local_dask, settled_heap, single_blas_thread
from ...errors import PhsymError, SimulationInputError
from .batch import run_batch

__all__ = ["ModelSpec", "RunRecord", "run_one", "run_chunk", "execute", "describe_executor"]

Progress = Optional[Callable[[int, int], None]]


@dataclass
class ModelSpec:
    """What a worker needs to build the simulator of a sweep (picklable).

    Parameters
    ----------
    source : str or Model
        Netlist path (workers load it) or the model itself.
    fs : float
        Sample rate in Hz.
    method : str
        Scheme.
    options : dict
        Simulator options.
    u, duration, x0 : object
        Run arguments (see :meth:`phsym.simulation.Simulator.run`).
    outputs : list of str or None
        Signals to keep (``None``: the probes, else the port outputs).
    """

    source: Any
    fs: float
    method: str
    options: Dict[str, Any]
    u: Any = None
    duration: Optional[float] = None
    x0: Any = None
    outputs: Optional[List[str]] = None
    key: str = field(default="", compare=False)

    def __post_init__(self):
        if not self.key:
            h = hashlib.sha256()
            src = self.source
            if isinstance(src, str):
                try:
                    with open(src, "rb") as fh:
                        h.update(fh.read())
                except OSError:
                    pass
            h.update(repr((src if isinstance(src, str) else id(src), self.fs, self.method,
                           sorted(self.options.items()))).encode())
            self.key = h.hexdigest()[:20]


@dataclass
class RunRecord:
    """One run reduced to what a sweep keeps.

    Attributes
    ----------
    index : int
        Run number.
    signals : dict of str to ndarray
        Signals on the grid ``t`` (step quantities NaN at ``t[0]``).
    t : ndarray or None
        Time grid.
    balance : float
        Maximum relative power-balance residual.
    it_max, it_mean : float
        Newton iterations per step: maximum and mean.
    failed_steps : int
        Steps flagged (``on_error="flag"``).
    wall_time : float
        Stepping time of the run in seconds.
    error : Exception or None
        Why the run failed.
    """

    index: int
    signals: Dict[str, np.ndarray] = field(default_factory=dict)
    t: Optional[np.ndarray] = None
    balance: float = float("nan")
    it_max: float = float("nan")
    it_mean: float = float("nan")
    failed_steps: int = -1
    wall_time: float = float("nan")
    error: Optional[BaseException] = None


def _grid_signal(res, label: str) -> np.ndarray:
    arr = np.asarray(res[label], dtype=float)
    if arr.shape[0] == res.t.shape[0]:
        return arr
    return np.concatenate([[np.nan], arr])        # a step quantity: none at t[0]


_NO_IT = np.zeros(0, dtype=np.int64)


def _max_balance(res) -> float:
    """``res.max_balance_error``, the same float, from one compiled pass (numpy's
    expression where a value is not finite, for its NaN semantics)."""
    from ...codegen.kernels.sweep import run_summary      # numba: the run's loop has loaded it already
    mb, scale, _, _ = run_summary(res.H, res.P_diss, res.P_supplied, float(res.info["h"]), _NO_IT, False)
    if not np.isfinite(mb):
        return res.max_balance_error
    return float(mb / scale)


def default_outputs(res) -> List[str]:
    """The probes of a run when it has any, else its port outputs."""
    if res.names.probes and res.efforts is not None:
        return [p.label for p in res.names.probes]
    return list(res.names.outputs)


def run_one(sim, spec: ModelSpec, index: int, params: Dict[str, float], plan=None) -> RunRecord:
    """Run one parameter set; any error becomes the record's ``error``.

    Parameters
    ----------
    sim : Simulator
        The simulator.
    spec : ModelSpec
        Run arguments.
    index : int
        Run number.
    params : dict of str to float
        Parameter values.
    plan : RunPlan or Exception, optional
        The plan of ``params`` built beforehand (:meth:`Simulator.plans`), or
        the error building it raised.
    """
    rec = RunRecord(index)
    try:
        if isinstance(plan, Exception):
            raise plan
        if plan is not None and not (isinstance(spec.x0, str) and spec.x0.strip().lower() == "dc"):
            res = plan.run(spec.u, spec.duration, spec.x0)      # what sim.run does with this plan
        else:
            res = sim.run(u=spec.u, duration=spec.duration, x0=spec.x0, params=params)
        rec.signals = {lab: _grid_signal(res, lab) for lab in (spec.outputs or default_outputs(res))}
        if index == 0:          # one grid per sweep (SweepResult rebuilds it the same way otherwise)
            rec.t = res.t
        rec.balance = _max_balance(res)
        it = res.iterations
        rec.it_max = float(np.max(it, initial=0))
        rec.it_mean = float(np.mean(it)) if it.size else 0.0
        rec.failed_steps = int(res.info["failed_steps"])
        rec.wall_time = float(res.info["wall_time"])
    except (PhsymError, ArithmeticError, ValueError, RuntimeError, KeyError) as exc:
        rec.error = exc
    return rec


# ------------------------------------------------------------ worker side
_SIMULATORS: Dict[str, Any] = {}
_LOCK = threading.Lock()


def _simulator(spec: ModelSpec):
    with _LOCK:       # dask workers may run tasks of one sweep on several threads
        sim = _SIMULATORS.get(spec.key)
        if sim is None:
            from ...model import load
            from ..simulator import Simulator
            model = load(spec.source) if isinstance(spec.source, str) else spec.source
            sim = _SIMULATORS[spec.key] = Simulator(model, spec.fs, spec.method, **spec.options)
    return sim


def _portable(rec: RunRecord) -> RunRecord:
    if rec.error is not None:
        try:
            pickle.loads(pickle.dumps(rec.error))
        except Exception:        # an exception that does not survive pickling: keep its text
            rec.error = PhsymError(f"{type(rec.error).__name__}: {rec.error}")
    return rec


def run_chunk(spec: ModelSpec, indices: Sequence[int], names: Sequence[str],
              rows: np.ndarray) -> Tuple[List[RunRecord], Dict[str, np.ndarray]]:
    """Task of an out-of-process executor: the runs ``indices`` with the parameter ``rows``.

    Returns the records of the runs and the signal blocks (label ->
    ``(len(indices), N + 1)``) of the batch path
    (:mod:`phsym.simulation.sweeps.batch`); ``{}`` when the runs took the
    ordinary path, whose records carry their signals.

    Parameters
    ----------
    spec : ModelSpec
        Model and run arguments.
    indices : sequence of int
        Run numbers.
    names : sequence of str
        Parameter names.
    rows : ndarray (len(indices), len(names))
        Parameter values.
    """
    try:
        sim = _simulator(spec)
    except (PhsymError, OSError, ValueError) as exc:        # the model does not build here: every run says so
        return [_portable(RunRecord(int(i), error=exc)) for i in indices], {}
    with single_blas_thread(), settled_heap():       # the workers are the parallelism
        rows = np.asarray(rows, dtype=float)
        got = run_batch(sim, spec, names, rows, 1, None, run_one, RunRecord)
        if got is not None:
            recs, blocks = got
            for r, i in zip(recs, indices):
                r.index = int(i)
            return [_portable(r) for r in recs], blocks
        sets = [dict(zip(names, map(float, row))) for row in rows]
        plans = sim.plans(sets) if getattr(sim, "batched", False) else [None] * len(sets)
        return [_portable(run_one(sim, spec, int(i), p, plan)) for i, p, plan in zip(indices, sets, plans)], {}


# ------------------------------------------------------------ main side
def describe_executor(executor) -> str:
    """A short name of the executor for ``SweepResult.info``.

    Parameters
    ----------
    executor : object
        ``None``, ``"threads"``, ``"serial"``, ``"dask"``, an Executor or a dask Client.
    """
    if executor is None or executor == "threads":
        return f"threads ({os.cpu_count() or 1})"
    if isinstance(executor, str):
        return executor
    return type(executor).__name__


#: Signal bytes one task may send back (a chunk's rows are bounded by it).
CHUNK_BYTES = 256 * 2 ** 20


def _run_bytes(spec: ModelSpec) -> int:
    """Signal bytes of one run, estimated before any run (the probes count as four signals)."""
    points = None
    if spec.duration is not None:
        try:
            points = int(float(spec.duration) * float(spec.fs)) + 1
        except (TypeError, ValueError, OverflowError):
            points = None
    if points is None:
        arrays = spec.u.values() if isinstance(spec.u, dict) else [spec.u]
        lens = [len(a) for a in arrays if a is not None and not callable(a) and np.ndim(a) >= 1]
        points = max(lens) if lens else 1
    return 8 * max(points, 1) * (len(spec.outputs) if spec.outputs else 4)


def _chunks(n: int, workers: int, per_worker: int, run_bytes: int = 0) -> List[np.ndarray]:
    """Contiguous chunks of the ``n`` runs: ``per_worker`` per worker, more when a chunk's
    signals would exceed :data:`CHUNK_BYTES`.

    A worker runs its chunk on the batch path in one go.  A dask task costs
    about 3 ms at the scheduler (measured, 2-core machine), so a dask sweep
    takes one chunk per worker (200-run clipper sweeps: 0.66-0.68 s against
    0.69-0.71 s with two); a process pool gains from two, whose transfers
    overlap the other's stepping (0.59-0.60 s against 0.64-0.67 s).
    """
    k = max(1, workers) * max(1, per_worker)
    if run_bytes > 0:
        k = max(k, -(-n * run_bytes // CHUNK_BYTES))
    return [c for c in np.array_split(np.arange(n), max(1, min(n, k))) if c.size]


def _in_process(sim, spec: ModelSpec, names, values, progress: Progress, pool: Optional[Executor],
                threads: int) -> List[RunRecord]:
    n = values.shape[0]
    rows = [dict(zip(names, map(float, values[i]))) for i in range(n)]
    # small linear models: every plan at once (stacked numpy), so the runs carry only their stepping
    plans = sim.plans(rows) if getattr(sim, "batched", False) else [None] * n
    out: List[Optional[RunRecord]] = [None] * n
    out[0] = run_one(sim, spec, 0, rows[0], plans[0])     # compiles or loads the loop once, before the threads
    done = 1
    if progress:
        progress(done, n)
    if n == 1:
        return out       # type: ignore[return-value]
    own = pool is None and threads > 1
    if pool is None and not own:
        for i in range(1, n):
            out[i] = run_one(sim, spec, i, rows[i], plans[i])
            plans[i] = None       # memory: a plan holds its loop's matrices
            if progress:
                progress(i + 1, n)
        return out       # type: ignore[return-value]
    ex = ThreadPoolExecutor(max_workers=threads) if own else pool
    try:
        futs = [ex.submit(run_one, sim, spec, i, rows[i], plans[i]) for i in range(1, n)]
        for f in as_completed(futs):
            rec = f.result()
            out[rec.index] = rec
            done += 1
            if progress:
                progress(done, n)
    finally:
        if own:
            ex.shutdown()
    return out       # type: ignore[return-value]


def _remote(spec: ModelSpec, names, values, executor, progress: Progress):
    n = values.shape[0]
    out: List[Optional[RunRecord]] = [None] * n
    blocks: Dict[str, np.ndarray] = {}
    close = None
    if executor == "dask":
        executor, cluster = local_dask()
        close = (executor, cluster)
    try:
        if is_dask_client(executor):
            from distributed import as_completed as dask_completed
            workers = max(len(executor.scheduler_info().get("workers", {})), 1)
            chunk_list = _chunks(n, workers, 1, _run_bytes(spec))
            futs = [executor.submit(run_chunk, spec, c.tolist(), names, values[c], pure=False) for c in chunk_list]
            done_iter = dask_completed(futs)
        else:
            workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1
            chunk_list = _chunks(n, workers, 2, _run_bytes(spec))
            futs = [executor.submit(run_chunk, spec, c.tolist(), names, values[c]) for c in chunk_list]
            done_iter = as_completed(futs)
        done = 0
        chunks = {f: c for f, c in zip(futs, chunk_list)}
        for f in done_iter:
            recs, part = f.result()
            for rec in recs:
                out[rec.index] = rec
                done += 1
            for lab, block in part.items():
                if lab not in blocks:
                    blocks[lab] = np.full((n, block.shape[1]), np.nan)
                blocks[lab][chunks[f]] = block
            if progress:
                progress(done, n)
    finally:
        if close is not None:
            close[0].close()
            close[1].close()
    return out, blocks


def execute(sim, spec: ModelSpec, names: Sequence[str], values: np.ndarray, executor,
            progress: Progress) -> Tuple[List[RunRecord], float, Dict[str, np.ndarray]]:
    """Run every row of ``values``: the records in run order, the wall time and the signal blocks.

    Runs of the batch path (:mod:`phsym.simulation.sweeps.batch`) have their
    signals as rows of the blocks (label -> ``(runs, N + 1)``); the records of
    the others carry their own.

    Parameters
    ----------
    sim : Simulator or None
        The in-process simulator (``None`` for out-of-process executors).
    spec : ModelSpec
        Model and run arguments.
    names : sequence of str
        Parameter names.
    values : ndarray (runs, names)
        Parameter rows.
    executor : None, str, Executor or dask Client
        See :func:`phsym.sweep`.
    progress : callable(done, total), optional
        Called as runs finish.
    """
    t0 = time.perf_counter()
    if executor is None or executor in ("threads", "serial") or isinstance(executor, ThreadPoolExecutor):
        threads = 1 if executor == "serial" else (os.cpu_count() or 1)
        pool = executor if isinstance(executor, ThreadPoolExecutor) else None
        if pool is not None:
            threads = getattr(pool, "_max_workers", None) or threads
        with single_blas_thread(), settled_heap():        # the runs are the parallelism
            got = run_batch(sim, spec, names, values, threads, progress, run_one, RunRecord)
            if got is None:
                got = _in_process(sim, spec, names, values, progress, pool, threads), {}
    elif executor == "dask" or is_dask_client(executor) or isinstance(executor, Executor):
        got = _remote(spec, names, values, executor, progress)
    else:
        raise SimulationInputError(f"executor must be None, 'threads', 'serial', 'dask', a "
                                   f"concurrent.futures.Executor or a dask Client, not {executor!r}")
    return got[0], time.perf_counter() - t0, got[1]
