"""The :class:`Simulator`: structure-preserving time stepping of a model.

A simulator turns a :class:`~phsym.model.Model` (or a numeric
:class:`~phsym.structure.linear.LinearPHS`) and a parameter set into a
:class:`~phsym.simulation.plan.RunPlan` (numbers and a compiled loop) and
runs it; parameter changes build a new plan, never new code.
"""
from __future__ import annotations

import os
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..codegen import interpret
from ..codegen.newton.module import generate
from ..common.bounded import CODEGEN_TIMES, TIMEOUT_ENV, deadline, timeout
from ..common.schemes import LINEAR_SCHEMES, NEWTON_SCHEMES, auto_method, get_scheme, stiff_rule
from ..errors import PhsymError, SimulationError, SimulationInputError
from ..netlist.params import expand_derived
from ..structure.linear import LinearPHS
from .initial import dc_solution, initial_from_ic, state_scales
from .engines.choice import (ENGINE_ENV, GENERATED_LIMIT, check_generated_budget, choose, fingerprint, mark_ready,
                             numeric_ready, start_generated_build, start_numeric_warmup)
from .engines.generated import NewtonLoop
from .engines.linear.plans import LinearPlanning
from .engines.numeric.planner import NumericPlanner
from .plan import RunPlan
from .summary import ModelSummary
from .plancache import FixedParts
from .result import SimulationResult
from .signals import sample_rate
from .stream import Stream

__all__ = ["Simulator", "NEWTON_SCHEMES", "LINEAR_SCHEMES"]



