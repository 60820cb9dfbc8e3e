"""Parsed-netlist data: what the parser hands to the graph/structure layer.

This module is the contract between :mod:`phsym.netlist` (text -> specs) and
:mod:`phsym.graph` / :mod:`phsym.structure` (specs -> port-Hamiltonian
structure).  Everything here is plain data; values are sympy expressions in
parameter symbols so that every physical value can be varied and fitted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Tuple

import sympy as sp

from ..errors import Location

__all__ = [
    "KindInfo",
    "KINDS",
    "KIND_KEYWORDS",
    "DATUM",
    "Parameter",
    "Law",
    "Waveform",
    "ElementSpec",
    "ProbeSpec",
    "Netlist",
]

#: Canonical name of the datum (reference) node; ``0`` and ``gnd`` map to it.
DATUM = "0"


@dataclass(frozen=True)
class KindInfo:
    """Static description of an element kind.

    Attributes
    ----------
    kind : str
        Canonical kind name (e.g. ``"capacitor"``).
    domain : str
        ``"electrical"``, ``"translational"``, ``"rotational"`` or ``"any"``
        (two-ports: each port takes the domain of its nodes).
    n_nodes : int
        Number of node arguments (0 for a coupling ``K``).
    main : str or None
        Key of the main value (given positionally for electrical letters, or
        by keyword such as ``m=`` for mechanics). Its default symbol is the
        element name.
    extra : tuple of str
        Other accepted keywords (their default symbols are ``NAME.key``).
    laws : tuple of str
        Accepted law keywords: ``"H"`` (storage), ``"I"``/``"V"``/``"F"``
        (dissipation) with the variable each law is written in, see
        :data:`LAW_VARIABLES`.
    ic : bool
        Whether ``IC=`` is accepted.
    source : bool
        Whether the element is a port carrying a waveform.
    """

    kind: str
    domain: str
    n_nodes: int
    main: Optional[str]
    extra: Tuple[str, ...] = ()
    laws: Tuple[str, ...] = ()
    ic: bool = False
    source: bool = False


KINDS: Dict[str, KindInfo] = {k.kind: k for k in [
    KindInfo("resistor", "electrical", 2, "R", laws=("I", "V")),
    KindInfo("capacitor", "electrical", 2, "C", laws=("H",), ic=True),
    KindInfo("inductor", "electrical", 2, "L", laws=("H",), ic=True),
    KindInfo("vsource", "electrical", 2, None, source=True),
    KindInfo("isource", "electrical", 2, None, source=True),
    KindInfo("diode", "electrical", 2, None, extra=("Is", "N", "Vt")),
    KindInfo("coupling", "electrical", 0, "k"),
    KindInfo("transformer", "any", 4, "n"),
    KindInfo("gyrator", "any", 4, "r"),
    KindInfo("mass", "translational", 2, "m", laws=("H",), ic=True),
    KindInfo("spring", "translational", 2, "k", laws=("H",), ic=True),
    KindInfo("damper", "translational", 2, "c"),
    KindInfo("force", "translational", 2, None, source=True),
    KindInfo("velocity", "translational", 2, None, source=True),
    KindInfo("inertia", "rotational", 2, "J", laws=("H",), ic=True),
    KindInfo("torsion", "rotational", 2, "k", laws=("H",), ic=True),
    KindInfo("rdamper", "rotational", 2, "c"),
    KindInfo("torque", "rotational", 2, None, source=True),
    KindInfo("angular_velocity", "rotational", 2, None, source=True),
]}

#: Kind keywords that may follow the nodes (they win over the name's letter).
KIND_KEYWORDS: Tuple[str, ...] = (
    "mass", "spring", "damper", "force", "velocity",
    "inertia", "torsion", "rdamper", "torque", "angular_velocity",
)

#: Name of the variable a law expression is written in, per (kind, law key).
LAW_VARIABLES: Dict[Tuple[str, str], str] = {
    ("capacitor", "H"): "q",       # charge [C]
    ("inductor", "H"): "phi",      # flux linkage [Wb]
    ("mass", "H"): "p",            # momentum [kg m/s]
    ("spring", "H"): "x",          # elongation [m]
    ("inertia", "H"): "p",         # angular momentum [kg m^2/s]
    ("torsion", "H"): "theta",     # twist angle [rad]
    ("resistor", "I"): "v",        # voltage-controlled: i = f(v)
    ("resistor", "V"): "i",        # current-controlled: v = g(i)
}


@dataclass(frozen=True)
class Parameter:
    """A netlist parameter.

    Attributes
    ----------
    name : str
        Parameter name (``.param`` name, element name, or ``ELEMENT.key``).
    symbol : sympy.Symbol
        The symbol used in every expression (a real sympy Symbol).
    default : float
        Default numeric value (derived parameters: their expression evaluated
        at the other defaults).
    expression : sympy.Expr or None
        For a derived parameter (``.param b={2*a}``), its definition in terms
        of other parameter symbols; ``None`` for an independent parameter.
        When a user overrides ``a`` but not ``b``, ``b`` follows ``a``.
    location : Location or None
        Where it was defined.
    """

    name: str
    symbol: sp.Symbol
    default: float
    expression: Optional[sp.Expr] = None
    location: Optional[Location] = None


@dataclass(frozen=True)
class Law:
    """A nonlinear constitutive law written as an expression.

    Attributes
    ----------
    key : str
        ``"H"`` (stored energy as a function of the state), ``"I"`` (current
        as a function of voltage) or ``"V"`` (voltage as a function of current).
    expr : sympy.Expr
        The expression in ``variable`` and parameter symbols.
    variable : sympy.Symbol
        The symbol the law is written in (see :data:`LAW_VARIABLES`); it is a
        plain real ``sympy.Symbol`` with that name.
    location : Location or None
        Where the law was written.
    """

    key: str
    expr: sp.Expr
    variable: sp.Symbol
    location: Optional[Location] = None


@dataclass(frozen=True)
class Waveform:
    """Default waveform of a source.

    Attributes
    ----------
    shape : str
        ``"dc"``, ``"sin"``, ``"pulse"`` or ``"pwl"``.
    args : tuple of sympy.Expr
        The numeric arguments in SPICE order (may reference parameters):
        dc: (value,); sin: (offset, amplitude, freq[, delay[, damping]]);
        pulse: (v1, v2[, delay[, rise[, fall[, width[, period]]]]]);
        pwl: (t1, v1, t2, v2, ...).
    location : Location or None
        Where it was written.
    """

    shape: str
    args: Tuple[sp.Expr, ...]
    location: Optional[Location] = None


@dataclass(frozen=True)
class ElementSpec:
    """One element of a flattened netlist.

    Attributes
    ----------
    name : str
        Element name as written (subcircuit instances prefix ``X1.``).
        Names are unique case-insensitively.
    kind : str
        A key of :data:`KINDS`.
    nodes : tuple of str
        Node names (datum canonicalised to ``"0"``; subcircuit-internal nodes
        prefixed ``X1.``).  Two-ports: ``(p+, p-, s+, s-)``.  Empty for ``K``.
    values : dict of str to sympy.Expr
        Values keyed by :class:`KindInfo` ``main`` / ``extra`` keys, in
        parameter symbols.  Diode keys ``Is``, ``N``, ``Vt`` are always present
        (defaults filled in).
    law : Law or None
        Nonlinear law, when given instead of the main value.
    ic : sympy.Expr or None
        Initial condition (SPICE meaning: capacitor voltage, inductor current,
        mass velocity, spring force, inertia angular velocity, torsion torque).
    waveform : Waveform or None
        Default input of a source (``None``: supplied at run time).
    refs : tuple of str
        Referenced element names (coupling ``K``: the two inductors, as their
        :attr:`name` is spelled in the flattened netlist).
    location : Location or None
        Where the element was written (the first character of its name).
    arg_locations : dict of str to Location
        Locations of individual arguments (keys: value keys, ``"law"``,
        ``"ic"``, ``"node0"``, ``"node1"``, ...), for precise messages.
    """

    name: str
    kind: str
    nodes: Tuple[str, ...]
    values: Mapping[str, sp.Expr] = field(default_factory=dict)
    law: Optional[Law] = None
    ic: Optional[sp.Expr] = None
    waveform: Optional[Waveform] = None
    refs: Tuple[str, ...] = ()
    location: Optional[Location] = None
    arg_locations: Mapping[str, Location] = field(default_factory=dict)

    @property
    def info(self) -> KindInfo:
        """Static description of the element's kind."""
        return KINDS[self.kind]


