"""The magnetic domain: reluctances, magnetic resistances, sources and coils.

phsym writes magnetic circuits in the gyrator-capacitor form: a magnetic
node's potential is the magnetic scalar potential, so a branch's across
variable is the magnetomotive force ``mmf`` [A] (ampere-turns) and its
through variable the flux variation ``dphi/dt`` [Wb/s = V]; their product is
a power.  Flux is conserved at magnetic nodes as current is at electrical
ones.  A reluctance stores energy as a function of the flux through it (the
magnetic counterpart of a capacitor), a magnetic resistance dissipates
(eddy-current loss), and a coil of ``N`` turns is a gyrator between an
electrical and a magnetic port (``v = N dphi/dt``, ``mmf = N i``), so a coil
on a core of reluctance ``R`` is an inductor ``L = N**2 / R``.
"""
from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..common.physics import MU0
from .base import EFFORT, FLOW, P_LINEAR, P_STORE_EFFORT, P_STORE_FLOW, Contribution, Dissipation, Storage
from .component import Component, LawForm, Value, register
from .sources import AcrossSource, CurrentSource
from .storage import StorageComponent
from .twoports import TwoPortComponent

__all__ = ["Reluctance", "MagneticResistance", "MmfSource", "FluxRateSource", "Coil", "VariableGap"]

_V = sp.Symbol("v", real=True)


@register
class Reluctance(StorageComponent):
    """Reluctance ``X1 a b reluctance R=1e6 [phis=1e-4] [IC=mmf0]``.

    State: magnetic flux ``phi`` [Wb] through the branch from ``a`` to ``b``
    (``dphi/dt`` is the branch's through variable).  Linear: ``H = R
    phi**2 / 2``, ``mmf = e(a) - e(b) = R phi``.  With ``phis`` (saturation
    flux) the ready saturating law ``mmf = R phis sinh(phi / phis)``: linear
    (``R``) for ``|phi| << phis``, the flux growing only logarithmically with
    the mmf beyond, defined on the whole line so Newton never leaves it;
    ``H = R phis**2 (cosh(phi / phis) - 1)``, convex.  Any other law:
    ``H={f(phi)}`` (energy) or ``F={mmf(phi)}`` (its effort).  ``IC`` is the
    initial mmf (linear law).

    Examples
    --------
    A coil of N turns on a core of reluctance R is the inductor N**2 / R:

    >>> import phsym
    >>> m = phsym.parse("V1 e 0\\nR1 e a 1\\nNC1 a 0 m 0 coil N=100\\nX1 m 0 reluctance R=1e6\\n")
    >>> m.hamiltonian
    X1*phi_X1**2/2
    >>> complex(m.linearize().transfer(1j * 100)[0, 0])    # 1 / (R1 + j w L), L = 10 mH
    (0.5-0.5j)
    """

    kind = "reluctance"
    keywords = ("reluctance",)
    domain = "magnetic"
    terminals = ("a", "b")
    values = (Value("R", "A/Wb", "reluctance (linear, or small-flux for the saturating law)", main=True,
                    check="positive"),
              Value("phis", "Wb", "saturation flux of the law R phis sinh(phi/phis)", optional=True,
                    check="positive"))
    laws = (LawForm("H", "phi", "stored energy [J] of the flux phi [Wb]"),
            LawForm("F", "phi", "magnetomotive force [A] of the flux phi [Wb] (energy: its integral)",
                    effort=True))
    ic = "initial magnetomotive force [A]"
    summary = "reluctance (magnetic storage): linear, saturating (phis=) or a law"
    state_prefix = "phi"

    def linear_energy(self, x: sp.Symbol, value: sp.Expr) -> sp.Expr:
        """``R x**2 / 2``, or ``R phis**2 (cosh(x / phis) - 1)`` with ``phis``.

        Parameters
        ----------
        x : sympy.Symbol
            The flux.
        value : sympy.Expr
            The reluctance.
        """
        phis = self.spec.values.get("phis")
        if phis is None:
            return value * x ** 2 / 2
        phis = sp.sympify(phis)
        return value * phis ** 2 * (sp.cosh(x / phis) - 1)

    def is_linear(self) -> bool:
        """Linear unless a law or the saturation flux is given."""
        return super().is_linear() and "phis" not in self.spec.values


@register
class MagneticResistance(Component):
    """Magnetic resistance ``X2 a b magnetic_resistance Rm=0.01``: ``mmf =
    Rm dphi/dt`` (an eddy-current loss); dissipates ``mmf**2 / Rm``.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("U1 m 0 mmf\\nX2 m 0 magnetic_resistance Rm=0.5\\n")
    >>> m.structure.dissipative[0].z
    w_X2/X2
    """

    kind = "magnetic_resistance"
    keywords = ("magnetic_resistance",)
    domain = "magnetic"
    terminals = ("a", "b")
    values = (Value("Rm", "A s/Wb", "mmf per flux variation", main=True, check="positive"),)
    summary = "magnetic resistance (eddy-current loss): mmf = Rm dphi/dt"

    def contribute(self) -> Contribution:
        d = Dissipation(self.name, self.name, "across", _V / self.value("Rm"), _V, True)
        return Contribution(branches=[self.branch("dissipation", P_LINEAR)], dissipations=[d])


