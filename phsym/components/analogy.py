"""The two mechanical analogies, as a word option of every mechanical element.

* ``analogy=mobility`` (default): node potential = velocity, through variable
  = force.  Masses are "capacitors" to the datum, springs "inductors".
* ``analogy=impedance``: across variable = force, through variable =
  velocity.  Elements sharing a velocity form a loop (in series); a mass is
  an "inductor" (``e(a) - e(b)`` is the force accelerating it, its velocity
  flows through it), a spring a "capacitor" (its force is the across
  variable), a damper a conductance ``v = F / c``; force sources fix an
  across variable and velocity sources a through variable.

Nodes of the two analogies are different domains (``translational`` and
``translational-impedance``, ``rotational`` and ``rotational-impedance``): a
gyrator of ratio 1 connects them, which is the equivalence of the two
analogies (tests/test_domains_mechanical.py).
"""
from __future__ import annotations

from typing import Mapping, Tuple

from .base import EFFORT, FLOW
from .component import Choice

__all__ = ["ANALOGY", "Mechanical"]

#: The ``analogy=`` option of mechanical elements.
ANALOGY = Choice("analogy", ("mobility", "impedance"),
                 "mechanical analogy: mobility (node potential = velocity, through = force) or "
                 "impedance (across = force, through = velocity)")


class Mechanical:
    """Mixin of mechanical kinds (first base): the ``analogy=`` option."""

    choices = (ANALOGY,)

    @property
    def impedance(self) -> bool:
        """Whether this element uses the impedance analogy."""
        return self.choice("analogy") == "impedance"

    @property
    def node_domain(self) -> str:
        """``translational`` / ``rotational``, with ``-impedance`` in the impedance analogy."""
        return self.domain + "-impedance" if self.impedance else self.domain

    @classmethod
    def is_grounded(cls, choices: Mapping[str, str]) -> bool:
        """Grounded kinds (masses, inertias) need the datum only in the mobility analogy.

        Parameters
        ----------
        choices : mapping of str to str
            The element's word options.
        """
        return cls.grounded and choices.get("analogy", ANALOGY.default) == "mobility"

    def port(self) -> str:
        """The storage's port type: swapped in the impedance analogy."""
        kind = super().port()
        return (FLOW if kind == EFFORT else EFFORT) if self.impedance else kind

    def oriented_nodes(self) -> Tuple[str, str]:
        """Receiver orientation: grounded storages orient to the datum only in the mobility analogy."""
        if self.impedance:
            return self.spec.nodes[0], self.spec.nodes[1]
        return super().oriented_nodes()
