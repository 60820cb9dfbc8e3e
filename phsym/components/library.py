"""The component library: one small class per element kind.

Every class states its sign convention (receiver convention, see
:mod:`phsym.components.base`), its state, its Hamiltonian and its law.  In the
mechanical domains phsym uses the *mobility* analogy: node potential =
velocity (or angular velocity), branch through-variable = force (or torque).
"""
from __future__ import annotations

from typing import Dict, Mapping, Type

import numpy as np
import sympy as sp

from ..errors import StructureError
from ..netlist.spec import ElementSpec
from .base import (EFFORT, FLOW, Branch, Contribution, Dissipation, Port,
                   Storage, TwoPort)

__all__ = ["Component", "COMPONENTS", "component_for"]

# Tree-selection priorities (lower = preferred in the spanning tree).  The
# order gives the explicit PHS whenever one exists: sources fixing an across
# variable and effort storages in the tree, flow storages and sources fixing
# a through variable in the links.
P_SOURCE_ACROSS, P_STORE_EFFORT, P_CCR, P_LINEAR, P_TWOPORT, P_VCR, P_STORE_FLOW, P_SOURCE_THROUGH = range(8)

_V = sp.Symbol("v", real=True)
_I = sp.Symbol("i", real=True)


class Component:
    """Base class: turns an :class:`~phsym.netlist.spec.ElementSpec` into a
    :class:`~phsym.components.base.Contribution`."""

    kind: str = ""
    domain: str = "electrical"

    def __init__(self, spec: ElementSpec, defaults: Mapping[sp.Symbol, float]):
        self.spec = spec
        self.defaults = defaults

    @property
    def name(self) -> str:
        return self.spec.name

    def value(self, key: str) -> sp.Expr:
        try:
            return sp.sympify(self.spec.values[key])
        except KeyError:
            raise StructureError(f"element {self.name} has no value {key!r}", [self.name]) from None

    def branch(self, role: str, priority: int, nodes=None, suffix: str = "") -> Branch:
        a, b = nodes if nodes is not None else self.spec.nodes[:2]
        return Branch(self.name + suffix, self.name, self.spec.kind, a, b,
                      self.domain, role, priority)

    def contribute(self) -> Contribution:  # pragma: no cover - abstract
        raise NotImplementedError


# ---------------------------------------------------------------- storage
class _StorageComponent(Component):
    """Shared logic of one-state storages."""

    port_type = EFFORT
    state_prefix = "x"
    linear_key = ""

    def linear_energy(self, x: sp.Symbol, value: sp.Expr) -> sp.Expr:
        return x ** 2 / (2 * value)

    def contribute(self) -> Contribution:
        x = sp.Symbol(f"{self.state_prefix}_{self.name}", real=True)
        if self.spec.law is not None:
            H = self.spec.law.expr.subs(self.spec.law.variable, x)
        else:
            H = self.linear_energy(x, self.value(self.linear_key))
        prio = P_STORE_EFFORT if self.port_type == EFFORT else P_STORE_FLOW
        br = self.branch("storage", prio, nodes=self.oriented_nodes())
        st = Storage((self.name,), (x,), H, (br.name,), (self.port_type,), (self.spec.ic,),
                     quadratic=True if self.spec.law is None else None)
        return Contribution(branches=[br], storages=[st])

    def oriented_nodes(self):
        return self.spec.nodes[:2]


class Capacitor(_StorageComponent):
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
    port_type = EFFORT
    state_prefix = "q"
    linear_key = "C"


class Inductor(_StorageComponent):
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
    port_type = FLOW
    state_prefix = "phi"
    linear_key = "L"


class _Grounded(_StorageComponent):
    def oriented_nodes(self):
        a, b = self.spec.nodes[:2]
        return (b, a) if a == "0" else (a, b)


class Mass(_Grounded):
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
    domain = "translational"
    port_type = EFFORT
    state_prefix = "p"
    linear_key = "m"


