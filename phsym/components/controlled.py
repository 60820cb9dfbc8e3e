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

from ..errors import NetlistError
from .base import P_LINEAR, P_SOURCE_ACROSS, P_SOURCE_THROUGH, Contribution, Dissipation
from .component import Choice, Component, LawForm, Value, register
from .element import DATUM

__all__ = ["VCVS", "VCCS", "OpAmp", "Ammeter", "CCCS", "CCVS", "BehavioralSource", "sense_symbol"]

_W = sp.Symbol("w", real=True)
_S = sp.Symbol("w_sense", real=True)
_I = sp.Symbol("i_sense", real=True)


class _Controlled(Component):
    """Shared: the sense port across the controlling nodes and the output port."""

    def _ports(self, out_nodes, sense_nodes, out_control: str, law: sp.Expr, priority: int,
               nullor: bool = False) -> Contribution:
        out = Contribution()
        sense = self.branch("dissipation", P_SOURCE_THROUGH, nodes=sense_nodes, suffix=".sense")
        port = self.branch("dissipation", priority, nodes=out_nodes)
        out.branches += [port, sense]
        # the sense port is an open circuit: i = 0 whatever its voltage (a nullator: and v = 0,
        # its unknown then being the output voltage the law reads)
        out.dissipations.append(Dissipation(port.name, port.name, out_control, law, _W, False,
                                            couples=((_S, sense.name),), active=True))
        out.dissipations.append(Dissipation(sense.name, sense.name, "across", sp.Integer(0), _S, False,
                                            nullator=nullor))
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
    behavioral = ("poly", "value", "table")
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
    behavioral = ("poly", "value", "table")
    terminals = ("n+", "n-", "nc+", "nc-")
    values = (Value("gm", "S", "transconductance", main=True),)
    summary = "voltage-controlled current source (active: reported as injected power)"

    def contribute(self) -> Contribution:
        a, b, c, d = self.spec.nodes
        return self._ports((a, b), (c, d), "across", self.value("gm") * _S, P_SOURCE_THROUGH)


@register
class OpAmp(_Controlled):
    """Operational amplifier ``NAME in+ in- out opamp [gain=1e6] [vsat=..] [rout=..] [type=finite|ideal]``.

    The output is a voltage source from ``out`` to the datum: ``v(out) =
    gain (v(in+) - v(in-))``, or ``vsat tanh(gain (v(in+) - v(in-)) / vsat)``
    with output rails ``+-vsat``; the inputs draw no current (branch
    ``NAME.sense``).  With ``rout`` the source drives ``out`` through an
    output resistance (branch ``NAME.ro`` from the internal node ``NAME#o``),
    which dissipates.  A large gain approximates the ideal op-amp (virtual
    short between the inputs): with negative feedback the closed-loop gain
    differs from the ideal one by about ``1 / (gain * feedback factor)``.
    ``type=ideal`` is the nullor: ``v(in+) = v(in-)`` exactly, no input
    current, and the output voltage whatever the circuit needs (no ``gain``,
    no rails); the closed-loop gains are then exact.  Its input port
    (``NAME.sense``) is the nullator, its output (``NAME``) the norator,
    whose unknown voltage is a Newton unknown of every step.  Without
    negative feedback an ideal op-amp has no solution (a singular step).
    Active, as :class:`VCVS`.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0 1\\nR1 a n 1k\\nR2 n out 10k\\nU1 0 n out opamp\\nRL out 0 10k\\n")
    >>> [d.element for d in m.structure.dissipative if d.active]
    ['U1']

    Open loop into a load: the output resistance divides the source voltage.

    >>> m = phsym.parse("V1 a 0 DC 0.1\\nU1 a 0 out opamp gain=10 rout=100\\nRL out 0 300\\n.probe v(out)\\n")
    >>> round(float(phsym.simulate(m, 1e3, duration=2e-3)["v(out)"][-1]), 9)    # 1 V * 300 / 400
    0.75

    Ideal: an inverting amplifier of gain -10, exactly.

    >>> m = phsym.parse("V1 a 0 DC 0.1\\nR1 a n 1k\\nR2 n out 10k\\nU1 0 n out opamp type=ideal\\n.probe v(out)\\n")
    >>> float(phsym.simulate(m, 1e3, duration=2e-3)["v(out)"][-1])
    -1.0
    """

    kind = "opamp"
    keywords = ("opamp",)
    terminals = ("in+", "in-", "out")
    values = (Value("gain", "", "open-loop gain", default=1e6, check="positive"),
              Value("vsat", "V", "output rail (symmetric; no rails when absent)", check="positive", optional=True),
              Value("rout", "ohm", "output resistance (none when absent)", check="positive", optional=True))
    choices = (Choice("type", ("finite", "ideal"),
                      "finite open-loop gain, or ideal (nullor: v+ = v-, no input current, no gain or rails)"),)
    summary = "op-amp: output voltage source of gain (v+ - v-), optional rails, or ideal (nullor) (active)"

    def contribute(self) -> Contribution:
        p, n, o = self.spec.nodes
        ideal = self.choice("type") == "ideal"
        vsat: Optional[sp.Expr] = self.spec.values.get("vsat")
        if ideal:
            if vsat is not None:
                raise NetlistError(f"{self.name}: an ideal op-amp has no rails (vsat=)",
                                   self.spec.arg_locations.get("vsat", self.spec.location),
                                   hint="drop vsat=, or use type=finite with gain= and vsat=")
            law = _S        # the output voltage is the nullator's unknown
        else:
            gain = self.value("gain")
            law = gain * _S if vsat is None else vsat * sp.tanh(gain * _S / vsat)
        rout: Optional[sp.Expr] = self.spec.values.get("rout")
        if rout is None:
            return self._ports((o, DATUM), (p, n), "through", law, P_SOURCE_ACROSS, nullor=ideal)
        inner = f"{self.name}#o"
        out = self._ports((inner, DATUM), (p, n), "through", law, P_SOURCE_ACROSS, nullor=ideal)
        br = self.branch("dissipation", P_LINEAR, nodes=(inner, o), suffix=".ro")
        out.branches.append(br)
        out.dissipations.append(Dissipation(br.name, br.name, "through", rout * _I, _I, True))
        return out


