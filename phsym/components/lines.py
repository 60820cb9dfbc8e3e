"""Lossless transmission lines (SPICE ``T``) and switches (SPICE ``S``, ``W``).

A line stores energy: it is a ladder of ``NSEG`` inductor-capacitor
sections whose energy is the line's content, so the discrete power balance
stays exact.  A switch is a passive resistor whose conductance the control
voltage (or current) sets: a time-varying resistor, never a source of power.
"""
from __future__ import annotations

import math

import sympy as sp

from .base import EFFORT, FLOW, P_SOURCE_THROUGH, P_STORE_EFFORT, P_STORE_FLOW, P_TWOPORT, P_VCR, Contribution, \
    Dissipation, Storage, TwoPort
from .component import Component, Value, register

__all__ = ["TransmissionLine", "VoltageSwitch", "CurrentSwitch"]

_V = sp.Symbol("v", real=True)
_C = sp.Symbol("control", real=True)


@register
class TransmissionLine(Component):
    """Lossless transmission line ``T n1+ n1- n2+ n2- Z0=.. TD=..`` (or ``F=.. [NL=..]``; SPICE ``T``).

    The line is a ladder of ``NSEG`` sections between the ports: an
    inductor ``Z0 TD / NSEG`` (halves at both ends, branches ``NAME.l0`` ...
    ``NAME.lN``) and a capacitor ``TD / (Z0 NSEG)`` to ``n1-`` at each of the
    internal nodes ``NAME#1`` ... ``NAME#N`` (branches ``NAME.c1`` ...).  Its
    energy, the sum of the sections' ``phi**2/(2L) + q**2/(2C)``, is the
    line's content; the ladder's delay is ``TD`` and its characteristic
    impedance ``Z0`` for frequencies well below ``NSEG / (pi TD)`` (SPICE's
    line is exact at every frequency: see docs/spice-compatibility.md for
    what the sections cost).  Port 1 is ``n1+`` to ``n1-``, port 2 ``n2+``
    to ``n2-``; with ``n2- != n1-`` port 2 closes through an ideal 1:1
    transformer (branches ``NAME.p``, ``NAME.s``), so each port's current
    returns at its own reference node as in SPICE.  Receiver convention on
    every branch.  ``TD`` defaults to ``NL / F``; ``NSEG`` defaults to two
    sections per ``TSTEP`` of delay in a deck with a ``.tran`` card.

    Examples
    --------
    A matched line: 1 V through 50 Ohm into the line, 50 Ohm at its end; 0.5 V arrives.

    >>> import phsym
    >>> m = phsym.parse("V1 a 0 1\\nR1 a b 50\\nT1 b 0 c 0 Z0=50 TD=1n NSEG=8\\nR2 c 0 50\\n.probe v(c)\\n")
    >>> len(m.states)
    17
    >>> round(float(phsym.simulate(m, 1e10, duration=20e-9)["v(c)"][-1]), 2)
    0.5
    """

    kind = "tline"
    letters = ("T",)
    terminals = ("n1+", "n1-", "n2+", "n2-")
    values = (Value("Z0", "ohm", "characteristic impedance", check="positive", aliases=("ZO",)),
              Value("Td", "s", "delay (default NL / F)", check="positive", optional=True),
              Value("F", "Hz", "frequency at which the line is NL wavelengths long", check="positive", optional=True),
              Value("Nl", "", "electrical length in wavelengths at F", default=0.25, check="positive"),
              Value("Nseg", "", "LC sections of the ladder (phsym; default from TSTEP, else 64)", check="positive",
                    structural=True, optional=True),
              Value("Tstep", "s", "step the default NSEG resolves (the deck's .tran TSTEP)", check="positive",
                    structural=True, optional=True))
    summary = "lossless transmission line (SPICE T: Z0, TD or F and NL) as a ladder of LC sections"

    def contribute(self) -> Contribution:
        out = Contribution()
        a, ref, b, ref2 = self.spec.nodes
        z0 = self.value("Z0")
        td = self.spec.values.get("Td")
        if td is None:
            td = self.value("Nl") / self.value("F")
        n = int(self.spec.values["Nseg"]) if "Nseg" in self.spec.values else self.sections(td)
        inductance, capacitance = z0 * td / n, td / (z0 * n)
        end = b if ref2 == ref else f"{self.name}#end"
        nodes = [a] + [f"{self.name}#{k}" for k in range(1, n + 1)] + [end]
        for k in range(n + 1):
            self._store(out, f"l{k}", nodes[k], nodes[k + 1], inductance / (2 if k in (0, n) else 1), FLOW)
        for k in range(1, n + 1):
            self._store(out, f"c{k}", nodes[k], ref, capacitance, EFFORT)
        if end != b:
            bp = self.branch("twoport", P_TWOPORT, nodes=(end, ref), suffix=".p")
            bs = self.branch("twoport", P_TWOPORT, nodes=(b, ref2), suffix=".s")
            out.branches += [bp, bs]
            out.twoports.append(TwoPort(self.name, "transformer", bp.name, bs.name, sp.Integer(1)))
        return out

    def sections(self, td: sp.Expr) -> int:
        """The default ``NSEG``: a section per half ``TSTEP`` of delay (16 to 1024), or 64 without ``TSTEP``.

        Parameters
        ----------
        td : sympy.Expr
            The delay (at the default parameters).
        """
        step = self.spec.values.get("Tstep")
        if step is None:
            return 64
        delay = float(sp.sympify(td).xreplace(self.defaults))
        return int(min(1024, max(16, math.ceil(2 * delay / float(step)))))

    def _store(self, out: Contribution, tag: str, a: str, b: str, value: sp.Expr, port: str) -> None:
        br = self.branch("storage", P_STORE_FLOW if port == FLOW else P_STORE_EFFORT, nodes=(a, b), suffix=f".{tag}")
        x = sp.Symbol(f"{'phi' if port == FLOW else 'q'}_{br.name}", real=True)
        out.branches.append(br)
        out.storages.append(Storage((br.name,), (x,), x ** 2 / (2 * value), (br.name,), (port,), (None,),
                                    quadratic=True))


