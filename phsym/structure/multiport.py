"""Multiport dissipations: the ports of one device whose laws read each other.

A transistor is two (or three) dissipative ports of one device; each port's
law ``z_j`` reads the other ports' variables too.  The components declare
that with :attr:`~phsym.components.base.Dissipation.couples`; here the
symbols are replaced by the other ports' ``w`` and the ports are grouped.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from ..components.base import Dissipation
from ..errors import StructureError

__all__ = ["couple_ports", "port_groups", "read_states"]


def couple_ports(ports: Sequence, dissipations: Sequence[Dissipation]) -> None:
    """Put the other ports' variables into multiport laws (in place).

    Parameters
    ----------
    ports : sequence of DissipativePort
        The oriented ports, one per record of ``dissipations``.
    dissipations : sequence of Dissipation
        The components' records.
    """
    index = {dp.element: j for j, dp in enumerate(ports)}
    for j, d in enumerate(dissipations):
        if not d.couples:
            continue
        dp = ports[j]
        sub, coupled = {}, []
        for sym, port in d.couples:
            k = index.get(port)
            if k is None or k == j:
                raise StructureError(f"law of {d.element} reads the variable of {port!r}, "
                                     "which is not another dissipative port", [d.element])
            sub[sym] = ports[k].w
            coupled.append(k)
        dp.z = dp.z.xreplace(sub)
        dp.coupled = tuple(coupled)
        dp.linear = False


def read_states(ports: Sequence, dissipations: Sequence[Dissipation], states: Sequence,
                state_branches: Sequence[str]) -> None:
    """Put storage states into state-dependent laws (``Dissipation.reads``), in place.

    Parameters
    ----------
    ports : sequence of DissipativePort
        The oriented ports, one per record of ``dissipations``.
    dissipations : sequence of Dissipation
        The components' records.
    states : sequence of sympy.Symbol
        The structure's states.
    state_branches : sequence of str
        The branch of each state.
    """
    index = {b: i for i, b in enumerate(state_branches)}
    for j, d in enumerate(dissipations):
        if not d.reads:
            continue
        sub, idx = {}, []
        for sym, branch in d.reads:
            i = index.get(branch)
            if i is None:
                raise StructureError(f"law of {d.element} reads the state of {branch!r}, which is not a "
                                     "storage branch", [d.element])
            sub[sym] = states[i]
            idx.append(i)
        ports[j].z = ports[j].z.xreplace(sub)
        ports[j].reads = tuple(idx)
        ports[j].linear = False


def port_groups(ports: Sequence) -> List[Tuple[int, ...]]:
    """Dissipative ports grouped into devices: a multiport's ports together,
    every other port alone.

    Parameters
    ----------
    ports : sequence of DissipativePort
        The structure's ports (``coupled`` set by :func:`couple_ports`).
    """
    parent = list(range(len(ports)))

    def root(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a
    for j, dp in enumerate(ports):
        for k in dp.coupled:
            parent[root(k)] = root(j)
    groups: Dict[int, List[int]] = {}
    for j in range(len(ports)):
        groups.setdefault(root(j), []).append(j)
    return [tuple(g) for g in groups.values()]