@register
class Ammeter(Component):
    """Ammeter ``NAME a b ammeter``: a short circuit whose current ``i(NAME)``
    (from ``a`` through the element to ``b``) the laws of current-controlled
    sources read.  A SPICE deck's 0 V source named by an ``F`` or ``H`` line
    becomes one (the ammeter idiom ``Vsense a b 0``).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("I1 0 a DC 1m\\nVs a b 0\\nR1 b 0 1k\\nF1 0 c Vs 3\\nR2 c 0 1k\\n")
    >>> [(d.element, str(d.z)) for d in m.structure.dissipative if d.element in ("Vs", "F1")]
    [('Vs', '0'), ('F1', 'F1*w_Vs')]
    """

    kind = "ammeter"
    keywords = ("ammeter",)
    terminals = ("a", "b")
    summary = "ammeter: a short whose current current-controlled sources (F, H) read"

    def contribute(self) -> Contribution:
        br = self.branch("dissipation", P_SOURCE_ACROSS)
        # a current-controlled short: v = 0 whatever its current
        return Contribution(branches=[br], dissipations=[Dissipation(br.name, br.name, "through", sp.Integer(0),
                                                                      sp.Symbol(f"i_{self.name}", real=True))])


class _CurrentControlled(Component):
    """Shared by F and H: the output port reads the current of the 0 V source named on the line."""

    terminals = ("n+", "n-")
    refs = ("vsource",)
    senses = "ammeter"

    def _output(self, control: str, law: sp.Expr, priority: int) -> Contribution:
        sense = self.spec.refs[0]
        i = sp.Symbol(f"i_{sense}", real=True)
        port = self.branch("dissipation", priority)
        return Contribution(branches=[port], dissipations=[
            Dissipation(port.name, port.name, control, law.subs(_I, i), _W, False, couples=((i, sense),),
                        active=True)])


@register
class CCCS(_CurrentControlled):
    """Current-controlled current source ``F n+ n- VSENSE GAIN`` (SPICE ``F``).

    The current ``GAIN i(VSENSE)`` flows from ``n+`` through the source to
    ``n-``; ``VSENSE`` must be a 0 V source (it becomes an :class:`Ammeter`
    whose current is measured from its ``n+`` to its ``n-``, as SPICE).
    Active, as :class:`VCVS`.

    Examples
    --------
    A current mirror of gain 3 into 1 kOhm: ``v(c) = 3 mA * 1 kOhm``.

    >>> import phsym
    >>> m = phsym.parse("I1 0 a DC 1m\\nVs a b 0\\nR1 b 0 1k\\nF1 0 c Vs 3\\nR2 c 0 1k\\n.probe v(c)\\n")
    >>> round(float(phsym.simulate(m, 1e3, duration=2e-3)["v(c)"][-1]), 9)
    3.0
    """

    kind = "cccs"
    letters = ("F",)
    behavioral = ("poly",)
    values = (Value("gain", "", "current gain", main=True),)
    summary = "current-controlled current source (reads a 0 V source's current; active)"

    def contribute(self) -> Contribution:
        return self._output("across", self.value("gain") * _I, P_SOURCE_THROUGH)


