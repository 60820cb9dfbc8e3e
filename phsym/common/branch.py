"""The graph's edge (:class:`Branch`): what every element contributes, as plain data.

Defined here, below the components (which re-export it), so that the graph
and a circuit described by numbers (:mod:`phsym.structure.circuit.numeric`)
read branches without importing sympy.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Branch"]


@dataclass(frozen=True)
class Branch:
    """One graph edge with receiver convention.

    Attributes
    ----------
    name : str
        Branch name: the element name, or ``NAME.p`` / ``NAME.s`` for two-ports.
    element : str
        Owning element.
    kind : str
        Element kind.
    node_from, node_to : str
        Across variable is ``e(node_from) - e(node_to)``; through variable flows
        from ``node_from`` to ``node_to`` inside the element.
    domain : str
        Physical domain of the branch's nodes (``"any"`` for two-port branches,
        whose domain follows their nodes).
    role : str
        ``"storage"``, ``"dissipation"``, ``"source_effort"`` (voltage-like:
        fixes the across variable), ``"source_flow"`` (current-like: fixes the
        through variable) or ``"twoport"``.
    priority : int
        Tree-selection priority (lower goes into the spanning tree first).
    """

    name: str
    element: str
    kind: str
    node_from: str
    node_to: str
    domain: str
    role: str
    priority: int
