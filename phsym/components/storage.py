"""Storage components: one state each, energy ``H(x)`` given by a value or a law.

In the mechanical domains phsym uses the *mobility* analogy: node potential =
velocity (or angular velocity), branch through-variable = force (or torque).
"""
from __future__ import annotations

from typing import Tuple

import sympy as sp

from ..common.piecewise import piecewise_integral
from ..errors import NetlistError
from .base import EFFORT, FLOW, P_STORE_EFFORT, P_STORE_FLOW, Contribution, Storage
from .component import Component, LawForm, Value, register
from .analogy import Mechanical
from .element import DATUM, Law

__all__ = ["StorageComponent", "Capacitor", "Inductor", "Mass", "Spring", "Contact", "Inertia", "Torsion"]


class StorageComponent(Component):
    """A one-state storage: state ``<state_prefix>_<NAME>``, energy from the
    main value (:meth:`linear_energy`) or from the law ``H={...}``.

    Attributes
    ----------
    port_type : str
        ``EFFORT`` (the across variable is dH/dx) or ``FLOW`` (the through
        variable is dH/dx).
    state_prefix : str
        Prefix of the state name.
    """

    port_type = EFFORT
    state_prefix = "x"

    def linear_energy(self, x: sp.Symbol, value: sp.Expr) -> sp.Expr:
        """Energy of a linear element: ``x**2 / (2 value)`` (overridden for springs).

        Parameters
        ----------
        x : sympy.Symbol
            The state.
        value : sympy.Expr
            The main value.
        """
        return x ** 2 / (2 * value)

    def is_linear(self) -> bool:
        """Whether the energy is the quadratic :meth:`linear_energy` (no law given)."""
        return self.spec.law is None

    def port(self) -> str:
        """The port type of the storage (:attr:`port_type` unless an option changes it)."""
        return self.port_type

    def oriented_nodes(self) -> Tuple[str, str]:
        """Terminals of the storage branch, in receiver orientation."""
        return self.spec.nodes[0], self.spec.nodes[1]

    def energy_of_law(self, law: Law, x: sp.Symbol) -> sp.Expr:
        """The energy of a law: ``H={...}`` itself, or the integral from 0 of an effort law.

        Parameters
        ----------
        law : Law
            The element's law.
        x : sympy.Symbol
            The state.
        """
        form = self.law_form(law.key)
        if form is None or not form.effort:
            return law.expr.subs(law.variable, x)
        H = piecewise_integral(law.expr, law.variable)
        if H is None:
            # manualintegrate gives up quickly where integrate() may search for minutes
            from sympy.integrals.manualintegrate import manualintegrate
            F = manualintegrate(law.expr, law.variable)
            if F.has(sp.Integral):
                raise NetlistError(f"{self.name}: cannot integrate {law.key}={{{law.expr}}} to an energy",
                                   law.location, hint="give the energy instead: H={...}")
            H = F - F.subs(law.variable, 0)
        return H.subs(law.variable, x)

    def contribute(self) -> Contribution:
        x = sp.Symbol(f"{self.state_prefix}_{self.name}", real=True)
        law = self.spec.law
        compliance = H = None
        if law is not None:
            H = self.energy_of_law(law, x)
        elif type(self).linear_energy is StorageComponent.linear_energy:
            compliance = self.value(self.main_value().key)      # H = x**2 / (2 value), built on first read
        else:
            H = self.linear_energy(x, self.value(self.main_value().key))
        port = self.port()
        prio = P_STORE_EFFORT if port == EFFORT else P_STORE_FLOW
        br = self.branch("storage", prio, nodes=self.oriented_nodes())
        st = Storage((self.name,), (x,), H, (br.name,), (port,), (self.spec.ic,),
                     quadratic=True if self.is_linear() else None, compliance=compliance)
        return Contribution(branches=[br], storages=[st])


@register
class Capacitor(StorageComponent):
    """Capacitor ``C n+ n- value [IC=v0]`` or ``C n+ n- H={f(q)}``.

    State: charge ``q`` [C].  Energy ``H = q**2 / (2 C)`` (or the law).
    Port (effort type): voltage ``v = e(n+) - e(n-) = dH/dq``, current
    ``i = dq/dt`` entering at ``n+``.  ``IC`` is the initial voltage.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nR1 a b 1k\\nC1 b 0 10u IC=2\\n")
    >>> m.hamiltonian
    q_C1**2/(2*C1)
    >>> m.structure.gradients[0], m.structure.state_initial[0]   # v = dH/dq, IC is v(0)
    (q_C1/C1, 2.00000000000000)
    """

    kind = "capacitor"
    letters = ("C",)
    values = (Value("C", "F", "capacitance", main=True, check="positive"),)
    laws = (LawForm("H", "q", "stored energy [J] of the charge q [C]"),
            LawForm("V", "q", "voltage [V] of the charge q [C] (energy: its integral)", effort=True))
    ic = "initial voltage [V]"
    summary = "capacitor (linear or with an energy law)"
    port_type = EFFORT
    state_prefix = "q"


