"""Numeric run loops behind :class:`~phsym.simulation.Simulator` (numbers only).

Nothing here touches sympy or scipy: a :class:`NewtonLoop` drives the
generated module of a model and scheme, a :class:`DenseLinearLoop` the fused
matrices of a linear model.  The symbolic :class:`Simulator` builds them from a
model; a warm start (:mod:`phsym.simulation.warm`) rebuilds them from the
cache, which is how a cached netlist simulates without importing sympy.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import SimulationError

__all__ = ["RECORD_LIMIT", "RunArrays", "NewtonLoop", "DenseLinearLoop", "SparseLinearLoop", "apply_x0", "newton_workspace", "STATUS"]

#: Efforts are recorded (for probes) when steps * size stays below this.
RECORD_LIMIT = 20_000_000

#: Status codes of the generated loop.
STATUS = {1: "Newton did not converge", 2: "non-finite residual", 3: "singular Newton Jacobian",
          4: "non-finite state"}


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
                   np.zeros((N, n_e)) if rec else np.zeros((1, n_e)))


def newton_workspace(n_v: int, n_u: int, n_e: int) -> tuple:
    """Work arrays ``(F, Jm, piv, d, vp, wt, ub, e, y, vold)`` of a generated ``run``."""
    m, mu = max(n_v, 1), max(n_u, 1)
    return (np.zeros(m), np.zeros((m, m)), np.zeros(m, np.int64), np.zeros(m), np.zeros(m),
            np.ones(m), np.zeros(mu), np.zeros(max(n_e, 1)), np.zeros(mu), np.zeros(m))


def _plain(fn, types, *args):
    return fn(*args)


def _chunks(N: int, chunk: int, progress: Optional[Callable[[int, int], None]]):
    if chunk <= 0:
        chunk = max(1, N // 50) if progress else N
    for k0 in range(0, N, chunk):
        yield k0, min(N, k0 + chunk)


class NewtonLoop:
    """The compiled loop of a generated step module (any model, any scheme).

    Parameters
    ----------
    module : module
        Generated module (its ``run``, see :mod:`phsym.codegen.steps`).
    n_v, n_u, n_e : int
        Newton unknowns, ports, size of the effort vector.
    states, unknowns : sequence of str
        Names used in error messages.
    aot : bool
        ``module`` is an ahead-of-time compiled extension (:mod:`phsym.codegen.aot`),
        whose functions do not check their argument types: every call is checked here.
    """

    def __init__(self, module, n_v: int, n_u: int, n_e: int, states: Sequence[str], unknowns: Sequence[str],
                 aot: bool = False):
        self.module = module
        self.aot = bool(aot)
        self.n_v, self.n_u, self.n_e = int(n_v), int(n_u), int(n_e)
        self.states: List[str] = list(states)
        self.unknowns: List[str] = list(unknowns)
        self.compile_time = 0.0

    def run(self, x: np.ndarray, U: np.ndarray, p: np.ndarray, xs: np.ndarray, h: float, tol: float,
            maxit: int, flag: bool, rec: bool, progress: Optional[Callable[[int, int], None]] = None,
            chunk: int = 0) -> Tuple[RunArrays, float]:
        """Step from ``x`` over the inputs ``U``; returns the arrays and the wall time.

        Parameters
        ----------
        x : ndarray
            Initial state (overwritten with the final state).
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        p, xs : ndarray
            Parameter array and state scales.
        h, tol : float
            Step and Newton tolerance.
        maxit : int
            Newton iteration cap.
        flag : bool
            Record failures and go on instead of raising.
        rec : bool
            Record efforts.
        progress : callable(done, total), optional
        chunk : int
            Steps per compiled call (0: all, or 1/50 of the run with ``progress``).
        """
        N = U.shape[0] - 1
        A = RunArrays.allocate(N, x, self.n_u, self.n_e, rec)
        call, types = _plain, None
        if self.aot:
            from ..codegen.aot import RUN_TYPES, checked
            call, types = checked, RUN_TYPES
        v = np.zeros(max(self.n_v, 1))
        inf = np.zeros(3, dtype=np.int64)
        ws = newton_workspace(self.n_v, self.n_u, self.n_e)

        def steps(k0, k1):
            return call(self.module.run, types, x, v, U, p, xs, float(h), int(k0), int(k1), float(tol), int(maxit),
                        bool(flag), A.X, A.Y, A.Hh, A.Pd, A.Ps, A.IT, A.FL, A.E, bool(rec), inf, *ws)
        t0 = time.perf_counter()
        steps(0, 0)         # compiles or loads the loop (and sets H[0]): the wall time is stepping only
        self.compile_time = time.perf_counter() - t0
        t0 = time.perf_counter()
        for k0, k1 in _chunks(N, chunk, progress):
            bad = steps(k0, k1)
            if bad >= 0:
                st, qi = int(inf[1]), int(inf[2])
                names = self.states if st == 4 else self.unknowns
                qname = names[qi] if 0 <= qi < len(names) else None
                raise SimulationError(STATUS.get(st, "step failed"), step=int(bad), time=(bad + 1) * h,
                                      quantity=qname)
            if progress:
                progress(k1, N)
        return A, time.perf_counter() - t0


class DenseLinearLoop:
    """Dense linear scheme ``x_{k+1} = G z``, ``y = Yc z``, ``w = Wc z``, ``e = Ec z``
    with ``z = (x_k, ubar_k)`` (matrices from the symbolic linear engine).

    Parameters
    ----------
    G, Yc, Wc, Ec : ndarray
        Fused update, output, dissipative-port and effort matrices.
    pw : ndarray
        Slopes of the linear dissipations (``P_diss = sum pw w^2``).
    Q : ndarray
        Hessian of H (``H = x Q x / 2``).
    mid : bool
        Midpoint inputs ``(u_k + u_{k+1}) / 2`` (else ``u_{k+1}``, backward Euler).
    aot : bool
        Prefer the ahead-of-time compiled unrolled loop when the cache has one
        (and start its background build when not); warm starts set this.

    Attributes
    ----------
    key : str or None
        Cache key of the unrolled loop module (``None``: generic kernel).
    compiled : str
        ``"ahead of time"``, ``"numba cache"`` or ``"numba kernel"`` after a run.
    """

    ARRAYS = ("G", "Yc", "Wc", "pw", "Q", "Ec")

    def __init__(self, G, Yc, Wc, pw, Q, Ec, mid: bool, aot: bool = False):
        c = np.ascontiguousarray
        self.G, self.Yc, self.Wc, self.pw, self.Q, self.Ec = (c(a, dtype=float) for a in (G, Yc, Wc, pw, Q, Ec))
        self.mid = bool(mid)
        self.aot = bool(aot)
        self.compiled = ""
        self.compile_time = 0.0
        from ..codegen.linear_gen import MAX_UNROLLED, unrolled_source
        nx, nz = self.G.shape
        self.key: Optional[str] = None
        if nx * nz <= MAX_UNROLLED:     # G is (nx, nx + nu)
            self.key = unrolled_source(nx, nz - nx, self.Wc.shape[0], self.Ec.shape[0], self.mid)[1]

    def run(self, x: np.ndarray, U: np.ndarray, h: float, rec: bool,
            progress: Optional[Callable[[int, int], None]] = None, chunk: int = 0) -> Tuple[RunArrays, float]:
        """Step from ``x`` (overwritten) over ``U``; returns the arrays and the wall time.

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
        chunk : int
            Steps per compiled call.
        """
        N = U.shape[0] - 1
        nx, nu = self.G.shape[0], U.shape[1]
        A = RunArrays.allocate(N, x, nu, self.Ec.shape[0], rec)
        A.Hh[0] = 0.5 * x @ (self.Q @ x)
        args = (self.G, self.Yc, self.Wc, self.pw, self.Q, self.Ec, A.X, A.Y, A.Hh, A.Pd, A.Ps, A.E, bool(rec))
        unrolled = self.key is not None
        call = _plain
        if unrolled:
            from ..codegen import aot
            mod = aot.load(self.key) if self.aot else None
            if mod is not None:
                call, self.compiled = aot.checked, "ahead of time"
            else:
                from ..codegen.linear_gen import unrolled_linear
                mod = unrolled_linear(nx, nu, self.Wc.shape[0], self.Ec.shape[0], self.mid)
                self.compiled = "numba cache"
                if self.aot:
                    aot.start_background(self.key)
        else:
            from ..codegen import kernels
            self.compiled = "numba kernel"
        from ..codegen.aot import LINEAR_TYPES
        t0 = time.perf_counter()
        if unrolled:        # compile or load first: the wall time is stepping only
            call(mod.run, LINEAR_TYPES, x, U, 0, 0, *args)
        else:
            kernels.run_linear_fused(x, U, 0, 0, self.mid, *args)
        self.compile_time = time.perf_counter() - t0

        def steps(k0, k1):
            if not unrolled:
                return kernels.run_linear_fused(x, U, k0, k1, self.mid, *args)
            call(mod.run, LINEAR_TYPES, x, U, int(k0), int(k1), *args)
            bad = np.flatnonzero(~np.isfinite(A.Hh[k0 + 1:k1 + 1]))
            return int(k0 + bad[0]) if bad.size else -1
        return A, _linear_steps(steps, N, h, progress, chunk)


class SparseLinearLoop:
    """Linear scheme with sparse LU factors (scipy's ``splu``), for large models:
    the unknowns of a step solve ``M v = Kx x_k + Ku ubar_k`` (see
    :mod:`phsym.codegen.kernels`), so the cost per step grows with the nonzeros.

    Parameters
    ----------
    csr : dict of str to tuple
        ``(indptr, indices, data)`` of ``Kx, Ku, Yx, Yv, Yu, Q`` (CSR) and of the
        factors ``L, U`` (CSC).
    perm_r, perm_c : ndarray of int64
        Row and column permutations of the factorisation.
    pd_w : ndarray
        Slopes of the linear dissipations.
    pd_idx : ndarray of int64
        Positions of the dissipative variables among the unknowns.
    mid : bool
        Midpoint inputs (else backward Euler's end-of-step inputs).
    n_e : int
        Size of the effort vector.
    """

    ORDER = ("Kx", "Ku", "L", "U", "perm", "Yx", "Yv", "Yu", "Q")

    def __init__(self, csr, perm_r, perm_c, pd_w, pd_idx, mid: bool, n_e: int):
        self.csr, self.perm_r, self.perm_c = csr, perm_r, perm_c
        self.pd_w, self.pd_idx, self.mid, self.n_e = pd_w, pd_idx, bool(mid), int(n_e)
        self.compile_time = 0.0

    def energy(self, x: np.ndarray) -> float:
        """H(x) = x Q x / 2 with the CSR Hessian."""
        ptr, idx, dat = self.csr["Q"]
        qx = np.array([dat[ptr[i]:ptr[i + 1]] @ x[idx[ptr[i]:ptr[i + 1]]] for i in range(x.shape[0])])
        return 0.5 * float(x @ qx)

    def run(self, x: np.ndarray, U: np.ndarray, h: float,
            progress: Optional[Callable[[int, int], None]] = None, chunk: int = 0) -> Tuple[RunArrays, float]:
        """Step from ``x`` (overwritten) over ``U`` (efforts are not recorded here).

        Parameters
        ----------
        x : ndarray
            Initial state.
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        h : float
            Step (for error messages).
        progress : callable(done, total), optional
        chunk : int
            Steps per compiled call.
        """
        from ..codegen import kernels
        N = U.shape[0] - 1
        A = RunArrays.allocate(N, x, U.shape[1], self.n_e, False)
        A.Hh[0] = self.energy(x)
        c = self.csr
        args = (*c["Kx"], *c["Ku"], *c["L"], *c["U"], self.perm_r, self.perm_c, *c["Yx"], *c["Yv"], *c["Yu"],
                *c["Q"], self.pd_w, self.pd_idx, A.X, A.Y, A.Hh, A.Pd, A.Ps)
        t0 = time.perf_counter()
        kernels.run_linear_sparse(x, U, 0, 0, self.mid, *args)     # compile or load first
        self.compile_time = time.perf_counter() - t0
        return A, _linear_steps(lambda k0, k1: kernels.run_linear_sparse(x, U, k0, k1, self.mid, *args),
                                N, h, progress, chunk)


def _linear_steps(steps, N: int, h: float, progress, chunk: int) -> float:
    """Run ``steps(k0, k1)`` (first failed step or -1) chunk by chunk; returns the wall time."""
    t0 = time.perf_counter()
    for k0, k1 in _chunks(N, chunk, progress):
        bad = steps(k0, k1)
        if bad >= 0:
            raise SimulationError("non-finite state (unstable or overflowing)", step=int(bad),
                                  time=(bad + 1) * h, quantity="H")
        if progress:
            progress(k1, N)
    return time.perf_counter() - t0


def apply_x0(base: np.ndarray, base_desc: str, states: Sequence[str], x0) -> Tuple[np.ndarray, str]:
    """Initial state from ``x0`` given the netlist's own (``base``, from ICs).

    Parameters
    ----------
    base : ndarray
        State from the netlist ICs (zero elsewhere).
    base_desc : str
        What ``base`` is.
    states : sequence of str
        State names.
    x0 : None, array_like or dict
        ``None`` (use ``base``), a full state, or values by state name.
    """
    base = np.array(base, dtype=float)
    if x0 is None:
        return base, base_desc
    if isinstance(x0, str):
        raise SimulationError(f"x0 must be an array, a dict, None or 'dc', not {x0!r}")
    if isinstance(x0, Mapping):
        lookup = {n.lower(): i for i, n in enumerate(states)}
        for k, val in x0.items():
            if str(k).lower() not in lookup:
                raise SimulationError(f"x0 names unknown state {k!r}; states: {', '.join(states)}")
            try:
                base[lookup[str(k).lower()]] = float(val)
            except (TypeError, ValueError):
                raise SimulationError(f"x0[{k!r}] is not a number: {val!r}") from None
    try:
        if isinstance(x0, Mapping):
            out, desc = base, "given by name (others from ICs)"
        else:
            out, desc = np.asarray(x0, dtype=float).reshape(-1).copy(), "given"
    except (TypeError, ValueError) as exc:
        raise SimulationError(f"x0 is not numeric: {exc}") from None
    if out.shape[0] != base.shape[0]:
        raise SimulationError(f"x0 has {out.shape[0]} entries, the model has {base.shape[0]} states")
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        raise SimulationError(f"x0 is non-finite ({out[bad[0]]}) for state {states[bad[0]]}",
                              quantity=states[bad[0]])
    return out, desc
