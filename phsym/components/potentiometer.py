"""Potentiometers: a resistive track with a wiper, the position a parameter."""
from __future__ import annotations

import sympy as sp

from .base import P_LINEAR, Contribution, Dissipation
from .component import Choice, Component, Value, register

__all__ = ["Potentiometer", "TAPER_BASE"]

#: Base ``b`` of the logarithmic (audio) taper ``(b**pos - 1) / (b - 1)``: 10 % of the track at mid travel.
TAPER_BASE = 81.0

_I = sp.Symbol("i", real=True)


@register
class Potentiometer(Component):
    """Potentiometer ``P1 a wiper b R=100k [pos=0.5] [taper=lin|log] [rend=1m]``.

    Two linear resistors share the wiper: ``R(a, wiper) = R (1 - t) + R
    rend`` and ``R(wiper, b) = R t + R rend`` (branches ``P1.aw`` and
    ``P1.wb``, receiver convention), with the track fraction ``t`` between
    the wiper and ``b``: ``t = pos`` (``taper=lin``) or ``t = (81**pos -
    1) / 80`` (``taper=log``, the audio taper: 10 % at mid travel).  ``pos
    = 1`` puts the wiper at ``a``; unloaded, ``v(wiper) = v(b) + t (v(a) -
    v(b))`` up to the end resistances ``R rend`` that keep both parts
    conducting at the ends of the travel.  ``pos`` is a parameter
    (``P1.pos``): runs override it without regenerating code; written
    ``pos={vol}`` with ``.param vol=0.5 control`` it is turned *during* a
    run by a signal (``Simulator.run(controls={"vol": ...})``).  Dissipates
    ``v i >= 0`` in each part.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nP1 a w 0 R=10k pos=0.25\\nR2 w 0 1meg\\n")
    >>> [d.element for d in m.structure.dissipative]
    ['P1.aw', 'P1.wb', 'R2']
    """

    kind = "potentiometer"
    letters = ("P",)
    terminals = ("a", "wiper", "b")
    values = (Value("R", "ohm", "track resistance", main=True, check="positive"),
              Value("pos", "", "wiper position, 0 (at b) to 1 (at a)", default=0.5, check="closed_unit"),
              Value("rend", "", "end resistance as a fraction of R", default=1e-3, check="positive"))
    choices = (Choice("taper", ("lin", "log"), "track law: linear, or logarithmic (audio, 10 % at mid travel)"),)
    summary = "potentiometer: two resistors sharing the wiper; pos={vol} with .param vol=0.5 control turns it during a run"

    def fraction(self) -> sp.Expr:
        """Track fraction ``t`` between the wiper and ``b`` as a function of ``pos``."""
        pos = self.value("pos")
        if self.choice("taper") == "log":
            return (sp.Float(TAPER_BASE) ** pos - 1) / sp.Float(TAPER_BASE - 1)
        return pos

    def contribute(self) -> Contribution:
        a, wiper, b = self.spec.nodes
        R, t, rend = self.value("R"), self.fraction(), self.value("rend")
        out = Contribution()
        for suffix, nodes, r in ((".aw", (a, wiper), R * (1 - t) + R * rend), (".wb", (wiper, b), R * t + R * rend)):
            br = self.branch("dissipation", P_LINEAR, nodes=nodes, suffix=suffix)
            out.branches.append(br)
            out.dissipations.append(Dissipation(br.name, br.name, "through", r * _I, _I, True))
        return out
