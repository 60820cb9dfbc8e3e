"""The :class:`Simulator`: structure-preserving time stepping of a :class:`~phsym.model.Model`."""
from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional, Union

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from ..errors import SimulationError
from ..codegen.steps import SCHEMES, generate
from .engine import RECORD_LIMIT, DenseLinearLoop, NewtonLoop, SparseLinearLoop
from .initial import resolve_x0, state_scales
from .result import SimulationResult
from .signals import check_steps, grid_points, input_array, sample_rate

__all__ = ["Simulator", "simulator", "DENSE_LIMIT"]

#: Linear models with more unknowns than this use the sparse LU path.
DENSE_LIMIT = 24


def _pick_scheme(S, method: str, linear: bool) -> str:
    if not isinstance(method, str):
        raise SimulationError(f"method must be a string (auto or one of {', '.join(SCHEMES)}), got {method!r}")
    m = method.lower().replace("-", "_")
    aliases = {"dg": "discrete_gradient", "be": "backward_euler", "euler": "backward_euler",
               "trapezoidal": "midpoint", "tustin": "midpoint", "bilinear": "midpoint"}
    m = aliases.get(m, m)
    if m == "auto":
        if S.lambda_of_state:
            return "backward_euler"
        return "midpoint" if linear else "discrete_gradient"
    if m not in SCHEMES:
        raise SimulationError(f"unknown method {method!r}; choose auto or one of {', '.join(SCHEMES)}")
    return m


def _num(expr, values) -> float:
    """Float value of ``expr`` (substituting only its own symbols: O(size of expr))."""
    return float(expr.xreplace({s: values[s] for s in expr.free_symbols if s in values}))


