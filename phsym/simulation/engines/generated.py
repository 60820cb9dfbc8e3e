"""The generated Newton loop: a model's compiled step module driven over a run (numbers only: no sympy, no scipy).

:class:`NewtonLoop` drives the generated module of a model and scheme
(:mod:`phsym.codegen.steps`, :mod:`phsym.codegen.newton`): any model.  It
shares its interface, :class:`~phsym.simulation.engines.arrays.RunArrays` and
chunked stepping with the linear loops (:mod:`phsym.simulation.engines.arrays`);
a failed step is subdivided (:mod:`phsym.simulation.engines.substeps`).
"""
from __future__ import annotations

import time
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ...codegen import aot, interpret
from ...codegen.cache import import_generated
from ...codegen.newton import carried
from ...errors import SimulationError
from .arrays import STATUS, Progress, RunArrays, plain_call, stepping
from .substeps import MAX_LEVELS, Substeps, subdivide

__all__ = ["NewtonLoop"]


def _compiled(key: str, prefer_aot: bool):
    """The module of ``key``: its ahead-of-time extension when preferred and
    built (no numba import at all), else the generated module (numba cache);
    with ``PHSYM_JIT=0`` the generated module as Python (:mod:`phsym.codegen.interpret`)."""
    if interpret.enabled():
        return import_generated(key, loop=True), "interpreted"
    if prefer_aot:
        ext = aot.load(key)
        if ext is not None:
            return ext, "ahead of time"
        aot.start_background(key)
    return import_generated(key), "numba cache"


