"""The batch path of a sweep: many parameter sets through one compiled loop, no result objects.

A sweep's runs differ only in numbers: the numbers of all its parameter
sets are computed first, without a plan per set (:mod:`.sets`:
stacked numpy for small linear models; parameter values of all sets
together), the input rows once from the first good set's plan, and the
sets' numbers stacked; then chunks of runs go to the
generated module's ``run_many`` (:mod:`phsym.codegen.batch_driver`:
Newton modules and unrolled linear loops), which makes for each run the
call of ``run`` a single run makes and writes only the requested signals
into preallocated ``(runs, N + 1)`` blocks, and its summaries (balance
residual, Newton iterations); no
:class:`~phsym.simulation.SimulationResult` is built.  Threads take chunks
(``nogil``), each with work arrays it reuses.  The compressed-row linear
kernel (models too large to unroll) runs one call per run.

The calls and their arguments are those of
:meth:`~phsym.simulation.plan.RunPlan.run` for the plan of the same set, so
the numbers are bit-identical to single runs (tested).  A run the batch
cannot finish as a single run would (a Newton failure, which the ordinary
path retries in sub-steps; a non-finite value; a plan that failed) is made
again alone through :func:`~phsym.simulation.sweeps.exec.run_one`, so its
error (or its recovered result) is exactly that of a single run.  Sweeps
the batch does not cover (``x0="dc"``, ``on_error="flag"``, controls, a
sparse linear loop, a signal that is not a state, input, output, probe or
power) take the ordinary path for every run.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...codegen.batch_driver import KINDS
from ..engines.arrays import RECORD_LIMIT
from ..engines.linear.loops import initial_energy
from ..signals import check_steps, initial_state
from .sets import FAIL as _FAIL, SetNumbers, batch_sets, reference_plan

__all__ = ["run_batch"]

Progress = Optional[Callable[[int, int], None]]
_NO_IT = np.zeros(0, dtype=np.int64)
#: Parameter sets whose numbers are built and run together (memory: the numbers of one slice at a time).
SLICE = 2048


def _eligible(sim, spec) -> bool:
    if isinstance(spec.x0, str) or sim.on_error != "raise" or not hasattr(sim.model, "structure"):
        return False
    if sim.engine == "generated":
        return not sim._gen.controls
    return sim.batched       # small linear models: dense loops from the template


def _same_waves(a: list, b: list) -> bool:
    """Whether two plans' input waveforms are the same (the input rows of one serve both)."""
    for wa, wb in zip(a, b):
        if wa is wb:
            continue
        if wa is None or wb is None or isinstance(wa, Exception) or isinstance(wb, Exception):
            return False
        if wa[0] != wb[0] or not np.array_equal(np.asarray(wa[1], float), np.asarray(wb[1], float)):
            return False
    return len(a) == len(b)


def _where(plan, label: str, rec: bool) -> Optional[tuple]:
    """How a signal is read from a run's arrays: ``(array, column, step quantity)``, or ``None``."""
    s = plan.summary
    for arr, names, step in (("X", s.states, False), ("U", s.inputs, False), ("Y", s.outputs, True)):
        if label in names:
            return arr, names.index(label), step
    if label in ("H", "P_diss", "P_supplied"):
        return {"H": ("Hh", None, False), "P_diss": ("Pd", None, True), "P_supplied": ("Ps", None, True)}[label]
    if "(" in label and label.endswith(")") and rec:
        return "E", label, True
    return None


class _Work:
    """One thread's work arrays (reused run after run: every entry a run reads is written first)."""

    def __init__(self, N: int, n_x: int, n_u: int, n_e: int, rec: bool, loop=None):
        self.X = np.empty((N + 1, n_x))
        self.Y = np.empty((N, n_u))
        self.Hh, self.Pd, self.Ps = np.empty(N + 1), np.empty(N), np.empty(N)
        self.Pc, self.Pn = np.zeros(N), np.zeros(N)
        self.E = np.zeros((N, n_e)) if rec else np.zeros((1, max(n_e, 1)))
        self.x = np.empty(n_x)
        self.IT = _NO_IT
        if loop is not None:        # Newton: run_many resets the carry before each run
            self.IT, self.FL = np.zeros(N, dtype=np.int64), np.zeros(N, dtype=np.int64)
            self.v, self.inf, self.ws = loop.carry()


