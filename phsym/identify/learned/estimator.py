"""Unknown laws inside a known netlist, fitted from input-output recordings.

:class:`LearnedLawEstimator` is a :class:`~phsym.identify.ParameterEstimator`
whose free parameters include every coefficient of the netlist's learnable
elements (``NAME n+ n- learn(...)``, :mod:`phsym.components.learnable`):
the output error is minimised with the exact sensitivities of the generated
time-stepper, jointly with any ordinary parameter named in ``free`` (a
capacitor's tolerance).  Because each learned law is passive for every
parameter value, every iterate of the optimiser, and the fitted model, is a
passive port-Hamiltonian system.

Regularisation rows are appended to the output residuals:

* ``smoothness``: second differences of the knot weights (square roots of
  the slope bumps), ``sqrt(smoothness * n) D2 w / w_ref``;
* ``prior`` with ``prior_weight``: the learned law minus a named law (e.g.
  ``("shockley_pair", {"Is": 1e-9, "N": 1.8})``, :mod:`.priors`) on a grid
  over the knot range, relative to that law's largest value.  A prior also
  gives the start: the non-negative least-squares fit of the family to it.

After ``fit``, ``laws_`` holds a :class:`~.curve.LearnedCurve` per learned
element (callable, ``band``, ``report``, ``netlist_line``, ``plot``).
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import scipy.optimize as so

from ...components.learnable import Learnable, MonotoneFamily
from ...errors import IdentificationError
from ...model import Model
from ..data import measurements
from ..metrics import nrms
from ..parameter_estimator import ParameterEstimator
from ..warnings import UnidentifiableParameterWarning
from .curve import LearnedCurve
from .priors import prior_law

__all__ = ["LearnedLawEstimator", "learned_elements"]


def learned_elements(model: Model) -> Dict[str, Tuple[Learnable, List[str]]]:
    """The learnable elements of a model: name -> (component, its parameter names in coefficient order).

    Parameters
    ----------
    model : Model
        A loaded model.
    """
    out = {}
    for spec in model.netlist.elements:
        if spec.kind == Learnable.kind:
            comp = Learnable(spec, {})
            out[spec.name] = (comp, [str(p) for p in comp.parameters()])
    return out


class LearnedLawEstimator(ParameterEstimator):
    """Fit the laws of a netlist's learnable elements (and other parameters) to input-output data.

    Parameters
    ----------
    model : phsym.Model, str or pathlib.Path
        A model with at least one ``learn(...)`` element, or its netlist path.
    free : sequence of str or str
        Ordinary parameters to estimate with the laws (may be empty).
    outputs : sequence of str, optional
        Measured signals (see :class:`~phsym.identify.ParameterEstimator`).
    laws : sequence of str, optional
        Learnable elements to fit (default: all; the others keep their netlist values).
    smoothness : float
        Weight of the second-difference penalty on the knot weights (0: none).
    prior : str, (str, dict), callable or mapping of element to those, optional
        A named law the learned laws start from and, with ``prior_weight``,
        are pulled towards (:data:`~phsym.identify.learned.priors.NAMED_LAWS`).
    prior_weight : float
        Weight of the prior penalty (0: the prior only sets the start).
    method, initial, bounds, log_params, fixed, x0, x0_guess, weights, n_starts, random_state, executor, \