class NewtonLoop:
    """The compiled loop of a generated step module (any model, any scheme).

    Parameters
    ----------
    key : str
        Cache key of the generated module (:mod:`phsym.codegen.steps`).
    n_v, n_u, n_e : int
        Newton unknowns, ports, size of the effort vector.
    states, unknowns : sequence of str
        Names used in error messages.
    p, xs : ndarray
        Parameter array and state scales.
    tol : float
        Newton tolerance on the scaled step.
    maxit : int
        Newton iteration cap per step.
    flag : bool
        Record failed steps and go on instead of raising.
    module : module, optional
        The generated module when already imported.
    prefer_aot : bool
        Use the ahead-of-time extension when built (warm starts).
    numerical : bool
        Whether the module books a numerical dissipation (``Pn``, :attr:`SimulationResult.P_num`).
    stiff : str, optional
        How the module steps stiff storages (``"backward_euler"`` or ``"scheme"``; ``None``: the model
        has none); results record it as ``info["stiff"]``.
    """

    KIND = "generated"

    def __init__(self, key: str, n_v: int, n_u: int, n_e: int, states: Sequence[str], unknowns: Sequence[str],
                 p: np.ndarray, xs: np.ndarray, tol: float, maxit: int, flag: bool, module=None,
                 prefer_aot: bool = False, numerical: bool = False, stiff: Optional[str] = None):
        self.key = key
        self.numerical, self.stiff = bool(numerical), stiff
        self.n_v, self.n_u, self.n_e = int(n_v), int(n_u), int(n_e)
        self.states: List[str] = list(states)
        self.unknowns: List[str] = list(unknowns)
        self.p = np.ascontiguousarray(p, dtype=float)
        self.xs = np.ascontiguousarray(xs, dtype=float)
        self.tol, self.maxit, self.flag = float(tol), int(maxit), bool(flag)
        self.module = module
        self.prefer_aot = bool(prefer_aot)
        self.compiled = ("interpreted" if getattr(module, "INTERPRETED", False) else "numba cache") \
            if module is not None else ""
        self.compile_time = 0.0
        #: steps of the last run that were subdivided: {step: number of sub-steps}
        self.subdivided: Dict[int, int] = {}
        # unknowns that are their state's increment (the others: an effort's, steps.EffortLaw)
        self._increments = np.array([u == s for s, u in zip(self.states, self.unknowns)], dtype=bool)

    def workspace(self) -> tuple:
        """Work arrays ``(F, Jm, piv, d, vp, wt, ub, e, y, vold, ve)`` of the generated ``run`` (``Jm``: the
        Jacobian, then the factors and work space of :mod:`phsym.codegen.newton.schur`; ``ve``: the efforts
        carried from step to step, the states and parameters they belong to, the predictor's error records
        and the next step's constants: :mod:`phsym.codegen.newton.carried`)."""
        m, mu = max(self.n_v, 1), max(self.n_u, 1)
        ve = np.full(carried.size(int(np.count_nonzero(~self._increments)), len(self.p)), np.nan)
        return (np.zeros(m), np.zeros((m, 3 * m)), np.zeros(m, np.int64), np.zeros(m), np.zeros(m),
                np.ones(m), np.zeros(mu), np.zeros(max(self.n_e, 1)), np.zeros(mu), np.zeros(m), ve)

    def carry(self, start: Optional[Mapping[str, float]] = None) -> tuple:
        """What the generated loop keeps between steps besides the state.

        ``(v, status, workspace)``: the Newton unknowns and the predictor's
        history (``vold``, in the workspace; ``status[3]`` counts the solved
        steps behind it).  Passing the same carry to successive :meth:`run`
        calls continues one run exactly (block processing,
        :class:`~phsym.simulation.stream.Stream`).

        Parameters
        ----------
        start : mapping of str to float, optional
            Newton's start for the first step by unknown name (a DC
            solution's port variables and multipliers); others start at zero.
        """
        v = np.zeros(max(self.n_v, 1))
        for i, name in enumerate(self.unknowns if start else ()):
            v[i] = start.get(name, 0.0)
        return (v, np.zeros(4, dtype=np.int64), self.workspace())

    def run(self, x: np.ndarray, U: np.ndarray, h: float, rec: bool, progress: Progress = None,
            chunk: int = 0, carry: Optional[tuple] = None) -> Tuple[RunArrays, float]:
        """Step from ``x`` (overwritten with the final state) over ``U``.

        Parameters
        ----------
        x : ndarray
            Initial state.
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        h : float
            Step.
        rec : bool
            Record efforts.
        progress : callable(done, total), optional
            Called after each chunk.
        chunk : int
            Steps per compiled call (0: all, or 1/50 of the run with ``progress``).
        carry : tuple, optional
            From :meth:`carry`, updated in place (default: a fresh one).
        """
        if self.module is None:
            self.module, self.compiled = _compiled(self.key, self.prefer_aot)
        call, types = plain_call, None
        if self.compiled == "ahead of time":
            call, types = aot.checked, aot.RUN_TYPES
        N = U.shape[0] - 1
        A = RunArrays.allocate(N, x, self.n_u, self.n_e, rec)
        v, inf, ws = self.carry() if carry is None else carry
        vold = ws[-2]
        self.subdivided = {}
        # controls (columns of U after the inputs) overwrite their entries of p at every step
        p = self.p.copy() if U.shape[1] > self.n_u else self.p

        def compiled(xx, vv, UU, hh, k0, k1, AA, flag=False):
            return call(self.module.run, types, xx, vv, UU, p, self.xs, float(hh), int(k0), int(k1),
                        self.tol, self.maxit, flag, AA.X, AA.Y, AA.Hh, AA.Pd, AA.Ps, AA.Pc, AA.Pn, AA.IT, AA.FL, AA.E,
                        bool(rec), inf, *ws)

        def steps(k0, k1):
            k = k0
            while True:     # called at least once: steps(0, 0) loads the loop and sets H[0]
                bad = compiled(x, v, U, h, k, k1, A)
                if bad < 0:
                    return -1
                if not self._subdivide(compiled, A, U, x, v, vold, inf, int(bad), h, rec):
                    if not self.flag:
                        return bad
                    x[:] = A.X[bad]     # flagged: the step as the loop takes it, recorded and passed
                    v[:] = vold
                    compiled(x, v, U, h, bad, bad + 1, A, True)
                k = bad + 1
                if k >= k1:
                    return -1

        def failure(bad: int) -> SimulationError:
            st, qi = int(inf[1]), int(inf[2])
            names = self.states if st == 4 else self.unknowns
            quantity = names[qi] if 0 <= qi < len(names) else None
            where = f" at element {quantity.split('_', 1)[1]}" if quantity and "_" in quantity else ""
            return SimulationError(f"{STATUS.get(st, 'step failed')}{where}, also in {2 ** MAX_LEVELS} "
                                   "sub-steps", step=bad, time=(bad + 1) * h, quantity=quantity)
        t0 = time.perf_counter()
        steps(0, 0)         # compiles or loads the loop (and sets H[0]): the wall time is stepping only
        self.compile_time = time.perf_counter() - t0
        return A, stepping(steps, N, h, progress, chunk, failure)

    def _subdivide(self, compiled, A: RunArrays, U: np.ndarray, x: np.ndarray, v: np.ndarray, vold: np.ndarray,
                   inf: np.ndarray, k: int, h: float, rec: bool) -> bool:
        """Take the failed step ``k`` in sub-steps (:mod:`phsym.simulation.engines.substeps`);
        False (and ``inf`` naming the original failure) when that fails too."""
        failed = inf.copy()
        x[:] = A.X[k]
        n_x = x.shape[0]
        v[:] = vold
        v[:n_x] *= 0.5
        vold[:] = v
        acc = Substeps(self.n_u, self.n_e, rec)

        def restart(x_at, scale):
            if x_at is not None:        # Newton restarts from the last converged unknowns
                v[:] = vold
            v[:n_x] *= scale
            vold[:] = v
        ok = subdivide(lambda xx, UU, hh, k0, k1, AA: compiled(xx, v, UU, hh, k0, k1, AA),
                       lambda n, xx: RunArrays.allocate(n, xx, self.n_u, self.n_e, rec),
                       x, restart, U[k], U[k + 1], h, acc)
        if not ok:
            inf[:] = failed
            return False
        A.X[k + 1] = x
        A.Hh[k + 1] = acc.H_end
        A.Pd[k], A.Ps[k], A.Pc[k], A.Pn[k] = acc.Pd / h, acc.Ps / h, acc.Pc / h, acc.Pn / h
        A.Y[k] = acc.Y[:A.Y.shape[1]] / h
        if rec:
            A.E[k] = acc.E[:A.E.shape[1]] / h
        A.IT[k], A.FL[k] = acc.iterations, 0
        # the predictor of the next step: this step's increments (an effort's increment, not known
        # without inverting the storage's law, starts from no change)
        v[:n_x] = np.where(self._increments, A.X[k + 1] - A.X[k], 0.0)
        vold[:] = v
        self.subdivided[k] = acc.count
        return True

    def to_arrays(self) -> Tuple[Dict[str, object], Dict[str, np.ndarray]]:
        """``(meta, arrays)`` describing this loop (see :meth:`from_arrays`)."""
        meta = {"kind": self.KIND, "key": self.key, "n_v": self.n_v, "n_u": self.n_u, "n_e": self.n_e,
                "states": self.states, "unknowns": self.unknowns, "tol": self.tol, "maxit": self.maxit,
                "flag": self.flag, "numerical": self.numerical, "stiff": self.stiff}
        return meta, {"p": self.p, "xs": self.xs}

    @classmethod
    def from_arrays(cls, meta: Dict[str, object], arrays: Dict[str, np.ndarray]) -> "NewtonLoop":
        """The loop described by :meth:`to_arrays` (its module loads on first run).

        Parameters
        ----------
        meta : dict
            JSON-able description.
        arrays : dict of str to ndarray
            The loop's arrays.
        """
        return cls(meta["key"], meta["n_v"], meta["n_u"], meta["n_e"], meta["states"], meta["unknowns"],
                   arrays["p"], arrays["xs"], meta["tol"], meta["maxit"], meta["flag"], prefer_aot=True,
                   numerical=bool(meta.get("numerical", False)), stiff=meta.get("stiff"))


