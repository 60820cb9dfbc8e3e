"""DC operating point of a netlist (SPICE's ``.op``): node potentials, branch
currents and the power of every element.

The sources take SPICE's DC values and the state, ports and multipliers
come from the structure's DC solver (:mod:`.point`: limited Newton, gmin
and source stepping, the one a transient's DC start uses); every probe is
read from the effort vector there, without compiling a step.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from ...errors import SimulationError
from ...graph import DOMAIN_UNITS

__all__ = ["OperatingPoint", "operating_point", "numeric_operating_point", "dc_state"]


def dc_state(model, u0, params: Optional[Mapping[str, float]] = None):
    """Storage state of a model's DC operating point for the inputs ``u0``, nothing held.

    Unlike a transient's DC start (``x0="dc"``), ``.ic`` values are not
    held: SPICE's ``.op`` and ``.ac`` ignore them too.  They only seed Newton.

    Parameters
    ----------
    model : Model
        The model.
    u0 : ndarray
        Inputs in ``model.inputs`` order.
    params : mapping of str to float, optional
        Parameter overrides by name.
    """
    from .point import dc_point
    return dc_point(model, model.parameter_values(params), u0).x


@dataclass
class OperatingPoint:
    """A DC operating point.

    Attributes
    ----------
    nodes : dict of str to float
        Node potentials against the datum [V; K, m/s... in other domains]
        (internal nodes such as a diode's ``D1#j`` included).
    currents : dict of str to float
        Current through each two-terminal element, from its first node to
        its second [A]; for an element with more terminals, through each of
        its branches (a transistor's ports ``Q1.be``, ``Q1.bc``, its series
        resistors ``Q1.rb``..., an op-amp's output ``U1`` and ``U1.sense``).
    voltages : dict of str to float
        Voltage across each two-terminal element's terminals, first node
        minus second [V] (for a diode with ``RS``: junction plus ``RS`` drop),
        and across each branch of a multi-terminal element.
    power : dict of str to float
        Power absorbed by each element, ``voltages * currents`` [W]
        (negative for a source that delivers power).
    state : dict of str to float
        The model's states (capacitor charges, inductor fluxes...).
    title : str
        The netlist title.
    domains : dict of str to str
        Domain of each node and element (``"electrical"``, ``"thermal"``...;
        units in :data:`phsym.graph.DOMAIN_UNITS`).
    note : str
        How the point was found, when not on the symbolic structure.
    """

    nodes: Dict[str, float] = field(default_factory=dict)
    currents: Dict[str, float] = field(default_factory=dict)
    voltages: Dict[str, float] = field(default_factory=dict)
    power: Dict[str, float] = field(default_factory=dict)
    state: Dict[str, float] = field(default_factory=dict)
    title: str = ""
    domains: Dict[str, str] = field(default_factory=dict)
    note: str = ""

    def _units(self, name: str) -> Tuple[str, str]:
        return DOMAIN_UNITS.get(self.domains.get(name, "electrical"), ("", ""))

    def to_text(self) -> str:
        """The operating point as a plain-text table (as SPICE prints ``.op``; the units of each
        node's and element's domain: a thermal node's potential is its temperature in K)."""
        lines = [f"DC operating point: {self.title}" if self.title else "DC operating point", "",
                 f"{'node':<20} {'potential':>15}"]
        lines += [f"{n:<20} {v:>15.6g} {self._units(n)[0]}" for n, v in self.nodes.items()]
        lines += ["", f"{'element':<20} {'across':>15}      {'through':>15}       {'power [W]':>15}"]
        for e in self.currents:
            ua, ut = self._units(e)
            lines.append(f"{e:<20} {self.voltages[e]:>15.6g} {ua:<5} {self.currents[e]:>15.6g} {ut:<5} "
                         f"{self.power[e]:>15.6g}")
        if self.note:
            lines += ["", self.note]
        lines += ["", f"total power {sum(self.power.values()):.3g} W (zero up to rounding)"]
        return "\n".join(lines)


def operating_point(model, params: Optional[Mapping[str, float]] = None) -> OperatingPoint:
    """DC operating point of a model or netlist file at the inputs' first sample.

    Parameters
    ----------
    model : Model, str or pathlib.Path
        A model or a netlist file.  Sources take their DC value (``DC v``),
        else their value at ``t = 0`` (``SIN`` its offset, ``PULSE`` its
        first level), as SPICE's ``.op``;
        ``.ic`` values are not held (as in SPICE's ``.op``).
    params : mapping of str to float, optional
        Parameter overrides by name.

    Returns
    -------
    OperatingPoint

    Raises
    ------
    SimulationError
        When the DC problem has no solution or Newton fails on it.
    """
    from ...model import load
    from ..probes import probe_vector
    from .point import dc_inputs, dc_point, efforts
    if isinstance(model, (str, Path)):
        model = load(model)
    if getattr(model, "netlist", None) is None:
        raise SimulationError("an operating point needs a model built from a netlist", step=0, time=0.0)
    values = model.parameter_values(params)
    if not model.symbolic_ready:
        return numeric_operating_point(model, params)
    pt = dc_point(model, values, dc_inputs(model, values))     # SPICE: the DC value, else the waveform at 0
    e = efforts(model, values, pt)
    S = model.structure
    Jn = S.J_numeric(values)

    def signal(label: str) -> float:
        return float(probe_vector(S, label, values, Jn) @ e)
    op = OperatingPoint(title=model.netlist.title,
                        state={str(s): float(v) for s, v in zip(model.states, pt.x)})
    nodes = []
    for el in model.netlist.elements:
        for n in el.nodes:
            if n != "0" and n not in nodes:
                nodes.append(n)
    for n in model.topology:        # internal nodes (a diode's series resistance)
        if n != "0" and n not in nodes:
            nodes.append(n)
    op.nodes = {n: signal(f"v({n})") for n in nodes}
    domains = model.topology.domains
    op.domains = {n: domains.get(n) or "electrical" for n in nodes if n in domains}
    branch_domain = {b.name: b.domain for b in model.structure.branches}
    multi = {el.name for el in model.netlist.elements if len(el.nodes) > 2}
    for b in model.structure.branches:      # transistors, tubes, controlled sources: each port
        if b.element in multi:
            i, v = signal(f"i({b.name})"), signal(f"v({b.name})")
            op.currents[b.name], op.voltages[b.name], op.power[b.name] = i, v, v * i
            op.domains[b.name] = _domain(b.domain, (b.node_from, b.node_to), op.domains)
    for el in model.netlist.elements:
        if len(el.nodes) != 2:
            continue              # couplings and four-terminal two-ports: their inductors/ports are listed
        i = signal(f"i({el.name})")
        # terminal voltage: a diode's v(D1) is its junction voltage, without RS
        v = op.nodes.get(el.nodes[0], 0.0) - op.nodes.get(el.nodes[1], 0.0)
        op.currents[el.name], op.voltages[el.name], op.power[el.name] = i, v, v * i
        op.domains[el.name] = _domain(branch_domain.get(el.name, "any"), el.nodes, op.domains)
    return op


def numeric_operating_point(model, params: Optional[Mapping[str, float]] = None) -> OperatingPoint:
    """The operating point on the numeric engine's DC system (models above the symbolic limit).

    Node potentials, the states, and every element's current, voltage and
    power as :func:`operating_point` lists them (a two-terminal element
    from its first node to its second, a multi-terminal one per branch),
    from the numeric engine's branch currents at the DC solution.  Same DC
    values of the sources and the same solver as a transient's DC start on
    that engine (gmin and source stepping), ``.ic`` values not held.

    Parameters
    ----------
    model : Model
        A model built from a netlist.
    params : mapping of str to float, optional
        Parameter overrides by name.
    """
    from ..engines.numeric.planner import NumericPlanner
    from .point import dc_inputs
    values = model.parameter_values(params)
    u0 = dc_inputs(model, values)
    planner = NumericPlanner(model, 1.0, "backward_euler", "scheme", 1e-12, 200, False, False)
    p = planner.dc_point(u0, values, hold_ic=False)
    at = p.unknowns()
    c = planner.circuit
    op = OperatingPoint(title=model.netlist.title, state={s: float(v) for s, v in zip(c.states, p.x)},
                        note="numeric engine (nodal DC equations of a large circuit)")
    nodes = [n for el in model.netlist.elements for n in el.nodes if n != "0"]
    op.nodes = {n: at.get(f"v({n})", 0.0) for n in dict.fromkeys(nodes + list(c.nodes))}
    n_nodes = p.system.L.n_nodes
    step = np.concatenate([p.z[:n_nodes], p.branch_currents(), u0])      # what the probes read

    def signal(label: str) -> float:
        return float(planner.parts.probe(label, n_nodes) @ step)
    op.domains = {n: "electrical" for n in op.nodes}
    for b in c.branches:
        for n in (b.node_from, b.node_to):
            if n in op.domains and b.domain in DOMAIN_UNITS:
                op.domains[n] = b.domain
    branch_domain = {b.name: b.domain for b in c.branches}
    multi = {el.name for el in model.netlist.elements if len(el.nodes) > 2}
    for b in c.branches:        # transistors, tubes, controlled sources: each port
        if b.element in multi:
            v = op.nodes.get(b.node_from, 0.0) - op.nodes.get(b.node_to, 0.0)
            i = signal(f"i({b.name})")
            op.currents[b.name], op.voltages[b.name], op.power[b.name] = i, v, v * i
            op.domains[b.name] = _domain(b.domain, (b.node_from, b.node_to), op.domains)
    for el in model.netlist.elements:
        if len(el.nodes) != 2:
            continue
        i = signal(f"i({el.name})")
        v = op.nodes.get(el.nodes[0], 0.0) - op.nodes.get(el.nodes[1], 0.0)
        op.currents[el.name], op.voltages[el.name], op.power[el.name] = i, v, v * i
        op.domains[el.name] = _domain(branch_domain.get(el.name, "any"), el.nodes, op.domains)
    return op


def _domain(domain: str, nodes, node_domains: Mapping[str, str]) -> str:
    """A branch's domain; a two-port's side (``any``) takes that of its nodes."""
    if domain in DOMAIN_UNITS:
        return domain
    return next((node_domains[n] for n in nodes if node_domains.get(n, "any") in DOMAIN_UNITS), "electrical")
