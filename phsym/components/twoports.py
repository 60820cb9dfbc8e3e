"""Ideal lossless two-ports: transformers and gyrators (any domains)."""
from __future__ import annotations

from .base import P_TWOPORT, Contribution, TwoPort
from .component import Component, Value, register

__all__ = ["Transformer", "Gyrator"]


class TwoPortComponent(Component):
    """Shared logic: a primary branch ``p+ -> p-`` and a secondary ``s+ -> s-``."""

    domain = "any"
    terminals = ("p+", "p-", "s+", "s-")

    def contribute(self) -> Contribution:
        pp, pm, sp_, sm = self.spec.nodes
        bp = self.branch("twoport", P_TWOPORT, nodes=(pp, pm), suffix=".p")
        bs = self.branch("twoport", P_TWOPORT, nodes=(sp_, sm), suffix=".s")
        tp = TwoPort(self.name, self.kind, bp.name, bs.name, self.value(self.main_value().key))
        return Contribution(branches=[bp, bs], twoports=[tp])


@register
class Transformer(TwoPortComponent):
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
    letters = ("TF",)
    values = (Value("n", "", "ratio v_p / v_s", main=True, check="nonzero"),)
    summary = "ideal transformer (also a moving-coil transducer across domains)"


@register
class Gyrator(TwoPortComponent):
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
    letters = ("GY",)
    values = (Value("r", "ohm", "gyration ratio v_p / i_s", main=True, check="nonzero"),)
    summary = "ideal gyrator"
