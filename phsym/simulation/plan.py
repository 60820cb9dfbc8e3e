"""A :class:`RunPlan`: everything a run needs, in numbers, and the one run path.

A plan holds the names of a model, its input waveforms (shape and numeric
arguments), its initial state from the ICs, the parameter values, and a
compiled loop (:mod:`phsym.simulation.engines`) with its numbers.  The
:class:`~phsym.simulation.Simulator` builds plans from a model; a warm start
(:mod:`phsym.simulation.warm`) loads one from the cache.  Either way
:meth:`RunPlan.run` is the only code that turns inputs into a
:class:`~phsym.simulation.SimulationResult`, so a warm run gives exactly the
arrays of the symbolic run it replaces.  Nothing here imports sympy or scipy.
"""
from __future__ import annotations

import functools
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import warnings

import numpy as np

from ..errors import SignalError, SimulationError, SimulationInputError, SimulationWarning
from ..netlist.shapes import evaluate_shape
from .engines.arrays import RECORD_LIMIT, check_run
from .engines.generated import NewtonLoop
from .engines.linear.loops import DenseLinearLoop, SparseLinearLoop
from .result import SimulationResult
from .summary import ModelSummary
from .signals import check_align, check_positive, check_steps, grid_points, initial_state, input_array

__all__ = ["RunPlan", "FORMAT"]

#: Version of the plan's serialised layout (:meth:`RunPlan.to_arrays`).
FORMAT = 2

#: Loop classes by their ``KIND`` (the ``kind`` of their ``to_arrays``).
LOOPS = {cls.KIND: cls for cls in (NewtonLoop, DenseLinearLoop, SparseLinearLoop)}
LOOPS["newton"] = NewtonLoop        # the generated loop's former name


#: ``(key, U)`` of the last run driven by its netlist waveforms alone: the runs of a sweep
#: evaluate the same waveforms on the same grid (a copy costs a fraction of evaluating them).
_LAST_INPUTS: list = [None]


@functools.lru_cache(maxsize=None)
def _portstart():
    """:mod:`.portstart` (sympy: imported on first use, not on the warm-start path; once, not per plan)."""
    from . import portstart
    return portstart