@dataclass(frozen=True)
class ProbeSpec:
    """An extra output recorded by simulations (``.probe``).

    Attributes
    ----------
    quantity : str
        ``"v"`` or ``"i"`` (for mechanics ``v`` is a velocity, ``i`` a force).
    nodes : tuple of str
        ``v(NODE)`` -> (NODE,), ``v(N1,N2)`` -> (N1, N2); empty otherwise.
    element : str or None
        ``i(ELEMENT)`` / ``v(ELEMENT)``: the element name as in the netlist.
    label : str
        Canonical label used to index results, e.g. ``"v(out)"``,
        ``"v(a,b)"``, ``"i(R1)"``.
    location : Location or None
        Where it was written.
    """

    quantity: str
    nodes: Tuple[str, ...] = ()
    element: Optional[str] = None
    label: str = ""
    location: Optional[Location] = None


@dataclass
class Netlist:
    """A parsed and flattened netlist.

    Attributes
    ----------
    elements : list of ElementSpec
        Elements in file order, subcircuits expanded.
    parameters : dict of str to Parameter
        Every parameter (``.param``, per-element value symbols, subcircuit
        instance parameters ``X1.a``, model-card values ``DMOD.IS``).
    probes : list of ProbeSpec
        ``.probe`` outputs.
    title : str
        ``.title`` text (empty when the netlist has no ``.title``).
    file : str or None
        Source path.
    """

    elements: list
    parameters: Dict[str, Parameter]
    probes: list
    title: str = ""
    file: Optional[str] = None

    def element(self, name: str) -> ElementSpec:
        """Return the element called ``name`` (case-insensitive)."""
        key = name.lower()
        for el in self.elements:
            if el.name.lower() == key:
                return el
        raise KeyError(name)
