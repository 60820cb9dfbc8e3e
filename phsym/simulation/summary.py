"""A :class:`ModelSummary`: the names of a model without the model (what a plan and a
warm-started result know of it: states, ports, probes, the signals a netlist saves)."""
from __future__ import annotations

from typing import List, Mapping, NamedTuple, Optional, Sequence

from ..errors import SignalError

__all__ = ["ModelSummary", "EAGER_SAVED"]


class _Probe(NamedTuple):
    label: str


EAGER_SAVED = 200      # saved signals whose probe vectors a plan makes before a run (more: when asked)


class ModelSummary:
    """The names of a model without the model: ``result.model`` after a warm start.

    Parameters
    ----------
    name : str
        Model name.
    states, inputs, outputs : list of str
        Names as in :class:`~phsym.model.Model`.
    probes : list of str
        Declared probe labels.
    path : str or None
        Netlist file (for :meth:`full_model`).
    active : list of str
        Branches of the controlled sources' outputs (their power is
        ``SimulationResult.P_active``).
    controls : list of str
        Parameters a run can drive with signals (``.param pos=0.5 control``).
    positive : mapping of str to str
        Inputs that must stay above zero (a temperature bath), name -> unit.
    saved : list of str
        Signals a result writes to files besides the probes (every node voltage and
        voltage-source current, or the deck's ``.save``/``.print`` selection).
    """

    def __init__(self, name: str, states: Sequence[str], inputs: Sequence[str], outputs: Sequence[str],
                 probes: Sequence[str], path: Optional[str], active: Sequence[str] = (),
                 controls: Sequence[str] = (), positive: Optional[Mapping[str, str]] = None,
                 saved: Sequence[str] = ()):
        self.name, self.states, self.inputs, self.outputs = name, list(states), list(inputs), list(outputs)
        self.probes = [_Probe(p) for p in probes]
        self.saved = [s for s in saved if s not in {p.label for p in self.probes}]
        self.path = path
        self.active = list(active)
        self.controls = list(controls)
        self.positive = dict(positive or {})
        self._model = None

    @classmethod
    def of(cls, model, active: Sequence[str], controls: Sequence[str]) -> "ModelSummary":
        """The names of a :class:`~phsym.model.Model` (its probes, and the signals its netlist saves).

        Parameters
        ----------
        model : Model
            The model.
        active : sequence of str
            Branches of its controlled sources' outputs.
        controls : sequence of str
            Its control parameters.
        """
        return cls(model.name, model.states, model.inputs, model.outputs, [p.label for p in model.probes],
                   model.netlist.file, active, controls, model.positive_inputs, model.netlist.outputs())

    def labels(self) -> List[str]:
        """The signals whose vectors a plan makes at once: the probes, then the saved signals unless
        they are many (:data:`EAGER_SAVED`; a large model's are made when a file asks for them)."""
        return [p.label for p in self.probes] + (self.saved if len(self.saved) <= EAGER_SAVED else [])

    def full_model(self):
        """The :class:`~phsym.model.Model` of the netlist (built on first call)."""
        if self._model is None:
            if self.path is None:
                raise SignalError(f"{self.name}: no netlist file to build the model from")
            from ..model import load       # sympy: only when a signal needs the model
            self._model = load(self.path)
        return self._model

    def __repr__(self) -> str:
        return f"<ModelSummary {self.name!r} (warm start of {self.path})>"
