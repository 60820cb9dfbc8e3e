"""DC sweeps (SPICE's ``.dc``): operating points over one or two swept quantities.

``.dc VIN 0 5 0.1`` steps a source's DC value, ``.dc VDS 0 10 .5 VGS 0 5 1``
nests a second sweep outside the first (the inner one repeats for each
outer value), a ``.param`` name sweeps that parameter and ``TEMP`` the
temperature (the deck read again at each, as ``.temp`` would set it).  Each
point starts Newton from the last one (continuation); the signals are read
at each point from the effort vector (:mod:`.point`).  Results are a table
with SPICE's vector names: the swept quantities, then ``v(node)`` and
``i(vsource)`` columns.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np

from ...errors import SignalError, SimulationError

__all__ = ["DcResult", "dc_sweep"]


@dataclass
class DcResult:
    """A DC sweep's table.

    Attributes
    ----------
    sweeps : list of str
        The swept quantities, inner first.
    x : dict of str to ndarray
        Each swept quantity's value per row.
    signals : dict of str to ndarray
        Each signal per row.
    measures : dict of str to float
        ``.meas dc`` results (:meth:`measure`).
    """

    sweeps: List[str]
    x: Dict[str, np.ndarray] = field(default_factory=dict)
    signals: Dict[str, np.ndarray] = field(default_factory=dict)
    measures: Dict[str, float] = field(default_factory=dict)

    def measure(self, cards) -> Dict[str, float]:
        """Evaluate a deck's ``.meas dc`` cards against the inner sweep (kept in :attr:`measures`).

        Parameters
        ----------
        cards : sequence of phsym.netlist.analyses.Measure
            The deck's cards (others than ``dc`` are left out).
        """
        from ..measure import measure_cards
        table = {k.lower(): v for k, v in self.columns().items()}

        def signal(label: str) -> np.ndarray:
            if label.lower() not in table:
                raise SignalError(f"{label!r} is not in the table (columns: {', '.join(self.columns())})")
            return table[label.lower()]
        self.measures.update(measure_cards(cards, "dc", self.x[self.sweeps[0]], signal))
        return self.measures

    def columns(self) -> Dict[str, np.ndarray]:
        """The table: swept quantities, then signals."""
        return {**self.x, **self.signals}

    def save(self, path) -> None:
        """Write the table as CSV (a header of names; ``path`` a file or a stream).

        Parameters
        ----------
        path : str, pathlib.Path or file
            Where to write.
        """
        cols = self.columns()
        np.savetxt(path, np.column_stack(list(cols.values())), delimiter=",", header=",".join(cols), comments="")

    def plot(self, path=None, signals: Optional[Sequence[str]] = None):
        """Each signal against the inner sweep, one curve per outer value (needs matplotlib).

        Parameters
        ----------
        path : str or pathlib.Path, optional
            Image file to write.
        signals : sequence of str, optional
            Signals to draw (default: all).
        """
        from ...clitools import pyplot
        plt = pyplot("the plot")
        fig, ax = plt.subplots()
        inner = self.x[self.sweeps[0]]
        outer = self.x[self.sweeps[1]] if len(self.sweeps) > 1 else np.zeros_like(inner)
        for k in signals or list(self.signals):
            for o in dict.fromkeys(outer.tolist()):
                sel = outer == o
                label = k if len(self.sweeps) == 1 else f"{k}, {self.sweeps[1]}={o:g}"
                ax.plot(inner[sel], self.signals[k][sel], label=label)
        ax.set_xlabel(self.sweeps[0])
        ax.legend(fontsize="small")
        if path is not None:
            fig.savefig(path)
        return fig


def _points(sweeps) -> List[tuple]:
    inner = sweeps[0].values()
    outer = sweeps[1].values() if len(sweeps) > 1 else np.array([np.nan])
    return [(a, b) for b in outer for a in inner]


def dc_sweep(model, sweeps: Sequence, signals: Optional[List[str]] = None,
             params: Optional[Mapping[str, float]] = None, engine: str = "auto") -> DcResult:
    """Operating points over SPICE's ``.dc`` sweeps.

    Parameters
    ----------
    model : Model, str or pathlib.Path
        A model or a netlist file (a file is needed to sweep ``TEMP``).
    sweeps : sequence of phsym.netlist.analyses.Sweep
        One or two sweeps, inner first (a deck's ``Netlist.deck.analyses.dc``).
    signals : list of str, optional
        Signal labels (default: every node voltage and voltage-source current).
    params : mapping of str to float, optional
        Parameter overrides by name.
    engine : str
        ``"symbolic"`` (the structure's DC solver), ``"numeric"`` (the numeric engine's nodal DC
        equations, each point from the last) or ``"auto"`` (numeric above
        :data:`~phsym.model.SYMBOLIC_LIMIT` branches).

    Raises
    ------
    SignalError
        A swept name that is neither a source nor a parameter, or an unknown signal.
    SimulationError
        A point without a DC solution (its sweep values named).
    """
    from ...model import Model, load
    from ...netlist import load_netlist
    from ..engines.numeric.planner import NumericPlanner
    from .point import dc_inputs, dc_point, default_signals, efforts, signal_vectors, use_numeric
    path = Path(model) if isinstance(model, (str, Path)) else None
    base = load(path) if path is not None else model
    if not sweeps or len(sweeps) > 2:
        raise SignalError(f"a DC sweep has one or two swept quantities, got {len(sweeps)}")
    inputs = {str(u).lower(): j for j, u in enumerate(base.inputs)}
    params_of = {p.lower(): p for p in base.netlist.parameters}
    kinds = []
    for s in sweeps:
        if s.kind == "temp":
            if path is None:
                raise SignalError("sweeping TEMP reads the deck again at each temperature: give the netlist file")
            kinds.append(("temp", None))
        elif s.name.lower() in inputs:
            kinds.append(("source", inputs[s.name.lower()]))
        elif s.name.lower() in params_of:
            kinds.append(("param", params_of[s.name.lower()]))
        else:
            raise SignalError(f".dc sweeps {s.name!r}, which is neither a source ({', '.join(map(str, base.inputs))}) "
                              "nor a parameter of the netlist")
    labels = list(signals) if signals is not None else default_signals(base)
    rows = _points(sweeps)
    out = {k: np.empty(len(rows)) for k in labels}
    last, models, vectors = None, {}, {}
    numeric = use_numeric(base, engine)
    planners: dict = {}
    last_over = None
    for r, point in enumerate(rows):
        model, over = base, dict(params or {})
        for (kind, ref), value in zip(kinds, point):
            if kind == "temp":
                if value not in models:
                    models[value] = Model(load_netlist(path, options={"temp": float(value)}))
                model = models[value]
            elif kind == "param":
                over[ref] = float(value)
        values = model.parameter_values(over or None)
        u = dc_inputs(model, values)
        for (kind, ref), value in zip(kinds, point):
            if kind == "source":
                u[ref] = value
        if numeric:
            planner = planners.get(id(model))
            if planner is None:
                planner = planners[id(model)] = NumericPlanner(model, 1.0, "backward_euler", "scheme", 1e-12, 200,
                                                               False, False)
            same = last is not None and model is base and last_over == over     # same equations, other inputs
            try:
                pt = planner.dc_point(u, values, hold_ic=False, guess=last if same else None)
            except SimulationError:
                at = ", ".join(f"{s.name}={v:g}" for s, v in zip(sweeps, point))
                raise SimulationError(f"no DC solution at {at}", step=r, time=0.0) from None
            n_nodes = pt.system.L.n_nodes
            step = np.concatenate([pt.z[:n_nodes], pt.branch_currents(), u])
            for k in labels:
                out[k][r] = float(planner.parts.probe(k, n_nodes) @ step)
            last, last_over = pt, over
            continue
        try:
            pt = dc_point(model, values, u, last if model is base else None)
        except SimulationError:
            at = ", ".join(f"{s.name}={v:g}" for s, v in zip(sweeps, point))
            raise SimulationError(f"no DC solution at {at}", step=r, time=0.0) from None
        e = efforts(model, values, pt)
        key = (id(model), tuple(sorted(over.items())))
        if key not in vectors:
            vectors[key] = signal_vectors(model, values, labels)
        for k, c in vectors[key].items():
            out[k][r] = float(c @ e)
        last = pt if model is base else None
    return DcResult([s.name for s in sweeps], {s.name: np.array([p[i] for p in rows])
                                               for i, s in enumerate(sweeps)}, out)
