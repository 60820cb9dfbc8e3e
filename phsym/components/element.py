"""An element as the netlist describes it: the input of a component.

Plain data: the netlist stage (:mod:`phsym.netlist`) produces these records
and each component kind (:mod:`phsym.components.component`) reads one to
contribute to the port-Hamiltonian structure.  Values are sympy expressions
in parameter symbols so that every physical value can be varied and fitted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Tuple

import sympy as sp

from ..common.names import DATUM  # the datum node: ``0`` and ``gnd`` map to it
from ..errors import Location

__all__ = ["DATUM", "Law", "Waveform", "ElementSpec"]


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
        The symbol the law is written in (declared by the kind's
        :class:`~phsym.components.component.LawForm`); a real ``sympy.Symbol``.
    location : Location or None
        Where the law was written.
    learn : bool
        The law is to be learned from data (``H=learn``, ``I=learn``,
        ``V=learn``; see :mod:`phsym.identify.gp`); ``expr`` is then the
        placeholder ``variable**2 / 2`` (``variable`` for a dissipative
        law), which fixes the structure only.
    """

    key: str
    expr: sp.Expr
    variable: sp.Symbol
    location: Optional[Location] = None
    learn: bool = False


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
        A kind of the component registry (:data:`phsym.components.REGISTRY`).
    nodes : tuple of str
        Node names (datum canonicalised to ``"0"``; subcircuit-internal nodes
        prefixed ``X1.``).  Two-ports: ``(p+, p-, s+, s-)``.  Empty for ``K``.
    values : dict of str to sympy.Expr
        Values keyed by the kind's declared value keys, in parameter
        symbols; values with a declared default are always present.
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
    choices : dict of str to str
        Word options given (lower case; see
        :class:`~phsym.components.component.Choice`).
    dc : sympy.Expr or None
        A source's DC value when it also has a transient function (SPICE's
        ``V1 a 0 DC 5 SIN(...)``): DC analyses use it, the transient the
        waveform.
    ac : (sympy.Expr, sympy.Expr) or None
        A source's AC specification (``AC mag phase``, phase in degrees):
        the excitation of small-signal analyses.
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
    choices: Mapping[str, str] = field(default_factory=dict)
    dc: Optional[sp.Expr] = None
    ac: Optional[Tuple[sp.Expr, sp.Expr]] = None

