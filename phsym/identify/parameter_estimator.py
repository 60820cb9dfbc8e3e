"""Grey-box estimation of netlist parameters from input-output data.

:class:`ParameterEstimator` fits the free parameters of a netlist (explicit
PHS or pH-DAE, linear or nonlinear) by output-error least squares: the model is
simulated with one of phsym's passivity-preserving time-steppers (backward
Euler by default, implicit midpoint or discrete gradient on request) and the
Jacobian of the residual comes from forward sensitivities of the discretised
equations (:mod:`phsym.identify.parameter_sensitivity`), so the optimiser sees
exact derivatives of the simulated outputs and parameter changes never
recompile anything.

Uncertainty is reported from the Jacobian at the optimum: the covariance
``sigma^2 (J^T J)^{-1}`` (the Cramér-Rao bound for Gaussian output noise,
``sigma^2`` estimated from the residuals), confidence intervals, and an
:class:`UnidentifiableParameterWarning` naming parameters whose relative
standard deviation exceeds a threshold or that span a near-null direction of
``J^T J``.
"""
from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import scipy.optimize as so
import scipy.stats as st

from ..errors import IdentificationError, PhsymWarning, SimulationError
from .parameter_sensitivity import SensitivityStep, build_sensitivity, resolve_scheme, run_sensitivity

__all__ = ["ParameterEstimator", "UnidentifiableParameterWarning", "nrms"]

ArrayLike = Union[np.ndarray, Sequence[float]]
Signals = Union[Mapping[str, ArrayLike], np.ndarray]


class UnidentifiableParameterWarning(PhsymWarning):
    """A free parameter is practically unidentifiable from the given outputs.

    Attributes
    ----------
    parameters : list of str
        The parameters concerned.
    """

    def __init__(self, message: str, parameters: Sequence[str] = ()):
        super().__init__(message)
        self.parameters = list(parameters)


def nrms(y_hat: ArrayLike, y: ArrayLike) -> float:
    """Normalised RMS error ``RMS(y_hat - y) / std(y)`` (seed 001, eq. 14).

    Equal to ``||y_hat - y||_2 / ||y - mean(y)||_2``; for several columns the
    squared errors and variances are summed over the columns.

    Parameters
    ----------
    y_hat : array_like
        Simulated output.
    y : array_like
        Reference (measured) output, same shape.

    Returns
    -------
    float
    """
    y_hat = np.asarray(y_hat, float)
    y = np.asarray(y, float)
    den = np.sum((y - y.mean(axis=0)) ** 2)
    return float(np.sqrt(np.sum((y_hat - y) ** 2) / den)) if den > 0 else float("inf")


def _as_columns(data: Signals, names: Sequence[str], what: str, n: Optional[int] = None,
                allow_first_nan: bool = False) -> np.ndarray:
    """Array (n, len(names)) from a dict (case-insensitive keys) or an array.

    ``allow_first_nan``: outputs may be undefined at the initial instant (a
    simulation table has no step ending at t[0]); the caller checks use.
    """
    if isinstance(data, Mapping):
        low = {str(k).lower(): v for k, v in data.items()}
        missing = [nm for nm in names if nm.lower() not in low]
        if missing:
            raise IdentificationError(f"{what}: missing {missing}; expected {list(names)}")
        cols = [np.asarray(low[nm.lower()], float).reshape(-1) for nm in names]
        lens = {c.shape[0] for c in cols}
        if len(lens) > 1:
            raise IdentificationError(f"{what}: columns of different lengths {sorted(lens)}")
        arr = np.column_stack(cols) if cols else np.zeros((n or 0, 0))
    else:
        arr = np.asarray(data, float)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.shape[1] != len(names):
            raise IdentificationError(f"{what} has {arr.shape[1]} columns, expected {len(names)} ({list(names)})")
    if n is not None and arr.shape[0] != n:
        raise IdentificationError(f"{what} has {arr.shape[0]} samples, t has {n}")
    body = arr[1:] if allow_first_nan else arr
    if not np.all(np.isfinite(body)):
        raise IdentificationError(f"{what} contains non-finite values")
    return np.ascontiguousarray(arr)


