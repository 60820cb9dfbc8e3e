"""Netlist -> graph: a networkx multigraph of branches with domain checks.

Nodes carry their physical domain (``electrical``, ``translational``,
``rotational``; the datum ``0`` is shared by all).  Each edge is one branch
(receiver convention, oriented ``node_from -> node_to``) and carries the
:class:`~phsym.components.base.Branch` record.
"""
from __future__ import annotations

from typing import Dict, Iterable, List

import networkx as nx

from .components.base import Branch
from .errors import StructureError
from .netlist.spec import DATUM

__all__ = ["build_graph"]


def build_graph(branches: Iterable[Branch]) -> nx.MultiDiGraph:
    """Build the branch graph and check domains and connectivity.

    Parameters
    ----------
    branches : iterable of Branch
        All branches of the model.

    Returns
    -------
    networkx.MultiDiGraph
        Edge key = branch name; edge attributes ``branch`` (the record),
        ``element``, ``kind``, ``role``; node attribute ``domain``.

    Raises
    ------
    StructureError
        Mixed domains on a node, dangling nodes, or parts of the network with
        no connection to the datum.
    """
    branches = list(branches)
    g = nx.MultiDiGraph()
    g.add_node(DATUM, domain="any")
    owners: Dict[str, Dict[str, List[str]]] = {}
    for br in branches:
        for node in (br.node_from, br.node_to):
            if node not in g:
                g.add_node(node, domain=None)
            if br.domain != "any" and node != DATUM:
                owners.setdefault(node, {}).setdefault(br.domain, []).append(br.element)
        if br.node_from == br.node_to:
            raise StructureError(f"branch {br.name} connects node {br.node_from!r} to itself",
                                 [br.element], hint="an element needs two different nodes")
        g.add_edge(br.node_from, br.node_to, key=br.name, branch=br, element=br.element,
                   kind=br.kind, role=br.role)
    for node, doms in owners.items():
        if len(doms) > 1:
            elems = sorted({e for es in doms.values() for e in es})
            raise StructureError(
                f"node {node!r} mixes domains {sorted(doms)}", elems,
                hint="connect domains through a transformer (TF) or gyrator (GY) two-port")
        g.nodes[node]["domain"] = next(iter(doms))
    # two-port-only nodes take the domain of their partner node, if any
    for node in g.nodes:
        if g.nodes[node]["domain"] is None:
            g.nodes[node]["domain"] = "electrical"
    _check_connectivity(g)
    return g


def _check_connectivity(g: nx.MultiDiGraph) -> None:
    und = nx.MultiGraph()
    und.add_nodes_from(g.nodes)
    und.add_edges_from((a, b, k, d) for a, b, k, d in g.edges(keys=True, data=True))
    dangling = [n for n in und.nodes if n != DATUM and und.degree(n) == 1]
    if dangling:
        elems = sorted({d["element"] for n in dangling for _, _, d in und.edges(n, data=True)})
        raise StructureError(
            f"floating node(s) {dangling}: connected to a single element terminal", elems,
            hint="every node needs at least two connections; remove the element or close the circuit")
    if und.number_of_edges() == 0:
        raise StructureError("the netlist has no elements")
    for comp in nx.connected_components(und):
        if DATUM not in comp:
            elems = sorted({d["element"] for _, _, d in und.subgraph(comp).edges(data=True)})
            raise StructureError(
                f"floating node(s) {sorted(comp)}: no connection to the datum node 0", elems,
                hint="connect one node of this part to 0 (gnd), e.g. ground a transformer secondary")
