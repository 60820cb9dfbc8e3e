"""The piano-hammer felt: a one-sided power-law spring with compression-dependent damping."""
from __future__ import annotations

import sympy as sp

from ..errors import StructureError
from .base import P_VCR, Contribution, Dissipation
from .component import Value, register
from .storage import Contact

__all__ = ["Felt"]

_V = sp.Symbol("v", real=True)
_X = sp.Symbol("x_felt", real=True)


@register
class Felt(Contact):
    """Felt ``NAME a b felt K=.. [p=2.5] [alpha=..] [gap=0]``: a hysteretic hammer felt (Hunt-Crossley).

    A :class:`Contact` (state: compression ``x``, ``dx/dt = e(a) - e(b)``,
    elastic force ``K (x - gap)**p`` once ``x > gap``) with a damper in
    parallel (branch ``NAME.d``) whose coefficient grows with the
    compression: force ``alpha K (x - gap)**p v`` with ``v = e(a) - e(b)``.
    The total force ``K x**p (1 + alpha dx/dt)`` (Hunt and Crossley) loads
    and unloads along different curves (hysteresis) and the damper receives
    ``alpha K x**p v**2 >= 0`` at every compression: passive.  The damper's
    law reads the felt's state (:attr:`Dissipation.reads`); a step evaluates
    it at the step's midpoint compression, so the discrete energy balance
    stays exact.  Mobility analogy only.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("M1 v 0 mass m=0.03 IC=3\\nH1 v 0 felt K=1e9 p=2.5 alpha=0.2\\n")
    >>> m.states, [d.element for d in m.structure.dissipative]
    (['p_M1', 'x_H1'], ['H1.d'])
    >>> m.structure.dissipative[0].reads
    (1,)
    """

    kind = "felt"
    keywords = ("felt",)
    values = (Value("K", "N/m^p", "felt stiffness", main=True, check="positive"),
              Value("p", "", "exponent of the force law (felts: 2 to 3.5)", default=2.5, check="positive"),
              Value("alpha", "s/m", "Hunt-Crossley damping: force K x**p (1 + alpha dx/dt)", default=0.0,
                    check="nonnegative"),
              Value("gap", "m", "compression at which contact begins", default=0.0, check="nonnegative"))
    summary = "piano-hammer felt: one-sided spring K x^p with damping alpha K x^p (Hunt-Crossley hysteresis)"

    def contribute(self) -> Contribution:
        if self.impedance:
            raise StructureError(f"felt {self.name}: only the mobility analogy is supported", [self.name],
                                 hint="drop analogy=impedance")
        out = super().contribute()
        d = _X - self.value("gap")
        c = self.value("alpha") * self.value("K") * sp.Piecewise((d ** self.value("p"), d > 0), (0, True))
        br = self.branch("dissipation", P_VCR, nodes=self.oriented_nodes(), suffix=".d")
        out.branches.append(br)
        out.dissipations.append(Dissipation(br.name, br.name, "across", c * _V, _V, False,
                                            reads=((_X, self.name),)))
        return out
