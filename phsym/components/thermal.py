"""The thermal domain: heat capacities, irreversible heat transfer, Joule heating, sources.

A thermal node's potential is its absolute temperature ``T`` [K] (the datum
is 0 K), a branch's through variable an entropy flow [W/K]; their product
is a power.  A heat capacity stores energy as a function of its entropy
``s`` [J/K].  Heat conduction between two bodies keeps energy and creates
entropy: it is a two-port receiving zero power, ``T_a f_a + T_b f_b = 0``,
whose entropy flows leave ``f_a + f_b <= 0`` behind as created entropy
``sigma = G (T_a - T_b)**2 / (T_a T_b) >= 0`` (the irreversible
port-Hamiltonian form of Ramirez, Maschke and Sbarbaro).  A discrete
gradient step keeps the energy of a closed thermal network exactly; the
entropy balance is reported by :func:`phsym.simulation.thermal.entropy_balance`.
"""
from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..errors import NetlistError
from .base import EFFORT, Contribution
from .component import Value, register
from .device import Device
from .element import DATUM
from .sources import AcrossSource, CurrentSource, _pushed_into_first
from .storage import _Grounded

_TA, _TB, _V = sp.symbols("T_a T_b v", positive=False, real=True)

__all__ = ["HeatCapacity", "HeatTransfer", "JouleHeating", "TemperatureSource", "EntropyFlowSource"]


@register
class HeatCapacity(_Grounded):
    """Heat capacity ``NAME T 0 heat_capacity C=10 [T0=293.15] [IC=T_init]``.

    State: entropy ``s`` [J/K] relative to the reference temperature ``T0``.
    Energy (internal energy above ``C T0``) ``H = C T0 (exp(s / C) - 1)``,
    so the port's effort is the absolute temperature ``T = dH/ds = T0
    exp(s / C)`` [K] between the node and the datum (0 K), and its flow the
    entropy flow ``ds/dt`` entering the node [W/K]; ``T ds/dt = C dT/dt``
    is the heat received.  ``IC`` is the initial temperature (default
    ``T0``).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("TH1 a 0 heat_capacity C=10 T0=300 IC=330\\n"
    ...                 "TH2 b 0 heat_capacity C=10 T0=300\\nG1 a b heat_transfer G=2\\n")
    >>> m.hamiltonian
    TH1*TH1.T0*(exp(s_TH1/TH1) - 1) + TH2*TH2.T0*(exp(s_TH2/TH2) - 1)
    """

    kind = "heat_capacity"
    keywords = ("heat_capacity",)
    domain = "thermal"
    terminals = ("T", "0")
    values = (Value("C", "J/K", "heat capacity", main=True, check="positive"),
              Value("T0", "K", "reference temperature (entropy 0)", default=293.15, check="positive"))
    laws = ()
    ic = "initial temperature [K]"
    summary = "heat capacity (state: entropy; effort: absolute temperature)"
    port_type = EFFORT
    state_prefix = "s"

    def linear_energy(self, x: sp.Symbol, value: sp.Expr) -> sp.Expr:
        """``C T0 (exp(s / C) - 1)``.

        Parameters
        ----------
        x : sympy.Symbol
            The entropy.
        value : sympy.Expr
            The heat capacity.
        """
        return value * self.value("T0") * (sp.exp(x / value) - 1)

    def is_linear(self) -> bool:
        """Never: the temperature grows exponentially with the entropy."""
        return False

    def contribute(self) -> Contribution:
        ic = self.spec.ic
        if ic is not None and sp.sympify(ic).is_number and not sp.sympify(ic) > 0:
            raise NetlistError(f"{self.name}: initial temperature IC={ic} is not above 0 K",
                               self.spec.arg_locations.get("ic", self.spec.location),
                               hint="temperatures are absolute, in kelvin (20 °C is IC=293.15)")
        return super().contribute()


def _thermal_nodes(device: Device, *nodes: str) -> None:
    """Thermal ports are referenced to 0 K: a terminal at the datum is an error."""
    for node in nodes:
        if node == DATUM:
            raise NetlistError(f"{device.name}: terminal at the datum {DATUM!r} (0 K) has no temperature",
                               device.spec.location,
                               hint="connect it to a node held by a temperature source or a heat capacity")


