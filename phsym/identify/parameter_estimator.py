"""Grey-box estimation of netlist parameters from input-output data.

:class:`ParameterEstimator` fits the free parameters of a netlist (explicit
PHS or pH-DAE, linear or nonlinear) by output-error least squares: the model
is simulated with one of phsym's passivity-preserving time-steppers
(by default the scheme a simulation result was made with, backward Euler
for measured arrays; implicit midpoint or discrete gradient on request) and the Jacobian of the residual comes from forward sensitivities
of the very steps the simulator takes, on either engine: the generated loop's
(:mod:`phsym.codegen.newton.sensitivity`) or the numeric engine's
(:mod:`phsym.simulation.engines.numeric.sensitivity`, circuits too large for
the generated loop), so the optimiser sees the derivatives of the simulated
outputs and parameter changes never recompile anything.

Uncertainty is reported from the Jacobian at the optimum (:mod:`phsym.identify.uncertainty`),
with an :class:`~phsym.identify.warnings.UnidentifiableParameterWarning` naming parameters the data
do not determine.
"""
from __future__ import annotations

import time
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import scipy.optimize as so

from ..codegen.newton.sensitivity import SensitivityStep
from ..common.names import NameTable
from ..common.schemes import get_scheme, stiff_rule
from ..errors import IdentificationError, SimulationError, StructureError
from ..model import Model, load
from ..simulation.engines.numeric.sensitivity import NumericSensitivity
from ..simulation.result import SimulationResult
from ..simulation.simulator import Simulator
from .base import Estimator
from .data import fit_method, fit_stiff, is_result, measurements, step_signal, step_targets
from .metrics import nrms, r2_score
from .fit_engines import ENGINES, fit_engine, initial_with_sensitivity, run_steps, scales, sensitivity_module
from .output_error import FAILED, FitHooks, OutputError, Reparam, output_weights
from .uncertainty import estimate_table, uncertainty
from .warnings import UnidentifiableParameterWarning, check_scheme

__all__ = ["ParameterEstimator"]

#: Schemes of the grey-box fit (those of the generated Newton loop).
SCHEMES = ("backward_euler", "midpoint", "discrete_gradient")


