""":class:`NumericPlanner`: a :class:`~phsym.simulation.Simulator`'s plans on the numeric engine.

What the simulator does with the symbolic structure for the generated loop
(:meth:`~phsym.simulation.Simulator.plan`, ``dc_solution``), this does with
the circuit data (:mod:`phsym.structure.circuit`): per parameter set a
:class:`~.step.StepSystem` and its :class:`~.loop.NumericLoop` inside the
same :class:`~phsym.simulation.plan.RunPlan`, the initial state from the
ICs, the DC operating point (:mod:`.operating`), signals as entries of the
recorded step vector (:mod:`.parts`).  Nothing here builds the Dirac
structure.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from ....common.parallel import paused_collection
from ....errors import SimulationInputError
from ...plan import RunPlan
from ...summary import ModelSummary
from .layout import STATE
from .loop import NumericLoop
from .operating import DCPoint, dc_point, frozen_start
from .parts import NumericParts
from .step import StepSystem

__all__ = ["NumericPlanner"]


class NumericPlanner:
    """Plans of one model on the numeric engine.

    Parameters
    ----------
    model : Model or None
        The model; ``None`` for a circuit described by numbers (``circuit`` and ``summary`` then
        say everything, and :meth:`plan` takes the values by name).
    fs : float
        Sample rate.
    scheme : str
        Canonical scheme name.
    stiff : str
        ``"backward_euler"`` or ``"scheme"`` (the resolved stiff rule).
    tol, maxit, flag, record_efforts
        As :class:`~phsym.simulation.Simulator`.
    circuit : CircuitData, optional
        The circuit (default the model's; :func:`phsym.structure.circuit.numeric.numeric_circuit`).
    summary : ModelSummary, optional
        The names (default the model's).
    """

    def __init__(self, model, fs: float, scheme: str, stiff: str, tol: float, maxit: int, flag: bool,
                 record_efforts, circuit=None, summary: Optional[ModelSummary] = None):
        self.circuit = model.circuit if circuit is None else circuit
        obstacles = self.circuit.control_obstacles()
        if obstacles:
            raise SimulationInputError("the numeric engine does not drive these controls: " + "; ".join(obstacles)
                                       + " (use engine='generated')")
        self.model = model
        self.fs, self.h = float(fs), 1.0 / float(fs)
        self.scheme, self.stiff = scheme, stiff
        self.tol, self.maxit, self.flag, self.record_efforts = tol, maxit, flag, record_efforts
        self.parts = NumericParts(self.circuit)
        self._summary: Optional[ModelSummary] = summary

    def plan(self, params: Optional[Mapping[str, float]] = None, values=None,
             by_name: Optional[Mapping[str, float]] = None) -> RunPlan:
        """The plan of a parameter set (see :meth:`phsym.simulation.Simulator.plan`).

        Parameters
        ----------
        params : mapping of str to float, optional
            Parameter overrides by name.
        values : mapping of sympy.Symbol to float, optional
            Their values, when already evaluated (empty for a circuit described by numbers).
        by_name : mapping of str to float, optional
            The values by parameter name (default: the model's).
        """
        model, c = self.model, self.circuit
        if values is None:
            values = model.parameter_values(params)
        if by_name is None:
            by_name = {name: float(values[sym]) for name, sym in model._symbol_items}
        x_ic, desc = self.initial(values)
        with paused_collection():       # a large circuit's system: many objects, little garbage
            S = StepSystem(c, values, self.scheme, self.stiff)
        stiff = self.stiff if c.stiff else None
        loop = NumericLoop(S, self.parts.scales(values), self.tol, self.maxit, self.flag, stiff=stiff)
        loop.starter = lambda x, u0: self.start(x, u0, values, loop)
        if self._summary is None:
            active = [c.branches[d.branch].name for d in c.dissipations if d.active]
            self._summary = ModelSummary.of(model, active, [str(s) for s in model.circuit.controls])     # probes and the signals the netlist saves
        n_nodes = S.L.n_nodes
        resolver = lambda label: self.parts.probe(label, n_nodes)      # noqa: E731
        return RunPlan(self._summary, self.fs, self.scheme, loop, self.parts.waveforms(values), x_ic, desc,
                       dict(by_name), self.record_efforts,
                       {lab: resolver(lab) for lab in self._summary.labels()}, resolver, model)

    def initial(self, values) -> Tuple[np.ndarray, str]:
        """``(x_ic, description)`` from the netlist's ICs."""
        if self.parts.no_ic:
            return np.zeros(self.circuit.n_x), "zero"
        x_ic, done = self.parts.initial(values)
        return x_ic, ("netlist ICs (" + ", ".join(done) + "), other states zero") if done else "zero"

    def start(self, x: np.ndarray, u0: np.ndarray, values, loop: NumericLoop) -> Dict[str, float]:
        """Newton's start of a run's first step from the state ``x``: the potentials and currents the
        state implies at the first inputs (:func:`~.operating.frozen_start`), and each carried effort
        (by the unknown names of :class:`~.layout.Layout`)."""
        with paused_collection():
            p = frozen_start(self.circuit, values, u0, x, loop.xs)
        if p is None:
            return {}
        return self._start_of(p)

    @staticmethod
    def _start_of(p) -> Dict[str, float]:
        L = p.system.L
        out = {n: float(v) for n, v, k in zip(L.names, p.z, L.kinds) if k != STATE}
        for i, m in L.effort_index.items():
            out[L.names[L.z_state(i)]] = float(p.efforts[m])
        return out

    def dc_solution(self, u0: np.ndarray, params: Optional[Mapping[str, float]] = None,
                    hold_ic: bool = True) -> Tuple[np.ndarray, Dict[str, float]]:
        """DC state and Newton's start (see :meth:`phsym.simulation.Simulator.dc_solution`).

        Parameters
        ----------
        u0 : ndarray
            Inputs.
        params : mapping of str to float, optional
            Parameter overrides by name.
        hold_ic : bool
            Hold the storages of a ``.ic`` card at their value.
        """
        p = self.dc_point(u0, self.model.parameter_values(params), hold_ic)
        return p.x, self._start_of(p)

    def dc_point(self, u0: np.ndarray, values, hold_ic: bool = True, guess: Optional[DCPoint] = None) -> DCPoint:
        """The DC point (:func:`~.operating.dc_point`) at the inputs ``u0``.

        Parameters
        ----------
        u0 : ndarray
            Inputs.
        values : mapping of sympy.Symbol to float
            Parameter values.
        hold_ic : bool
            Hold the storages of a ``.ic`` card at their value.
        guess : DCPoint, optional
            A point at the same parameter values and other inputs (a sweep's last): Newton starts
            there, on its equations.
        """
        x_ic, _ = self.initial(values)
        deck = getattr(getattr(self.model, "netlist", None), "deck", None)
        held_names = set(deck.held) if deck is not None and hold_ic else set()
        held = [i for s in self.circuit.storages if held_names & set(s.record.elements) for i in s.states]
        with paused_collection():
            return dc_point(self.circuit, values, u0, x_ic, self.parts.scales(values), held, guess=guess)