class Spring(_StorageComponent):
    """Spring ``K1 a b spring k=4 [IC=F0]`` or ``spring H={f(x)}``.

    State: elongation ``x`` [m] with ``dx/dt = e(a) - e(b)`` (velocity of
    ``a`` relative to ``b``).  Energy ``H = k x**2 / 2``.  Port (flow type):
    force ``F = dH/dx`` transmitted from ``a`` to ``b`` (it pulls ``a`` back
    when ``x > 0``).  ``IC`` is the initial force.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("F1 v 0 force\\nM1 v 0 mass m=4\\nK1 v 0 spring k=100\\n")
    >>> m.hamiltonian
    K1*x_K1**2/2 + p_M1**2/(2*M1)
    """

    kind = "spring"
    domain = "translational"
    port_type = FLOW
    state_prefix = "x"
    linear_key = "k"

    def linear_energy(self, x, value):
        return value * x ** 2 / 2


class Inertia(_Grounded):
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
    domain = "rotational"
    port_type = EFFORT
    state_prefix = "p"
    linear_key = "J"


class Torsion(Spring):
    """Torsion spring ``T1 a b torsion k=2 [IC=tau0]`` or ``H={f(theta)}``.

    State: twist ``theta`` [rad], ``dtheta/dt = w(a) - w(b)``;
    ``H = k theta**2 / 2``; torque ``dH/dtheta`` from ``a`` to ``b``.
    """

    kind = "torsion"
    domain = "rotational"
    state_prefix = "theta"


# ------------------------------------------------------------ dissipation
def _check_passive(name: str, law: sp.Expr, var: sp.Symbol,
                   defaults: Mapping[sp.Symbol, float]) -> None:
    """Check w * law(w) >= 0 symbolically if possible, else on samples."""
    power = sp.expand(var * law)
    numeric = power.subs({s: v for s, v in defaults.items()})
    if numeric.free_symbols - {var}:
        missing = sorted(str(s) for s in numeric.free_symbols - {var})
        raise StructureError(f"law of {name} uses unknown symbols {missing}", [name])
    try:
        nonneg = sp.ask(sp.Q.nonnegative(numeric), sp.Q.real(var))
    except Exception:  # sympy's assumption system may give up
        nonneg = None
    if nonneg:
        return
    f = sp.lambdify(var, numeric, modules="numpy")
    grid = np.concatenate([-np.logspace(-9, 3, 200), [0.0], np.logspace(-9, 3, 200)])
    with np.errstate(all="ignore"):
        vals = np.asarray(f(grid), dtype=float) * np.ones_like(grid)
    finite = np.isfinite(vals)
    bad = finite & (vals < -1e-12 * np.maximum(1.0, np.abs(vals).max(initial=0)))
    if bad.any():
        w = grid[np.argmax(bad)]
        raise StructureError(
            f"dissipation law of {name} is not passive: w*z(w) = {vals[np.argmax(bad)]:.3g} < 0 "
            f"at {var} = {w:.3g}", [name],
            hint="a resistive law must satisfy w * z(w) >= 0 (it may only absorb power)")


class Resistor(Component):
    """Resistor ``R n+ n- value``, ``R n+ n- I={f(v)}`` or ``V={g(i)}``.

    Linear: ``v = R i`` (receiver convention).  ``I={f(v)}`` is
    voltage-controlled (``i = f(v)``), ``V={g(i)}`` current-controlled.
    Dissipated power ``v i >= 0`` (checked for nonlinear laws).

    Examples
    --------
    Each dissipative port has a variable ``w`` and a law ``z(w)``:

    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nR1 a b 1k\\nR2 b 0 I={v/100 + v**3}\\n")
    >>> [(d.element, d.z) for d in m.structure.dissipative]
    [('R1', R1*w_R1), ('R2', w_R2**3 + w_R2/100)]
    """

    kind = "resistor"

    def contribute(self) -> Contribution:
        law = self.spec.law
        if law is None:
            d = Dissipation(self.name, self.name, "through", self.value("R") * _I, _I, True)
            prio = P_LINEAR
        else:
            control = "across" if law.key == "I" else "through"
            linear = sp.degree(law.expr, law.variable) == 1 if law.expr.is_polynomial(law.variable) else False
            linear = linear and sp.simplify(law.expr.subs(law.variable, 0)) == 0
            _check_passive(self.name, law.expr, law.variable, self.defaults)
            d = Dissipation(self.name, self.name, control, law.expr, law.variable, bool(linear))
            prio = P_LINEAR if linear else (P_VCR if control == "across" else P_CCR)
        return Contribution(branches=[self.branch("dissipation", prio)], dissipations=[d])