class Simulator(LinearPlanning):
    """Compiled structure-preserving simulator of a model at a fixed rate.

    Parameters
    ----------
    model : Model or LinearPHS
        A model built from a netlist, or a numeric linear port-Hamiltonian
        system (descriptor systems included).
    fs : float
        Sample rate [Hz]; the step is ``h = 1 / fs``.
    method : str
        ``"auto"`` (midpoint for linear models, backward Euler for index-2
        DAEs, discrete gradient otherwise) or a scheme of
        :mod:`phsym.common.schemes`: ``"discrete_gradient"``, ``"midpoint"``,
        ``"backward_euler"``, or ``"explicit_euler"`` (linear engine only; not passive).
    engine : str
        ``"auto"`` (see :mod:`phsym.simulation.engines.choice`: the generated loop where it is
        compiled and wins, the linear fast path for small linear models, the numeric engine
        otherwise), ``"generated"`` (the unrolled Newton loop generated for this circuit; also
        ``"newton"``), ``"numeric"`` (one compiled engine for every circuit: law kernels per law
        form, sparse Newton) or ``"linear"``.
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
        Linear path: ``"auto"`` (dense up to
        :data:`~phsym.simulation.engines.linear.engine.DENSE_LIMIT` unknowns), ``"dense"`` or ``"sparse"``.
    stiff : str
        How junction charges (stiff storages) step: ``"backward_euler"`` (gradient at the step's end:
        no Nyquist ringing; the energy this dissipates is :attr:`SimulationResult.P_num`, in
        ``P_diss``), ``"scheme"`` (as ``method``) or ``"auto"`` (default: the first for steps of 1 us
        or longer; :func:`phsym.common.schemes.stiff_rule`).
    """

    def __init__(self, model, fs: float, method: str = "auto", *, engine: str = "auto", tol: float = 1e-12,
                 maxit: int = 200, on_error: str = "raise", record_efforts: Union[bool, str] = "auto",
                 linear_solver: str = "auto", stiff: str = "auto"):
        self.model = model
        self.fs = sample_rate(fs)
        self.h = 1.0 / self.fs
        numeric = isinstance(model, LinearPHS)
        if not numeric and not hasattr(type(model), "structure"):
            raise SimulationInputError(f"cannot simulate a {type(model).__name__}: give a Model (phsym.load of a "
                                       "netlist) or a LinearPHS")
        pending = [] if numeric else [el.name for el in model.netlist.elements if el.law is not None and el.law.learn]
        if pending:
            raise SimulationInputError(f"the law of {', '.join(pending)} is to be learned (=learn): learn it "
                                       "(EffortGP.from_model, DissipativeLawGP or phsym learn) and write the "
                                       "learned law (H={...}, or .table NAME law.npz and H={NAME(q)})")
        linear = numeric or model.is_linear
        auto = False        # engine="auto" left to the rule (a forced engine never moves a snapshot)
        if isinstance(method, str) and method.strip().lower() == "auto":
            method = auto_method(not numeric and model.index2, linear)
        self.stiff = stiff_rule(stiff, self.h)      # "backward_euler" or "scheme" at this rate
        if numeric:
            if str(engine).lower() not in ("auto", "linear"):
                raise SimulationInputError("a LinearPHS is simulated by the linear engine")
            engine = "linear"
        else:
            scheme = get_scheme(method, LINEAR_SCHEMES).name
            asked = engine
            auto = str(asked).strip().lower() == "auto" and not os.environ.get(ENGINE_ENV, "").strip()
            engine = choose(model, engine, scheme, self.stiff)
            if engine == "generated" and str(asked).strip().lower() == "auto" and not numeric_ready():
                start_numeric_warmup()      # later circuits then find the engine compiled
        if engine == "linear" and not linear:
            raise SimulationInputError("the linear engine needs quadratic H and linear dissipation")
        self.scheme = get_scheme(method, LINEAR_SCHEMES if engine == "linear" else NEWTON_SCHEMES).name
        if on_error not in ("raise", "flag"):
            raise SimulationInputError("on_error must be 'raise' or 'flag'")
        self.engine = engine
        self.tol, self.maxit, self.on_error = float(tol), int(maxit), on_error
        if not (0 < self.tol < 1) or self.maxit < 1:
            raise SimulationInputError(f"Newton needs 0 < tol < 1 and maxit >= 1 (got tol={tol}, maxit={maxit})")
        if record_efforts not in (True, False, "auto"):
            raise SimulationInputError("record_efforts must be True, False or 'auto'")
        self.record_efforts = record_efforts
        if linear_solver not in ("auto", "dense", "sparse"):
            raise SimulationInputError("linear_solver must be auto, dense or sparse")
        self.linear_solver = linear_solver
        self._gen = None
        #: Fingerprint of the generated loop being built in the background for this auto-numeric run
        #: (:func:`~.engines.choice.fingerprint`): the warm-start snapshot moves onto it (:mod:`.warm`).
        self.upgrade: Optional[str] = None
        self._numeric = None
        self._ready = False
        if engine == "generated":
            check_generated_budget(model)
            controls = model.controls
            params = model.netlist.parameters
            symbols = [p.symbol for p in params.values()]
            ctl = [params[c].symbol for c in controls]
            derived = {d: e for d, e in expand_derived(params).items() if e.free_symbols & set(ctl)}
            def slow(seconds: float) -> SimulationError:
                return SimulationError(f"generating the simulation code of this model took more than {seconds:g} s "
                                       "(the laws' discrete gradients grow with their degree); give the laws in a "
                                       f"simpler form (lower powers, fewer terms), or raise {TIMEOUT_ENV} "
                                       f"(codegen gets {CODEGEN_TIMES}x its value)")
            with deadline(slow, CODEGEN_TIMES * timeout()):
                self._gen = generate(model.structure, symbols, self.scheme, source=model.netlist.file or model.name,
                                     controls=ctl, derived=derived, stiff=self.stiff)
        elif engine == "numeric":
            self._numeric = NumericPlanner(model, self.fs, self.scheme, self.stiff, self.tol, self.maxit,
                                           self.on_error == "flag", record_efforts)
            if not linear and model.size["branches"] <= GENERATED_LIMIT:    # the next run gets the unrolled loop
                if start_generated_build(model.netlist.file, self.scheme, stiff, self.fs) and auto:
                    self.upgrade = fingerprint(model, self.scheme, self.stiff)
        self._plans: Dict[tuple, RunPlan] = {}
        self._fixed: Optional[FixedParts] = None
        self._summary: Optional[ModelSummary] = None
        self._tpl = False       # the linear template, looked up on first use

    @property
    def key(self) -> Optional[str]:
        """Cache key of the generated module (``None`` on the linear path)."""
        return self._gen.key if self._gen else None

    # -------------------------------------------------------------- plans
    def plan(self, params: Optional[Mapping[str, float]] = None) -> RunPlan:
        """The numbers of a run at a parameter set (built once per set).

        Parameters
        ----------
        params : mapping of str to float, optional
            Parameter overrides by name.
        """
        pkey = tuple(sorted((str(k).lower(), float(v)) for k, v in (params or {}).items())) \
            if not isinstance(self.model, LinearPHS) else ()
        plan = self._plans.get(pkey)
        if plan is None:        # a local, not a second lookup: sweeps build plans on several threads
            build = self._numeric_plan if isinstance(self.model, LinearPHS) else self._model_plan
            plan = build(params)
            self._plans = {pkey: plan}        # keep the last set only (memory)
        return plan

    def _fixed_parts(self) -> FixedParts:
        """The parameter-free parts of this model's plans (built once)."""
        if self._fixed is None:
            self._fixed = FixedParts(self.model.structure)
        return self._fixed

    def _model_plan(self, params, values=None, loop=None) -> RunPlan:
        if self._numeric is not None:
            return self._numeric.plan(params, values)
        model, S = self.model, self.model.structure
        if values is None:
            values = model.parameter_values(params)
        by_name = {name: float(values[sym]) for name, sym in model._symbol_items}
        x_ic, desc, waves = self.set_parts(values)
        fixed = self._fixed_parts()
        Jn = fixed.J(values)
        flag = self.on_error == "flag"
        if loop is not None:
            pass
        elif self.engine == "generated":
            g = self._gen
            p = np.array([values[s] for s in g.parameters], dtype=float)
            loop = NewtonLoop(g.key, g.n_v, g.n_u, g.n_e, model.states, g.unknowns, p, state_scales(S, values),
                              self.tol, self.maxit, flag, module=g.module, numerical=g.numerical,
                              stiff=g.stiff)
        else:
            loop = self._linear_loop(values, Jn, fixed.J_constant)
        if self._summary is None:       # names only: the same for every parameter set
            self._summary = ModelSummary.of(model, [S.branches[d.branch].name for d in S.dissipative if d.active],
                                            self._gen.controls if self._gen else ())
        summary = self._summary
        resolver = lambda label: fixed.probe(label, values, Jn)      # noqa: E731
        return RunPlan(summary, self.fs, self.scheme, loop, waves, x_ic, desc, by_name, self.record_efforts,
                     {lab: resolver(lab) for lab in summary.labels()}, resolver, model)

    def set_parts(self, values) -> Tuple[np.ndarray, str, list]:
        """``(x_ic, x_ic_desc, waveforms)`` of a plan at the parameter values ``values`` (by symbol):
        what :meth:`plan` and a sweep's batch (:mod:`.sweeps.sets`) read of a set besides its loop.

        Parameters
        ----------
        values : mapping of sympy.Symbol to float
            Parameter values (:meth:`~phsym.model.Model.parameter_values`).
        """
        fixed = self._fixed_parts()
        if fixed.no_ic:
            return np.zeros(self.model.structure.n_x), "zero", fixed.waveforms(values)
        x_ic, done = initial_from_ic(self.model.structure, values)
        desc = ("netlist ICs (" + ", ".join(done) + "), other states zero") if done else "zero"
        return x_ic, desc, fixed.waveforms(values)

    # --------------------------------------------------------------- run
    def run(self, u=None, duration: Optional[float] = None, x0=None, params: Optional[Mapping[str, float]] = None,
            progress: Optional[Callable[[int, int], None]] = None, chunk: int = 0,
            align: str = "grid", controls: Optional[Mapping[str, object]] = None) -> SimulationResult:
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
            Initial state (default: netlist ICs, zero elsewhere); ``"dc"`` is
            the DC operating point for the first input sample (storages set
            by a ``.ic`` card held at their value, as in SPICE).
        params : dict, optional
            Parameter overrides by name (no recompilation).
        progress : callable(done, total), optional
            Called after each chunk.
        chunk : int
            Steps per compiled call (0: all at once, or 1/50 of the run when
            ``progress`` is given).
        align : {"grid", "samples"}
            ``"grid"``: ``u`` holds the ``N + 1`` grid samples of ``N``
            steps.  ``"samples"``: ``u`` holds ``N`` samples of a sampled
            signal (a WAV file): one step per sample, output sample ``k`` is
            the step ending at input sample ``k``, the grid starts at
            ``t = -1/fs`` with the first sample held (see
            :func:`~phsym.simulation.signals.check_align`).
        controls : dict, optional
            Signals driving the parameters marked ``control`` in the
            netlist (``.param pos=0.5 control``), by name: an array of the
            run's samples (aligned as ``u``), a scalar or a callable(t).
            Controls not given hold their value (``params`` or the
            netlist's).  No code is regenerated.  Each step holds a control
            at its step value (the scheme's input rule, e.g. the midpoint
            average); :attr:`SimulationResult.P_control` is the work a control
            entering H does on the storages, so the energy balance stays
            exact (see docs/simulation.md, "Controls").

        Returns
        -------
        SimulationResult
        """
        plan = self.plan(params)
        if controls and self.engine == "linear" and not isinstance(self.model, LinearPHS) and self.model.controls:
            raise SimulationInputError("controls change the loop's numbers at every step: the linear engine "
                                       "cannot follow them; use engine='auto' or 'generated'")
        if controls:
            controls = self._checked_controls(plan, controls, u, duration, align, params)
        desc, start = None, None
        if isinstance(x0, str) and x0.strip().lower() == "dc":
            at = dict(params or {})     # the operating point at the controls' first values
            if controls:
                C = plan.control_rows(controls, 1 if align == "grid" else 2, align)
                at.update(zip(plan.summary.controls, C[0].tolist()))
            x0, start = self.dc_solution(plan.inputs(u, duration, align)[0], at)
            desc = "dc operating point for the first input sample"
        res = plan.run(u, duration, x0, progress, chunk, x0_desc=desc, align=align, start=start, controls=controls)
        if self._gen is not None and not self._ready and not interpret.enabled():
            # compiled (not run as Python under PHSYM_JIT): auto may take it next time
            mark_ready(self.model, self.scheme, self.stiff, self._gen.key)
            self._ready = True
        return res

    def _checked_controls(self, plan: RunPlan, controls, u, duration, align: str, params) -> Dict[str, np.ndarray]:
        """The control signals as arrays of the run's samples, after checking the element
        values at each control's lowest and highest sample (a potentiometer's
        position in [0, 1], a capacitance > 0), the other controls held."""
        n_points = plan.inputs(u, duration, align).shape[0]
        C = plan.control_rows(controls, n_points, align)
        if C is None:
            return controls
        names = plan.summary.controls
        for j, name in enumerate(names):
            for v in (float(C[:, j].min()), float(C[:, j].max())):
                self._check_control(name, v, params)
        rows = C if align == "grid" else C[1:]
        return {name: rows[:, j] for j, name in enumerate(names)}

    def _check_control(self, name: str, value: float, params) -> None:
        """A :class:`SimulationInputError` when ``name = value`` puts an element outside its domain."""
        try:
            self.model.parameter_values({**(params or {}), name: value})
        except PhsymError as exc:
            raise SimulationInputError(f"control {name} = {value:g}: {exc.message}") from None

    def stream(self, x0=None, params: Optional[Mapping[str, float]] = None,
               signals: Optional[Sequence[str]] = None) -> Stream:
        """Block processing: ``s = sim.stream(); y = s.process(block)``.

        The stream keeps the state (and Newton's history) between blocks,
        so its samples are exactly those of one run with
        ``align="samples"`` over the concatenated blocks.

        Parameters
        ----------
        x0 : None, array, dict or "dc"
            Initial state; ``"dc"``: the DC operating point for the first
            sample of the first block.
        params : dict, optional
            Parameter overrides by name.
        signals : sequence of str, optional
            Labels ``process`` returns (default: the first probe, else the outputs).

        Returns
        -------
        Stream
        """
        plan = self.plan(params)
        if isinstance(x0, str) and x0.strip().lower() == "dc":
            return plan.stream(None, signals, dc=lambda u0: self.dc_solution(u0, params),
                               check=lambda name, v: self._check_control(name, v, params))
        return plan.stream(x0, signals, check=lambda name, v: self._check_control(name, v, params))

    def dc_state(self, u0: np.ndarray, params: Optional[Mapping[str, float]] = None) -> np.ndarray:
        """State of the DC operating point for the constant input ``u0``.

        Parameters
        ----------
        u0 : ndarray
            Inputs.
        params : mapping of str to float, optional
            Parameter overrides by name.
        """
        if isinstance(self.model, LinearPHS):
            lin = self.model
            xi, *_ = np.linalg.lstsq(lin.A, -lin.B @ np.asarray(u0, float), rcond=None)
            if np.linalg.norm(lin.A @ xi + lin.B @ u0) > 1e-9 * max(1.0, np.linalg.norm(lin.B @ u0)):
                raise SimulationError("no DC operating point (the DC problem has no solution)", step=0, time=0.0)
            self.plan()
            return xi[self._differential]
        return self.dc_solution(u0, params)[0]

    def dc_solution(self, u0: np.ndarray, params: Optional[Mapping[str, float]] = None,
                    hold_ic: bool = True) -> Tuple[np.ndarray, Optional[Dict[str, float]]]:
        """DC state, and the port variables and multipliers there by name
        (Newton's start for the first step; ``None`` for linear models).

        Parameters
        ----------
        u0 : ndarray
            Inputs.
        params : mapping of str to float, optional
            Parameter overrides by name.
        hold_ic : bool
            Hold the storages of a ``.ic`` card at their value (a
            transient's DC start, as SPICE); ``False`` for ``.op``.
        """
        if isinstance(self.model, LinearPHS):
            return self.dc_state(u0, params), None
        if self._numeric is not None:
            return self._numeric.dc_solution(u0, params, hold_ic)
        values = self.model.parameter_values(params)
        S = self.model.structure
        x_ic, _ = initial_from_ic(S, values)
        deck = getattr(self.model.netlist, "deck", None)
        held_names = set(deck.held) if deck is not None and hold_ic else set()
        index = {s: i for i, s in enumerate(S.states)}
        held = [index[s] for st in S.storages if held_names & set(st.elements) for s in st.states]
        x, w, lam = dc_solution(S, values, u0, x_ic, held)
        names = [v.name for v in S.variables[S.n_x:S.n_x + S.n_w + S.n_lambda]]
        return x, dict(zip(names, np.concatenate([w, lam])))