def _shapes(entry: tuple) -> tuple:
    """What decides a linear set's compiled module: its matrices' shapes (and whether the dissipation
    reads the next state: loops too large to unroll)."""
    arrays, _, ext = entry
    return tuple(a.shape[1:] for a in arrays), ext is None


def _rows(a: np.ndarray, js, r: np.ndarray, m: int, fill: float = 0.0) -> np.ndarray:
    """Rows ``js`` of the stack ``a`` at rows ``r`` of an ``m``-row stack (``fill`` elsewhere)."""
    out = np.full((m,) + a.shape[1:], fill)
    if r.size:
        out[r] = a[js]
    return out


class _Batch:
    """The runs of one sweep on the batch path (see the module docstring)."""

    def __init__(self, sim, spec, sets: list, ref, U: np.ndarray, N: int, rec: bool, labels: List[str],
                 where: Dict[str, tuple]):
        self.sim, self.spec, self.sets, self.U, self.N, self.rec = sim, spec, sets, U, N, rec
        self.labels, self.where = labels, where
        from ...codegen.kernels.sweep import run_summary, write_signals     # numba: only when runs are made
        self.summary, self.write_signals = run_summary, write_signals
        self.h = 1.0 / sim.fs
        self.newton = sim.engine == "generated"
        loop = self.loop0 = ref.loop
        self.n_x = len(ref.summary.states)
        self.n_u = U.shape[1]
        self.n_e = loop.n_e
        # Newton modules and unrolled linear modules have run_many; the compressed-row kernel runs one by one
        self.driven = self.newton or loop.key is not None
        if self.newton:
            self.mod = loop.module
        elif loop.key is not None:
            from ...codegen.linear_gen import unrolled_linear
            self.mod = unrolled_linear(loop.G.shape[0], U.shape[1], loop.Wc.shape[0], loop.n_e, loop.inputs)
        else:
            from ...codegen.kernels.linear_csr import run_linear_csr
            self.mod = run_linear_csr
        self.kinds = np.array([KINDS[where[lab][0]] for lab in labels], dtype=np.int64)
        self.cols = np.array([c if isinstance(c, int) else 0 for lab in labels for c in [where[lab][1]]],
                             dtype=np.int64)
        first = next(s for s in sets if isinstance(s, SetNumbers))
        self.arrays0, self.shape = (None, None) if self.newton else (first.loop[0], _shapes(first.loop))
        n = len(sets)
        self.out = np.empty((len(labels), n, N + 1))     # rows not written: NaN at the end
        self.blocks = {lab: self.out[j] for j, lab in enumerate(labels)}
        self.summ = np.full((n, 4), np.nan)          # balance, it_max, it_mean, wall time
        self.redo: List[int] = []
        self.walls: List[tuple] = []        # (runs, wall time per run) of each chunk, until settle()
        self.vectors: Dict[int, list] = {}  # run -> its probe vectors (computed on the calling thread)
        self.ecols = [j for j, lab in enumerate(labels) if where[lab][0] == "E"]       # probe signals
        self.stack: tuple = ()      # run_many: (base, per-run arrays, probe vectors) of the slice being run
        self.loaded = False         # the first unit (on the calling thread, alone) compiles or loads the loop
        self._lock = threading.Lock()

    def work(self) -> _Work:
        return _Work(self.N, self.n_x, self.n_u, self.n_e, self.rec and self.n_e > 0,
                     self.loop0 if self.newton else None)

    def fits(self, s: SetNumbers) -> bool:
        """Whether the set ``s`` runs in this batch's module (a linear loop of other sizes has another)."""
        return self.newton or s.loop[0] is self.arrays0 or _shapes(s.loop) == self.shape

    def stack_slice(self, base: int, idx: Sequence[int], x0s: Dict[int, np.ndarray],
                    vectors: Dict[int, list]) -> None:
        """The numbers of the runs ``idx`` of the slice from ``base`` (initial states ``x0s`` and probe
        vectors ``vectors`` by run), stacked for ``run_many``."""
        m = max(idx) - base + 1 if idx else 0
        r = np.array(idx, dtype=np.int64) - base
        sets = [self.sets[i] for i in idx]
        X0 = np.zeros((m, self.n_x))
        if idx:
            X0[r] = [x0s[i] for i in idx]
        C = np.zeros((m, len(self.labels), max(self.n_e, 1)))
        if self.ecols and idx:
            C[r[:, None], np.array(self.ecols)[None, :]] = [vectors[i] for i in idx]

        if self.newton:
            P, XS = (np.array([s.loop[a] for s in sets], dtype=float).reshape(len(sets), k)
                     for a, k in ((0, self.loop0.p.size), (1, self.n_x)))
            arrays: tuple = (X0, _rows(P, slice(None), r, m), _rows(XS, slice(None), r, m, 1.0))
        else:       # H[0] as the single run computes it (DenseLinearLoop.run: Q is the stack's row)
            H0 = np.zeros(m)
            for g in np.flatnonzero(X0.any(axis=1)):
                s = self.sets[base + g]
                H0[g] = initial_energy(s.loop[0][4][s.loop[1]], X0[g])
            if len({id(s.loop[0]) for s in sets}) == 1:         # rows of one stack: index them
                stack, js = sets[0].loop[0], np.array([s.loop[1] for s in sets])
            else:
                stack, js = [np.stack([s.loop[0][k][s.loop[1]] for s in sets]) for k in range(6)], slice(None)
            arrays = (X0, H0) + tuple(_rows(a, js, r, m) for a in stack)
        self.stack = (base, arrays, C)

    def many(self, rows: np.ndarray, W: _Work) -> List[int]:
        """Runs ``base + rows`` in one call of the module's ``run_many`` (their summaries: :meth:`settle`)."""
        base, arrays, C = self.stack
        loop = self.loop0
        if self.newton:         # k0 = 0 and flag = False as arguments (see phsym.codegen.batch_driver)
            consts: tuple = (0, False, loop.tol, loop.maxit, self.rec, True)
            work: tuple = (W.x, W.v, W.X, W.Y, W.Hh, W.Pd, W.Ps, W.Pc, W.Pn, W.IT, W.FL, W.E, W.inf, *W.ws)
        else:
            consts = (0, self.rec and self.n_e > 0, False)
            work = (W.x, W.X, W.Y, W.Hh, W.Pd, W.Ps, W.E, W.IT)

        def call(r):
            return self.mod.run_many(r, base, *arrays, self.U, self.h, *consts, self.kinds, self.cols, C, self.out,
                                     self.summ, *work)
        if not len(rows):
            return []
        if not self.loaded:     # compile or load outside the timed stepping
            call(rows[:0])
        t0 = time.perf_counter()
        call(rows)
        # nothing else here: on this kind of machine the first numpy calls after a compiled call
        # take 10-50 us each; the chunks' bookkeeping is done once, after all of them (settle)
        self.walls.append((base + rows, (time.perf_counter() - t0) / max(len(rows), 1)))
        self.loaded = True
        return []

    def settle(self) -> None:
        """The wall time per run of the chunks run so far; runs that failed in them go to :attr:`redo`."""
        walls, self.walls = self.walls, []
        for g, wall in walls:
            failed = self.summ[g, 1] == -1.0
            self.summ[g[~failed], 3] = wall
            self.summ[g[failed]] = np.nan
            self.redo += [int(i) for i in g[failed]]

    def one(self, i: int, W: _Work) -> bool:
        """Run ``i`` of the compressed-row linear loop; False when it must be made again on the ordinary path."""
        s = self.sets[i]
        if isinstance(s, Exception):
            return False
        try:
            x, _ = initial_state(s.x_ic, s.x_ic_desc, self.sim.model.states, self.spec.x0)
        except _FAIL:
            return False
        x = np.array(x, dtype=float)
        loop, U, N = self.sim._template().loop_of(s.loop, self.loop0.inputs), self.U, self.N
        W.X[0] = x
        rec = self.rec and loop.n_e > 0
        W.Hh[0] = initial_energy(loop.Q, x)
        cargs = loop.compressed() + (W.X, W.Y, W.Hh, W.Pd, W.Ps, W.E, rec)
        if not self.loaded:
            self.mod(x, U, 0, 0, loop.inputs, *cargs)
        t0 = time.perf_counter()
        bad = self.mod(x, U, 0, N, loop.inputs, *cargs)
        wall = time.perf_counter() - t0
        self.loaded = True
        if bad >= 0:
            return False
        mb, scale, _, _ = self.summary(W.Hh, W.Pd, W.Ps, self.h, _NO_IT, False)
        if not np.isfinite(mb):
            return False
        C = np.zeros((1, len(self.labels), max(self.n_e, 1)))
        for j, vec in zip(self.ecols, self.vectors[i]):
            C[0, j] = vec
        self.write_signals(self.kinds, self.cols, C, 0, self.out, i, W.X, U, W.Y, W.Hh, W.Pd, W.Ps, W.E)
        self.summ[i] = (mb / scale, 0.0, 0.0, wall)
        return True

    def unit(self, u, W: _Work) -> List[int]:
        """A unit of work (``run_many``: a chunk of rows; else one run); anything unexpected sends its runs
        to the ordinary path, which reports it."""
        try:
            if self.driven:
                return self.many(u, W)
            return [] if self.one(u, W) else [u]
        except Exception:       # noqa: BLE001  (the ordinary path re-raises or records it)
            return [int(i) for i in (self.stack[0] + u if self.driven else [u])]

    def run(self, units: Sequence, sizes: Sequence[int], threads: int, progress: Progress, done0: int,
            total: int) -> None:
        """Run ``units`` (of ``sizes`` runs) on ``threads`` threads (the calling one included); progress in the
        calling thread."""
        todo = iter(zip(units, sizes))
        finished = [0]
        take = threading.Lock()

        def step(W) -> bool:
            with take:
                nxt = next(todo, None)
            if nxt is None:
                return False
            bad = self.unit(nxt[0], W)
            with self._lock:
                self.redo += bad
                finished[0] += nxt[1]
            return True

        def worker():
            W = self.work()
            while step(W):
                pass

        reported = [done0]

        def report():
            if progress:
                while reported[0] < done0 + finished[0]:
                    reported[0] += 1
                    progress(reported[0], total)

        W = self.work()
        helpers: List[threading.Thread] = []
        while True:
            if not helpers and finished[0] and threads > 1:       # the first unit compiled or loaded the loop
                helpers = [threading.Thread(target=worker, daemon=True) for _ in range(threads - 1)]
                for t in helpers:
                    t.start()
            if not step(W):
                break
            report()
        for t in helpers:
            while t.is_alive():
                t.join(0.05)
                report()
        report()