class RunPlan:
    """Numbers of one simulator at one parameter set (see the module docstring).

    Parameters
    ----------
    summary : ModelSummary
        Names (states, inputs, outputs, declared probes) and the netlist path.
    fs : float
        Sample rate in Hz.
    scheme : str
        Canonical scheme name.
    loop : NewtonLoop, DenseLinearLoop or SparseLinearLoop
        The compiled loop with its numbers.
    waveforms : list
        Per input: ``None`` or ``(shape, numeric arguments)``.
    x_ic : ndarray
        Initial state from the netlist ICs (zero elsewhere).
    x_ic_desc : str
        What ``x_ic`` is.
    values : dict of str to float
        Parameter values by name.
    record_efforts : bool or "auto"
        Keep the effort vector of every step (needed for probes).
    probe_vectors : dict of str to ndarray, optional
        ``signal = efforts @ vector`` of declared (and already asked) labels.
    resolver : callable(label) -> ndarray, optional
        Vector of any other label (symbolic plans); warm plans build the
        model from ``summary.path`` on demand.
    model : object, optional
        What ``result.model`` is (the Model or LinearPHS; default the summary).
    """

    def __init__(self, summary: ModelSummary, fs: float, scheme: str, loop, waveforms: list,
                 x_ic: np.ndarray, x_ic_desc: str, values: Dict[str, float], record_efforts=True,
                 probe_vectors: Optional[Dict[str, np.ndarray]] = None,
                 resolver: Optional[Callable[[str], np.ndarray]] = None, model=None):
        self.summary = summary
        self.fs = float(fs)
        self.h = 1.0 / self.fs
        self.scheme = scheme
        self.loop = loop
        self.waveforms = waveforms
        self.x_ic = np.asarray(x_ic, dtype=float)
        self.x_ic_desc = x_ic_desc
        self.values = dict(values)
        self.record_efforts = record_efforts
        self.vectors: Dict[str, np.ndarray] = dict(probe_vectors or {})
        self.resolver = resolver
        self.model = summary if model is None else model
        self.port_start_needed: Optional[bool] = None
        self.x_start: Optional[Dict[str, float]] = None      # Newton's first start from x_ic (a stored DC start)

    # ----------------------------------------------------------------- inputs
    def _waveform(self, i: int, t: np.ndarray) -> Optional[np.ndarray]:
        wf = self.waveforms[i]
        if wf is None:
            return None
        if isinstance(wf, Exception):      # an invalid netlist waveform, reported when used
            raise wf
        return evaluate_shape(wf[0], np.asarray(wf[1], dtype=float), t)

    def inputs(self, u=None, duration: Optional[float] = None, align: str = "grid") -> np.ndarray:
        """The input rows of a run: ``(N + 1, n_u)``.

        Parameters
        ----------
        u : array_like, dict or None
            See :meth:`run`.
        duration : float, optional
            Simulated time in seconds.
        align : {"grid", "samples"}
            ``"grid"``: rows at ``t_k = k h``; ``"samples"``: the first
            sample held one step before ``t = 0``, then the samples at
            ``t_k = k h`` (see :func:`~phsym.simulation.signals.check_align`).
        """
        key = None
        # reuse the last waveform-driven grid (a sweep's runs share it); an invalid duration is
        # left to grid_points, which names the error
        plain = isinstance(duration, (int, float, np.integer, np.floating)) and not isinstance(duration, bool)
        if u is None and plain and np.isfinite(duration) and not any(isinstance(w, Exception) for w in self.waveforms):
            key = (tuple(None if w is None else (w[0], tuple(np.asarray(w[1], float).tolist()))
                         for w in self.waveforms), float(duration), self.fs, align)
            hit = _LAST_INPUTS[0]
            if hit is not None and hit[0] == key:
                return hit[1].copy()
        if check_align(align) == "grid":
            U = input_array(self.summary.inputs, u, grid_points(duration, self.fs), self.h, self._waveform)
        else:
            n = None if duration is None else grid_points(duration, self.fs) - 1
            S = input_array(self.summary.inputs, u, n, self.h, self._waveform)
            U = np.vstack([S[:1], S])
        check_positive(U, self.summary.inputs, self.summary.positive, self.h)
        if key is not None:
            _LAST_INPUTS[0] = (key, U.copy())
        return U

    def control_rows(self, controls, n_points: int, align: str = "grid") -> Optional[np.ndarray]:
        """The control rows of a run, ``(n_points, n_c)``, or ``None`` for a plan without controls.

        Parameters
        ----------
        controls : dict or None
            Control name -> array of the run's samples, scalar or
            callable(t); controls not given hold their parameter value.
        n_points : int
            Rows of the run's input array.
        align : {"grid", "samples"}
            As for the inputs: ``"samples"`` arrays hold one value per
            output sample, the first held for the step before ``t = 0``.
        """
        names = self.summary.controls
        if not names:
            if controls:
                raise SimulationInputError(
                    f"{self.summary.name} has no control parameters to drive ({', '.join(map(str, controls))}): "
                    "mark one on its card, .param pos=0.5 control, and run the Newton engine")
            return None
        if controls is not None and not isinstance(controls, Mapping):
            raise SimulationInputError(f"controls= takes a dict name -> signal (controls: {', '.join(names)})")
        held = lambda i, t: np.full(t.shape, self.values[names[i]])      # noqa: E731
        if check_align(align) == "grid":
            return input_array(names, controls, n_points, self.h, held, what="control")
        C = input_array(names, controls, n_points - 1, self.h, held, what="control")
        return np.vstack([C[:1], C])

    def stream(self, x0=None, signals: Optional[Sequence[str]] = None, dc=None, check=None):
        """A :class:`~phsym.simulation.stream.Stream` of this plan (block processing).

        Parameters
        ----------
        x0 : None, array_like or dict
            Initial state (see :meth:`run`).
        signals : sequence of str, optional
            Labels returned by ``process`` (default: the first probe, else the outputs).
        dc : callable(u0) -> ndarray, optional
            Initial state from the first input sample (a DC operating point).
        check : callable(name, value), optional
            Raises for a control value outside its elements' domains.
        """
        from .stream import Stream
        return Stream(self, x0, signals, dc, check)

    def probe_vector(self, label: str) -> np.ndarray:
        """Vector ``c`` with ``signal = efforts @ c`` for a signal label.

        Parameters
        ----------
        label : str
            ``v(out)``, ``v(a,b)``, ``i(R1)``, ``v(R1)`` or ``y(V1)``.
        """
        if label not in self.vectors:
            if self.resolver is None:
                if self.summary.path is None:
                    raise SignalError(f"{label!r}: {self.summary.name} has no netlist to resolve signals from")
                model = self.summary.full_model()
                if getattr(self.loop, "KIND", "") == "numeric":     # its efforts: [potentials, currents, inputs]
                    from .engines.numeric.parts import NumericParts
                    parts, n_nodes = NumericParts(model.circuit), self.loop.n_nodes
                    self.resolver = lambda lab: parts.probe(lab, n_nodes)
                else:
                    from .probes import probe_vector      # sympy
                    values = model.parameter_values(self.values)
                    self.resolver = lambda lab: probe_vector(model.structure, lab, values,
                                                             model.structure.J_numeric(values))
            self.vectors[label] = self.resolver(label)
        return self.vectors[label]

    # -------------------------------------------------------------------- run
    def _check_memory(self, u, duration) -> None:
        """Refuse a run that would not fit before its inputs are sampled (see :func:`check_run`)."""
        try:
            n = grid_points(duration, self.fs) if u is None or callable(u) or isinstance(u, dict) else None
        except SimulationInputError:
            return          # self.inputs says what is wrong
        if n is None:
            n = len(u) if hasattr(u, "__len__") else 0
        s = self.summary
        check_run(max(n - 1, 0), len(s.states), len(s.inputs), len(s.inputs) + len(getattr(s, "controls", ()) or ()))

    def run(self, u=None, duration: Optional[float] = None, x0=None, progress=None, chunk: int = 0,
            x0_desc: Optional[str] = None, info: Optional[dict] = None, align: str = "grid",
            start: Optional[Mapping[str, float]] = None, controls=None) -> SimulationResult:
        """Simulate (see :meth:`phsym.simulation.Simulator.run`).

        Parameters
        ----------
        u : array (N+1, n_u), dict, or None
            Inputs at ``t_k = k / fs`` in input order; or a dict name -> array,
            scalar or callable(t); inputs not given follow their netlist
            waveform (or zero).
        duration : float, optional
            Simulated time; ``N = round(duration * fs)`` steps.
        x0 : None, array_like or dict
            Initial state (default: netlist ICs, zero elsewhere); a dict by
            state name changes some states of the ICs.
        progress : callable(done, total), optional
            Called after each chunk of steps.
        chunk : int
            Steps per compiled call.
        x0_desc : str, optional
            Description of an ``x0`` array (e.g. a DC operating point).
        info : dict, optional
            Extra entries for ``result.info``.
        align : {"grid", "samples"}
            How input arrays map to steps (see
            :func:`~phsym.simulation.signals.check_align`); with
            ``"samples"`` the grid starts at ``t = -h`` and step ``k`` ends
            at input sample ``k``.
        start : mapping of str to float, optional
            Newton's start for the first step: port variables and
            multipliers by name (a DC solution's), the others from zero.
        controls : dict, optional
            Signals of the control parameters by name (see :meth:`control_rows`).
        """
        self._check_memory(u, duration)
        U = self.inputs(u, duration, align)
        N = check_steps(U, self.fs, duration)
        C = self.control_rows(controls, U.shape[0], align)
        if C is not None:
            U = np.hstack([U, C])
        lead = 1 if align == "samples" else 0
        names = self.summary.states
        x, desc = initial_state(self.x_ic, self.x_ic_desc, names, x0)
        n_e = getattr(self.loop, "n_e", 0)
        rec = self.record_efforts
        rec = bool(N * n_e <= RECORD_LIMIT if rec == "auto" else rec)
        start = self.x_start if start is None and x0 is None else start     # a stored DC start's Newton start
        if start is None:
            start = self.newton_start(x, U[0, :len(self.summary.inputs)])
        try:
            A, wall = self.loop.run(x, U, self.h, rec, progress, chunk, carry=self.loop.carry(start) if start else None)
        except SimulationError as exc:
            if not lead or isinstance(exc, SimulationInputError) or exc.step is None:
                raise
            raise SimulationError(exc.message, exc.step, exc.step * self.h, exc.quantity) from None
        out = {"h": self.h, "fs": self.fs, "scheme": self.scheme, "engine": self.loop.KIND,
               "x0": x0_desc or desc, "values": dict(self.values), "key": self.loop.key,
               "compiled": self.loop.compiled, "wall_time": wall, "compile_time": self.loop.compile_time,
               "failed_steps": int(np.count_nonzero(A.FL)) if not self.loop.KIND.startswith("linear") else 0,
               "align": align, "newton_start": dict(start) if start else None}
        if self.summary.active:
            out["active"] = list(self.summary.active)
        if getattr(self.loop, "stiff", None):
            out["stiff"] = self.loop.stiff
        sub = dict(getattr(self.loop, "subdivided", {}))
        if sub:
            out["subdivided"] = sub
            first = ", ".join(f"{k} (t = {(k + 1 - lead) * self.h:.6g} s, {n} sub-steps)" for k, n in list(sub.items())[:5])
            warnings.warn(SimulationWarning(
                f"{self.summary.name}: Newton needed sub-steps on {len(sub)} step(s): {first}"
                + (" ..." if len(sub) > 5 else "") + "; result.info['subdivided'] lists them"), stacklevel=3)
        out.update(info or {})
        h = self.h
        grid = lambda: (np.arange(N + 1) - lead) * h      # noqa: E731  (built when asked for: most runs never do)
        n_u = len(self.summary.inputs)
        ctl = {name: U[:, n_u + j] for j, name in enumerate(self.summary.controls)} if C is not None else None
        return SimulationResult(self.model, self.summary, grid, A.X, U[:, :n_u] if C is not None else U, A.Y, A.Hh,
                                A.Pd, A.Ps, A.IT, A.FL, A.E if rec else None, self.probe_vector, out,
                                controls=ctl, P_control=A.Pc if C is not None else None,
                                P_num=A.Pn if getattr(self.loop, "numerical", False) else None)

    # ---------------------------------------------------------- serialisation
    def _structure(self, load: bool):
        """The model's structure; from the netlist file of a stored plan only when ``load``."""
        if hasattr(self.model, "structure"):
            return self.model.structure
        return self.summary.full_model().structure if load and self.summary.path is not None else None

    def needs_port_start(self) -> bool:
        """Whether Newton's first step needs the port variables the initial state implies
        (a law singular at zero port variables: see :mod:`.portstart`)."""
        if self.port_start_needed is None:
            if getattr(self.loop, "KIND", "") == "numeric":     # its start: the planner's (x_start when stored)
                self.port_start_needed = False
                return False
            S = self._structure(False)
            if S is None or not getattr(self.loop, "unknowns", None):
                return False
            self.port_start_needed = _portstart().singular_at_zero(S, self.values)
        return self.port_start_needed

    def newton_start(self, x: np.ndarray, u0: np.ndarray) -> Optional[Dict[str, float]]:
        """Newton's start of a run's first step from the state ``x`` at the inputs ``u0``, by unknown name
        (``None``: from zero): the numeric engine's potentials and currents that ``x`` implies, or the
        port variables of laws singular at zero (:mod:`.portstart`) for the generated loop.

        Parameters
        ----------
        x : ndarray
            The initial state.
        u0 : ndarray
            The first inputs.
        """
        if getattr(self.loop, "starter", None) is not None:
            return self.loop.starter(x, u0)
        if getattr(self.loop, "unknowns", None):
            return self._port_start(x, u0)
        return None

    def _port_start(self, x: np.ndarray, u0: np.ndarray) -> Optional[Dict[str, float]]:
        if not self.needs_port_start():
            return None
        return _portstart().port_start(self._structure(True), self.values, x, u0)

    @property
    def serialisable(self) -> bool:
        """Whether :meth:`to_arrays` describes the plan completely (a loop that can be stored, no invalid
        waveform)."""
        return hasattr(self.loop, "to_arrays") and not any(isinstance(w, Exception) for w in self.waveforms)

    def to_arrays(self) -> Tuple[Dict[str, object], Dict[str, np.ndarray]]:
        """``(meta, arrays)``: a JSON-able description and named arrays (see :meth:`from_arrays`)."""
        if not self.serialisable:
            raise SimulationInputError(f"{self.summary.name}: a netlist waveform is invalid; nothing to store")
        loop_meta, loop_arrays = self.loop.to_arrays()
        s = self.summary
        meta = {"format": FORMAT, "name": s.name, "path": s.path, "active": s.active, "controls": s.controls,
                "positive": s.positive,
                "states": s.states,
                "inputs": s.inputs,
                "outputs": s.outputs, "probes": [p.label for p in s.probes], "saved": s.saved, "fs": self.fs,
                "scheme": self.scheme, "x_ic_desc": self.x_ic_desc, "values": self.values,
                "record_efforts": self.record_efforts, "loop": loop_meta, "port_start": self.needs_port_start(),
                "x_start": {k: float(v) for k, v in (self.x_start or {}).items()},
                "waveforms": [None if w is None else [w[0], np.asarray(w[1], float).tolist()]
                              for w in self.waveforms]}
        arrays = {"x_ic": self.x_ic, **{f"loop_{k}": v for k, v in loop_arrays.items()}}
        # the probes, and the saved signals whose vectors were made (a large model's are made when asked)
        meta["vectors"] = [p.label for p in s.probes] + [k for k in s.saved if k in self.vectors]
        for i, p in enumerate(meta["vectors"]):
            arrays[f"probe_{i}"] = self.probe_vector(p)
        return meta, arrays

    @classmethod
    def from_arrays(cls, meta: Dict[str, object], arrays: Dict[str, np.ndarray]) -> "RunPlan":
        """The plan described by :meth:`to_arrays` (the loop's module loads on first run).

        Parameters
        ----------
        meta : dict
            JSON-able description.
        arrays : dict of str to ndarray
            Named arrays.
        """
        if meta.get("format") != FORMAT:
            raise SimulationInputError(f"plan format {meta.get('format')!r}, expected {FORMAT}")
        loop_meta = meta["loop"]
        if loop_meta["kind"] == "numeric":      # imported when a snapshot needs it (numba's engine)
            from .engines.numeric.loop import NumericLoop
            LOOPS.setdefault(NumericLoop.KIND, NumericLoop)
        loop = LOOPS[loop_meta["kind"]].from_arrays(
            loop_meta, {k[5:]: v for k, v in arrays.items() if k.startswith("loop_")})
        probes: List[str] = list(meta["probes"])
        summary = ModelSummary(meta["name"], meta["states"], meta["inputs"], meta["outputs"], probes, meta["path"],
                               meta.get("active", ()), meta.get("controls", ()), meta.get("positive"),
                               meta.get("saved", ()))
        probes = list(meta.get("vectors", probes))
        waves = [None if w is None else (w[0], np.asarray(w[1], float)) for w in meta["waveforms"]]
        plan = cls(summary, meta["fs"], meta["scheme"], loop, waves, arrays["x_ic"], meta["x_ic_desc"],
                   meta["values"], meta["record_efforts"],
                   {p: arrays[f"probe_{i}"] for i, p in enumerate(probes)})
        plan.port_start_needed = bool(meta.get("port_start", False))
        plan.x_start = dict(meta.get("x_start") or {}) or None
        return plan