@register
class Inductor(StorageComponent):
    """Inductor ``L n+ n- value [IC=i0]`` or ``L n+ n- H={f(phi)}``.

    State: flux linkage ``phi`` [Wb].  Energy ``H = phi**2 / (2 L)``.
    Port (flow type): current ``i = dH/dphi`` from ``n+`` to ``n-``,
    voltage ``v = e(n+) - e(n-) = dphi/dt``.  ``IC`` is the initial current.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nR1 a b 1k\\nL1 b 0 1m\\n")
    >>> m.states, m.hamiltonian
    (['phi_L1'], phi_L1**2/(2*L1))
    """

    kind = "inductor"
    letters = ("L",)
    values = (Value("L", "H", "inductance", main=True, check="positive"),)
    laws = (LawForm("H", "phi", "stored energy [J] of the flux linkage phi [Wb]"),
            LawForm("I", "phi", "current [A] of the flux linkage phi [Wb] (energy: its integral)", effort=True))
    ic = "initial current [A]"
    summary = "inductor (linear or with an energy law); couple with K"
    port_type = FLOW
    state_prefix = "phi"


class _Grounded(StorageComponent):
    """A storage referenced to the datum (masses and inertias, mobility analogy)."""

    grounded = True

    def oriented_nodes(self) -> Tuple[str, str]:
        a, b = self.spec.nodes[0], self.spec.nodes[1]
        return (b, a) if a == DATUM else (a, b)


@register
class Mass(Mechanical, _Grounded):
    """Mass ``M1 v 0 mass m=4 [IC=v0]`` (mobility analogy).

    State: momentum ``p`` [kg m/s].  Energy ``H = p**2 / (2 m)`` (or
    ``H={f(p)}``).  Port (effort type) between the velocity node and the
    datum: velocity ``dH/dp``, force ``dp/dt`` (sum of forces applied to the
    node).  ``IC`` is the initial velocity.

    Examples
    --------
    A force on a mass with a damper: y is the velocity, 1/(m s + c).

    >>> import phsym
    >>> m = phsym.parse("F1 v 0 force\\nM1 v 0 mass m=2\\nB1 v 0 damper c=1\\n")
    >>> m.states, m.hamiltonian
    (['p_M1'], p_M1**2/(2*M1))
    >>> complex(m.linearize().transfer(1j)[0, 0])
    (0.2-0.4j)
    """

    kind = "mass"
    keywords = ("mass",)
    domain = "translational"
    terminals = ("v", "0")
    values = (Value("m", "kg", "mass", main=True, check="positive"),)
    laws = (LawForm("H", "p", "kinetic energy [J] of the momentum p [kg m/s]"),
            LawForm("V", "p", "velocity [m/s] of the momentum p [kg m/s] (energy: its integral)", effort=True))
    ic = "initial velocity [m/s]"
    summary = "mass between a velocity node and the datum"
    port_type = EFFORT
    state_prefix = "p"


@register
class Spring(Mechanical, StorageComponent):
    """Spring ``K1 a b spring k=4 [k3=..] [xs=..] [IC=F0]`` or ``spring H={f(x)}``.

    State: elongation ``x`` [m] with ``dx/dt = e(a) - e(b)`` (velocity of
    ``a`` relative to ``b``).  Energy ``H = k x**2 / 2``.  Port (flow type):
    force ``F = dH/dx`` transmitted from ``a`` to ``b`` (it pulls ``a`` back
    when ``x > 0``).  ``IC`` is the initial force.  Ready nonlinear laws:
    ``k3`` adds a cubic force ``k3 x**3`` (a Duffing spring, hardening for
    ``k3 > 0``; energy ``k3 x**4 / 4``), and ``xs`` makes the linear part
    saturate, ``F = k xs tanh(x / xs)`` (energy ``k xs**2 log cosh(x /
    xs)``, written without overflow).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("F1 v 0 force\\nM1 v 0 mass m=4\\nK1 v 0 spring k=100\\n")
    >>> m.hamiltonian
    K1*x_K1**2/2 + p_M1**2/(2*M1)
    """

    kind = "spring"
    keywords = ("spring",)
    domain = "translational"
    terminals = ("a", "b")
    values = (Value("k", "N/m", "stiffness", main=True, check="positive"),
              Value("k3", "N/m^3", "cubic stiffness: adds k3 x**3 to the force", optional=True),
              Value("xs", "m", "saturation elongation: F = k xs tanh(x/xs)", optional=True, check="positive"))
    laws = (LawForm("H", "x", "potential energy [J] of the elongation x [m]"),
            LawForm("F", "x", "force [N] of the elongation x [m] (energy: its integral)", effort=True))
    ic = "initial force [N]"
    summary = "spring between two velocity nodes (linear, cubic k3=, saturating xs=, or a law)"
    port_type = FLOW
    state_prefix = "x"

    def linear_energy(self, x: sp.Symbol, value: sp.Expr) -> sp.Expr:
        """``k x**2/2``, or the saturating ``k xs**2 log cosh(x/xs)``, plus ``k3 x**4/4``.

        Parameters
        ----------
        x : sympy.Symbol
            The elongation.
        value : sympy.Expr
            The stiffness.
        """
        xs, k3 = self.spec.values.get("xs"), self.spec.values.get("k3")
        if xs is None:
            H = value * x ** 2 / 2
        else:
            # log cosh y = |y| + log(1 + exp(-2|y|)) - log 2 (no overflow), by sign so
            # that every derivative stays a plain expression
            y = x / xs
            lc = sp.Piecewise((y + sp.log(1 + sp.exp(-2 * y)), x >= 0), (-y + sp.log(1 + sp.exp(2 * y)), True))
            H = value * xs ** 2 * (lc - sp.log(2))
        return H if k3 is None else H + k3 * x ** 4 / 4

    def is_linear(self) -> bool:
        """Linear unless a law, ``k3`` or ``xs`` is given."""
        return super().is_linear() and not {"k3", "xs"} & set(self.spec.values)