def run_batch(sim, spec, names: Sequence[str], values: np.ndarray, threads: int, progress: Progress,
              run_one: Callable, record: type) -> Optional[Tuple[list, Dict[str, np.ndarray]]]:
    """The runs of a sweep on the batch path: ``(records, blocks)``, or ``None`` when it does not apply.

    ``records`` are :class:`~phsym.simulation.sweeps.exec.RunRecord` in run
    order; the signals of every finished run are rows of ``blocks`` (label
    -> ``(runs, N + 1)``, NaN rows for failed runs).  Nothing has run when
    this returns ``None``.

    Parameters
    ----------
    sim : Simulator
        The simulator.
    spec : ModelSpec
        Run arguments.
    names : sequence of str
        Parameter names.
    values : ndarray (runs, names)
        Parameter rows.
    threads : int
        Threads stepping runs (the calling one included).
    progress : callable(done, total), optional
        Called in the calling thread as runs finish.
    run_one : callable
        The ordinary path of one run,
        :func:`~phsym.simulation.sweeps.exec.run_one`.
    record : type
        :class:`~phsym.simulation.sweeps.exec.RunRecord`.
    """
    if not _eligible(sim, spec):
        return None
    n = values.shape[0]
    rows = [dict(zip(names, map(float, r))) for r in values]
    sets: list = [None] * n
    # numbers slice by slice (a set holds its loop's numbers: 100 000 of them at once would be hundreds of
    # MB); the first good set's plan sets the inputs and the signals
    ref, start = None, 0
    while ref is None and start < n:
        sets[start:start + SLICE] = batch_sets(sim, rows[start:start + SLICE])
        i0 = next((i for i in range(start, min(n, start + SLICE)) if isinstance(sets[i], SetNumbers)), None)
        start += SLICE
        if i0 is not None:
            try:
                ref = reference_plan(sim, rows[i0], sets[i0])
            except _FAIL:
                return None
    if ref is None:
        return None
    try:
        U = ref.inputs(spec.u, spec.duration)
        N = check_steps(U, sim.fs, spec.duration)
    except _FAIL:
        return None
    rec = ref.record_efforts
    n_e = getattr(ref.loop, "n_e", 0)
    rec = bool(N * n_e <= RECORD_LIMIT if rec == "auto" else rec)
    if spec.outputs:
        labels = list(spec.outputs)
    elif ref.summary.probes and rec:
        labels = [p.label for p in ref.summary.probes]
    else:
        labels = list(ref.summary.outputs)
    where = {lab: _where(ref, lab, rec) for lab in labels}
    if any(w is None for w in where.values()):
        return None
    batch = _Batch(sim, spec, sets, ref, U, N, rec, labels, where)
    probes = [lab for lab in labels if where[lab][0] == "E"]
    shared = {lab: ref.probe_vector(lab) for lab in probes if sim._fixed_parts().probe_is_fixed(lab)}
    order: List[int] = []
    for s0 in range(0, n, SLICE):
        if sets[s0] is None:
            sets[s0:s0 + SLICE] = batch_sets(sim, rows[s0:s0 + SLICE])
        part, x0s, vectors = [], {}, {}
        for i in range(s0, min(n, s0 + SLICE)):     # sympy here, not on the threads: undeclared probes,
            s = sets[i]                              # the port-start check
            if isinstance(s, Exception):
                continue
            try:
                if batch.newton and s.needs_port_start(sim):
                    continue    # Newton starts from the ports the initial state implies: the ordinary path
                if _same_waves(s.waveforms, ref.waveforms) and batch.fits(s):
                    vectors[i] = [shared[lab] if lab in shared else s.probe_vector(sim, lab) for lab in probes]
                    if batch.driven:
                        x0s[i] = initial_state(s.x_ic, s.x_ic_desc, ref.summary.states, spec.x0)[0]
                    part.append(i)
            except _FAIL:
                pass
        if part and batch.driven:       # chunks of runs per compiled call: a few per thread and progress step
            batch.stack_slice(s0, part, x0s, vectors)
            local = np.array(part, dtype=np.int64) - s0
            size = max(1, min(32, len(part) // (4 * threads) or 1))
            units = [local[j:j + size] for j in range(0, len(part), size)]
            batch.run(units, [len(u) for u in units], threads, progress, len(order), n)
        elif part:
            batch.vectors = vectors
            batch.run(part, [1] * len(part), threads, progress, len(order), n)
        order += part
        for i in range(s0, min(n, s0 + SLICE)):
            if not isinstance(sets[i], Exception):
                sets[i] = None         # a run remade on the ordinary path builds its own plan
    batch.settle()
    inside = set(order)
    redo = set(batch.redo)
    records: list = [None] * n
    done = len(order)
    for i in range(n):
        if i in inside and i not in redo:
            b = batch.summ[i]
            records[i] = record(i, balance=float(b[0]), it_max=float(b[1]), it_mean=float(b[2]), failed_steps=0,
                                   wall_time=float(b[3]))
            continue
        err = sets[i]
        r = records[i] = run_one(sim, spec, i, rows[i], err if isinstance(err, Exception) else None)
        if r.error is None:
            for lab in labels:
                batch.blocks[lab][i] = r.signals[lab]
            r.signals = {}
        if i not in inside:
            done += 1
            if progress:
                progress(done, n)
    for i in range(n):
        if records[i].error is not None:
            for block in batch.blocks.values():
                block[i] = np.nan
    ok = next((r for r in records if r.error is None), None)
    if ok is not None:
        ok.t = np.arange(N + 1) * (1.0 / sim.fs)      # RunPlan.run's grid
    return records, batch.blocks