class Diode(Component):
    """Shockley diode ``D anode cathode [MODEL] [Is=.. N=.. Vt=..]``.

    Voltage-controlled: ``i = Is (exp(v / (N Vt)) - 1)`` with
    ``v = e(anode) - e(cathode)``; thermal voltage ``Vt`` defaults to
    25.85 mV.  Dissipated power ``v i >= 0``.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nR1 a b 1k\\nD1 b 0 Is=1n N=2\\n")
    >>> m.structure.dissipative[1].z
    D1.Is*(exp(w_D1/(D1.N*D1.Vt)) - 1)
    """

    kind = "diode"

    def contribute(self) -> Contribution:
        Is, N, Vt = self.value("Is"), self.value("N"), self.value("Vt")
        law = Is * (sp.exp(_V / (N * Vt)) - 1)
        d = Dissipation(self.name, self.name, "across", law, _V, False)
        return Contribution(branches=[self.branch("dissipation", P_VCR)], dissipations=[d])


class Damper(Component):
    """Damper ``B1 a b damper c=0.5``: force ``F = c (v(a) - v(b))``
    transmitted from ``a`` to ``b``; dissipates ``c v**2``.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("F1 v 0 force\\nM1 v 0 mass m=4\\nB1 v 0 damper c=2\\n")
    >>> m.structure.dissipative[0].z
    B1*w_B1
    """

    kind = "damper"
    domain = "translational"

    def contribute(self) -> Contribution:
        d = Dissipation(self.name, self.name, "across", self.value("c") * _V, _V, True)
        return Contribution(branches=[self.branch("dissipation", P_LINEAR)], dissipations=[d])


class RotationalDamper(Damper):
    """Rotational damper ``B1 a b rdamper c=0.1``: torque ``c (w(a) - w(b))``."""

    kind = "rdamper"
    domain = "rotational"


# ---------------------------------------------------------------- sources
class _AcrossSource(Component):
    def contribute(self) -> Contribution:
        br = self.branch("source_effort", P_SOURCE_ACROSS)
        return Contribution(branches=[br], ports=[Port(self.name, br.name, "across", self.spec.waveform)])


class VoltageSource(_AcrossSource):
    """Voltage source ``V n+ n- [waveform]``: input ``u = e(n+) - e(n-)``;
    output ``y`` = current delivered out of ``n+`` into the circuit (SPICE
    reports its negative), so ``y u`` is the power delivered.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 in 0\\nR1 in 0 50\\n")
    >>> complex(m.linearize().transfer(1j)[0, 0])   # y = u / R: current delivered
    (0.02+0j)
    """

    kind = "vsource"


class VelocitySource(_AcrossSource):
    """Velocity source ``S1 a b velocity [waveform]``: ``u = v(a) - v(b)``;
    ``y`` = force it exerts on ``a`` (power delivered ``y u``)."""

    kind = "velocity"
    domain = "translational"


class AngularVelocitySource(VelocitySource):
    """Angular velocity source ``W1 a b angular_velocity``: ``u = w(a) - w(b)``,
    ``y`` = torque exerted on ``a``."""

    kind = "angular_velocity"
    domain = "rotational"


