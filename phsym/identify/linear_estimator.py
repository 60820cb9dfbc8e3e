"""scikit-learn style estimator for linear port-Hamiltonian systems."""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

import numpy as np

from ..common.schemes import get_scheme
from ..errors import IdentificationError, SimulationError
from ..simulation.result import SimulationResult
from ..simulation.simulator import Simulator
from ..structure.linear import LinearPHS
from .base import Estimator
from .linear_optim import Objective, lbfgs, riemannian_cg
from .linear_param import BLOCKS, FlatMap, Point, R_of, skew, sym
from .data import Measurements, as_2d, fit_method, is_result, step_targets, uniform_step
from .metrics import r2_score
from .linear_simulation import SCHEMES, simulate

__all__ = ["LinearPHSEstimator"]

InitSpec = Union[str, Mapping[str, Any]]


class LinearPHSEstimator(Estimator):
    """Structure-preserving identification of ``x' = (J - R) Q x + B u``,
    ``y = B^T Q x`` from sampled input-output data.

    Minimises the output error ``1/2 int |y - y_data|^2 dt`` (discretised by
    the quadrature of the chosen time-stepping scheme) plus the optional
    regularisation ``lambda/2 |w - w_ref|^2`` of the seed paper, over
    ``w = (J, R, Q, B, x0)`` with J skew, ``R = L L^T`` PSD of rank
    ``<= r_rank`` and Q positive definite *at every iterate*.  Gradients are
    the exact discrete adjoint of the time stepper.

    When Q is not free it is held at the identity (or the value given in
    ``fixed``); this is no loss of generality for input-output fitting: with
    ``x -> Q^{1/2} x`` any pH system is equivalent to one with ``Q = I``,
    ``J' = Q^{1/2} J Q^{1/2}``, ``R' = Q^{1/2} R Q^{1/2}``, ``B' = Q^{1/2} B``
    (the *Q = I gauge*).  Freeing Q only adds redundant parameters.

    Parameters
    ----------
    n_states : int
        Model order n.
    free : sequence of str, default ("J", "R", "B")
        Blocks to identify, among ``"J", "R", "Q", "B", "x0"``.
    fixed : mapping, optional
        Values of blocks that are *not* free (e.g. ``{"Q": Q, "x0": x0}``);
        defaults are ``Q = I`` and ``x0 = 0``.  J, R, B that are not free are
        taken from ``fixed`` or else from ``init``.
    init : {"seed", "random", "data"} or mapping, default "data"
        Initial guess.  ``"seed"``: the seed paper's start (B = diag(1, 3, ..)
        on top, Q = I, J with uniform [-1, 1] entries made skew, R = I with
        the leading floor(n/2) block zeroed).  ``"random"``: random structured
        matrices.  ``"data"``: a lightly damped modal start whose frequencies
        are log-spaced over the band carrying 99 % of the output energy, with B
        scaled to match the output amplitude.  A mapping with any of ``J, R,
        Q, B, x0`` (and optionally ``"base"`` naming one of the strategies for
        the rest) gives user matrices.
    r_rank : int, optional
        Rank bound of R (columns of the factor L); default n.
    method : {"auto", "midpoint", "backward_euler", "explicit_euler"}, default "auto"
        Time stepping (:mod:`phsym.common.schemes`): ``"auto"`` the scheme the data were
        simulated with when they are a simulation result (or a saved one), else midpoint; implicit midpoint
        (Cayley-Tustin, passivity preserving, input ``(u_k + u_{k+1})/2``),
        backward Euler, or the seed's explicit Euler.
    optimizer : {"lbfgs", "cg"}, default "lbfgs"
        L-BFGS on the flat parametrisation or the Riemannian CG of the seed.
    max_iter : int, default 100
        Maximal number of iterations.
    tol : float, default 1e-9
        Stop when the gradient norm falls below ``tol`` times its initial value.
    ftol : float, default 0.0
        Stop when the relative cost decrease per iteration is below ``ftol``.
    regularization : float, default 0.0
        ``lambda`` of the seed's ``lambda/2 |w - w_ref|^2``; for Q the seed's
        ``1/2 ||log Q||_F^2`` (distance to the identity) unless ``reference``
        holds a Q.
    regularize : sequence of str, default ("Q",)
        Blocks the penalty acts on (only free ones count); the seed
        penalises Q only.
    reference : mapping, optional
        Reference blocks ``w_ref`` (default zero, Q: identity via log penalty).
    q_floor : float, default 1e-8
        Lower bound in ``Q = M M^T + q_floor I`` (L-BFGS parametrisation).
    cg_beta : {"PR", "FR"}, default "PR"
        CG coefficient (Polak-Ribiere+ or Fletcher-Reeves).
    cg_restart : int, default 5
        CG restart period (the seed restarts every 5 iterations).
    cg_step0 : float, optional
        First Armijo trial step of CG (default ``1/|grad|``).
    cg_adaptive : bool, default True
        Reuse the last accepted step (doubled) as the next trial step; with
        ``False`` every search starts from ``cg_step0`` as in the seed.
    lbfgs_memory : int, default 20
        L-BFGS memory.
    random_state : int or numpy.random.Generator, optional
        Seed for random initial guesses.
    callback : callable, optional
        ``callback(iteration, model, x0, cost)`` after every iterate, with the
        iterate as a :class:`LinearPHS` (structure-checked); return ``True``
        to stop early.
    progress : callable, optional
        ``progress(iteration, max_iter, cost)`` (used by the CLI progress bar).

    Attributes
    ----------
    model_ : LinearPHS
        Identified system.
    method_ : str
        The scheme of the fit (``method`` with ``"auto"`` resolved), which :meth:`predict` and
        :meth:`score` step by.
    x0_ : numpy.ndarray
        Identified (or fixed) initial state.
    history_ : dict of numpy.ndarray
        ``cost``, ``grad_norm``, ``step`` per iteration (index 0: start).
    n_iter_ : int
        Number of iterations performed.
    n_evals_ : int
        Number of cost evaluations (simulations).
    fit_time_ : float
        Wall time of :meth:`fit` in seconds.
    cost_ : float
        Final cost.

    Examples
    --------
    >>> import numpy as np
    >>> import phsym
    >>> from phsym import LinearPHS
    >>> true = LinearPHS(J=[[0, 2], [-2, 0]], R=[[0.5, 0], [0, 0.1]], B=[[1.0], [0.2]])
    >>> t = np.linspace(0, 5, 501)
    >>> u = np.sin(3 * t)[:, None]
    >>> data = phsym.simulate(true, 100.0, u=u)         # step outputs, as measured data
    >>> est = LinearPHSEstimator(2, max_iter=300, random_state=0).fit(data)
    >>> est.score(data) > 0.999999
    True
    """

    def __init__(self, n_states: int, *, free: Sequence[str] = ("J", "R", "B"),
                 fixed: Optional[Mapping[str, Any]] = None, init: InitSpec = "data",
                 r_rank: Optional[int] = None, method: str = "auto",
                 optimizer: str = "lbfgs", max_iter: int = 100, tol: float = 1e-9,
                 ftol: float = 0.0, regularization: float = 0.0,
                 reference: Optional[Mapping[str, Any]] = None,
                 regularize: Sequence[str] = ("Q",), q_floor: float = 1e-8,
                 cg_beta: str = "PR", cg_restart: int = 5, cg_step0: Optional[float] = None,
                 cg_adaptive: bool = True, lbfgs_memory: int = 20,
                 random_state: Union[None, int, np.random.Generator] = None,
                 callback: Optional[Callable[[int, LinearPHS, np.ndarray, float], Any]] = None,
                 progress: Optional[Callable[[int, int, float], Any]] = None):
        self.n_states = n_states
        self.free = free
        self.fixed = fixed
        self.init = init
        self.r_rank = r_rank
        self.method = method
        self.optimizer = optimizer
        self.max_iter = max_iter
        self.tol = tol
        self.ftol = ftol
        self.regularization = regularization
        self.reference = reference
        self.regularize = regularize
        self.q_floor = q_floor
        self.cg_beta = cg_beta
        self.cg_restart = cg_restart
        self.cg_step0 = cg_step0
        self.cg_adaptive = cg_adaptive
        self.lbfgs_memory = lbfgs_memory
        self.random_state = random_state
        self.callback = callback
        self.progress = progress

    def _check_params(self, m: int) -> tuple:
        n = int(self.n_states)
        if n < 1:
            raise IdentificationError("n_states must be positive")
        free = (self.free,) if isinstance(self.free, str) else tuple(self.free)     # "x0" is one block
        bad = [b for b in free if b not in BLOCKS]
        if bad:
            raise IdentificationError(f"unknown blocks {bad}; choose from {BLOCKS}")
        if not free:
            raise IdentificationError("at least one block must be free")
        get_scheme(fit_method(self.method, None, SCHEMES[0], SCHEMES), SCHEMES, IdentificationError)
        if self.optimizer not in ("lbfgs", "cg"):
            raise IdentificationError("optimizer must be 'lbfgs' or 'cg'")
        r = n if self.r_rank is None else int(self.r_rank)
        if not 0 <= r <= n:
            raise IdentificationError("r_rank must lie in [0, n_states]")
        fixed = dict(self.fixed or {})
        overlap = [b for b in fixed if b in free]
        if overlap:
            raise IdentificationError(f"blocks {overlap} are both free and fixed")
        return n, r, free, fixed

    def _initial_point(self, n: int, m: int, r: int, fixed: Dict[str, Any], h: float,
                       u: np.ndarray, y: np.ndarray, rng: np.random.Generator, scheme, on_steps: bool) -> Point:
        spec = self.init
        user: Dict[str, Any] = {}
        if isinstance(spec, Mapping):
            user = dict(spec)
            strategy = user.pop("base", "data")
        else:
            strategy = spec
        if strategy not in ("seed", "random", "data"):
            raise IdentificationError(f"unknown init {strategy!r}")
        p: Point = {"Q": np.eye(n), "x0": np.zeros(n)}
        if strategy == "seed":
            U = rng.uniform(-1.0, 1.0, (n, n))
            S = np.triu(U, 1)
            p["J"] = S - S.T
            k = n // 2
            L = np.zeros((n, r))
            idx = np.arange(k, n)[:r]
            L[idx, np.arange(idx.size)] = 1.0
            if r > idx.size:     # zero columns of L would never move: perturb them
                L[:, idx.size:] = 1e-2 * rng.standard_normal((n, r - idx.size))
            p["L"] = L
            B = np.zeros((n, m))
            d = np.arange(min(n, m))
            B[d, d] = 1.0 + 2.0 * d
            p["B"] = B
        elif strategy == "random":
            S = rng.standard_normal((n, n)) / np.sqrt(n)
            p["J"] = skew(S) * 2.0
            p["L"] = 0.3 * rng.standard_normal((n, r)) / np.sqrt(max(r, 1))
            p["B"] = rng.standard_normal((n, m)) / np.sqrt(n)
        else:
            p.update(self._data_start(n, m, r, h, u, y, rng, scheme, on_steps))
        for b, v in {**user, **fixed}.items():
            if b == "R":
                Rm = sym(np.asarray(v, dtype=float))
                ev, V = np.linalg.eigh(Rm)
                if ev.min() < -1e-10 * max(1.0, abs(ev).max()):
                    raise IdentificationError("initial/fixed R is not positive semidefinite")
                order = np.argsort(ev)[::-1][:r]
                L = V[:, order] * np.sqrt(np.clip(ev[order], 0.0, None))
                if L.shape[1] < r:
                    L = np.hstack([L, np.zeros((n, r - L.shape[1]))])
                p["L"] = L
            elif b in ("J", "Q", "B", "x0"):
                arr = np.array(v, dtype=float)
                shape = {"J": (n, n), "Q": (n, n), "B": (n, m), "x0": (n,)}[b]
                if b == "x0":
                    arr = arr.reshape(-1)
                if arr.shape != shape:
                    raise IdentificationError(f"{b} has shape {arr.shape}, expected {shape}")
                if b == "J":
                    arr = skew(arr)
                if b == "Q":
                    arr = sym(arr)
                    if np.linalg.eigvalsh(arr).min() <= 0:
                        raise IdentificationError("Q must be positive definite")
                p[b] = arr
            else:
                raise IdentificationError(f"unknown block {b!r} in init/fixed")
        return p

    def _data_start(self, n: int, m: int, r: int, h: float, u: np.ndarray, y: np.ndarray,
                    rng: np.random.Generator, scheme, on_steps: bool) -> Point:
        N = y.shape[0]
        T = h * (N - 1)
        yc = y - y.mean(axis=0)
        P = np.sum(np.abs(np.fft.rfft(yc, axis=0)) ** 2, axis=1)
        f = np.fft.rfftfreq(N, h)
        c = np.cumsum(P)
        f_hi = f[min(np.searchsorted(c, 0.99 * c[-1]), f.size - 1)] if c[-1] > 0 else 1.0 / T
        f_lo = 0.25 / T
        f_hi = max(f_hi, 4.0 * f_lo)
        k = n // 2
        omegas = 2 * np.pi * np.geomspace(f_lo, f_hi, max(k, 1))
        J = np.zeros((n, n))
        rates = np.full(n, 2 * np.pi * f_lo)
        for i in range(k):
            J[2 * i, 2 * i + 1] = omegas[i]
            J[2 * i + 1, 2 * i] = -omegas[i]
            rates[2 * i:2 * i + 2] = 0.1 * omegas[i]
        order = np.argsort(rates)[::-1][:r]
        L = np.zeros((n, r))
        L[order, np.arange(order.size)] = np.sqrt(rates[order])
        L += 1e-3 * np.sqrt(rates.mean()) * rng.standard_normal((n, r))
        B = rng.standard_normal((n, m))
        Ysim = simulate(J, R_of(L), np.eye(n), B, np.zeros(n), u, h, scheme, on_steps)[1]
        num = float(np.sum(Ysim * y))
        den = float(np.sum(Ysim * Ysim))
        if den > 0 and num > 0:
            B *= np.sqrt(num / den)
        elif den > 0:
            B *= np.sqrt(np.sqrt(float(np.sum(y * y)) / den))
        return {"J": J, "L": L, "B": B}

    # ------------------------------------------------------------------ API
    def fit(self, t: Any, u: Any = None, y: Any = None) -> "LinearPHSEstimator":
        """Identify the system from samples.

        Parameters
        ----------
        t : array_like, shape (N+1,), or SimulationResult
            Uniformly spaced grid times, or a simulation result (its inputs
            and port outputs are the data).
        u : array_like, shape (N+1, m)
            Inputs on the grid.
        y : array_like, shape (N+1, m) or (N, m)
            Measured outputs (as many channels as inputs: collocated ports
            ``y = B^T Q x``): samples at the grid times, or step values as a
            :class:`~phsym.simulation.SimulationResult` holds them.

        Returns
        -------
        LinearPHSEstimator
            ``self``, fitted.
        """
        t0 = time.perf_counter()
        method = fit_method(self.method, t, "midpoint", SCHEMES)
        t, u, y, on_steps = _data(t, u, y)
        h = uniform_step(t)
        if u.shape[1] != y.shape[1]:
            raise IdentificationError("a port-Hamiltonian model needs as many outputs as inputs "
                                      f"(got {u.shape[1]} inputs, {y.shape[1]} outputs)")
        scheme = get_scheme(method, SCHEMES, IdentificationError)
        m = u.shape[1]
        n, r, free, fixed = self._check_params(m)
        rng = self.random_state if isinstance(self.random_state, np.random.Generator) \
            else np.random.default_rng(self.random_state)
        p0 = self._initial_point(n, m, r, fixed, h, u, y, rng, scheme, on_steps)
        obj = Objective(u, y, h, scheme, free, self.regularization, self.reference,
                        tuple(self.regularize), on_steps)

        def on_iter(k: int, p: Point, f: float, gn: float, step: float) -> bool:
            stop = False
            if self.progress is not None:
                self.progress(k, int(self.max_iter), f)
            if self.callback is not None:
                stop = bool(self.callback(k, self._to_model(p), p["x0"].copy(), f))
            return stop

        if self.optimizer == "cg":
            p, hist = riemannian_cg(obj, p0, free, max_iter=int(self.max_iter), gtol=self.tol,
                                    ftol=self.ftol, beta_rule=self.cg_beta,
                                    restart=int(self.cg_restart), step0=self.cg_step0,
                                    adaptive=self.cg_adaptive, on_iter=on_iter)
        else:
            fmap = FlatMap(n, m, r, free, self.q_floor)
            p, hist = lbfgs(obj, p0, fmap, max_iter=int(self.max_iter), gtol=self.tol,
                            ftol=self.ftol, memory=int(self.lbfgs_memory), on_iter=on_iter)
        self.model_ = self._to_model(p)
        self.x0_ = p["x0"].copy()
        self.history_ = {k: np.asarray(v) for k, v in hist.items()}
        self.n_iter_ = len(hist["cost"]) - 1
        self.n_evals_ = obj.n_evals
        self.cost_ = float(hist["cost"][-1])
        self.h_ = h
        self.method_ = scheme.name
        self.fit_time_ = time.perf_counter() - t0
        return self

    @staticmethod
    def _to_model(p: Point) -> LinearPHS:
        return LinearPHS(p["J"], R_of(p["L"]), p["Q"], p["B"], tol=1e-9)

    def predict(self, t: Any, u: Any, x0: Optional[Any] = None) -> SimulationResult:
        """Simulate the fitted model with the scheme of the fit.

        Parameters
        ----------
        t : array_like, shape (N+1,)
            Uniform grid times.
        u : array_like, shape (N+1, m)
            Inputs.
        x0 : array_like, shape (n,), optional
            Initial state (default: the fitted ``x0_``).

        Returns
        -------
        SimulationResult
            The simulator's result for ``model_`` (``result.y``: step values on ``t_step``).
        """
        self._check_fitted("model_")
        tt = np.asarray(t, dtype=float).reshape(-1)
        h = uniform_step(tt)
        U = as_2d(u, "u", tt.size, self.model_.n_inputs)
        sim = Simulator(self.model_, 1.0 / h, self.method_)
        try:
            return sim.run(u=U, x0=self.x0_ if x0 is None else x0)
        except SimulationError as exc:
            raise IdentificationError(str(exc)) from None

    def score(self, t: Any, u: Any = None, y: Any = None) -> float:
        """Coefficient of determination R² of the prediction (1 is perfect; scikit-learn's score).

        Parameters
        ----------
        t : array_like, shape (N+1,), or SimulationResult
            Uniform grid times, or a result holding the data.
        u : array_like, shape (N+1, m)
            Inputs.
        y : array_like, shape (N+1, m) or (N, m)
            Measured outputs (grid samples or step values).
        """
        self._check_fitted("model_")
        t, u, y, on_steps = _data(t, u, y)
        res = self.predict(t, u)
        target = y if on_steps else step_targets(Measurements(t, 0.0, u, y, False), get_scheme(self.method_))
        if target.shape != res.y.shape:
            raise IdentificationError(f"y has {y.shape[1]} columns, the model has {res.y.shape[1]} outputs")
        return r2_score(res.y, target)


def _data(t: Any, u: Any, y: Any):
    """``(t, u, y, on_steps)`` from arrays or a SimulationResult."""
    if is_result(t):
        if u is not None or y is not None:
            raise IdentificationError("give either a SimulationResult or (t, u, y), not both")
        return np.asarray(t.t, float), as_2d(t.u, "u"), as_2d(t.y, "y"), True
    if u is None or y is None:
        raise IdentificationError("fit needs inputs u and outputs y (or a SimulationResult)")
    tt = np.asarray(t, dtype=float).reshape(-1)
    U = as_2d(u, "u", tt.size)
    Y = as_2d(y, "y")
    if Y.shape[0] not in (tt.size, tt.size - 1):
        raise IdentificationError(f"y has {Y.shape[0]} samples: give {tt.size} (on the grid t) or "
                                  f"{tt.size - 1} (step values)")
    return tt, U, Y, Y.shape[0] == tt.size - 1