@register
class Contact(Spring):
    """Contact ``C1 a b contact K=1e7 [p=1.5] [gap=0]``: a one-sided spring.

    State: compression ``x`` with ``dx/dt = e(a) - e(b)`` (``a`` moving
    towards ``b``), starting at 0.  Force ``F = K (x - gap)**p`` once the
    compression exceeds ``gap``, zero before (``p = 1.5``: Hertz contact of
    spheres, ``p = 1``: a stiff bumper); energy ``K (x - gap)**(p+1) /
    (p+1)``.  Lossless: an impact rebounds with the velocity it came with
    (add a damper for losses).  Mobility analogy: it pushes ``a`` back like a
    spring (see :class:`Spring`).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("M1 v 0 mass m=0.01 IC=1\\nC1 v 0 contact K=1e6 gap=1m\\n")
    >>> m.states
    ['p_M1', 'x_C1']
    """

    kind = "contact"
    keywords = ("contact",)
    values = (Value("K", "N/m^p", "contact stiffness", main=True, check="positive"),
              Value("p", "", "exponent of the force law (1.5: Hertz)", default=1.5, check="positive"),
              Value("gap", "m", "compression at which contact begins", default=0.0, check="nonnegative"))
    laws = ()
    ic = None
    summary = "contact: one-sided spring K (x - gap)^p (impacts, hammers)"

    def linear_energy(self, x: sp.Symbol, value: sp.Expr) -> sp.Expr:
        """``K (x - gap)**(p+1) / (p+1)`` for ``x > gap``, else 0.

        Parameters
        ----------
        x : sympy.Symbol
            The compression.
        value : sympy.Expr
            The stiffness ``K``.
        """
        p, d = self.value("p"), x - self.value("gap")
        return sp.Piecewise((value * d ** (p + 1) / (p + 1), d > 0), (0, True))

    def is_linear(self) -> bool:
        """Never (one-sided)."""
        return False


@register
class Inertia(Mechanical, _Grounded):
    """Rotational inertia ``J1 w 0 inertia J=0.1 [IC=w0]``.

    State: angular momentum ``p`` [kg m^2/s]; ``H = p**2 / (2 J)``.  Port
    (effort type): angular velocity ``dH/dp`` and torque ``dp/dt``.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("Q1 w 0 torque\\nJ1 w 0 inertia J=0.5\\nT1 w 0 torsion k=3\\n")
    >>> m.states, m.hamiltonian
    (['p_J1', 'theta_T1'], T1*theta_T1**2/2 + p_J1**2/(2*J1))
    """

    kind = "inertia"
    keywords = ("inertia",)
    domain = "rotational"
    terminals = ("w", "0")
    values = (Value("J", "kg m^2", "moment of inertia", main=True, check="positive"),)
    laws = (LawForm("H", "p", "kinetic energy [J] of the angular momentum p [kg m^2/s]"),
            LawForm("W", "p", "angular velocity [rad/s] of the angular momentum p [kg m^2/s] "
                              "(energy: its integral)", effort=True))
    ic = "initial angular velocity [rad/s]"
    summary = "rotational inertia between an angular-velocity node and the datum"
    port_type = EFFORT
    state_prefix = "p"


@register
class Torsion(Spring):
    """Torsion spring ``T1 a b torsion k=2 [IC=tau0]`` or ``H={f(theta)}``.

    State: twist ``theta`` [rad], ``dtheta/dt = w(a) - w(b)``;
    ``H = k theta**2 / 2``; torque ``dH/dtheta`` from ``a`` to ``b``.
    """

    kind = "torsion"
    keywords = ("torsion",)
    domain = "rotational"
    values = (Value("k", "N m/rad", "torsional stiffness", main=True, check="positive"),)
    laws = (LawForm("H", "theta", "potential energy [J] of the twist theta [rad]"),
            LawForm("T", "theta", "torque [N m] of the twist theta [rad] (energy: its integral)", effort=True))
    ic = "initial torque [N m]"
    summary = "torsion spring between two angular-velocity nodes"
    state_prefix = "theta"
