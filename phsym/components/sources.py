"""Sources: external ports with an input ``u`` and a collocated output ``y``
(``y u`` is the power the rest of the system receives from the source)."""
from __future__ import annotations

from .base import P_SOURCE_ACROSS, P_SOURCE_THROUGH, Contribution, Port
from .analogy import Mechanical
from .component import Component, register


def _across(element: Component) -> Contribution:
    """A source fixing ``e(n+) - e(n-) = u``; ``y`` = through variable delivered out of ``n+``."""
    br = element.branch("source_effort", P_SOURCE_ACROSS)
    return Contribution(branches=[br], ports=[Port(element.name, br.name, "across", element.spec.waveform)])


def _pushed_into_first(element: Component) -> Contribution:
    """A source pushing the through variable ``u`` into its first node; ``y = e(a) - e(b)``."""
    a, b = element.spec.nodes[:2]
    br = element.branch("source_flow", P_SOURCE_THROUGH, nodes=(b, a))
    return Contribution(branches=[br], ports=[Port(element.name, br.name, "through", element.spec.waveform)])

__all__ = ["VoltageSource", "VelocitySource", "AngularVelocitySource", "CurrentSource", "ForceSource",
           "TorqueSource"]


class AcrossSource(Component):
    """A source fixing the across variable ``e(n+) - e(n-) = u``."""

    source = True

    def contribute(self) -> Contribution:
        return _across(self)


@register
class VoltageSource(AcrossSource):
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
    letters = ("V",)
    summary = "voltage source; y is the current it delivers"


@register
class VelocitySource(Mechanical, AcrossSource):
    """Velocity source ``S1 a b velocity [waveform]``: ``u = v(a) - v(b)``;
    ``y`` = force it exerts on ``a`` (power delivered ``y u``).  With
    ``analogy=impedance`` the velocity ``u`` is pushed into ``a`` (a through
    variable) and ``y = e(a) - e(b)`` is the force."""

    kind = "velocity"
    keywords = ("velocity",)
    domain = "translational"
    terminals = ("a", "b")
    summary = "velocity source; y is the force it exerts on a"

    def contribute(self) -> Contribution:
        return _pushed_into_first(self) if self.impedance else _across(self)


@register
class AngularVelocitySource(VelocitySource):
    """Angular velocity source ``W1 a b angular_velocity``: ``u = w(a) - w(b)``,
    ``y`` = torque exerted on ``a``."""

    kind = "angular_velocity"
    keywords = ("angular_velocity",)
    domain = "rotational"
    summary = "angular velocity source; y is the torque it exerts on a"


@register
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
    letters = ("I",)
    source = True
    summary = "current source (pushes u into n-); y = e(n-) - e(n+)"

    def contribute(self) -> Contribution:
        br = self.branch("source_flow", P_SOURCE_THROUGH)
        return Contribution(branches=[br], ports=[Port(self.name, br.name, "through", self.spec.waveform)])


@register
class ForceSource(Mechanical, CurrentSource):
    """Force source ``F1 a b force [waveform]``: applies the force ``u`` to
    node ``a`` (reaction on ``b``).  Output ``y = v(a) - v(b)``, the velocity
    of ``a`` relative to ``b``; ``y u`` is the power delivered.  With
    ``analogy=impedance`` the force is the across variable ``u = e(a) -
    e(b)`` and ``y`` the velocity it drives out of ``a``."""

    kind = "force"
    letters = ()
    keywords = ("force",)
    domain = "translational"
    terminals = ("a", "b")
    summary = "force on a (reaction on b); y = v(a) - v(b)"

    def contribute(self) -> Contribution:
        return _across(self) if self.impedance else _pushed_into_first(self)


@register
class TorqueSource(ForceSource):
    """Torque source ``T1 a b torque``: applies the torque ``u`` to node ``a``;
    ``y = w(a) - w(b)``."""

    kind = "torque"
    keywords = ("torque",)
    domain = "rotational"
    summary = "torque on a (reaction on b); y = w(a) - w(b)"