class _LinearEngine:
    """Numeric matrices of a linear scheme (built once per parameter set)."""

    def __init__(self, S, values, h: float, scheme: str, solver: str = "auto"):
        a = 1.0 if scheme == "backward_euler" else 0.5
        nx, nw, nl, nu = S.n_x, S.n_w, S.n_lambda, S.n_u
        nv = nx + nw + nl
        n = S.size
        Jn = S.J_numeric(values).tocsr()
        # Hessian of H (block diagonal over storages)
        index = {s: i for i, s in enumerate(S.states)}
        rows, cols, data = [], [], []
        subs = dict(values)
        for st in S.storages:
            # H is a homogeneous quadratic form: polarisation gives the Hessian
            # from values of H (xreplace is O(size of H), sympy diff is slow)
            idx = [index[s] for s in st.states]
            Hn = st.hamiltonian.xreplace({s: subs[s] for s in st.hamiltonian.free_symbols if s in subs})

            def Hat(ones):
                return float(Hn.xreplace({s: (1 if s in ones else 0) for s in st.states}))
            for a_, s1 in enumerate(st.states):
                h1 = Hat({s1})
                rows.append(idx[a_])
                cols.append(idx[a_])
                data.append(2.0 * h1)
                for b_, s2 in enumerate(st.states):
                    if b_ != a_:
                        rows.append(idx[a_])
                        cols.append(idx[b_])
                        data.append(Hat({s1, s2}) - h1 - Hat({s2}))
        Q = sps.csr_matrix((data, (rows, cols)), shape=(nx, nx))
        slopes = np.array([_num(d.z.xreplace({d.w: 1}), subs) for d in S.dissipative])  # z linear: z(1)
        eo = np.array([d.effort_out for d in S.dissipative], dtype=bool)
        De = np.where(eo, slopes, 1.0) if nw else np.zeros(0)
        Df = np.where(eo, 1.0, slopes) if nw else np.zeros(0)
        Ev = sps.bmat([[a * Q if nx else None, None, None],
                       [None, sps.diags(De) if nw else None, None],
                       [None, None, sps.identity(nl) if nl else None],
                       [sps.csr_matrix((nu, nx)), None, None]], format="csr") if nv else sps.csr_matrix((n, 0))
        if nv and Ev.shape != (n, nv):  # bmat drops empty blocks: rebuild robustly
            Ev = sps.lil_matrix((n, nv))
            Ev[:nx, :nx] = a * Q
            for j in range(nw):
                Ev[nx + j, nx + j] = De[j]
            for i in range(nl):
                Ev[nx + nw + i, nx + nw + i] = 1.0
            Ev = Ev.tocsr()
        Ex = sps.vstack([Q, sps.csr_matrix((n - nx, nx))], format="csr")
        Eu = sps.vstack([sps.csr_matrix((nv, nu)), sps.identity(nu)], format="csr")
        Fd = sps.diags(np.concatenate([np.full(nx, 1.0 / h), Df, np.zeros(nl)]))
        Jv, Ju = Jn[:nv, :], Jn[nv:, :]
        M = (Fd - Jv @ Ev).tocsc()
        Kx = (Jv @ Ex).tocsr()
        Ku = (Jv @ Eu).tocsr()
        self.Yx, self.Yv, self.Yu = (-(Ju @ Ex)).tocsr(), (-(Ju @ Ev)).tocsr(), (-(Ju @ Eu)).tocsr()
        self.Ex, self.Ev, self.Eu = Ex, Ev, Eu
        self.Q = Q
        self.pd_w = slopes.astype(float)
        self.pd_idx = np.arange(nx, nx + nw, dtype=np.int64)
        self.nv = nv
        self.sparse = nv > DENSE_LIMIT if solver == "auto" else solver == "sparse"
        self.mid = scheme != "backward_euler"
        self.M = M
        self._fused = None
        self._sparse_loop = None
        if self.sparse:
            try:
                self.lu = spla.splu(M, permc_spec="COLAMD")
            except RuntimeError as exc:
                raise SimulationError(f"singular step matrix of the linear scheme: {exc}") from None
            self.Kx, self.Ku = Kx, Ku
        else:
            Md = M.toarray()
            try:
                lu = sla.lu_factor(Md, check_finite=True)
            except (ValueError, sla.LinAlgError) as exc:
                raise SimulationError(f"singular step matrix of the linear scheme: {exc}") from None
            if np.min(np.abs(np.diag(lu[0])), initial=np.inf) <= 1e-300 * max(1.0, np.abs(Md).max(initial=0)):
                raise SimulationError("singular step matrix of the linear scheme (index > 1 constraint "
                                      "the scheme cannot resolve?)")
            self.Vx = sla.lu_solve(lu, Kx.toarray()) if nv else np.zeros((0, nx))
            self.Vu = sla.lu_solve(lu, Ku.toarray()) if nv else np.zeros((0, nu))

    def dense_loop(self) -> DenseLinearLoop:
        """The fused dense update (``z = (x, ubar)``) as a :class:`DenseLinearLoop`."""
        if self._fused is None:
            d = lambda A: np.asarray(A.toarray() if sps.issparse(A) else A, dtype=float)  # noqa: E731
            Vx, Vu = d(self.Vx), d(self.Vu)
            nx = Vx.shape[1]
            V = np.hstack([Vx, Vu])
            G = V[:nx].copy()
            G[:, :nx] += np.eye(nx)
            Yc = np.hstack([d(self.Yx) + d(self.Yv) @ Vx, d(self.Yu) + d(self.Yv) @ Vu])
            Ec = np.hstack([d(self.Ex) + d(self.Ev) @ Vx, d(self.Ev) @ Vu + d(self.Eu)])
            self._fused = DenseLinearLoop(G, Yc, V[self.pd_idx], self.pd_w, d(self.Q), Ec, self.mid)
        return self._fused

    def sparse_loop(self) -> SparseLinearLoop:
        """The sparse-LU update as a :class:`SparseLinearLoop` (arrays built once)."""
        if self._sparse_loop is None:
            lu = self.lu

            def c(A):
                A = A.tocsr()
                return A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.astype(float)

            def cc(A):
                A = A.tocsc()
                return A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.astype(float)
            csr = {"Kx": c(self.Kx), "Ku": c(self.Ku), "L": cc(lu.L), "U": cc(lu.U), "Yx": c(self.Yx),
                   "Yv": c(self.Yv), "Yu": c(self.Yu), "Q": c(self.Q)}
            self._sparse_loop = SparseLinearLoop(csr, lu.perm_r.astype(np.int64), lu.perm_c.astype(np.int64),
                                                 self.pd_w, self.pd_idx, self.mid, self.Ex.shape[0])
        return self._sparse_loop

    def efforts(self, X, U):
        """Efforts of every step recomputed from the recorded states (sparse path)."""
        ub = 0.5 * (U[:-1] + U[1:]) if self.mid else U[1:]
        rhs = self.Kx @ X[:-1].T + self.Ku @ ub.T
        V = self.lu.solve(np.asarray(rhs))
        return (self.Ex @ X[:-1].T + self.Ev @ V + self.Eu @ ub.T).T