class CurrentSource(Component):
    """Current source ``I n+ n- [waveform]`` (SPICE convention): the current
    ``u`` flows from ``n+`` through the source to ``n-``, i.e. it is pushed into
    ``n-``.  Output ``y = e(n-) - e(n+)``, so ``y u`` is the power delivered.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("I1 0 a\\nR1 a 0 50\\n")      # pushes u into node a
    >>> complex(m.linearize().transfer(1j)[0, 0])   # y = v(a) = R u
    (50+0j)
    """

    kind = "isource"

    def contribute(self) -> Contribution:
        br = self.branch("source_flow", P_SOURCE_THROUGH)
        return Contribution(branches=[br], ports=[Port(self.name, br.name, "through", self.spec.waveform)])


class ForceSource(CurrentSource):
    """Force source ``F1 a b force [waveform]``: applies the force ``u`` to
    node ``a`` (reaction on ``b``).  Output ``y = v(a) - v(b)``, the velocity
    of ``a`` relative to ``b``; ``y u`` is the power delivered."""

    kind = "force"
    domain = "translational"

    def contribute(self) -> Contribution:
        a, b = self.spec.nodes[:2]
        # pushing u into node a == a through-branch from b to a carrying u
        br = self.branch("source_flow", P_SOURCE_THROUGH, nodes=(b, a))
        return Contribution(branches=[br], ports=[Port(self.name, br.name, "through", self.spec.waveform)])


class TorqueSource(ForceSource):
    """Torque source ``T1 a b torque``: applies the torque ``u`` to node ``a``;
    ``y = w(a) - w(b)``."""

    kind = "torque"
    domain = "rotational"


# --------------------------------------------------------------- two-ports
class _TwoPortComponent(Component):
    domain = "any"
    key = ""

    def contribute(self) -> Contribution:
        pp, pm, sp_, sm = self.spec.nodes
        bp = self.branch("twoport", P_TWOPORT, nodes=(pp, pm), suffix=".p")
        bs = self.branch("twoport", P_TWOPORT, nodes=(sp_, sm), suffix=".s")
        tp = TwoPort(self.name, self.kind, bp.name, bs.name, self.value(self.key))
        return Contribution(branches=[bp, bs], twoports=[tp])


class Transformer(_TwoPortComponent):
    """Ideal transformer ``TF p+ p- s+ s- n``: ``v_p = n v_s``, ``i_s = -n i_p``
    (receiver convention on both ports; lossless).  Between an electrical and
    a mechanical port it is the moving-coil transducer of the mobility
    analogy (``v = Bl * velocity``, force ``= Bl * current``).

    Examples
    --------
    An 8 ohm load seen through n = 2 is n**2 * 8 = 32 ohm:

    >>> import phsym
    >>> m = phsym.parse("V1 p 0\\nTF1 p 0 s 0 2\\nR1 s 0 8\\n")
    >>> complex(m.linearize().transfer(1j)[0, 0])
    (0.03125+0j)
    """

    kind = "transformer"
    key = "n"


class Gyrator(_TwoPortComponent):
    """Ideal gyrator ``GY p+ p- s+ s- r``: ``v_p = r i_s``, ``v_s = -r i_p``
    (lossless).

    Examples
    --------
    A 5 ohm load behind r = 10 looks like r**2 / 5 = 20 ohm:

    >>> import phsym
    >>> m = phsym.parse("V1 p 0\\nGY1 p 0 s 0 10\\nR1 s 0 5\\n")
    >>> complex(m.linearize().transfer(1j)[0, 0])
    (0.05+0j)
    """

    kind = "gyrator"
    key = "r"


COMPONENTS: Dict[str, Type[Component]] = {c.kind: c for c in [
    Capacitor, Inductor, Mass, Spring, Inertia, Torsion, Resistor, Diode, Damper,
    RotationalDamper, VoltageSource, VelocitySource, AngularVelocitySource,
    CurrentSource, ForceSource, TorqueSource, Transformer, Gyrator]}


def component_for(spec: ElementSpec, defaults: Mapping[sp.Symbol, float]) -> Component:
    """Return the component object for an element spec (not ``coupling``)."""
    try:
        return COMPONENTS[spec.kind](spec, defaults)
    except KeyError:
        raise StructureError(f"element {spec.name}: unsupported kind {spec.kind!r}", [spec.name]) from None