@register
class HeatTransfer(Device):
    """Irreversible heat transfer ``NAME a b heat_transfer G=2`` between two thermal nodes.

    Heat flows from the hotter node: ``Q = G (T_a - T_b)`` [W] (Fourier's
    law, conductance ``G`` [W/K]).  Two ports to the datum, one per node,
    voltage-controlled: entropy ``f_a = Q / T_a`` enters the element from
    ``a`` and ``-f_b = Q / T_b`` leaves it into ``b``.  The element receives
    ``T_a f_a + T_b f_b = 0`` (energy is conserved) and creates the entropy
    ``sigma = -(f_a + f_b) = G (T_a - T_b)**2 / (T_a T_b) >= 0`` [W/K].

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("TH1 a 0 heat_capacity C=10 IC=330\\nTA amb 0 temperature DC 300\\n"
    ...                 "G1 a amb heat_transfer G=2\\n")
    >>> [str(d.z) for d in m.structure.dissipative]
    ['G1*(w_G1.a - w_G1.b)/w_G1.a', 'G1*(-w_G1.a + w_G1.b)/w_G1.b']
    """

    kind = "heat_transfer"
    keywords = ("heat_transfer",)
    domain = "thermal"
    terminals = ("a", "b")
    values = (Value("G", "W/K", "thermal conductance", main=True, check="positive"),)
    summary = "irreversible heat transfer Q = G (Ta - Tb): conserves energy, creates entropy"

    def contribute(self) -> Contribution:
        a, b = self.spec.nodes[:2]
        _thermal_nodes(self, a, b)
        Ta, Tb = _TA, _TB
        G = self.value("G")
        out = Contribution()
        self.multiport(out, [("a", a, DATUM, G * (Ta - Tb) / Ta), ("b", b, DATUM, G * (Tb - Ta) / Tb)], [Ta, Tb])
        return out


@register
class JouleHeating(Device):
    """Resistor heating a body ``NAME e+ e- T joule R=100``: electrical port
    ``e+ -> e-`` with ``i = v / R``, thermal port ``T -> datum``.

    The heat ``v**2 / R`` leaves as the entropy flow ``v**2 / (R T)`` into
    the thermal node ``T``: the thermal port's flow is ``f_T = -v**2 / (R
    T)``, so the element receives ``v i + T f_T = 0`` and turns electrical
    energy into heat without loss.  Its entropy creation is ``v**2 / (R T)``.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 e 0 DC 10\\nRH1 e 0 body joule R=100\\nTH1 body 0 heat_capacity C=5\\n")
    >>> [str(d.z) for d in m.structure.dissipative]
    ['w_RH1.e/RH1', '-w_RH1.e**2/(RH1*w_RH1.t)']
    """

    kind = "joule"
    keywords = ("joule",)
    domain = "electrical-thermal"       # shown in the component table; each branch gets its own below
    terminals = ("e+", "e-", "T")
    values = (Value("R", "ohm", "electrical resistance", main=True, check="positive"),)
    summary = "resistor whose heat v^2/R enters a thermal node (electro-thermal coupling)"

    def contribute(self) -> Contribution:
        ep, em, t = self.spec.nodes[:3]
        _thermal_nodes(self, t)
        v, T = _V, _TA
        R = self.value("R")
        out = Contribution()
        self.multiport(out, [("e", ep, em, v / R), ("t", t, DATUM, -v ** 2 / (R * T))], [v, T])
        out.branches[:] = [replace(br, domain=dom) for br, dom in zip(out.branches, ("electrical", "thermal"))]
        return out


@register
class TemperatureSource(AcrossSource):
    """Temperature source ``NAME a 0 temperature [waveform]``: ``u = T(a) - T(b)``
    [K] (a bath at ``u`` when ``b`` is the datum); ``y`` = entropy flow it
    delivers out of ``a`` [W/K], so ``y u`` is the heat it delivers.  A bath
    (``b`` the datum) must stay above 0 K: a run refuses an input sample
    at or below it."""

    kind = "temperature"
    keywords = ("temperature",)
    domain = "thermal"
    terminals = ("a", "b")
    absolute_input = "K"         # to the datum (0 K) it is a bath's absolute temperature: > 0
    summary = "temperature source (a bath); y is the entropy flow it delivers"


@register
class EntropyFlowSource(CurrentSource):
    """Entropy-flow source ``NAME a 0 entropy_flow [waveform]``: pushes the
    entropy flow ``u`` [W/K] into node ``a`` (drawn from ``b``); ``y = T(a) -
    T(b)``, so ``y u`` is the heat delivered."""

    kind = "entropy_flow"
    letters = ()
    keywords = ("entropy_flow",)
    domain = "thermal"
    terminals = ("a", "b")
    summary = "entropy-flow source into a; y = T(a) - T(b)"

    def contribute(self) -> Contribution:
        return _pushed_into_first(self)