@register
class MmfSource(AcrossSource):
    """Magnetomotive-force source ``U1 a b mmf [waveform]``: ``u = e(a) -
    e(b)`` [A]; ``y`` = flux variation it drives out of ``a`` [Wb/s], so
    ``y u`` is the power delivered."""

    kind = "mmf"
    keywords = ("mmf",)
    domain = "magnetic"
    terminals = ("a", "b")
    summary = "magnetomotive-force source; y is the flux variation it drives"


@register
class FluxRateSource(CurrentSource):
    """Flux-variation source ``U2 a b flux_rate [waveform]``: the flux
    variation ``u`` [Wb/s] flows from ``a`` through the source to ``b``
    (pushed into ``b``, as a SPICE current source); ``y = e(b) - e(a)``."""

    kind = "flux_rate"
    letters = ()
    keywords = ("flux_rate",)
    domain = "magnetic"
    terminals = ("a", "b")
    summary = "flux-variation source (pushes u into b); y = e(b) - e(a)"


@register
class Coil(TwoPortComponent):
    """Coil ``NC1 e+ e- m+ m- coil N=100``: ``N`` turns between an electrical
    port (``e+``, ``e-``) and a magnetic port (``m+``, ``m-``).

    A current ``i`` entering at ``e+`` raises ``m+``: ``mmf = e(m+) - e(m-)
    = N i``, driving flux out of ``m+`` through the magnetic circuit and back
    into ``m-``; with ``phi`` that flux, ``v = e(e+) - e(e-) = N dphi/dt``.
    A coil on a core from ``m+`` to ``m-`` thus has a positive core flux for
    a positive current.  Lossless: a gyrator of ratio ``-N`` in the
    receiver convention of both ports (the flux entering the coil at ``m+``
    is ``-dphi/dt``).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("I1 0 e\\nNC1 e 0 m 0 coil N=10\\nX1 m 0 reluctance R=1e3\\n")
    >>> m.hamiltonian
    X1*phi_X1**2/2
    """

    kind = "coil"
    keywords = ("coil",)
    domain = "electrical-magnetic"      # shown in the component table; each branch gets its own below
    terminals = ("e+", "e-", "m+", "m-")
    values = (Value("N", "", "number of turns", main=True, check="nonzero"),)
    summary = "coil of N turns: gyrator between an electrical and a magnetic port"

    def contribute(self) -> Contribution:
        c = super().contribute()
        bp, bs = c.branches
        tp = replace(c.twoports[0], kind="gyrator", ratio=-c.twoports[0].ratio)
        return Contribution(branches=[replace(bp, domain="electrical"), replace(bs, domain="magnetic")],
                            twoports=[tp])


@register
class VariableGap(Component):
    """Air gap moved by a mechanical part ``XG1 m+ m- a b variable_gap g0=1m A=20u [Rc=0]``.

    A transducer between a magnetic branch (``m+`` -> ``m-``, flux ``phi``)
    and a mechanical one (``a`` -> ``b``, mobility analogy: displacement
    ``x`` with ``dx/dt = v(a) - v(b)``; ``x > 0`` closes the gap).  One
    storage with two states and ``H(phi, x) = R(x) phi**2 / 2``, ``R(x) = Rc
    + (g0 - x) / (mu0 A)``: the gap's mmf is ``dH/dphi = R(x) phi`` and the
    force it transmits from ``a`` to ``b`` is ``dH/dx = -phi**2 / (2 mu0 A)``
    (the field pulls the part into the gap).  Lossless; the moving part of a
    guitar or Rhodes pickup, a solenoid, a relay.  ``x`` must stay below
    ``g0 + Rc mu0 A`` (the reluctance stays positive).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("U1 m 0 mmf\\nXG1 m 0 v 0 variable_gap g0=1m A=1e-4\\nM1 v 0 mass m=1\\n")
    >>> m.states
    ['phi_XG1', 'x_XG1', 'p_M1']
    """

    kind = "variable_gap"
    keywords = ("variable_gap",)
    domain = "magnetic-mechanical"      # shown in the component table; each branch gets its own below
    terminals = ("m+", "m-", "a", "b")
    values = (Value("g0", "m", "air-gap length at x = 0", main=True, check="positive"),
              Value("A", "m^2", "pole area", default=1e-4, check="positive"),
              Value("Rc", "A/Wb", "reluctance of the iron path in series", default=0.0, check="nonnegative"))
    summary = "air gap moved by a mechanical part: H = (Rc + (g0 - x)/(mu0 A)) phi^2/2"

    def contribute(self) -> Contribution:
        mp, mm, a, b = self.spec.nodes
        phi = sp.Symbol(f"phi_{self.name}", real=True)
        x = sp.Symbol(f"x_{self.name}", real=True)
        R = self.value("Rc") + (self.value("g0") - x) / (sp.Float(MU0) * self.value("A"))
        bm = replace(self.branch("storage", P_STORE_EFFORT, nodes=(mp, mm), suffix=".m"), domain="magnetic")
        bx = replace(self.branch("storage", P_STORE_FLOW, nodes=(a, b), suffix=".x"), domain="translational")
        st = Storage((self.name,), (phi, x), R * phi ** 2 / 2, (bm.name, bx.name), (EFFORT, FLOW), (None, None),
                     quadratic=False)
        return Contribution(branches=[bm, bx], storages=[st])