class _Switch(Component):
    """Shared by S and W: a conductance ``RON`` above the threshold, ``ROFF`` below."""

    def _law(self, threshold: sp.Expr) -> sp.Expr:
        g_on, g_off = 1 / self.value("Ron"), 1 / self.value("Roff")
        return sp.Piecewise((g_on, _C > threshold), (g_off, True)) * _V

    def _port(self, out: Contribution, law: sp.Expr, couples) -> None:
        port = self.branch("dissipation", P_VCR)
        out.branches.insert(0, port)
        out.dissipations.insert(0, Dissipation(port.name, port.name, "across", law, _V, False, couples=couples))


_SWITCH_VALUES = (Value("Ron", "ohm", "on resistance", default=1.0, check="positive"),
                  Value("Roff", "ohm", "off resistance (SPICE: 1/GMIN)", default=1e12, check="positive"))


@register
class VoltageSwitch(_Switch):
    """Voltage-controlled switch ``S n+ n- nc+ nc- MODEL`` (SPICE ``S``, ``.model NAME SW(VT= VH= RON= ROFF=)``).

    The current from ``n+`` through the switch to ``n-`` is ``v / RON``
    while the control voltage ``v(nc+) - v(nc-)`` is above ``VT``, ``v /
    ROFF`` otherwise: a passive resistor (it receives ``v**2 / R >= 0``)
    whose resistance the control sets, read through an open sense port
    (branch ``NAME.sense``, no current).  SPICE's hysteresis ``VH`` (on
    above ``VT + VH``, off below ``VT - VH``, the last state between) needs
    a memory from step to step that phsym's steps do not carry: the netlist
    resolves it where sources alone set the control voltage (the switch then
    reads its state from a hidden source, :mod:`phsym.netlist.hysteresis`),
    and refuses it elsewhere.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse(".model SM SW(VT=1 RON=10 ROFF=1meg)\\nVC c 0 2\\nV1 a 0 1\\nS1 a 0 c 0 SM\\n")
    >>> [d.element for d in m.structure.dissipative]
    ['S1', 'S1.sense']
    """

    kind = "switch"
    letters = ("S",)
    terminals = ("n+", "n-", "nc+", "nc-")
    values = (Value("Vt", "V", "threshold voltage", default=0.0),
              Value("Vh", "V", "hysteresis voltage (a control set by sources only)", default=0.0),) + _SWITCH_VALUES
    model = "SW"
    summary = "voltage-controlled switch (SPICE S: RON above VT, ROFF below; passive)"

    def contribute(self) -> Contribution:
        out = Contribution()
        _check_hysteresis(self, "Vh", "a control the circuit sets",
                          "hysteresis is followed when sources alone set the control voltage")
        c, d = self.spec.nodes[2:]
        law = self._law(self.value("Vt"))
        if c == d:
            self._port(out, law.xreplace({_C: 0}), ())
            return out
        sense = self.branch("dissipation", P_SOURCE_THROUGH, nodes=(c, d), suffix=".sense")
        out.branches.append(sense)
        out.dissipations.append(Dissipation(sense.name, sense.name, "across", sp.Integer(0), _V, False))
        self._port(out, law, ((_C, sense.name),))
        return out


@register
class CurrentSwitch(_Switch):
    """Current-controlled switch ``W n+ n- VSENSE MODEL`` (SPICE ``W``, ``.model NAME CSW(IT= IH= RON= ROFF=)``).

    As :class:`VoltageSwitch` with the current of the 0 V source ``VSENSE``
    (an ammeter, as for ``F`` and ``H``) against the threshold ``IT``;
    ``IH`` must be 0.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse(".model WM CSW(IT=1m RON=10)\\nI1 0 c 2m\\nVs c 0 0\\nV1 a 0 1\\nW1 a 0 Vs WM\\n")
    >>> [d.element for d in m.structure.dissipative]
    ['Vs', 'W1']
    """

    kind = "cswitch"
    letters = ("W",)
    refs = ("vsource",)
    senses = "ammeter"
    values = (Value("It", "A", "threshold current", default=0.0),
              Value("Ih", "A", "hysteresis current (0 only)", default=0.0),) + _SWITCH_VALUES
    model = "CSW"
    summary = "current-controlled switch (SPICE W: RON above IT, ROFF below; passive)"

    def contribute(self) -> Contribution:
        out = Contribution()
        _check_hysteresis(self, "Ih", "is not supported", "a current switch's control current is always "
                          "one the circuit sets")
        self._port(out, self._law(self.value("It")), ((_C, self.spec.refs[0]),))
        return out


def _check_hysteresis(element: Component, key: str, what: str, why: str) -> None:
    # the netlist resolves what it can (phsym.netlist.hysteresis); what reaches here is refused
    from ..errors import NetlistError
    if float(sp.sympify(element.spec.values.get(key, 0)).xreplace(element.defaults)) != 0:
        raise NetlistError(f"switch {element.name}: hysteresis {key.upper()} {what}",
                           element.spec.arg_locations.get(key, element.spec.location),
                           hint=f"set {key.upper()}=0 (a switch keeps no state from step to step in phsym; {why})")