start_spread, confidence, identifiability_threshold, max_nfev, ftol, xtol, gtol, tol, maxit, stiff, verbose, callback
        As for :class:`~phsym.identify.ParameterEstimator` (``log_params``
        applies to the ordinary parameters: a law's parameters enter squared
        and are optimised as they are, so they may cross zero).

    Attributes
    ----------
    laws_ : dict of str to LearnedCurve
        The fitted law of each learned element: ``laws_['D1'](v)``,
        ``laws_['D1'].band(v)``.
    excited_ : dict of str to (float, float)
        Range of each learned element's port variable in the fitting data.
    params_, covariance_, std_, nrms_, ... :
        As for :class:`~phsym.identify.ParameterEstimator`.

    Examples
    --------
    >>> import numpy as np, phsym
    >>> net = "V1 a 0\\nR1 a b 1k\\nD1 b 0 learn(kind=monotone, knots=3, range=-1..1, scale=1m)\\n"
    >>> est = LearnedLawEstimator(phsym.parse(net), outputs=["v(b)"])
    >>> sorted(learned_elements(phsym.parse(net)))
    ['D1']
    """

    def __init__(self, model: Any = None, free: Union[str, Sequence[str]] = (),
                 outputs: Optional[Sequence[str]] = None, *, laws: Optional[Sequence[str]] = None,
                 smoothness: float = 0.0, prior: Any = None, prior_weight: float = 0.0,
                 method: str = "backward_euler", initial: Optional[Mapping[str, float]] = None,
                 bounds: Optional[Mapping[str, Tuple[Optional[float], Optional[float]]]] = None,
                 log_params: Union[str, bool, Sequence[str]] = "auto", fixed: Optional[Mapping[str, float]] = None,
                 x0: Any = None, x0_guess: Any = None, weights: Any = "std", n_starts: int = 1,
                 random_state: Any = None, executor: Any = None, start_spread: float = 0.1,
                 confidence: float = 0.95, identifiability_threshold: float = 0.1, max_nfev: int = 100,
                 ftol: float = 1e-10, xtol: float = 1e-10, gtol: float = 1e-10, tol: float = 1e-12,
                 maxit: int = 200, stiff: str = "auto", verbose: int = 0,
                 callback: Optional[Callable[[int, float, Dict[str, float]], None]] = None):
        super().__init__(model, free, outputs, method=method, initial=initial, bounds=bounds,
                         log_params=log_params, fixed=fixed, x0=x0, x0_guess=x0_guess, weights=weights,
                         n_starts=n_starts, random_state=random_state, executor=executor,
                         start_spread=start_spread, confidence=confidence,
                         identifiability_threshold=identifiability_threshold, max_nfev=max_nfev, ftol=ftol,
                         xtol=xtol, gtol=gtol, tol=tol, maxit=maxit, stiff=stiff, verbose=verbose,
                         callback=callback)
        self.laws = laws
        self.smoothness = smoothness
        self.prior = prior
        self.prior_weight = prior_weight

    # ------------------------------------------------------------- hooks
    def _free_names(self, model: Model) -> List[str]:
        found = learned_elements(model)
        if not found:
            raise IdentificationError("the model has no learnable element: write NAME n+ n- learn(kind=..., "
                                      "knots=K, range=LO..HI)")
        wanted = list(found) if self.laws is None else [self.laws] if isinstance(self.laws, str) else list(self.laws)
        lower = {n.lower(): n for n in found}
        missing = [n for n in wanted if n.lower() not in lower]
        if missing:
            raise IdentificationError(f"laws names {missing}, which are not learnable elements: {sorted(found)}")
        self._learned = {lower[n.lower()]: found[lower[n.lower()]] for n in wanted}
        own = super()._free_names(model)
        taken = {p.lower() for _, names in self._learned.values() for p in names}
        clash = [f for f in own if f.lower() in taken]
        if clash:
            raise IdentificationError(f"free repeats parameters of the learned laws: {clash} (they are free anyway)")
        self._own = own
        self._free_order = own + [p for _, names in self._learned.values() for p in names]
        self._priors = {name: self._prior_of(name) for name in self._learned}
        return list(self._free_order)

    def _prior_of(self, name: str) -> Optional[Callable]:
        spec = self.prior
        if isinstance(spec, Mapping):
            spec = {k.lower(): v for k, v in spec.items()}.get(name.lower())
        return None if spec is None else prior_law(spec)

    def _log_param_rule(self):
        lp = self.log_params
        if lp is False:
            return False
        if isinstance(lp, (str, bool)):          # "auto" or True: every free parameter
            return list(self._free_order)
        return list(lp)

    def _start_values(self) -> Mapping[str, float]:
        starts: Dict[str, float] = {}
        for name, (comp, names) in self._learned.items():
            prior = self._priors.get(name)
            if prior is None:
                continue
            fam = comp.family()
            v = np.linspace(fam.lo, fam.hi, 8 * fam.knots)
            c, _ = so.nnls(fam.basis(v), prior(v))
            # a parameter at exactly 0 has a zero derivative (it enters squared): start just off it
            p = np.sqrt(c + 1e-2 * max(float(c.max()), 1e-300) / len(c))
            starts.update(dict(zip(names, p)))
        return {**starts, **(self.initial or {})}

    def _scales(self, free: List[str], scale: np.ndarray, islog: np.ndarray, start: Mapping[str, float]) -> np.ndarray:
        # a law's log parameters are centred on their starts, so the first trust region is one unit of log p
        # (not |log p|, which lets the first step multiply a weight by e**10); linear ones share one scale
        col = {f: j for j, f in enumerate(free)}
        out = scale.copy()
        for _, names in self._learned.values():
            idx = np.array([col[n] for n in names])
            out[idx] = np.where(islog[idx], [abs(start[n]) for n in names], np.max(scale[idx]))
        return out

    def _penalty(self, params: Mapping[str, float], n_res: int):
        lam_s, lam_p = float(self.smoothness), float(self.prior_weight)
        if lam_s < 0 or lam_p < 0:
            raise IdentificationError("smoothness and prior_weight must be non-negative")
        if lam_s == 0 and (lam_p == 0 or not any(self._priors.values())):
            return None
        col = {f: j for j, f in enumerate(self._free_order)}
        rows, jacs = [], []
        for name, (comp, names) in self._learned.items():
            fam = comp.family()
            p = np.array([params[n] for n in names])
            idx = [col[n] for n in names]
            if lam_s > 0 and fam.knots >= 3:
                D2 = np.diff(np.eye(fam.knots), 2, axis=0)
                ref = float(fam.start(float(comp.value("scale")))[0])     # a fixed size: the start's
                k = np.sqrt(lam_s * n_res) / ref
                J = np.zeros((D2.shape[0], len(col)))
                J[:, idx[3:]] = k * D2
                rows.append(k * D2 @ p[3:])
                jacs.append(J)
            prior = self._priors.get(name)
            if lam_p > 0 and prior is not None:
                v = np.linspace(fam.lo, fam.hi, 4 * fam.knots)
                f0 = prior(v)
                B = fam.basis(v)
                k = np.sqrt(lam_p * n_res / len(v)) / max(float(np.max(np.abs(f0))), 1e-300)
                J = np.zeros((len(v), len(col)))
                J[:, idx] = k * B * (2 * p)[None, :]
                rows.append(k * (B @ (p * p) - f0))
                jacs.append(J)
        if not rows:
            return None
        return np.concatenate(rows), np.vstack(jacs)

    # ------------------------------------------------------------------ fit
    def fit(self, t: Any, u: Any = None, y: Any = None) -> "LearnedLawEstimator":
        """Fit the learned laws (and the ordinary free parameters).

        Parameters
        ----------
        t, u, y :
            As for :meth:`phsym.identify.ParameterEstimator.fit`.

        Returns
        -------
        LearnedLawEstimator
            ``self``.
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            super().fit(t, u, y)
        law_params = {p for _, names in self._learned.values() for p in names}
        for w in caught:        # unexcited knots are reported by laws_, not as unidentifiable parameters
            if isinstance(w.message, UnidentifiableParameterWarning):
                own = [p for p in self.unidentifiable_ if p not in law_params]
                if own:
                    warnings.warn(UnidentifiableParameterWarning(
                        "practically unidentifiable with the given outputs: " + ", ".join(own), own), stacklevel=2)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        model = self.model_
        labels = list(self.outputs) if self.outputs is not None else list(model.outputs)
        data = measurements(t, u, y, model.inputs, labels, min_samples=3)
        self.excited_ = self._port_ranges(data.t, data.U)
        n_res = self.y_fit_.size
        dof = max(n_res - len(self._free_order), 1)
        self.laws_ = {}
        for name, (comp, names) in self._learned.items():
            idx = [self._free_order.index(n) for n in names]
            self.laws_[name] = LearnedCurve(
                name, comp.family(), np.array([self.params_[n] for n in names]),
                self.covariance_[np.ix_(idx, idx)], comp.choice("kind"), comp.choice("port"),
                self.excited_[name], float(self.confidence), dof, tuple(comp.spec.nodes[:2]))
        return self

    def _port_ranges(self, t, U) -> Dict[str, Tuple[float, float]]:
        """Range of each learned element's port variable when the fitted model runs on ``U``."""
        res = self.predict(t, U)
        out = {}
        for name, (comp, _) in self._learned.items():
            sig = np.asarray(res[port_signal(comp)])
            out[name] = (float(np.min(sig)), float(np.max(sig)))
        return out

    # ------------------------------------------------------------ validate
    def validate(self, t: Any, u: Any = None, y: Any = None) -> Dict[str, Any]:
        """Prediction of a held-out recording and how far it leaves the excited ranges.

        Parameters
        ----------
        t, u, y :
            Held-out data (as for :meth:`fit`), e.g. another signal, level and frequency.

        Returns
        -------
        dict
            ``nrms`` per output, ``rms_of_swing`` per output (RMS error over the
            peak-to-peak swing of the data), and per learned element
            ``outside`` (fraction of samples whose port variable leaves the
            excited range) and ``range`` (the range it visits).
        """
        self._check_fitted("laws_")
        model = self.model_
        labels = list(self.outputs) if self.outputs is not None else list(model.outputs)
        data = measurements(t, u, y, model.inputs, labels, min_samples=3)
        res = self.predict(data.t, data.U)
        from ..data import step_signal, step_targets
        from ...common.schemes import get_scheme
        scheme = get_scheme(self.method)
        target = step_targets(data, scheme)
        out: Dict[str, Any] = {"nrms": {}, "rms_of_swing": {}, "outside": {}, "range": {}}
        for j, lab in enumerate(labels):
            pred = step_signal(res, lab, scheme)
            out["nrms"][lab] = nrms(pred, target[:, j])
            swing = float(np.ptp(target[:, j])) or 1.0
            out["rms_of_swing"][lab] = float(np.sqrt(np.mean((pred - target[:, j]) ** 2))) / swing
        for name, (comp, _) in self._learned.items():
            sig = np.asarray(res[port_signal(comp)])
            lo, hi = self.excited_[name]
            out["outside"][name] = float(np.mean((sig < lo) | (sig > hi)))
            out["range"][name] = (float(sig.min()), float(sig.max()))
        return out

    def report(self) -> str:
        """Estimates of the ordinary parameters, fit quality and, per learned law, its trust range."""
        self._check_fitted("laws_")
        lines = []
        for f in self._own:
            lo, hi = self.confidence_intervals_[f]
            lines.append(f"{f} = {self.params_[f]:.8g} (std {self.std_[f]:.3g}, "
                         f"{int(round(self.confidence * 100))}% interval [{lo:.6g}, {hi:.6g}])")
        lines.append("NRMS: " + ", ".join(f"{k} {v:.4g}" for k, v in self.nrms_.items())
                     + f"; {self.fit_time_:.2f} s, {self.n_iter_} iterations")
        lines += [c.report() for c in self.laws_.values()]
        return "\n".join(lines)

    def netlist_text(self, source: Any) -> str:
        """The netlist with each learned element's line replaced by its fitted line, followed by
        its ``.covariance`` card (the band and excited range, :mod:`phsym.netlist.covariance`).

        Parameters
        ----------
        source : str or pathlib.Path
            The netlist file the model was read from, or its text.
        """
        self._check_fitted("laws_")
        from pathlib import Path
        text = Path(source).read_text(encoding="utf-8") if isinstance(source, Path) or (
            isinstance(source, str) and "\n" not in source and Path(source).is_file()) else str(source)
        lines = text.splitlines()
        for name, curve in self.laws_.items():
            loc = self._learned[name][0].spec.location
            if loc is None or not 0 < loc.line <= len(lines) or name.split(".")[-1].lower() not in \
                    lines[loc.line - 1].lower() or "learn" not in lines[loc.line - 1].lower():
                raise IdentificationError(f"cannot find the line of {name} in the netlist text")
            lines[loc.line - 1] = curve.netlist_line() + "\n" + curve.covariance_card()
        refitted = {n.lower() for n in self.laws_}
        out, skip = [], False
        for line in lines:       # a refitted law's old card (and its continuation lines) goes
            words = line.split()
            if words and words[0].lower() == ".covariance":
                skip = len(words) > 1 and words[1].lower() in refitted
            elif not line.lstrip().startswith("+"):
                skip = False
            if not skip:
                out.append(line)
        return "\n".join(out) + "\n"


def port_signal(comp: Learnable) -> str:
    """The simulation signal a learnable element's law reads: ``v(NAME)``, ``i(NAME)`` or its state.

    Parameters
    ----------
    comp : Learnable
        The element.
    """
    if comp.choice("kind") == "convex":
        return f"x_{comp.name}"
    return f"v({comp.name})" if comp.choice("port") == "across" else f"i({comp.name})"