@register
class CCVS(_CurrentControlled):
    """Current-controlled voltage source ``H n+ n- VSENSE R`` (SPICE ``H``).

    ``v(n+) - v(n-) = R i(VSENSE)`` (transresistance ``R``); ``VSENSE``
    becomes an :class:`Ammeter`, as for :class:`CCCS`.  Active, as
    :class:`VCVS`.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("I1 0 a DC 2m\\nVs a 0 0\\nH1 c 0 Vs 500\\nR2 c 0 1k\\n.probe v(c)\\n")
    >>> round(float(phsym.simulate(m, 1e3, duration=2e-3)["v(c)"][-1]), 9)
    1.0
    """

    kind = "ccvs"
    letters = ("H",)
    behavioral = ("poly",)
    values = (Value("r", "ohm", "transresistance", main=True),)
    summary = "current-controlled voltage source (reads a 0 V source's current; active)"

    def contribute(self) -> Contribution:
        return self._output("through", self.value("r") * _I, P_SOURCE_ACROSS)


def sense_symbol(quantity: str, k: int) -> sp.Symbol:
    """The symbol a behavioural law reads for its ``k``-th sensed voltage (``"v"``) or current (``"i"``)."""
    return sp.Symbol(f"{quantity}#{k}", real=True)


@register
class BehavioralSource(Component):
    """Behavioural source ``B n+ n- V={expr}`` or ``I={expr}`` (SPICE ``B``; also ``E``/``G``
    with ``VALUE``, ``TABLE`` or ``POLY``, and ``F``/``H`` with ``POLY``).

    The expression reads node voltages ``v(a)``, ``v(a,b)`` and currents
    ``i(VSENSE)`` of voltage sources.  ``V=`` makes ``v(n+) - v(n-)`` the
    expression, ``I=`` makes it the current flowing from ``n+`` through the
    source to ``n-`` (SPICE's convention).  Each voltage read is a sense
    port (branch ``NAME.s0``, ``NAME.s1`` ...: an open circuit across the
    two nodes), each current read an ammeter in series with the source it
    names (see :class:`Ammeter`); the output branch ``NAME`` (receiver
    convention, from ``n+`` to ``n-``) is an active port whose power is
    reported as injected, as for :class:`VCVS`.  The netlist stores the law
    in the symbols of :func:`sense_symbol`: the ``k``-th voltage reads the
    node pair ``nodes[2 + 2k], nodes[3 + 2k]``, the ``k``-th current
    ``refs[k]``.

    Examples
    --------
    A squarer of the voltage at ``a``: ``v(b) = v(a)**2``, 4 V for 2 V.

    >>> import phsym
    >>> m = phsym.parse("V1 a 0 DC 2\\nB1 b 0 V={v(a)**2}\\nR1 b 0 1k\\n.probe v(b)\\n")
    >>> [(d.element, d.active) for d in m.structure.dissipative]
    [('B1', True), ('B1.s0', False), ('R1', False)]
    >>> round(float(phsym.simulate(m, 1e3, duration=2e-3)["v(b)"][-1]), 9)
    4.0
    """

    kind = "behavioral"
    letters = ("B",)
    refs = ("vsource",)
    senses = "ammeter"
    variadic_refs = True
    laws = (LawForm("V", "w", "output voltage of the sensed voltages and currents"),
            LawForm("I", "w", "output current of the sensed voltages and currents"))
    summary = "behavioural source: V= or I= of node voltages and source currents (POLY, VALUE, TABLE; active)"

    def contribute(self) -> Contribution:
        out = Contribution()
        law = self.spec.law
        pairs = self.spec.nodes[2:]
        couples, shorted = [], {}
        for k in range(len(pairs) // 2):
            c, d = pairs[2 * k], pairs[2 * k + 1]
            sym = sense_symbol("v", k)
            if c == d:                  # v(a,a) is 0
                shorted[sym] = sp.Integer(0)
                continue
            sense = self.branch("dissipation", P_SOURCE_THROUGH, nodes=(c, d), suffix=f".s{k}")
            out.branches.append(sense)
            out.dissipations.append(Dissipation(sense.name, sense.name, "across", sp.Integer(0), _S, False))
            couples.append((sym, sense.name))
        couples += [(sense_symbol("i", k), ref) for k, ref in enumerate(self.spec.refs)]
        voltage = law.key.upper() == "V"
        port = self.branch("dissipation", P_SOURCE_ACROSS if voltage else P_SOURCE_THROUGH)
        expr = law.expr.xreplace(shorted)
        used = tuple((s, p) for s, p in couples if expr.has(s))
        out.branches.insert(0, port)
        out.dissipations.insert(0, Dissipation(port.name, port.name, "through" if voltage else "across", expr,
                                               _W, False, couples=used, active=True))
        return out
