"""Building blocks every component contributes to a model.

Sign convention (the only one in phsym): every branch uses the *receiver*
convention.  A branch from node ``a`` to node ``b`` has an across variable
``v = e(a) - e(b)`` (voltage, velocity or angular velocity difference) and a
through variable ``i`` flowing from ``a`` to ``b`` inside the element (current,
force or torque); the element *receives* the power ``v * i``.  A port (source)
has an input ``u`` and a collocated output ``y`` such that ``y * u`` is the
power the rest of the system receives from it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

import sympy as sp

from ..common.branch import Branch  # noqa: F401  (re-exported: the graph's edge)
from ..common.lazy import lazy_field  # noqa: F401  (re-exported: the records' lazy fields)
from ..common.symbolic import product

__all__ = ["Branch", "EffortLaw", "Storage", "Dissipation", "Port", "TwoPort", "Coupling", "Contribution",
           "EFFORT", "FLOW", "lazy_field"]

# Tree-selection priorities (lower = preferred in the spanning tree).  The
# order gives the explicit PHS whenever one exists: sources fixing an across
# variable and effort storages in the tree, flow storages and sources fixing
# a through variable in the links.
P_SOURCE_ACROSS, P_STORE_EFFORT, P_CCR, P_LINEAR, P_TWOPORT, P_VCR, P_STORE_FLOW, P_SOURCE_THROUGH = range(8)

#: Storage port whose *across* variable is the gradient of H (capacitor-like).
EFFORT = "effort"
#: Storage port whose *through* variable is the gradient of H (inductor-like).
FLOW = "flow"


class EffortLaw:
    """A one-state storage's law written through its effort ``e = dH/dx``: the
    state ``x(e)`` and the energy in closed form where ``H(x)`` needs an
    inversion (a junction's charge ``q(v)`` with transit time).

    Simulators then solve each step for the effort's increment instead of
    the state's: no inversion inside Newton, and the predictor extrapolates
    a voltage, which varies smoothly where the charge varies exponentially.

    Parameters
    ----------
    effort : sympy.Symbol
        The effort (its name names Newton's unknown, e.g. ``v_D1.cj``).
    state : sympy.Expr, optional
        ``x(e)``, increasing in ``e``.
    energy : sympy.Expr
        ``H`` in the storage's state and ``effort``, equal to ``H(x)`` at
        ``e = e(x)`` and stationary in ``e`` there (the Legendre form ``x e -
        H*(e)``, ``H*`` the co-energy): energies of the same state through
        slightly different efforts agree to rounding.
    template : tuple of (sympy.Symbol, sympy.Expr), optional
        ``x(e)`` in another symbol, shared by every instance of one law:
        :attr:`state` is written in ``effort`` on first use only (tens of
        milliseconds for a junction charge, which a numeric engine never
        needs).

    Attributes
    ----------
    effort, state, energy, template
        As above.
    """

    def __init__(self, effort: sp.Symbol, state: Optional[sp.Expr] = None, energy: Optional[sp.Expr] = None,
                 template: Optional[Tuple[sp.Symbol, sp.Expr]] = None):
        if state is None and template is None:
            raise TypeError("EffortLaw needs the state law or its template")
        self.effort = effort
        self.energy = energy
        self.template = template if template is not None else (effort, state)
        self._state = state

    @property
    def state(self) -> sp.Expr:
        """``x(e)`` in :attr:`effort`."""
        if self._state is None:
            sym, expr = self.template
            self._state = expr.xreplace({sym: self.effort})
        return self._state

    def __repr__(self) -> str:
        return f"EffortLaw(effort={self.effort}, state={self.template[1]} at {self.template[0]} = {self.effort})"


@dataclass
class Storage:
    """An energy-storing component with one state per port.

    Attributes
    ----------
    elements : tuple of str
        Element names (several for coupled inductors).
    states : tuple of sympy.Symbol
        State variables (charge, flux, momentum, elongation, ...).
    hamiltonian : sympy.Expr
        Stored energy in the states and parameter symbols.
    branches : tuple of str
        Branch carrying each state's port.
    port_types : tuple of str
        :data:`EFFORT` (across = dH/dx, through = dx/dt) or :data:`FLOW`
        (through = dH/dx, across = dx/dt) for each state.
    initial : tuple of (sympy.Expr or None)
        Initial value of the port variable dH/dx (SPICE ``IC=``), or ``None``.
    quadratic : bool, optional
        Whether H is quadratic (inspected when not given).
    by_effort : EffortLaw, optional
        The same law written through the effort (one state only).
    stiff : bool, optional
        A parasitic storage whose modes are far faster than any step a
        simulation of the circuit takes (a junction's charge against its
        series resistance: picoseconds): simulators step it to the end of
        steps of at least :data:`~phsym.common.schemes.STIFF_STEP` (L-stable),
        see :class:`~phsym.simulation.Simulator` ``stiff``.
    hessian : sympy.Expr, optional
        ``d2H/dx2`` of a one-state quadratic storage when its component
        knows it (``1/C`` of a capacitor): the circuit data reads it instead
        of differentiating ``H`` (sympy arithmetic costs about a millisecond
        per element, the bulk of loading a large mesh).
    compliance : sympy.Expr, optional
        The value whose reciprocal is ``d2H/dx2`` of a one-state linear
        storage (a capacitor's ``C``), given instead of ``hamiltonian`` and
        ``hessian`` (pass ``None`` for them): both are then built from it on
        first read, so a deck of plain capacitors loads without sympy
        arithmetic per element; the numeric engine reads the compliance's
        number.
    """

    elements: Tuple[str, ...]
    states: Tuple[sp.Symbol, ...]
    hamiltonian: sp.Expr
    branches: Tuple[str, ...]
    port_types: Tuple[str, ...]
    initial: Tuple[Optional[sp.Expr], ...]

    quadratic: Optional[bool] = None
    by_effort: Optional[EffortLaw] = None
    stiff: bool = False
    hessian: Optional[sp.Expr] = None
    compliance: Optional[sp.Expr] = None

    @property
    def is_quadratic(self) -> bool:
        """Whether H is a quadratic form of the states (linear storage).

        Known by construction for elements given by a value; laws are
        inspected (once) as polynomials.
        """
        if self.quadratic is None:
            H = self.hamiltonian
            poly = sp.Poly(H, *self.states) if H.is_polynomial(*self.states) else None
            self.quadratic = poly is not None and all(sum(m) == 2 for m in poly.monoms())
        return self.quadratic


@dataclass
class Dissipation:
    """A resistive (dissipative) one-port.

    Attributes
    ----------
    element, branch : str
        Element and branch names.
    control : str
        ``"across"``: the law gives the through variable of the across
        variable, ``i = law(v)`` (voltage-controlled, e.g. a diode or a damper
        ``F = c v``); ``"through"``: ``v = law(i)`` (current-controlled).
    law : sympy.Expr
        The law in ``variable``.
    variable : sympy.Symbol
        The controlling variable.
    linear : bool
        Whether the law is linear (then it can be used in either direction).
    couples : tuple of (sympy.Symbol, str)
        Multiport laws (transistors, tubes): symbols of the law that stand
        for the controlling variables of *other* dissipative ports, each
        with that port's ``element`` name.  The ports of one device form a
        resistive multiport receiving ``sum_j w_j z_j(w) >= 0`` where the
        device is passive.
    reads : tuple of (sympy.Symbol, str)
        State-dependent laws (a felt's damping grows with its compression):
        symbols of the law that stand for the state of a storage, each with
        that storage's branch name.  The law must receive ``w z(w, x) >= 0``
        for every state ``x``; a step evaluates it at the step's state (the
        midpoint for the discrete gradient and midpoint schemes), which keeps
        the discrete energy balance exact.
    active : bool
        The port of a controlled source (an op-amp output): not passive.
        Its power ``w z`` is reported as injected (``P_supplied``, and
        ``SimulationResult.P_active``), not as dissipated, and it is left
        out of the passivity checks of the passive part.
    nullator : bool
        The input of an ideal op-amp (a nullor's nullator): across *and*
        through variable are zero.  Its variable ``w`` is no port variable
        but the unknown the paired norator's law reads (the output voltage),
        and its equation is the constraint that the network's value of its
        other variable is zero.  Law ``0``.
    coefficient : sympy.Expr, optional
        ``c`` of a linear law ``z = c w`` when the component knows it (a
        resistor's ``R``), so the circuit data need not take the law apart;
        with ``law=None`` the law ``c w`` is built from it on first read (no
        sympy arithmetic per resistor at load).
    """

    element: str
    branch: str
    control: str
    law: sp.Expr
    variable: sp.Symbol
    linear: bool = False
    couples: Tuple[Tuple[sp.Symbol, str], ...] = ()
    active: bool = False
    reads: Tuple[Tuple[sp.Symbol, str], ...] = ()
    nullator: bool = False
    coefficient: Optional[sp.Expr] = None


def _storage_hessian(st: Storage):
    return None if st.compliance is None else 1 / st.compliance


def _storage_energy(st: Storage):
    return None if st.compliance is None else product(_HALF, st.states[0] ** 2, st.hessian)   # x**2 / (2 C)


def _dissipation_law(d: Dissipation):
    return None if d.coefficient is None else product(d.coefficient, d.variable)


_HALF = sp.Rational(1, 2)
# set after the classes are made: their generated __init__ assigns through these properties
Storage.hessian = lazy_field("hessian", _storage_hessian)
Storage.hamiltonian = lazy_field("hamiltonian", _storage_energy)
Dissipation.law = lazy_field("law", _dissipation_law)


@dataclass
class Port:
    """An external port (source).

    Attributes
    ----------
    element, branch : str
        Element and branch names; the input is named after the element.
    fixes : str
        ``"across"`` (voltage/velocity source: u is the across variable of the
        branch, y = -through) or ``"through"`` (current/force source: u is
        the through variable, y = -across).
    waveform : object
        The netlist's default waveform (:class:`~phsym.netlist.spec.Waveform`)
        or ``None``.
    """

    element: str
    branch: str
    fixes: str
    waveform: object = None


@dataclass
class TwoPort:
    """Ideal lossless two-port (transformer or gyrator).

    Transformer (ratio n): ``v_p = n v_s`` and ``i_s = -n i_p``.
    Gyrator (ratio r): ``v_p = r i_s`` and ``v_s = -r i_p``.
    Both receive no power: ``v_p i_p + v_s i_s = 0``.
    """

    element: str
    kind: str
    branch_p: str
    branch_s: str
    ratio: sp.Expr


@dataclass(frozen=True)
class Coupling:
    """Magnetic coupling ``k`` of two linear inductors (merged into one storage
    by :func:`phsym.components.coupling.couple_inductors`).

    Attributes
    ----------
    element : str
        The coupling element.
    inductors : tuple of str
        The two inductor names.
    k : sympy.Expr
        Coupling coefficient, ``-1 < k < 1``.
    """

    element: str
    inductors: Tuple[str, str]
    k: sp.Expr


@dataclass
class Contribution:
    """What elements add to a model (lists of the records above)."""

    branches: list = field(default_factory=list)
    storages: list = field(default_factory=list)
    dissipations: list = field(default_factory=list)
    ports: list = field(default_factory=list)
    twoports: list = field(default_factory=list)
    couplings: list = field(default_factory=list)

    def extend(self, other: "Contribution") -> None:
        """Append the records of ``other``.

        Parameters
        ----------
        other : Contribution
            Another element's contribution.
        """
        for name in ("branches", "storages", "dissipations", "ports", "twoports", "couplings"):
            getattr(self, name).extend(getattr(other, name))
