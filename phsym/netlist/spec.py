"""Parsed-netlist data: what the parser hands to the model.

A :class:`Netlist` holds the flattened elements
(:class:`~phsym.components.element.ElementSpec`, the input of the
components), the parameter table and the probes.  Everything here is plain
data; values are sympy expressions in parameter symbols so that every
physical value can be varied and fitted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import sympy as sp

from ..common.names import NameTable
from ..components.element import ElementSpec
from ..errors import Location, NetlistError
from .cards import DeckSettings

__all__ = ["Parameter", "ProbeSpec", "Netlist"]


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
    control : bool
        Marked ``control`` on its ``.param`` card: a run may drive it with a
        signal (``Simulator.run(controls=...)``).
    """

    name: str
    symbol: sp.Symbol
    default: float
    expression: Optional[sp.Expr] = None
    location: Optional[Location] = None
    control: bool = False


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
        The title: ``.title`` text or the deck's first line (see
        :func:`~phsym.netlist.parser.parse_netlist`); may be empty.
    file : str or None
        Source path.
    deck : DeckSettings
        The control cards (``.tran``, ``.options``, ``.temp``, ``.ic``, the analyses).
    saves : tuple of str
        Signals ``.save`` and ``.print tran`` ask for (labels as probes spell them).
    save_all : bool
        No ``.probe``, ``.save`` or ``.print`` selects signals (or ``.save all``
        does): a run records every node voltage and voltage-source current,
        as SPICE saves everything (:meth:`outputs`).
    covariances : dict of str to LawCovariance
        ``.covariance`` cards: the uncertainty of fitted learned laws by element
        (:mod:`phsym.netlist.covariance`).
    """

    elements: list
    parameters: Dict[str, Parameter]
    probes: list
    title: str = ""
    file: Optional[str] = None
    deck: DeckSettings = field(default_factory=DeckSettings)
    saves: Tuple[str, ...] = ()
    save_all: bool = True
    covariances: Dict[str, Any] = field(default_factory=dict)

    def outputs(self) -> List[str]:
        """The signals a run writes besides its states, inputs and powers: the probes and the
        ``.save``/``.print tran`` selection, and with :attr:`save_all` every node's voltage
        ``v(node)`` (subcircuits' too, not phsym's internal ones) and every voltage source's current
        ``i(V1)``, in netlist order."""
        out = [p.label for p in self.probes] + [s for s in self.saves]
        if self.save_all:
            for el in self.elements:
                out += [f"v({n})" for n in el.nodes if n != "0" and "#" not in n]
            out += [f"i({el.name})" for el in self.elements if el.kind in ("vsource", "ammeter") and "#" not in el.name]
        return list(dict.fromkeys(out))

    def element(self, name: str) -> ElementSpec:
        """Return the element called ``name`` (case-insensitive).

        Parameters
        ----------
        name : str
            Element name, any spelling.

        Raises
        ------
        NetlistError
            For an unknown name (listing the known ones).
        """
        table = NameTable(((el.name, el) for el in self.elements), what="element")
        return table.lookup(name, NetlistError)