class ParameterEstimator:
    """Fit netlist parameters to measured input-output data.

    Parameters
    ----------
    model : phsym.Model, str or pathlib.Path
        The model, or the path of a netlist.
    free : sequence of str
        Names of the parameters to estimate (as in ``model.parameters``).
    outputs : sequence of str, optional
        Measured signals: port outputs ``y(SOURCE)`` and/or probe labels
        (``v(node)``, ``v(n1,n2)``, ``i(R1)``, ``v(R1)``).  Default: every
        port output ``model.outputs``.
    method : str
        Time-stepper: ``"backward_euler"`` (default, as in seed 001),
        ``"midpoint"`` or ``"discrete_gradient"``.  Step outputs are
        end-of-step values for backward Euler and step (midpoint) values for
        the others (see ``data_average``).
    data_average : bool, optional
        Compare the step output of ``t[k] -> t[k+1]`` with the average
        ``(y[k] + y[k+1]) / 2`` of the data (the midpoint value of sampled
        measurements) instead of ``y[k+1]``.  Default: True for the
        midpoint-type schemes, False for backward Euler.  Use False when the
        data are step outputs of phsym's own midpoint simulator.
    initial : mapping of str to float, optional
        Starting values of free parameters (default: netlist values).
    bounds : mapping of str to (float or None, float or None), optional
        Bounds of free parameters in physical units.
    log_params : "auto", bool or sequence of str
        Which parameters are optimised as ``log(p)`` (keeps them positive):
        ``"auto"`` (default) every free parameter with a positive start
        value and no negative lower bound; ``True``/``False`` all/none (where
        possible); or a list of names.
    fixed : mapping of str to float, optional
        Values of non-free parameters that differ from the netlist.
    x0 : None, array_like, mapping, "dc" or "estimate"
        Initial state: ``None`` netlist ICs (zero storage elsewhere), an
        array / dict by state name, ``"dc"`` the DC operating point of the
        first input sample (its parameter dependence is differentiated
        exactly), or ``"estimate"`` to fit the initial state as extra unknowns.
    x0_guess : array_like or mapping, optional
        Starting initial state for ``x0="estimate"`` (default: netlist ICs).
    weights : "std", "none" or array_like
        Output weights: ``"std"`` (default) divides each output by the
        standard deviation of its data, ``"none"`` uses raw units, or one
        weight per output.
    n_starts : int
        Number of optimiser starts (the first from ``initial``, the others
        log-normally / normally perturbed by ``start_spread``).
    random_state : int, numpy.random.Generator or None
        Seed of the perturbed starts.
    start_spread : float
        Standard deviation of the start perturbation (in log units for log
        parameters, relative otherwise).
    confidence : float
        Level of :attr:`confidence_intervals_`.
    identifiability_threshold : float
        Relative standard deviation above which a parameter is reported as
        practically unidentifiable.
    max_nfev : int
        Maximum number of residual evaluations per start.
    ftol, xtol, gtol : float
        Tolerances of :func:`scipy.optimize.least_squares`.
    tol : float
        Newton tolerance of the time-stepper (scaled step).
    maxit : int
        Newton iteration cap per step (default 200, as the simulator).
    verbose : int
        ``1`` prints one line per residual evaluation to stderr.
    callback : callable, optional
        ``callback(n_eval, cost, params)`` after each residual evaluation.

    Attributes
    ----------
    params_ : dict of str to float
        Estimated free parameters.
    covariance_ : ndarray (n_free, n_free)
        Covariance of the estimates in physical units.
    std_ : dict of str to float
        Standard deviations (square roots of the covariance diagonal).
    confidence_intervals_ : dict of str to (float, float)
        Confidence intervals at level ``confidence``.
    nrms_ : dict of str to float
        NRMS of each output on the fitting data (see :func:`nrms`).
    sigma2_ : float
        Residual variance (weighted units).
    x0_ : ndarray
        Initial state used (estimated when ``x0="estimate"``).
    result_ : scipy.optimize.OptimizeResult
        Report of the best start.
    n_iter_ : int
        Jacobian evaluations (iterations) of the best start.
    starts_ : list of float
        Final cost of every start.
    unidentifiable_ : list of str
        Parameters flagged as practically unidentifiable.
    fit_time_ : float
        Wall time of :meth:`fit` in seconds.
    """

    def __init__(self, model: Any, free: Sequence[str], outputs: Optional[Sequence[str]] = None, *,
                 method: str = "backward_euler", data_average: Optional[bool] = None,
                 initial: Optional[Mapping[str, float]] = None,
                 bounds: Optional[Mapping[str, Tuple[Optional[float], Optional[float]]]] = None,
                 log_params: Union[str, bool, Sequence[str]] = "auto",
                 fixed: Optional[Mapping[str, float]] = None,
                 x0: Any = None, x0_guess: Any = None, weights: Union[str, ArrayLike] = "std",
                 n_starts: int = 1, random_state: Any = None, start_spread: float = 0.5,
                 confidence: float = 0.95, identifiability_threshold: float = 0.1,
                 max_nfev: int = 200, ftol: float = 1e-10, xtol: float = 1e-10, gtol: float = 1e-10,
                 tol: float = 1e-12, maxit: int = 200, verbose: int = 0,
                 callback: Optional[Callable[[int, float, Dict[str, float]], None]] = None):
        self.model = model
        self.free = [free] if isinstance(free, str) else list(free)     # one name, not its letters
        self.outputs = None if outputs is None else list(outputs)
        self.method = method
        self.data_average = data_average
        self.initial = initial
        self.bounds = bounds
        self.log_params = log_params
        self.fixed = fixed
        self.x0 = x0
        self.x0_guess = x0_guess
        self.weights = weights
        self.n_starts = n_starts
        self.random_state = random_state
        self.start_spread = start_spread
        self.confidence = confidence
        self.identifiability_threshold = identifiability_threshold
        self.max_nfev = max_nfev
        self.ftol = ftol
        self.xtol = xtol
        self.gtol = gtol
        self.tol = tol
        self.maxit = maxit
        self.verbose = verbose
        self.callback = callback

    # ------------------------------------------------------------ sklearn
    _PARAMS = ("model", "free", "outputs", "method", "data_average", "initial", "bounds", "log_params", "fixed", "x0",
               "x0_guess", "weights", "n_starts", "random_state", "start_spread", "confidence",
               "identifiability_threshold", "max_nfev", "ftol", "xtol", "gtol", "tol", "maxit", "verbose",
               "callback")

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """Constructor arguments (scikit-learn convention).

        Parameters
        ----------
        deep : bool
            Ignored (no nested estimators).
        """
        return {k: getattr(self, k) for k in self._PARAMS}

    def set_params(self, **params: Any) -> "ParameterEstimator":
        """Set constructor arguments; returns self.

        Parameters
        ----------
        **params
            Names of :meth:`get_params`.
        """
        for k, v in params.items():
            if k not in self._PARAMS:
                raise ValueError(f"invalid parameter {k!r} for ParameterEstimator")
            setattr(self, k, v)
        return self

    # ------------------------------------------------------------ set-up
    def _model(self):
        m = self.model
        if not hasattr(m, "structure"):
            from ..model import load
            m = load(Path(m))
            self.model = m
        return m

    def _labels(self) -> List[str]:
        return list(self.outputs) if self.outputs is not None else list(self._model().outputs)

    def _step(self) -> SensitivityStep:
        key = (resolve_scheme(self.method), tuple(self.free), tuple(self._labels()), id(self._model()))
        cached = getattr(self, "_step_cache", None)
        if cached is None or cached[0] != key:
            self._step_cache = (key, build_sensitivity(self._model(), self.free, self._labels(), key[0]))
        return self._step_cache[1]

    def _names(self) -> Dict[str, str]:
        lookup = {n.lower(): n for n in self._model().parameters}
        if not self.free:
            raise IdentificationError(f"free must be a non-empty list of parameter names, got {self.free!r}",)
        if not 0 < float(self.confidence) < 1:
            raise IdentificationError(f"confidence must lie in (0, 1), got {self.confidence}")
        if not isinstance(self.log_params, (str, bool)):
            unknown = {str(n).lower() for n in self.log_params} - {str(f).lower() for f in self.free}
            if unknown:
                raise IdentificationError(f"log_params names {sorted(unknown)}, which are not free: {self.free}")
        out = {}
        for f in self.free:
            if f.lower() not in lookup:
                raise IdentificationError(f"unknown parameter {f!r}; the netlist has {', '.join(lookup.values())}")
            out[f] = lookup[f.lower()]
        if len({v.lower() for v in out.values()}) != len(out):
            raise IdentificationError(f"free parameters repeated: {self.free}")
        return out

    def _grid(self, t: ArrayLike) -> Tuple[np.ndarray, float]:
        from .data import uniform_step
        t = np.asarray(t, float).reshape(-1)
        return t, uniform_step(t, min_samples=3)

    def _values(self, pvals: Mapping[str, float]):
        over = dict(self.fixed or {})
        over.update(pvals)
        return self._model().parameter_values(over)

    def _targets(self, Yd: np.ndarray) -> np.ndarray:
        avg = self.data_average
        if avg is None:
            avg = resolve_scheme(self.method) != "backward_euler"
        if not avg:
            return Yd[1:]
        return 0.5 * (Yd[:-1] + Yd[1:])

    def _is_log(self, name: str, start: float, lo: Optional[float]) -> bool:
        lp = self.log_params
        if isinstance(lp, str) and lp == "auto":
            want = True
        elif isinstance(lp, bool):
            want = lp
        else:
            want = name.lower() in {str(n).lower() for n in lp}
        return bool(want and start > 0 and (lo is None or lo >= 0))

    # -------------------------------------------------------- simulation
    def _initial_state(self, values, U0, p, xs, h, step, x0_spec):
        """Initial state and its sensitivity to the free parameters (n_x, n_free)."""
        from ..simulation.initial import resolve_x0
        m = self._model()
        S = m.structure
        nx, nf = S.n_x, len(self.free)
        S0 = np.zeros((nx, nf))
        if isinstance(x0_spec, str) and x0_spec.lower() == "estimate":
            x0_spec = self.x0_guess
        if isinstance(x0_spec, str) and x0_spec.lower() == "dc":
            x = resolve_x0(S, m.states, values, "dc", U0)[0]
            S0 = self._dc_sensitivity(step, x, U0, p, xs, h)
            return x, S0
        try:
            x = resolve_x0(S, m.states, values, x0_spec, U0)[0]
        except SimulationError as exc:
            raise IdentificationError(str(exc)) from None
        return x, S0

    def _dc_sensitivity(self, step, x, U0, p, xs, h) -> np.ndarray:
        """d x_dc / d p from the stationary step ``F(0, w, lambda; x, u0, p) = 0``."""
        nx, nv, nf = step.n_x, step.n_v, len(self.free)
        mod = step.module
        v = np.zeros(max(nv, 1))
        F = np.zeros(max(nv, 1))
        Jm = np.zeros((max(nv, 1), max(nv, 1)))
        ub = np.asarray(U0, float).copy() if len(U0) else np.zeros(1)
        for _ in range(60):
            mod.resjac(x, v, ub, p, xs, h, F, Jm)
            d = np.linalg.solve(Jm[:nv, :nv], -F[:nv])
            v[:nv] += d
            if np.max(np.abs(d) / (np.abs(v[:nv]) + 1.0), initial=0.0) < 1e-14:
                break
        mod.resjac(x, v, ub, p, xs, h, F, Jm)
        Fx = np.zeros((max(nv, 1), max(nx, 1)))
        Fp = np.zeros((max(nv, 1), max(nf, 1)))
        mod.sens(x, v, ub, p, xs, h, Fx, Fp)
        A = np.hstack([Fx[:nv, :nx], Jm[:nv, nx:nv]])
        try:
            dz = np.linalg.solve(A, -Fp[:nv, :nf])
        except np.linalg.LinAlgError:
            raise IdentificationError("singular DC operating point: use another x0") from None
        return dz[:nx]

    def _simulate(self, pvals, U, h, x0_spec, z0=None, want=True):
        """Outputs (N, n_y), sensitivities (N, n_y, n_s), x0 and xs."""
        from ..simulation.initial import state_scales
        step = self._step()
        values = self._values(pvals)
        p = np.array([values[s] for s in step.parameters], float)
        xs = self._xs if getattr(self, "_xs", None) is not None else state_scales(self._model().structure, values)
        x, S0 = self._initial_state(values, U[0], p, xs, h, step, x0_spec)
        if z0 is not None:
            x = np.asarray(z0, float) * xs
            S0 = np.hstack([S0, np.diag(xs)])
        Y, DY, bad = run_sensitivity(step, x, S0, U, p, xs, h, self.tol, self.maxit, want)
        return Y, DY, bad, x

    # ------------------------------------------------------------------ fit
    def fit(self, t: ArrayLike, u: Signals, y: Signals) -> "ParameterEstimator":
        """Estimate the free parameters.

        Parameters
        ----------
        t : array_like (N+1,)
            Uniform sample times; the step of the scheme is ``t[1] - t[0]``.
        u : mapping of str to array_like, or array_like (N+1, n_u)
            Inputs by source name, or an array in ``model.inputs`` order.
        y : mapping of str to array_like, or array_like (N+1, n_y)
            Measured outputs by label, or an array in ``outputs`` order.
            Sample 0 is the initial instant and is not fitted.

        Returns
        -------
        ParameterEstimator
            ``self``.
        """
        t_start = time.perf_counter()
        m = self._model()
        t, h = self._grid(t)
        n = t.shape[0]
        U = _as_columns(u, m.inputs, "u", n)
        labels = self._labels()
        Yd = _as_columns(y, labels, "y", n, allow_first_nan=True)
        target = self._targets(Yd)
        if not np.all(np.isfinite(target)):
            raise IdentificationError(
                "y at the initial instant t[0] is not finite, but this scheme compares averaged "
                "samples (y[k] + y[k+1]) / 2: give y(t0), or use method='backward_euler'")
        names = self._names()
        free = self.free
        nf = len(free)
        step = self._step()
        base = self._model().parameter_values(self.fixed)
        sym = {nm.lower(): p.symbol for nm, p in m.netlist.parameters.items()}
        start = {f: float((self.initial or {}).get(f, (self.initial or {}).get(names[f], base[sym[f.lower()]])))
                 for f in free}
        for key in (self.initial or {}):
            if str(key).lower() not in {f.lower() for f in free}:
                raise IdentificationError(f"initial value for {key!r}, which is not free")
        bnds = {f: (None, None) for f in free}
        for key, b in (self.bounds or {}).items():
            match = [f for f in free if f.lower() == str(key).lower()]
            if not match:
                raise IdentificationError(f"bounds for {key!r}, which is not free")
            bnds[match[0]] = (None if b[0] is None else float(b[0]), None if b[1] is None else float(b[1]))
        islog = np.array([self._is_log(f, start[f], bnds[f][0]) for f in free], bool)
        scale = np.array([1.0 if islog[i] else (abs(start[f]) or 1.0) for i, f in enumerate(free)])

        def to_theta(pv):
            return np.array([math.log(pv[i]) if islog[i] else pv[i] / scale[i] for i in range(nf)])

        def to_phys(theta):
            return np.array([math.exp(theta[i]) if islog[i] else theta[i] * scale[i] for i in range(nf)])

        lo = np.full(nf, -np.inf)
        hi = np.full(nf, np.inf)
        for i, f in enumerate(free):
            a, b = bnds[f]
            if a is not None:
                lo[i] = (math.log(a) if a > 0 else -np.inf) if islog[i] else a / scale[i]
            if b is not None:
                hi[i] = math.log(b) if islog[i] else b / scale[i]
        # initial state
        estimate = isinstance(self.x0, str) and self.x0.lower() == "estimate"
        from ..simulation.initial import state_scales
        self._xs = state_scales(m.structure, self._values(start))
        nz = m.structure.n_x if estimate else 0
        if estimate:
            xg, _ = self._initial_state(self._values(start), U[0], None, self._xs, h, step, self.x0_guess)
            z_start = xg / self._xs
        elif not (isinstance(self.x0, str) and self.x0.lower() == "dc"):
            # a bad x0 must be reported as such, not as a simulation failure at every start
            self._initial_state(self._values(start), U[0], None, self._xs, h, step, self.x0)
        # weights
        if isinstance(self.weights, str):
            if self.weights == "std":
                sd = target.std(axis=0)
                w = np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 1.0)
            elif self.weights == "none":
                w = np.ones(len(labels))
            else:
                raise IdentificationError("weights must be 'std', 'none' or an array")
        else:
            w = np.asarray(self.weights, float).reshape(-1)
            if w.shape[0] != len(labels):
                raise IdentificationError(f"weights needs {len(labels)} entries")
        self.weights_ = w
        nres = target.size
        state = {"n": 0, "last": None, "best": np.inf}

        def evaluate(xv):
            key = xv.tobytes()
            if state["last"] is not None and state["last"][0] == key:
                return state["last"][1], state["last"][2]
            theta, z = xv[:nf], xv[nf:]
            phys = to_phys(theta)
            pv = dict(zip(free, phys))
            try:
                Y, DY, bad, _ = self._simulate(pv, U, h, self.x0, z if estimate else None)
            except (SimulationError, IdentificationError, np.linalg.LinAlgError, ValueError):
                bad, Y, DY = 0, None, None
            if bad >= 0 or not np.all(np.isfinite(Y)) or not np.all(np.isfinite(DY)):
                r = np.full(nres, 1e6)
                jac = np.zeros((nres, nf + nz))
            else:
                r = ((Y - target) * w).ravel()
                dphys = np.where(islog, phys, scale)
                D = np.concatenate([dphys, np.ones(nz)])
                jac = (DY * w[None, :, None]).reshape(nres, nf + nz) * D[None, :]
            state["n"] += 1
            cost = 0.5 * float(r @ r)
            state["best"] = min(state["best"], cost)
            if self.verbose:
                txt = " ".join(f"{f}={v:.6g}" for f, v in zip(free, phys))
                print(f"eval {state['n']:4d} cost {cost:.6e} {txt}", file=sys.stderr)
            if self.callback is not None:
                self.callback(state["n"], cost, dict(zip(free, phys)))
            state["last"] = (key, r, jac)
            return r, jac

        x_lo = np.concatenate([lo, np.full(nz, -np.inf)])
        x_hi = np.concatenate([hi, np.full(nz, np.inf)])
        x_start = to_theta(np.array([start[f] for f in free]))
        if estimate:
            x_start = np.concatenate([x_start, z_start])
        x_start = np.clip(x_start, np.where(np.isfinite(x_lo), x_lo, -np.inf), x_hi)
        first_r, _ = evaluate(x_start)
        if np.all(first_r == 1e6):
            raise IdentificationError("the model cannot be simulated at the start values "
                                      "(Newton failure or non-finite outputs)")
        rng = np.random.default_rng(self.random_state)
        results = []
        for s in range(max(1, int(self.n_starts))):
            xs0 = x_start.copy()
            if s > 0:
                pert = rng.standard_normal(nf) * self.start_spread
                xs0[:nf] = np.where(islog, xs0[:nf] + pert, xs0[:nf] * (1.0 + pert))
                xs0 = np.clip(xs0, np.where(np.isfinite(x_lo), x_lo + 1e-12, -np.inf),
                              np.where(np.isfinite(x_hi), x_hi - 1e-12, np.inf))
            bnd = (x_lo, x_hi) if (np.any(np.isfinite(x_lo)) or np.any(np.isfinite(x_hi))) else (-np.inf, np.inf)
            res = so.least_squares(lambda xv: evaluate(xv)[0], xs0, jac=lambda xv: evaluate(xv)[1],
                                   method="trf", bounds=bnd, x_scale=1.0, ftol=self.ftol, xtol=self.xtol,
                                   gtol=self.gtol, max_nfev=self.max_nfev)
            results.append(res)
        best = min(results, key=lambda r: r.cost)
        self.starts_ = [float(r.cost) for r in results]
        self.result_ = best
        self.n_iter_ = int(best.njev if best.njev is not None else best.nfev)
        theta = best.x[:nf]
        phys = to_phys(theta)
        self.params_ = {f: float(v) for f, v in zip(free, phys)}
        r, jac = evaluate(best.x)
        Y, _, bad, x0 = self._simulate(self.params_, U, h, self.x0, best.x[nf:] if estimate else None, want=False)
        self.x0_ = x0
        self.y_fit_ = Y
        self.nrms_ = {lab: nrms(Y[:, j], target[:, j]) for j, lab in enumerate(labels)}
        self._uncertainty(r, jac, phys, islog, scale, nf, nz)
        self.fit_time_ = time.perf_counter() - t_start
        self._h = h
        return self

    def _uncertainty(self, r, jac, phys, islog, scale, nf, nz) -> None:
        """Covariance, standard deviations, confidence intervals, identifiability."""
        m_res = r.size
        dof = max(m_res - nf - nz, 1)
        s2 = float(r @ r) / dof
        self.sigma2_ = s2
        # jac columns are derivatives w.r.t. theta (log p, or p / scale) and z = x0 / xs
        col = np.linalg.norm(jac, axis=0)
        col = np.where(col > 0, col, 1.0)
        Jn = jac / col
        _, sv, Vt = np.linalg.svd(Jn, full_matrices=False)
        tiny = sv < max(sv[0] if sv.size else 0.0, 1e-300) * 1e-10
        inv_s2 = np.where(tiny, 0.0, 1.0 / np.where(tiny, 1.0, sv) ** 2)
        cov_theta = s2 * ((Vt.T * inv_s2) @ Vt) / np.outer(col, col)
        D = np.where(islog, phys, scale)          # d p / d theta
        covp = cov_theta[:nf, :nf] * np.outer(D, D)
        self.covariance_ = covp
        std = np.sqrt(np.maximum(np.diag(covp), 0.0))
        self.std_ = {f: float(s) for f, s in zip(self.free, std)}
        if nz:
            self.x0_std_ = np.sqrt(np.maximum(np.diag(cov_theta[nf:, nf:]), 0.0)) * self._xs
        q = float(st.t.ppf(0.5 + 0.5 * self.confidence, dof))
        ci = {}
        for i, f in enumerate(self.free):
            if islog[i]:
                sd_t = min(q * math.sqrt(max(cov_theta[i, i], 0.0)), 700.0)
                ci[f] = (float(phys[i] * math.exp(-sd_t)), float(phys[i] * math.exp(sd_t)))
            else:
                ci[f] = (float(phys[i] - q * std[i]), float(phys[i] + q * std[i]))
        self.confidence_intervals_ = ci
        rel = std / np.maximum(np.abs(phys), 1e-300)
        self.relative_std_ = {f: float(x) for f, x in zip(self.free, rel)}
        flagged = [f for f, x in zip(self.free, rel) if not x <= self.identifiability_threshold]
        if np.any(tiny):
            # parameters spanning the (near) null space of J^T J
            for k in np.nonzero(tiny)[0]:
                vec = np.abs(Vt[k, :nf])
                for i in np.nonzero(vec > 0.3 * vec.max(initial=0.0))[0]:
                    if self.free[i] not in flagged:
                        flagged.append(self.free[i])
        self.unidentifiable_ = flagged
        self.condition_ = float(sv[0] / sv[-1]) if sv.size and sv[-1] > 0 else float("inf")
        if flagged:
            parts = [f"{f} (relative std {self.relative_std_[f]:.3g})" for f in flagged]
            warnings.warn(UnidentifiableParameterWarning(
                "practically unidentifiable with the given outputs: " + ", ".join(parts)
                + f"; threshold {self.identifiability_threshold:g}, condition number of the "
                f"scaled Jacobian {self.condition_:.3g}", flagged), stacklevel=3)

    # ------------------------------------------------------------ predict
    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise IdentificationError("call fit() first")

    def predict(self, t: ArrayLike, u: Signals, x0: Any = "fit") -> Dict[str, np.ndarray]:
        """Simulate the outputs with the fitted parameters.

        Parameters
        ----------
        t : array_like (N+1,)
            Uniform sample times (the step may differ from the fit's).
        u : mapping of str to array_like, or array_like (N+1, n_u)
            Inputs.
        x0 : "fit", None, array_like, mapping or "dc"
            Initial state: ``"fit"`` (default) the rule of the fit (the
            estimated state for ``x0="estimate"``), otherwise as in
            :class:`ParameterEstimator`.

        Returns
        -------
        dict of str to ndarray (N+1,)
            Output label -> simulated output on the grid ``t``.  Entry 0 (the
            initial instant, before any step) is NaN; for backward Euler entry
            ``k`` is the end-of-step value at ``t[k]``, for the midpoint-type
            schemes the value of the step ``t[k-1] -> t[k]``.
        """
        self._check_fitted()
        m = self._model()
        t, h = self._grid(t)
        U = _as_columns(u, m.inputs, "u", t.shape[0])
        if isinstance(x0, str) and x0 == "fit":
            spec = self.x0_ if (isinstance(self.x0, str) and self.x0.lower() == "estimate") else self.x0
        else:
            spec = x0
        Y, _, bad, _ = self._simulate(self.params_, U, h, spec, None, want=False)
        if bad >= 0:
            raise IdentificationError(f"simulation with the fitted parameters failed at step {bad}")
        out = {}
        for j, lab in enumerate(self._labels()):
            col = np.full(t.shape[0], np.nan)
            col[1:] = Y[:, j]
            out[lab] = col
        return out

    def estimate_initial_state(self, t: ArrayLike, u: Signals, y: Signals) -> np.ndarray:
        """Initial state that best explains ``y`` with the fitted parameters.

        Useful to validate on a record with an unknown initial condition:
        ``predict(t, u, x0=est.estimate_initial_state(t[:n], u[:n], y[:n]))``.

        Parameters
        ----------
        t, u, y : see :meth:`fit`

        Returns
        -------
        ndarray (n_x,)
        """
        self._check_fitted()
        m = self._model()
        t, h = self._grid(t)
        n = t.shape[0]
        U = _as_columns(u, m.inputs, "u", n)
        target = self._targets(_as_columns(y, self._labels(), "y", n))
        w = self.weights_
        nf = len(self.free)
        xs = self._xs

        def fun(z):
            Y, DY, bad, _ = self._simulate(self.params_, U, h, None, z)
            if bad >= 0:
                return np.full(target.size, 1e6), np.zeros((target.size, z.size))
            return ((Y - target) * w).ravel(), (DY[:, :, nf:] * w[None, :, None]).reshape(target.size, -1)

        z0 = np.zeros(m.structure.n_x)
        res = so.least_squares(lambda z: fun(z)[0], z0, jac=lambda z: fun(z)[1], method="trf",
                               ftol=1e-12, xtol=1e-12, gtol=1e-12, max_nfev=50)
        return res.x * xs

    def summary(self) -> str:
        """Table of estimates, standard deviations, confidence intervals and NRMS."""
        self._check_fitted()
        lines = [f"{'parameter':<12} {'estimate':>14} {'std':>11} {'rel.std':>9}  "
                 f"{int(round(self.confidence * 100))}% confidence interval"]
        for f in self.free:
            lo, hi = self.confidence_intervals_[f]
            flag = "  (!)" if f in self.unidentifiable_ else ""
            lines.append(f"{f:<12} {self.params_[f]:>14.8g} {self.std_[f]:>11.3g} "
                         f"{self.relative_std_[f]:>9.2e}  [{lo:.8g}, {hi:.8g}]{flag}")
        lines.append("NRMS: " + ", ".join(f"{k} {v:.4g}" for k, v in self.nrms_.items()))
        lines.append(f"iterations {self.n_iter_}, evaluations {self.result_.nfev}, cost {self.result_.cost:.6e}, "
                     f"sigma^2 {self.sigma2_:.4g}, {self.fit_time_:.2f} s")
        return "\n".join(lines)