class Simulator:
    """Compiled structure-preserving simulator of a model at a fixed rate.

    Parameters
    ----------
    model : Model
    fs : float
        Sample rate [Hz]; the step is ``h = 1 / fs``.
    method : str
        ``"auto"`` (midpoint for linear models, backward Euler for index-2
        DAEs, discrete gradient otherwise), ``"discrete_gradient"``,
        ``"midpoint"`` or ``"backward_euler"``.
    engine : str
        ``"auto"`` (linear fast path for linear models), ``"linear"`` or
        ``"newton"`` (generated Newton code, any model).
    tol : float
        Newton tolerance on the scaled step.
    maxit : int
        Newton iteration cap per step (default 200).  Ordinary steps take a
        few iterations; a hard step into an exponential law (a 100 V step
        into the diode clipper) walks back about ``N Vt`` per damped
        iteration and needs 50-80, so the cap is generous.
    on_error : str
        ``"raise"`` (default) or ``"flag"`` (record a flag and go on).
    record_efforts : bool or "auto"
        Keep the effort vector of every step (needed for probes).
    linear_solver : str
        Linear path: ``"auto"`` (dense up to :data:`DENSE_LIMIT` unknowns),
        ``"dense"`` or ``"sparse"``.
    """

    def __init__(self, model, fs: float, method: str = "auto", *, engine: str = "auto", tol: float = 1e-12,
                 maxit: int = 200, on_error: str = "raise", record_efforts: Union[bool, str] = "auto",
                 linear_solver: str = "auto"):
        S = model.structure
        self.model = model
        self.fs = sample_rate(fs)
        self.h = 1.0 / self.fs
        linear = S.is_linear
        self.scheme = _pick_scheme(S, method, linear)
        if engine == "auto":
            engine = "linear" if linear else "newton"
        if engine not in ("linear", "newton"):
            raise SimulationError(f"unknown engine {engine!r}: use auto, linear or newton")
        if engine == "linear" and not linear:
            raise SimulationError("the linear engine needs quadratic H and linear dissipation")
        if on_error not in ("raise", "flag"):
            raise SimulationError("on_error must be 'raise' or 'flag'")
        self.engine = engine
        self.tol, self.maxit, self.on_error = float(tol), int(maxit), on_error
        if not (0 < self.tol < 1) or self.maxit < 1:
            raise SimulationError(f"Newton needs 0 < tol < 1 and maxit >= 1 (got tol={tol}, maxit={maxit})")
        self.record_efforts = record_efforts
        if linear_solver not in ("auto", "dense", "sparse"):
            raise SimulationError("linear_solver must be auto, dense or sparse")
        self.linear_solver = linear_solver
        self.param_symbols = [p.symbol for p in model.netlist.parameters.values()]
        self._gen = generate(S, self.param_symbols, self.scheme) if engine == "newton" else None
        self._linear_cache: Dict[tuple, _LinearEngine] = {}
        self._numbers: Dict[tuple, tuple] = {}

    @property
    def key(self) -> Optional[str]:
        """Cache key of the generated module (``None`` on the linear path)."""
        return self._gen.key if self._gen else None

    # ------------------------------------------------------------ inputs
    def input_signals(self, u, n_points: Optional[int], values) -> np.ndarray:
        """Inputs on the grid ``t_k = k h`` as an array ``(n_points, n_u)``.

        Parameters
        ----------
        u : array_like, dict or None
            As for :meth:`run`.
        n_points : int or None
            Number of grid points needed (``None``: taken from ``u``).
        values : mapping of sympy.Symbol to float
            Parameter values (for waveforms that reference parameters).
        """
        ports = self.model.structure.ports

        def waveform(i, t):
            if ports[i].waveform is None:
                return None
            from ..netlist.waveforms import evaluate_waveform
            return evaluate_waveform(ports[i].waveform, t, values)
        return input_array(self.model.inputs, u, n_points, self.h, waveform)

    # --------------------------------------------------------------- run
    def run(self, u=None, duration: Optional[float] = None, x0=None, params: Optional[Mapping[str, float]] = None,
            progress: Optional[Callable[[int, int], None]] = None, chunk: int = 0) -> SimulationResult:
        """Simulate.

        Parameters
        ----------
        u : array (N+1, n_u), dict, or None
            Inputs at ``t_k = k / fs`` in ``model.inputs`` order; or a dict
            name -> array, scalar or callable(t); inputs not given follow
            their netlist waveform (or zero).
        duration : float, optional
            Simulated time; ``N = round(duration * fs)`` steps.  Without it
            the input arrays set the length.
        x0 : None, array, dict or "dc"
            Initial state (default: netlist ICs, zero elsewhere).
        params : dict, optional
            Parameter overrides by name (no recompilation).
        progress : callable(done, total), optional
            Called after each chunk.
        chunk : int
            Steps per compiled call (0: all at once, or 1/50 of the run when
            ``progress`` is given).

        Returns
        -------
        SimulationResult
        """
        model, S = self.model, self.model.structure
        values = model.parameter_values(params)
        U = self.input_signals(u, grid_points(duration, self.fs), values)
        N = check_steps(U, self.fs, duration)
        x_init, x0_desc = resolve_x0(S, model.states, values, x0, U[0])
        rec = self.record_efforts
        if rec == "auto":
            rec = N * S.size <= RECORD_LIMIT
        rec = bool(rec)
        x = x_init.astype(float).copy()
        info = {"h": self.h, "fs": self.fs, "scheme": self.scheme, "engine": self.engine, "x0": x0_desc,
                "values": values, "key": self.key}
        if self.engine == "linear":
            eng = self.linear_engine(values)
            info["engine"] = "linear-sparse" if eng.sparse else "linear-dense"
            if eng.sparse:
                A, wall = eng.sparse_loop().run(x, U, self.h, progress, chunk)
            else:
                loop = eng.dense_loop()
                A, wall = loop.run(x, U, self.h, rec, progress, chunk)
                info["key"], info["compile_time"] = loop.key, loop.compile_time
            E = (A.E if not eng.sparse else eng.efforts(A.X, U)) if rec else None
        else:
            p, xs, _ = self._numeric(values)
            loop = self.newton_loop()
            A, wall = loop.run(x, U, p, xs, self.h, self.tol, self.maxit, self.on_error == "flag", rec, progress,
                               chunk)
            info["compile_time"] = loop.compile_time
            E = A.E if rec else None
        info["wall_time"] = wall
        info["failed_steps"] = int(np.count_nonzero(A.FL))
        Jn = self._numeric(values)[2]
        return SimulationResult(model, np.arange(N + 1) * self.h, A.X, U, A.Y, A.Hh, A.Pd, A.Ps, A.IT, A.FL, E,
                                Jn, info)

    def linear_engine(self, values) -> "_LinearEngine":
        """Matrices of the linear scheme for parameter ``values`` (cached per parameter set).

        Parameters
        ----------
        values : mapping of sympy.Symbol to float
            Parameter values (:meth:`Model.parameter_values`).
        """
        pkey = tuple(sorted((str(k), v) for k, v in values.items()))
        eng = self._linear_cache.get(pkey)
        if eng is None:
            eng = _LinearEngine(self.model.structure, values, self.h, self.scheme, self.linear_solver)
            self._linear_cache = {pkey: eng}
        return eng

    def _numeric(self, values) -> tuple:
        """``(p, xs, J)`` for ``values``, kept for the last parameter set: a short
        run would otherwise spend a quarter of its time on sympy evaluations."""
        pkey = tuple(values.items())     # same construction, same order: no sorting by name
        if pkey not in self._numbers:
            S = self.model.structure
            p = np.array([values[s] for s in self.param_symbols], dtype=float)
            xs = state_scales(S, values) if self.engine == "newton" else None
            self._numbers = {pkey: (p, xs, S.J_numeric(values))}
        return self._numbers[pkey]

    def newton_loop(self) -> NewtonLoop:
        """The generated loop of this model and scheme (numbers only)."""
        g = self._gen
        return NewtonLoop(g.module, g.n_v, g.n_u, g.n_e, self.model.states, g.unknowns)


def simulator(model, fs: float, method: str = "auto", **options) -> Simulator:
    """``model.simulator(fs, method, **options)`` (see :class:`Simulator`)."""
    return Simulator(model, fs, method, **options)