class ParameterEstimator(FitHooks, Estimator):
    """Fit netlist parameters to measured input-output data.

    Parameters
    ----------
    model : phsym.Model, str or pathlib.Path
        The model, or the path of a netlist (loaded by :meth:`fit` into ``model_``).
    free : sequence of str or str
        Names of the parameters to estimate (as in ``model.parameters``; a
        string is one name).
    outputs : sequence of str, optional
        Measured signals: port outputs ``y(SOURCE)``, probe labels
        (``v(node)``, ``v(n1,n2)``, ``i(R1)``, ``v(R1)``) and/or states
        (``x(K1)``, a spring's elongation: a measured position; by quantity
        ``q(C1)``; or the simulator's names ``x_K1``).  Default: every port output.
    method : str
        Time-stepper: ``"auto"`` (default: the scheme of the data when they are a
        :class:`~phsym.simulation.SimulationResult` or a saved result, else
        ``"backward_euler"`` as in seed 001), ``"backward_euler"``,
        ``"midpoint"`` or ``"discrete_gradient"``.  Measured outputs on the
        grid are compared with the step outputs at the point the scheme
        evaluates (see :func:`phsym.identify.data.step_targets`).
    initial : mapping of str to float, optional
        Starting values of free parameters (default: netlist values).
    bounds : mapping of str to (float or None, float or None), optional
        Bounds of free parameters in physical units.
    log_params : "auto", bool or sequence of str
        Which parameters are optimised as ``log(p)`` (keeps them positive):
        ``"auto"`` every free parameter with a positive start value and no
        negative lower bound; ``True``/``False`` all/none (where possible);
        or a list of names.
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
        Output weights: ``"std"`` divides each output by the standard
        deviation of its data, ``"none"`` uses raw units, or one weight per output.
    n_starts : int
        Number of optimiser starts (the first from ``initial``, the others
        perturbed by ``start_spread``).
    random_state : int, numpy.random.Generator or None
        Seed of the perturbed starts.
    executor : None, "threads", "dask", concurrent.futures.Executor or dask Client
        Where the starts run: ``None`` one after the other; ``"threads"`` or a
        thread pool side by side in this process; a process pool or dask
        workers refit from each start (see :mod:`phsym.identify.multistart`).
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
        Newton iteration cap per step.
    stiff : str
        How stiff storages (junction charges) step, as ``Simulator(stiff=...)``: ``"auto"`` (default:
        the rule a simulation result was made with, else at the step's end for steps of 1 us or
        longer), ``"backward_euler"`` or ``"scheme"``.
    engine : str
        Engine that steps and differentiates the model: ``"auto"`` (default:
        :func:`phsym.identify.fit_engines.fit_engine`, the Simulator's rule with small circuits on
        the generated loop), ``"generated"`` (the circuit's own loop and sensitivity module: fastest
        per step, its build grows fast with the circuit) or ``"numeric"`` (nothing compiled per
        circuit: large circuits).
    verbose : int
        ``1`` prints one line per residual evaluation to stderr.
    callback : callable, optional
        ``callback(n_eval, cost, params)`` after each residual evaluation.

    Attributes
    ----------
    model_ : Model
        The model fitted.
    engine_ : str
        The engine of the fit (``"generated"`` or ``"numeric"``); :meth:`predict` runs on it.
    method_, stiff_ : str
        The scheme of the fit (``method``, ``"auto"`` resolved) and its stiff rule (``stiff``, or for
        ``"auto"`` the data's recorded rule); :meth:`predict` and :meth:`score` step by them.
    params_ : dict of str to float
        Estimated free parameters.
    covariance_ : ndarray (n_free, n_free)
        Covariance of the estimates in physical units.
    std_, relative_std_ : dict of str to float
        Standard deviations, absolute and relative.
    confidence_intervals_ : dict of str to (float, float)
        Confidence intervals at level ``confidence``.
    nrms_ : dict of str to float
        NRMS of each output on the fitting data (:func:`~phsym.identify.metrics.nrms`).
    sigma2_ : float
        Residual variance (weighted units).
    weights_ : ndarray
        Output weights used.
    x0_ : ndarray
        Initial state used (estimated when ``x0="estimate"``).
    x0_std_ : ndarray
        Its standard deviation (``x0="estimate"`` only).
    y_fit_ : ndarray (N, n_y)
        Step outputs of the fitted model on the fitting data.
    result_ : scipy.optimize.OptimizeResult
        Report of the best start.
    n_iter_ : int
        Jacobian evaluations (iterations) of the best start.
    starts_ : list of float
        Final cost of every start.
    unidentifiable_ : list of str
        Parameters flagged as practically unidentifiable.
    condition_ : float
        Condition number of the scaled Jacobian at the optimum.
    fit_time_ : float
        Wall time of :meth:`fit` in seconds.
    """

    def __init__(self, model: Any = None, free: Union[str, Sequence[str]] = (),
                 outputs: Optional[Sequence[str]] = None, *, method: str = "auto",
                 initial: Optional[Mapping[str, float]] = None,
                 bounds: Optional[Mapping[str, Tuple[Optional[float], Optional[float]]]] = None,
                 log_params: Union[str, bool, Sequence[str]] = "auto",
                 fixed: Optional[Mapping[str, float]] = None,
                 x0: Any = None, x0_guess: Any = None, weights: Any = "std",
                 n_starts: int = 1, random_state: Any = None, executor: Any = None, start_spread: float = 0.5,
                 confidence: float = 0.95, identifiability_threshold: float = 0.1,
                 max_nfev: int = 200, ftol: float = 1e-10, xtol: float = 1e-10, gtol: float = 1e-10,
                 tol: float = 1e-12, maxit: int = 200, stiff: str = "auto", engine: str = "auto", verbose: int = 0,
                 callback: Optional[Callable[[int, float, Dict[str, float]], None]] = None):
        self.model = model
        self.free = free
        self.outputs = outputs
        self.method = method
        self.initial = initial
        self.bounds = bounds
        self.log_params = log_params
        self.fixed = fixed
        self.x0 = x0
        self.x0_guess = x0_guess
        self.weights = weights
        self.n_starts = n_starts
        self.random_state = random_state
        self.executor = executor
        self.start_spread = start_spread
        self.confidence = confidence
        self.identifiability_threshold = identifiability_threshold
        self.max_nfev = max_nfev
        self.ftol = ftol
        self.xtol = xtol
        self.gtol = gtol
        self.tol = tol
        self.maxit = maxit
        self.stiff = stiff
        self.engine = engine
        self.verbose = verbose
        self.callback = callback

    # ------------------------------------------------------------- set-up
    def _checked(self) -> Tuple[Model, List[str], List[str]]:
        """Model, free parameter names (netlist spelling) and output labels; validates the settings."""
        model = self.model
        if model is None:
            raise IdentificationError("ParameterEstimator needs a model (a Model or a netlist path)")
        if not isinstance(model, Model):
            try:
                model = load(model)
            except (OSError, TypeError) as exc:
                raise IdentificationError(f"cannot load model {self.model!r}: {exc}") from None
        if not isinstance(model, Model):
            raise IdentificationError("ParameterEstimator fits netlist models; use LinearPHSEstimator for matrices")
        free = self._free_names(model)
        if not free:
            raise IdentificationError(f"free must name at least one parameter, got {self.free!r}")
        table = NameTable(model.netlist.parameters, what="parameter")
        names = [table.spelling(f) or table.lookup(f, IdentificationError) for f in free]
        if len({n.lower() for n in names}) != len(names):
            raise IdentificationError(f"free parameters repeated: {free}")
        if not 0 < float(self.confidence) < 1:
            raise IdentificationError(f"confidence must lie in (0, 1), got {self.confidence}")
        get_scheme(fit_method(self.method, None, SCHEMES[0], SCHEMES), SCHEMES, IdentificationError)
        stiff_rule(self.stiff, 1.0, IdentificationError)
        if str(self.engine).strip().lower() not in ENGINES:
            raise IdentificationError(f"unknown engine {self.engine!r}: use {', '.join(ENGINES)}")
        lp = self.log_params
        if not isinstance(lp, (str, bool)):
            unknown = {str(n).lower() for n in lp} - {n.lower() for n in names}
            if unknown:
                raise IdentificationError(f"log_params names {sorted(unknown)}, which are not free: {names}")
        labels = list(self.outputs) if self.outputs is not None else list(model.outputs)
        return model, names, labels

    def _sensitivity(self, model: Model, free: List[str], labels: List[str],
                     h: float) -> Union[SensitivityStep, NumericSensitivity]:
        # the fit's rules and engine; before a fit, those of the settings for measured arrays
        scheme = getattr(self, "method_", None) or get_scheme(
            fit_method(self.method, None, "backward_euler", SCHEMES), SCHEMES, IdentificationError).name
        stiff = stiff_rule(getattr(self, "stiff_", self.stiff), h, IdentificationError)
        engine = getattr(self, "engine_", None) or fit_engine(self.engine, model, scheme, stiff)
        key = (engine, scheme, stiff, tuple(free), tuple(labels), id(model))
        if getattr(self, "_sens", (None,))[0] != key:
            self._sens = (key, sensitivity_module(engine, model, free, labels, scheme, stiff))
        return self._sens[1]

    def _values(self, model: Model, pvals: Mapping[str, float]):
        try:
            return model.parameter_values({**(self.fixed or {}), **pvals})
        except StructureError as exc:
            raise IdentificationError(exc.message) from None

    # -------------------------------------------------------- simulation
    def _simulate(self, model, step, pvals, U, h, spec, xs, z=None, want=True):
        """Outputs (N, n_y), sensitivities (N, n_y, n_s) or None, failed step, initial state."""
        values = self._values(model, pvals)
        values_of = lambda pv: self._values(model, pv)      # noqa: E731
        x, S0 = initial_with_sensitivity(model, step, values, values_of, pvals, U[0], xs, h, spec)
        if z is not None:                       # estimated initial state (scaled by xs)
            x = np.asarray(z, float) * xs
            S0 = np.hstack([S0, np.diag(xs)])
        Y, DY, bad = run_steps(step, values, values_of, pvals, x, S0, U, xs, h, self.tol, self.maxit, want)
        return Y, DY, bad, x

    # ------------------------------------------------------------------ fit
    def fit(self, t: Any, u: Any = None, y: Any = None) -> "ParameterEstimator":
        """Estimate the free parameters.

        Parameters
        ----------
        t : array_like (N+1,) or SimulationResult
            Uniform grid times (the step of the scheme is ``t[1] - t[0]``),
            or a simulation result whose inputs and outputs are the data (a
            :class:`~phsym.simulation.SimulationResult`, or one saved as ``.npz`` and read by
            :func:`phsym.simulation.load_result`; with ``method="auto"`` its scheme is the fit's).
        u : mapping of str to array_like, or array_like (N+1, n_u)
            Inputs by source name, or an array in ``model.inputs`` order.
        y : mapping of str to array_like, or array_like (N+1 or N, n_y)
            Measured outputs by label, or an array in ``outputs`` order: samples
            at the grid times or step values (see :mod:`phsym.identify.data`).

        Returns
        -------
        ParameterEstimator
            ``self``.
        """
        t_start = time.perf_counter()
        model, free, labels = self._checked()
        data = measurements(t, u, y, model.inputs, labels, min_samples=3)
        scheme = get_scheme(fit_method(self.method, t, "backward_euler", SCHEMES), SCHEMES, IdentificationError)
        stiff = fit_stiff(self.stiff, t)
        self.method_, self.stiff_ = scheme.name, stiff
        if is_result(t):     # another scheme's trajectory differs by its discretisation error: a bias
            check_scheme(t.info, scheme.name, stiff_rule(stiff, data.h, IdentificationError))
        target = step_targets(data, scheme)
        self.engine_ = fit_engine(self.engine, model, scheme.name, stiff_rule(stiff, data.h, IdentificationError))
        step = self._sensitivity(model, free, labels, data.h)
        rp = Reparam(self, model, free)
        estimate = isinstance(self.x0, str) and self.x0.lower() == "estimate"
        values0 = self._values(model, rp.start)
        xs = scales(step, model, values0)
        # the start's initial state: a bad x0 is reported as such, not as a failed simulation
        x_guess, _ = initial_with_sensitivity(model, step, values0, lambda pv: self._values(model, pv), rp.start,
                                              data.U[0], xs, data.h, self.x0_guess if estimate else self.x0)
        nz = len(model.states) if estimate else 0
        w = output_weights(self.weights, target, labels)
        problem = OutputError(self, model, step, rp, data, target, w, xs, nz)
        x_start = rp.theta(rp.start)
        if estimate:
            x_start = np.concatenate([x_start, x_guess / xs])
        if np.all(problem.evaluate(x_start)[0] == FAILED):
            why = getattr(step, "reason", None)
            raise IdentificationError("the model cannot be simulated at the start values "
                                      + (f"({why})" if why else "(Newton failure or non-finite outputs)"))
        best, starts = problem.minimise(x_start)
        phys = rp.physical(best.x[:len(free)])
        self.model_ = model
        self.params_ = {f: float(v) for f, v in zip(free, phys)}
        self.starts_ = starts
        self.result_ = best
        self.n_iter_ = int(best.njev if best.njev is not None else best.nfev)
        self.weights_ = w
        r, jac = problem.evaluate(best.x)
        Y, _, _, x0 = self._simulate(model, step, self.params_, data.U, data.h, self.x0, xs,
                                     best.x[len(free):] if estimate else None, want=False)
        self.x0_, self.y_fit_ = x0, Y
        self.nrms_ = {lab: nrms(Y[:, j], target[:, j]) for j, lab in enumerate(labels)}
        unc = uncertainty(r, jac, free, phys, rp.islog, rp.scale, float(self.confidence),
                          float(self.identifiability_threshold))
        self.sigma2_, self.covariance_, self.std_ = unc.sigma2, unc.covariance, unc.std
        self.relative_std_, self.confidence_intervals_ = unc.relative_std, unc.intervals
        self.unidentifiable_, self.condition_ = unc.unidentifiable, unc.condition
        if estimate:
            self.x0_std_ = unc.extra_std * xs
        self._xs, self._h = xs, data.h
        if unc.unidentifiable:
            parts = [f"{f} (relative std {unc.relative_std[f]:.3g})" for f in unc.unidentifiable]
            warnings.warn(UnidentifiableParameterWarning(
                "practically unidentifiable with the given outputs: " + ", ".join(parts)
                + f"; threshold {self.identifiability_threshold:g}, condition number of the "
                f"scaled Jacobian {unc.condition:.3g}", unc.unidentifiable), stacklevel=2)
        self.fit_time_ = time.perf_counter() - t_start
        return self

    # ------------------------------------------------------------ predict
    def predict(self, t: Any, u: Any, x0: Any = "fit") -> SimulationResult:
        """Simulate the fitted model on new inputs.

        Parameters
        ----------
        t : array_like (N+1,)
            Uniform grid times (the step may differ from the fit's).
        u : mapping of str to array_like, or array_like (N+1, n_u)
            Inputs.
        x0 : "fit", None, array_like, mapping or "dc"
            Initial state: ``"fit"`` (default) the rule of the fit (the
            estimated state for ``x0="estimate"``), otherwise as in
            :class:`ParameterEstimator`.

        Returns
        -------
        SimulationResult
            The simulator's result with the fitted parameters (outputs by
            label: ``result["y(VG)"]``, ``result["v(n1)"]``, on ``t_step``).
        """
        self._check_fitted("params_")
        m = self.model_
        data = measurements(t, u, np.zeros((len(np.asarray(t).reshape(-1)), 0)), m.inputs, [], min_samples=2)
        if isinstance(x0, str) and x0 == "fit":
            x0 = self.x0_ if (isinstance(self.x0, str) and self.x0.lower() == "estimate") else self.x0
        sim = Simulator(m, 1.0 / data.h, self.method_, stiff=self.stiff_, tol=self.tol, maxit=self.maxit,
                        record_efforts=True, engine=getattr(self, "engine_", self.engine))       # the rules the fit stepped by
        try:
            return sim.run(u=data.U, x0=x0, params={**(self.fixed or {}), **self.params_})
        except SimulationError as exc:
            raise IdentificationError(f"simulation with the fitted parameters failed: {exc}") from None

    def score(self, t: Any, u: Any = None, y: Any = None) -> float:
        """Coefficient of determination R² of the prediction (1 is perfect; scikit-learn's score).

        Parameters
        ----------
        t, u, y : see :meth:`fit`
            Data (grid samples or step values of the outputs).
        """
        self._check_fitted("params_")
        labels = list(self.outputs) if self.outputs is not None else list(self.model_.outputs)
        data = measurements(t, u, y, self.model_.inputs, labels, min_samples=3)
        res = self.predict(data.t, data.U)
        scheme = get_scheme(self.method_)
        pred = np.column_stack([step_signal(res, lab, scheme) for lab in labels])
        return r2_score(pred, step_targets(data, scheme))

    def estimate_initial_state(self, t: Any, u: Any = None, y: Any = None) -> np.ndarray:
        """Initial state that best explains ``y`` with the fitted parameters.

        Useful to validate on a record with an unknown initial condition:
        ``predict(t, u, x0=est.estimate_initial_state(t[:n], u[:n], y[:n]))``.

        Parameters
        ----------
        t, u, y : see :meth:`fit`
            Data.

        Returns
        -------
        ndarray (n_x,)
        """
        self._check_fitted("params_")
        model, free, labels = self._checked()
        model = self.model_
        data = measurements(t, u, y, model.inputs, labels, min_samples=3)
        target = step_targets(data, get_scheme(self.method_))
        step, w, xs, nf = self._sensitivity(model, free, labels, data.h), self.weights_, self._xs, len(free)

        def fun(z):
            Y, DY, bad, _ = self._simulate(model, step, self.params_, data.U, data.h, None, xs, z)
            if bad >= 0:
                return np.full(target.size, FAILED), np.zeros((target.size, z.size))
            return ((Y - target) * w).ravel(), (DY[:, :, nf:] * w[None, :, None]).reshape(target.size, -1)
        res = so.least_squares(lambda z: fun(z)[0], np.zeros(len(model.states)), jac=lambda z: fun(z)[1],
                               method="trf", ftol=1e-12, xtol=1e-12, gtol=1e-12, max_nfev=50)
        return res.x * xs

    def summary(self) -> str:
        """Table of estimates, standard deviations, confidence intervals and NRMS."""
        self._check_fitted("params_")
        lines = estimate_table(self.params_, self.std_, self.relative_std_, self.confidence_intervals_,
                               self.unidentifiable_, self.confidence)
        lines.append("NRMS: " + ", ".join(f"{k} {v:.4g}" for k, v in self.nrms_.items()))
        lines.append(f"iterations {self.n_iter_}, evaluations {self.result_.nfev}, cost {self.result_.cost:.6e}, "
                     f"sigma^2 {self.sigma2_:.4g}, {self.fit_time_:.2f} s")
        return "\n".join(lines)
