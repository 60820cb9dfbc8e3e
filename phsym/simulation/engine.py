"""Compiled run loops (numbers only: no sympy, no scipy).

Three loops share one interface: ``loop.run(x, U, h, rec, progress, chunk)``
steps from the state ``x`` over the inputs ``U`` (``N + 1`` grid samples)
and returns the filled :class:`RunArrays` and the wall time of the
stepping; ``loop.to_arrays()`` / ``Loop.from_arrays(meta, arrays)`` turn a
loop into numbers and back (the warm-start snapshot of
:mod:`phsym.simulation.warm`).

* :class:`NewtonLoop` drives the generated module of a model and scheme
  (:mod:`phsym.codegen.steps`): any model;
* :class:`DenseLinearLoop` the fused matrices of a small linear model;
* :class:`SparseLinearLoop` the sparse LU factors of a large linear model
  (both from :class:`phsym.simulation.linear.LinearEngine`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import SimulationError

__all__ = ["RECORD_LIMIT", "RunArrays", "NewtonLoop", "DenseLinearLoop", "SparseLinearLoop", "LOOPS", "STATUS"]

#: Efforts are recorded (for probes) when steps * size stays below this.
RECORD_LIMIT = 20_000_000

#: Status codes of the generated loop.
STATUS = {1: "Newton did not converge", 2: "non-finite residual", 3: "singular Newton Jacobian",
          4: "non-finite state"}

Progress = Optional[Callable[[int, int], None]]


@dataclass
class RunArrays:
    """Arrays one run fills (see :class:`~phsym.simulation.SimulationResult`).

    Attributes
    ----------
    X, Y, Hh, Pd, Ps : ndarray
        States, outputs, energy, dissipated and supplied power.
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
    IT: np.ndarray
    FL: np.ndarray
    E: np.ndarray

    @classmethod
    def allocate(cls, N: int, x_init: np.ndarray, n_u: int, n_e: int, rec: bool) -> "RunArrays":
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
        """
        # every entry is written by the compiled loop (failed runs raise), so
        # skip zero-filling tens of MB on long runs
        X = np.empty((N + 1, x_init.shape[0]))
        X[0] = x_init
        return cls(X, np.empty((N, n_u)), np.empty(N + 1), np.empty(N), np.empty(N),
                   np.zeros(N, dtype=np.int64), np.zeros(N, dtype=np.int64),
                   np.zeros((N, n_e)) if rec else np.zeros((1, max(n_e, 1))))


def _plain(fn, types, *args):
    return fn(*args)


def _chunks(N: int, chunk: int, progress: Progress):
    if chunk <= 0:
        chunk = max(1, N // 50) if progress else N
    for k0 in range(0, N, chunk):
        yield k0, min(N, k0 + chunk)


def _stepping(steps, N: int, h: float, progress: Progress, chunk: int,
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


def _compiled(key: str, prefer_aot: bool):
    """The module of ``key``: its ahead-of-time extension when preferred and
    built (no numba import at all), else the generated module (numba cache)."""
    from ..codegen import aot
    from ..codegen.cache import import_generated
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
    """

    KIND = "newton"

    def __init__(self, key: str, n_v: int, n_u: int, n_e: int, states: Sequence[str], unknowns: Sequence[str],
                 p: np.ndarray, xs: np.ndarray, tol: float, maxit: int, flag: bool, module=None,
                 prefer_aot: bool = False):
        self.key = key
        self.n_v, self.n_u, self.n_e = int(n_v), int(n_u), int(n_e)
        self.states: List[str] = list(states)
        self.unknowns: List[str] = list(unknowns)
        self.p = np.ascontiguousarray(p, dtype=float)
        self.xs = np.ascontiguousarray(xs, dtype=float)
        self.tol, self.maxit, self.flag = float(tol), int(maxit), bool(flag)
        self.module = module
        self.prefer_aot = bool(prefer_aot)
        self.compiled = "numba cache" if module is not None else ""
        self.compile_time = 0.0

    def workspace(self) -> tuple:
        """Work arrays ``(F, Jm, piv, d, vp, wt, ub, e, y, vold)`` of the generated ``run``."""
        m, mu = max(self.n_v, 1), max(self.n_u, 1)
        return (np.zeros(m), np.zeros((m, m)), np.zeros(m, np.int64), np.zeros(m), np.zeros(m),
                np.ones(m), np.zeros(mu), np.zeros(max(self.n_e, 1)), np.zeros(mu), np.zeros(m))

    def run(self, x: np.ndarray, U: np.ndarray, h: float, rec: bool, progress: Progress = None,
            chunk: int = 0) -> Tuple[RunArrays, float]:
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
        """
        if self.module is None:
            self.module, self.compiled = _compiled(self.key, self.prefer_aot)
        call, types = _plain, None
        if self.compiled == "ahead of time":
            from ..codegen.aot import RUN_TYPES, checked
            call, types = checked, RUN_TYPES
        N = U.shape[0] - 1
        A = RunArrays.allocate(N, x, self.n_u, self.n_e, rec)
        v = np.zeros(max(self.n_v, 1))
        inf = np.zeros(3, dtype=np.int64)
        ws = self.workspace()

        def steps(k0, k1):
            return call(self.module.run, types, x, v, U, self.p, self.xs, float(h), int(k0), int(k1), self.tol,
                        self.maxit, self.flag, A.X, A.Y, A.Hh, A.Pd, A.Ps, A.IT, A.FL, A.E, bool(rec), inf, *ws)

        def failure(bad: int) -> SimulationError:
            st, qi = int(inf[1]), int(inf[2])
            names = self.states if st == 4 else self.unknowns
            return SimulationError(STATUS.get(st, "step failed"), step=bad, time=(bad + 1) * h,
                                   quantity=names[qi] if 0 <= qi < len(names) else None)
        t0 = time.perf_counter()
        steps(0, 0)         # compiles or loads the loop (and sets H[0]): the wall time is stepping only
        self.compile_time = time.perf_counter() - t0
        return A, _stepping(steps, N, h, progress, chunk, failure)

    def to_arrays(self) -> Tuple[Dict[str, object], Dict[str, np.ndarray]]:
        """``(meta, arrays)`` describing this loop (see :meth:`from_arrays`)."""
        meta = {"kind": self.KIND, "key": self.key, "n_v": self.n_v, "n_u": self.n_u, "n_e": self.n_e,
                "states": self.states, "unknowns": self.unknowns, "tol": self.tol, "maxit": self.maxit,
                "flag": self.flag}
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
                   arrays["p"], arrays["xs"], meta["tol"], meta["maxit"], meta["flag"], prefer_aot=True)


def _linear_failure(h: float) -> Callable[[int], SimulationError]:
    return lambda bad: SimulationError("non-finite state (unstable or overflowing)", step=bad,
                                       time=(bad + 1) * h, quantity="H")


class DenseLinearLoop:
    """Dense linear scheme ``x_{k+1} = G z``, ``y = Yc z``, ``w = Wc z``, ``e = Ec z``
    with ``z = (x_k, ubar_k)`` (see :mod:`phsym.simulation.linear`).

    Parameters
    ----------
    G, Yc, Wc, Ec : ndarray
        Fused update, output, dissipation and effort matrices.
    pw : ndarray
        Weights of the dissipation rows (``P_diss = sum pw w^2``).
    Q : ndarray
        Energy matrix of the state (``H = x Q x / 2``).
    inputs : int
        Input of a step: 0 start, 1 midpoint, 2 end.
    prefer_aot : bool
        Prefer the ahead-of-time compiled unrolled loop when the cache has one
        (and start its background build when not); warm starts set this.

    Attributes
    ----------
    key : str or None
        Cache key of the unrolled loop module (``None``: generic kernel).
    compiled : str
        ``"ahead of time"``, ``"numba cache"`` or ``"numba kernel"`` after a run.
    """

    KIND = "linear-dense"
    ARRAYS = ("G", "Yc", "Wc", "pw", "Q", "Ec")

    def __init__(self, G, Yc, Wc, pw, Q, Ec, inputs: int, prefer_aot: bool = False):
        c = np.ascontiguousarray
        self.G, self.Yc, self.Wc, self.pw, self.Q, self.Ec = (c(a, dtype=float) for a in (G, Yc, Wc, pw, Q, Ec))
        self.inputs = int(inputs)
        self.prefer_aot = bool(prefer_aot)
        self.compiled = ""
        self.compile_time = 0.0
        self.n_e = self.Ec.shape[0]
        from ..codegen.linear_gen import MAX_UNROLLED, unrolled_source
        nx, nz = self.G.shape
        self.key: Optional[str] = None
        if nx * nz <= MAX_UNROLLED:     # G is (nx, nx + nu)
            self.key = unrolled_source(nx, nz - nx, self.Wc.shape[0], self.n_e, self.inputs)[1]

    def run(self, x: np.ndarray, U: np.ndarray, h: float, rec: bool, progress: Progress = None,
            chunk: int = 0) -> Tuple[RunArrays, float]:
        """Step from ``x`` (overwritten) over ``U``; see :meth:`NewtonLoop.run`.

        Parameters
        ----------
        x : ndarray
            Initial state.
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        h : float
            Step (for error messages).
        rec : bool
            Record efforts.
        progress : callable(done, total), optional
            Called after each chunk.
        chunk : int
            Steps per compiled call.
        """
        N = U.shape[0] - 1
        rec = bool(rec) and self.n_e > 0
        A = RunArrays.allocate(N, x, U.shape[1], self.n_e, rec)
        A.Hh[0] = 0.5 * x @ (self.Q @ x)
        args = (self.G, self.Yc, self.Wc, self.pw, self.Q, self.Ec, A.X, A.Y, A.Hh, A.Pd, A.Ps, A.E, rec)
        from ..codegen.aot import LINEAR_TYPES
        call = _plain
        t0 = time.perf_counter()
        if self.key is not None:
            from ..codegen import aot
            mod = aot.load(self.key) if self.prefer_aot else None
            if mod is not None:
                call, self.compiled = aot.checked, "ahead of time"
            else:
                from ..codegen.linear_gen import unrolled_linear
                mod = unrolled_linear(self.G.shape[0], U.shape[1], self.Wc.shape[0], self.n_e, self.inputs)
                self.compiled = "numba cache"
                if self.prefer_aot:
                    aot.start_background(self.key)
            call(mod.run, LINEAR_TYPES, x, U, 0, 0, *args)      # compile or load first

            def steps(k0, k1):
                call(mod.run, LINEAR_TYPES, x, U, int(k0), int(k1), *args)
                bad = np.flatnonzero(~np.isfinite(A.Hh[k0 + 1:k1 + 1]))
                return int(k0 + bad[0]) if bad.size else -1
        else:
            from ..codegen import kernels
            self.compiled = "numba kernel"
            kernels.run_linear_fused(x, U, 0, 0, self.inputs, *args)

            def steps(k0, k1):
                return kernels.run_linear_fused(x, U, k0, k1, self.inputs, *args)
        self.compile_time = time.perf_counter() - t0
        return A, _stepping(steps, N, h, progress, chunk, _linear_failure(h))

    def to_arrays(self) -> Tuple[Dict[str, object], Dict[str, np.ndarray]]:
        """``(meta, arrays)`` describing this loop (see :meth:`from_arrays`)."""
        return ({"kind": self.KIND, "inputs": self.inputs, "key": self.key},
                {k: getattr(self, k) for k in self.ARRAYS})

    @classmethod
    def from_arrays(cls, meta: Dict[str, object], arrays: Dict[str, np.ndarray]) -> "DenseLinearLoop":
        """The loop described by :meth:`to_arrays`.

        Parameters
        ----------
        meta : dict
            JSON-able description.
        arrays : dict of str to ndarray
            The loop's arrays.
        """
        return cls(*(arrays[k] for k in cls.ARRAYS), meta["inputs"], prefer_aot=True)


class SparseLinearLoop:
    """Linear scheme with sparse LU factors (scipy's ``splu``), for large models:
    the unknowns of a step solve ``M v = K x_k + Ku ubar_k`` and the stacked
    linear outputs are ``o = Ox x + Ov v + Ou ubar`` (see
    :func:`phsym.codegen.kernels.run_linear_sparse`).

    Parameters
    ----------
    csr : dict of str to tuple
        ``(indptr, indices, data)`` of ``K, Ku, Ox, Ov, Ou, Q`` (CSR) and of the
        factors ``L, U`` (CSC).
    perm_r, perm_c : ndarray of int64
        Row and column permutations of the factorisation.
    pw : ndarray
        Weights of the dissipation rows.
    inputs : int
        Input of a step: 0 start, 1 midpoint, 2 end.
    n_y, n_w, n_e : int
        Rows of the outputs: port outputs, dissipation rows, efforts.
    """

    KIND = "linear-sparse"
    MATRICES = ("K", "Ku", "L", "U", "Ox", "Ov", "Ou", "Q")

    def __init__(self, csr: Dict[str, tuple], perm_r, perm_c, pw, inputs: int, n_y: int, n_w: int, n_e: int):
        self.csr = {k: tuple(np.ascontiguousarray(a) for a in v) for k, v in csr.items()}
        self.perm_r = np.ascontiguousarray(perm_r, dtype=np.int64)
        self.perm_c = np.ascontiguousarray(perm_c, dtype=np.int64)
        self.pw = np.ascontiguousarray(pw, dtype=float)
        self.inputs, self.n_y, self.n_w, self.n_e = int(inputs), int(n_y), int(n_w), int(n_e)
        self.compiled = "numba kernel"
        self.compile_time = 0.0
        self.key: Optional[str] = None

    @classmethod
    def from_matrices(cls, mats: Dict[str, object], perm_r, perm_c, pw, inputs: int, n_y: int, n_w: int,
                      n_e: int) -> "SparseLinearLoop":
        """Build from scipy.sparse matrices (CSR, or CSC for ``L`` and ``U``).

        Parameters
        ----------
        mats : dict of str to scipy.sparse matrix
            :attr:`MATRICES`.
        perm_r, perm_c : ndarray
            Permutations of the factorisation.
        pw : ndarray
            Weights of the dissipation rows.
        inputs : int
            Input rule code.
        n_y, n_w, n_e : int
            Output row counts.
        """
        csr = {k: (m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data.astype(float))
               for k, m in mats.items()}
        return cls(csr, perm_r, perm_c, pw, inputs, n_y, n_w, n_e)

    def energy(self, x: np.ndarray) -> float:
        """H(x) = x Q x / 2 with the CSR energy matrix.

        Parameters
        ----------
        x : ndarray
            State.
        """
        ptr, idx, dat = self.csr["Q"]
        qx = np.array([dat[ptr[i]:ptr[i + 1]] @ x[idx[ptr[i]:ptr[i + 1]]] for i in range(x.shape[0])])
        return 0.5 * float(x @ qx)

    def run(self, x: np.ndarray, U: np.ndarray, h: float, rec: bool, progress: Progress = None,
            chunk: int = 0) -> Tuple[RunArrays, float]:
        """Step from ``x`` (overwritten) over ``U``; see :meth:`NewtonLoop.run`.

        Parameters
        ----------
        x : ndarray
            Initial state.
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        h : float
            Step (for error messages).
        rec : bool
            Record efforts.
        progress : callable(done, total), optional
            Called after each chunk.
        chunk : int
            Steps per compiled call.
        """
        from ..codegen import kernels
        N = U.shape[0] - 1
        rec = bool(rec) and self.n_e > 0
        A = RunArrays.allocate(N, x, U.shape[1], self.n_e, rec)
        A.Hh[0] = self.energy(x)
        c = self.csr
        args = (*c["K"], *c["Ku"], *c["L"], *c["U"], self.perm_r, self.perm_c, *c["Ox"], *c["Ov"], *c["Ou"],
                self.pw, *c["Q"], A.X, A.Y, A.Hh, A.Pd, A.Ps, A.E, rec)
        t0 = time.perf_counter()
        kernels.run_linear_sparse(x, U, 0, 0, self.inputs, self.n_y, self.n_w, *args)   # compile or load first
        self.compile_time = time.perf_counter() - t0
        return A, _stepping(lambda k0, k1: kernels.run_linear_sparse(x, U, k0, k1, self.inputs, self.n_y,
                                                                     self.n_w, *args),
                            N, h, progress, chunk, _linear_failure(h))

    def to_arrays(self) -> Tuple[Dict[str, object], Dict[str, np.ndarray]]:
        """``(meta, arrays)`` describing this loop (see :meth:`from_arrays`)."""
        arrays = {f"{k}_{part}": a for k, v in self.csr.items() for part, a in zip(("ptr", "idx", "dat"), v)}
        arrays.update(perm_r=self.perm_r, perm_c=self.perm_c, pw=self.pw)
        return {"kind": self.KIND, "inputs": self.inputs, "n_y": self.n_y, "n_w": self.n_w,
                "n_e": self.n_e, "key": None}, arrays

    @classmethod
    def from_arrays(cls, meta: Dict[str, object], arrays: Dict[str, np.ndarray]) -> "SparseLinearLoop":
        """The loop described by :meth:`to_arrays`.

        Parameters
        ----------
        meta : dict
            JSON-able description.
        arrays : dict of str to ndarray
            The loop's arrays.
        """
        csr = {k: tuple(arrays[f"{k}_{part}"] for part in ("ptr", "idx", "dat")) for k in cls.MATRICES}
        return cls(csr, arrays["perm_r"], arrays["perm_c"], arrays["pw"], meta["inputs"], meta["n_y"],
                   meta["n_w"], meta["n_e"])


#: Loop classes by their ``KIND`` (the ``kind`` of :meth:`to_arrays`).
LOOPS = {cls.KIND: cls for cls in (NewtonLoop, DenseLinearLoop, SparseLinearLoop)}
