"""Physical quantities of each domain: what a node potential, a through
variable and a storage's state are, with their units and probe names.

One table (:data:`DOMAINS`) for every stage that names or labels a signal:
the graph's units per node domain, ``phsym show``'s states and ports, the
probe names ``T(t1)`` or ``vel(m1)`` that stand for SPICE's ``v(...)`` on
non-electrical nodes.

A storage with an *effort* port (capacitor-like: its across variable is
``dH/dx``) integrates its through variable, one with a *flow* port
(inductor-like) its across variable; so the state of a capacitor is a
charge [C = A s] and of an inductor a flux linkage [Wb = V s], of a mass
(mobility analogy: effort port) a momentum [N s], of a spring a
displacement [m], of a heat capacity an entropy [J/K].
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

__all__ = ["Quantity", "Domain", "DOMAINS", "domain_of", "probe_quantity", "PROBE_NAMES", "SYMBOLS", "STATE_NAMES"]


@dataclass(frozen=True)
class Quantity:
    """A physical quantity.

    Attributes
    ----------
    name : str
        What it is (``"temperature"``).
    symbol : str
        Its probe name (``"T"`` in ``T(t1)``).
    unit : str
        SI unit (``"K"``).
    """

    name: str
    symbol: str
    unit: str

    def __str__(self) -> str:
        return f"{self.name} [{self.unit}]" if self.unit else self.name


@dataclass(frozen=True)
class Domain:
    """The quantities of one node domain.

    Attributes
    ----------
    name : str
        The domain (``"electrical"``, ``"thermal"``, ...).
    across, through : Quantity
        A node's potential (and a branch's across variable), a branch's through variable.
    effort_state, flow_state : Quantity
        The state of a storage with an effort port (integral of the through variable) and with a
        flow port (integral of the across variable).
    """

    name: str
    across: Quantity
    through: Quantity
    effort_state: Quantity
    flow_state: Quantity

    def state(self, port: str) -> Quantity:
        """The state of a storage whose port is ``"effort"`` or ``"flow"``."""
        return self.effort_state if port == "effort" else self.flow_state


def _q(name: str, symbol: str, unit: str) -> Quantity:
    return Quantity(name, symbol, unit)


_V, _I = _q("voltage", "v", "V"), _q("current", "i", "A")
_VEL, _F = _q("velocity", "vel", "m/s"), _q("force", "F", "N")
_W, _TAU = _q("angular velocity", "omega", "rad/s"), _q("torque", "tau", "N m")
_P, _X = _q("momentum", "p", "N s"), _q("displacement", "x", "m")
_L, _A = _q("angular momentum", "p", "N m s"), _q("angle", "theta", "rad")

#: Every node domain (mechanics in the mobility analogy unless ``-impedance``); across times through is a
#: power in W.
DOMAINS: Dict[str, Domain] = {d.name: d for d in (
    Domain("electrical", _V, _I, _q("charge", "q", "C"), _q("flux linkage", "phi", "Wb")),
    Domain("magnetic", _q("magnetomotive force", "mmf", "A"), _q("flux rate", "dphi", "Wb/s"),
           _q("magnetic flux", "phi", "Wb"), _q("mmf impulse", "", "A s")),
    Domain("thermal", _q("temperature", "T", "K"), _q("entropy flow", "sflow", "W/K"),
           _q("entropy", "s", "J/K"), _q("temperature impulse", "", "K s")),
    Domain("translational", _VEL, _F, _P, _X),
    Domain("translational-impedance", _F, _VEL, _X, _P),
    Domain("rotational", _W, _TAU, _L, _A),
    Domain("rotational-impedance", _TAU, _W, _A, _L),
)}

#: Probe names other than SPICE's ``v`` / ``i`` (lower case) -> {domain: ``"v"`` (across) or ``"i"`` (through)}:
#: ``vel`` is a node potential in the mobility analogy and a through variable in the impedance one.
PROBE_NAMES: Dict[str, Dict[str, str]] = {}
for _d in DOMAINS.values():
    for _which, _qty in (("v", _d.across), ("i", _d.through)):
        if _qty.symbol.lower() not in ("v", "i"):
            PROBE_NAMES.setdefault(_qty.symbol.lower(), {})[_d.name] = _which


#: Probe names of storage states (lower case): ``x`` (any state, ``x(K1)``) and each domain's state
#: quantities (``q(C1)``, ``phi(L1)``, ``p(M1)``); read by :func:`phsym.structure.probes.state_label`.
STATE_NAMES = frozenset({"x"} | {q.symbol.lower() for d in DOMAINS.values()
                                 for q in (d.effort_state, d.flow_state) if q.symbol})


#: Canonical spelling of each probe name (``"t"`` -> ``"T"``).
SYMBOLS: Dict[str, str] = {q.symbol.lower(): q.symbol for d in DOMAINS.values() for q in (d.across, d.through)}


def domain_of(name: Optional[str]) -> Domain:
    """The :class:`Domain` called ``name`` (electrical for ``None``, ``"any"`` or an unknown name:
    a node only two-ports touch is electrical, as the graph decides).

    Parameters
    ----------
    name : str or None
        A node or branch domain.
    """
    return DOMAINS.get(name or "electrical", DOMAINS["electrical"])


def probe_quantity(which: str, domain: Optional[str]) -> Quantity:
    """The quantity a probe ``v(...)`` (``which="v"``) or ``i(...)`` (``"i"``) measures in ``domain``.

    Parameters
    ----------
    which : str
        ``"v"`` (across, a node potential) or ``"i"`` (through).
    domain : str or None
        The node's or branch's domain.

    Examples
    --------
    >>> str(probe_quantity("v", "thermal"))
    'temperature [K]'
    """
    d = domain_of(domain)
    return d.across if which == "v" else d.through
