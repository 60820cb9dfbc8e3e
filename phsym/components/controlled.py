"""Controlled sources and the op-amp: active ports closed by a static law.

A controlled source is not passive.  phsym keeps the structure of the rest
of the circuit intact by writing it as two ports of one device: a *sense*
port across the controlling nodes (an open circuit: its current is zero,
its variable ``w`` is the controlling voltage) and an *active* output port
whose law reads the sense port's variable (:attr:`Dissipation.couples`).
The output port is marked ``active``: its power is reported as injected
(``P_supplied``, with the share of the active elements in
``SimulationResult.P_active``), not as dissipated, so the discrete energy
balance ``dH/dt = -P_diss + P_supplied`` stays exact, and the structure
checks ("dissipation passive") hold for the passive part.  ``phsym show``
lists the active elements.
"""
from __future__ import annotations

from typing import Optional

import sympy as sp

from .base import P_SOURCE_ACROSS, P_SOURCE_THROUGH, Contribution, Dissipation
from .component import Component, Value, register
from .element import DATUM

__all__ = ["VCVS", "VCCS", "OpAmp"]

_W = sp.Symbol("w", real=True)
_S = sp.Symbol("w_sense", real=True)


class _Controlled(Component):
    """Shared: the sense port across the controlling nodes and the output port."""

    def _ports(self, out_nodes, sense_nodes, out_control: str, law: sp.Expr, priority: int) -> Contribution:
        out = Contribution()
        sense = self.branch("dissipation", P_SOURCE_THROUGH, nodes=sense_nodes, suffix=".sense")
        port = self.branch("dissipation", priority, nodes=out_nodes)
        out.branches += [port, sense]
        # the sense port is an open circuit: i = 0 whatever its voltage
        out.dissipations.append(Dissipation(port.name, port.name, out_control, law, _W, False,
                                            couples=((_S, sense.name),), active=True))
        out.dissipations.append(Dissipation(sense.name, sense.name, "across", sp.Integer(0), _S, False))
        return out


@register
class VCVS(_Controlled):
    """Voltage-controlled voltage source ``E n+ n- nc+ nc- GAIN`` (SPICE ``E``).

    ``v(n+) - v(n-) = GAIN (v(nc+) - v(nc-))``; no current flows between the
    controlling nodes (branch ``NAME.sense``).  The output branch ``NAME``
    (from ``n+`` to ``n-``, receiver convention) is an active port: the power
    ``-v i`` it delivers is injected power.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0 1\\nR1 a 0 1k\\nE1 b 0 a 0 10\\nR2 b 0 1k\\n")
    >>> [(d.element, d.active) for d in m.structure.dissipative if d.element.startswith("E1")]
    [('E1', True), ('E1.sense', False)]
    """

    kind = "vcvs"
    letters = ("E",)
    terminals = ("n+", "n-", "nc+", "nc-")
    values = (Value("gain", "", "voltage gain", main=True),)
    summary = "voltage-controlled voltage source (active: reported as injected power)"

    def contribute(self) -> Contribution:
        a, b, c, d = self.spec.nodes
        return self._ports((a, b), (c, d), "through", self.value("gain") * _S, P_SOURCE_ACROSS)


@register
class VCCS(_Controlled):
    """Voltage-controlled current source ``G n+ n- nc+ nc- GM`` (SPICE ``G``).

    The current ``GM (v(nc+) - v(nc-))`` flows from ``n+`` through the
    source to ``n-`` (SPICE's convention); no current flows between the
    controlling nodes.  Active, as :class:`VCVS`.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0 1\\nR1 a 0 1k\\nG1 b 0 a 0 1m\\nR2 b 0 1k\\n")
    >>> m.structure.dissipative[1].z
    G1*w_G1.sense
    """

    kind = "vccs"
    letters = ("G",)
    terminals = ("n+", "n-", "nc+", "nc-")
    values = (Value("gm", "S", "transconductance", main=True),)
    summary = "voltage-controlled current source (active: reported as injected power)"

    def contribute(self) -> Contribution:
        a, b, c, d = self.spec.nodes
        return self._ports((a, b), (c, d), "across", self.value("gm") * _S, P_SOURCE_THROUGH)


@register
class OpAmp(_Controlled):
    """Operational amplifier ``NAME in+ in- out opamp [gain=1e6] [vsat=..]``.

    The output is a voltage source from ``out`` to the datum: ``v(out) =
    gain (v(in+) - v(in-))``, or ``vsat tanh(gain (v(in+) - v(in-)) / vsat)``
    with output rails ``+-vsat``; the inputs draw no current (branch
    ``NAME.sense``).  A large gain approximates the ideal op-amp (virtual
    short between the inputs): with negative feedback the closed-loop gain
    differs from the ideal one by about ``1 / (gain * feedback factor)``.
    Active, as :class:`VCVS`.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0 1\\nR1 a n 1k\\nR2 n out 10k\\nU1 0 n out opamp\\nRL out 0 10k\\n")
    >>> [d.element for d in m.structure.dissipative if d.active]
    ['U1']
    """

    kind = "opamp"
    keywords = ("opamp",)
    terminals = ("in+", "in-", "out")
    values = (Value("gain", "", "open-loop gain", default=1e6, check="positive"),
              Value("vsat", "V", "output rail (symmetric; no rails when absent)", check="positive", optional=True))
    summary = "op-amp: output voltage source of gain (v+ - v-), optional rails (active)"

    def contribute(self) -> Contribution:
        p, n, o = self.spec.nodes
        gain = self.value("gain")
        vsat: Optional[sp.Expr] = self.spec.values.get("vsat")
        law = gain * _S if vsat is None else vsat * sp.tanh(gain * _S / vsat)
        return self._ports((o, DATUM), (p, n), "through", law, P_SOURCE_ACROSS)
