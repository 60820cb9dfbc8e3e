"""Topology: the branch graph, its normal tree and its fundamental loops.

:func:`build_graph` turns the branches of all components into a
:class:`BranchGraph`, a multigraph as plain data (nodes carry their physical
domain: ``electrical``, ``translational``, ``rotational``, ``magnetic``; the
datum ``0`` is shared by all; each edge is one branch in receiver convention
``node_from -> node_to``), checks domains and connectivity, and chooses the
*normal tree*: a spanning forest taken greedily by branch priority (Kruskal
with a union-find; see :mod:`phsym.components.base` for the priorities).
:meth:`BranchGraph.to_networkx` gives the same graph as a networkx
multigraph (``Model.graph``); the load itself does not import networkx
(0.3 s of every process's start, and a second per 30,000 branches to fill).
The structure stage
(:class:`phsym.structure.dirac.Structure`) is built from this graph: with
tree branches T and links L, Kirchhoff's laws read ``v_L = M v_T`` and
``i_T = -M^T i_L`` (:func:`loop_matrix`), i.e. the Dirac structure
``c = S a`` with ``a = (v_T, i_L)``, ``c = (i_T, v_L)`` and
``S = [[0, -M^T], [M, 0]]``.
"""
from __future__ import annotations

import warnings
from collections import deque
from typing import TYPE_CHECKING, Dict, Iterable, Iterator, List, Sequence, Tuple

import numpy as np

from .common.names import DATUM
from .common.quantities import DOMAINS
from .errors import NetlistWarning, StructureError

if TYPE_CHECKING:       # the graph reads branches as data (a circuit described by numbers: no sympy)
    from .components.base import Branch, Port
    import networkx as nx
    import scipy.sparse as sps

__all__ = ["BranchGraph", "build_graph", "branches_of", "select_tree", "loop_entries", "loop_matrix", "tree_path", "check_sources", "DOMAIN_UNITS"]

#: Units of the node potential (across variable) and of the through variable per node domain
#: (their product is a power in W; mechanics in the mobility analogy unless ``-impedance``);
#: the quantities themselves are :data:`phsym.common.quantities.DOMAINS`.
DOMAIN_UNITS: Dict[str, Tuple[str, str]] = {d.name: (d.across.unit, d.through.unit) for d in DOMAINS.values()}


class BranchGraph:
    """The branch graph of a model with its normal tree, as plain data (:func:`build_graph`).

    Iterating over it, ``len`` and ``in`` go over its nodes, the datum first.

    Parameters
    ----------
    branches : list of Branch
        The branch records in model order (the order of every matrix of the structure).
    in_tree : numpy.ndarray of bool
        ``in_tree[k]``: branch ``k`` is in the normal tree.
    domains : dict of str to str
        The domain of each node, the datum (``"any"``) first, then the nodes in the order the
        branches reach them.
    """

    def __init__(self, branches: List[Branch], in_tree: np.ndarray, domains: Dict[str, str]):
        self.branches = branches
        self.in_tree = in_tree
        self.domains = domains

    @property
    def nodes(self) -> List[str]:
        """The node names, the datum first."""
        return list(self.domains)

    def __contains__(self, node: object) -> bool:
        return node in self.domains

    def __iter__(self) -> Iterator[str]:
        return iter(self.domains)

    def __len__(self) -> int:
        return len(self.domains)

    def __repr__(self) -> str:
        return f"BranchGraph({len(self.domains)} nodes, {len(self.branches)} branches)"

    def to_networkx(self) -> "nx.MultiDiGraph":
        """The graph as a ``networkx.MultiDiGraph``: edge key = branch name; edge attributes
        ``branch`` (the record), ``element``, ``kind``, ``role``, ``in_tree``; node attribute
        ``domain``; graph attribute ``branches``."""
        import networkx as nx
        g = nx.MultiDiGraph()
        g.add_nodes_from((n, {"domain": d}) for n, d in self.domains.items())
        g.add_edges_from((br.node_from, br.node_to, br.name,
                          dict(branch=br, element=br.element, kind=br.kind, role=br.role, in_tree=bool(t)))
                         for br, t in zip(self.branches, self.in_tree))
        g.graph["branches"] = self.branches
        return g


def build_graph(branches: Iterable[Branch]) -> BranchGraph:
    """Build the branch graph and check domains and connectivity.

    Parameters
    ----------
    branches : iterable of Branch
        All branches of the model.

    Returns
    -------
    BranchGraph
        The branches in model order, the normal tree's flags and each node's domain
        (:meth:`BranchGraph.to_networkx` for a networkx multigraph).

    Raises
    ------
    StructureError
        Mixed domains on a node, or parts of the network with no connection
        to the datum.

    Warns
    -----
    NetlistWarning
        A node reached by a single element terminal (a dangling element):
        legal, as in SPICE, when the network is still well posed.
    """
    branches = list(branches)
    domains: Dict[str, str] = {DATUM: "any"}
    owners: Dict[str, Dict[str, List[str]]] = {}
    for br in branches:
        for node in (br.node_from, br.node_to):
            if node not in domains:
                domains[node] = None
            if br.domain != "any" and node != DATUM:
                owners.setdefault(node, {}).setdefault(br.domain, []).append(br.element)
        if br.node_from == br.node_to:
            raise StructureError(f"branch {br.name} connects node {br.node_from!r} to itself",
                                 [br.element], hint="an element needs two different nodes")
    for node, doms in owners.items():
        if len(doms) > 1:
            elems = sorted({e for es in doms.values() for e in es})
            raise StructureError(
                f"node {node!r} mixes domains {sorted(doms)}", elems,
                hint="connect domains through a transformer (TF) or gyrator (GY) two-port")
        domains[node] = next(iter(doms))
    # two-port-only nodes take the domain of their partner node, if any
    for node, dom in domains.items():
        if dom is None:
            domains[node] = "electrical"
    _check_connectivity(list(domains), branches)
    return BranchGraph(branches, select_tree(branches), domains)


def branches_of(g) -> Tuple[List[Branch], np.ndarray]:
    """The branch records of a graph from :func:`build_graph`, and the normal-tree flags.

    Parameters
    ----------
    g : BranchGraph or networkx.MultiDiGraph
        A graph built by :func:`build_graph` (or its :meth:`~BranchGraph.to_networkx`).
    """
    if isinstance(g, BranchGraph):
        return list(g.branches), g.in_tree.copy()
    branches = g.graph["branches"]
    flags = np.array([g.edges[b.node_from, b.node_to, b.name]["in_tree"] for b in branches], dtype=bool)
    return list(branches), flags


def _shortest_path(edges: Iterable[Tuple[str, str, str]], a: str, b: str) -> List[Tuple[str, str, str]]:
    """A path with fewest edges from ``a`` to ``b`` over undirected ``edges`` ``(u, v, label)``:
    ``(from, to, label)`` in walking order (``[]`` when ``a == b`` or no path exists)."""
    adjacent: Dict[str, List[Tuple[str, str]]] = {}
    for u, v, label in edges:
        adjacent.setdefault(u, []).append((v, label))
        adjacent.setdefault(v, []).append((u, label))
    came: Dict[str, Tuple[str, str]] = {a: (a, "")}
    todo = deque([a])
    while todo and b not in came:
        u = todo.popleft()
        for v, label in adjacent.get(u, ()):
            if v not in came:
                came[v] = (u, label)
                todo.append(v)
    if b not in came or a == b:
        return []
    path = []
    while b != a:
        u, label = came[b]
        path.append((u, b, label))
        b = u
    return path[::-1]


def tree_path(g: BranchGraph, a: str, b: str) -> List[Tuple[str, str, str]]:
    """Tree branches on the path from node ``a`` to node ``b``: ``(from, to, branch name)``
    in walking order (empty when ``a == b``; ``[]`` too when no tree path exists).

    Parameters
    ----------
    g : BranchGraph
        A graph built by :func:`build_graph`.
    a, b : str
        Node names.
    """
    return _shortest_path(((br.node_from, br.node_to, br.name) for br, t in zip(g.branches, g.in_tree) if t), a, b)


def check_sources(g: BranchGraph, branches: Sequence[Branch], in_tree: np.ndarray,
                  ports: Sequence[Port]) -> None:
    """Raise :class:`StructureError` for a loop of across-sources (a voltage source in a link of the
    normal tree) or a cut set of through-sources (a current source in the tree).

    Parameters
    ----------
    g : BranchGraph
        The graph of :func:`build_graph`.
    branches : sequence of Branch
        Its branches, in model order.
    in_tree : numpy.ndarray of bool
        The normal tree's flags.
    ports : sequence of Port
        The sources.
    """
    bidx = {b.name: k for k, b in enumerate(branches)}
    for p in ports:
        k = bidx[p.branch]
        if p.fixes == "across" and not in_tree[k]:
            # its endpoints are connected by across-sources only
            loop = _path_elements(branches, k, {"source_effort"})
            raise StructureError(
                "loop of voltage/velocity sources only: their values cannot be chosen independently",
                [p.element] + loop, hint="add a series resistance or remove one source")
        if p.fixes == "through" and in_tree[k]:
            cut = _cut_elements(g, branches, k)
            raise StructureError(
                "cut set of current/force sources only: Kirchhoff's current law fixes their sum",
                [p.element] + cut, hint="add a parallel resistance or remove one source")


def _path_elements(branches: Sequence[Branch], k: int, roles) -> List[str]:
    """Elements of a path between branch k's ends through branches of ``roles`` only."""
    b = branches[k]
    path = _shortest_path(((bb.node_from, bb.node_to, bb.element) for kk, bb in enumerate(branches)
                           if kk != k and bb.role in roles), b.node_from, b.node_to)
    return [el for _u, _v, el in path]


def _cut_elements(graph: BranchGraph, branches: Sequence[Branch], k: int) -> List[str]:
    """Through-sources that, with branch k, form a cut set."""
    nodes = graph.nodes
    index = {n: i for i, n in enumerate(nodes)}
    label = _components(len(nodes), [(index[bb.node_from], index[bb.node_to], None)
                                     for bb in branches if bb.role != "source_flow"])
    side = label[index[branches[k].node_from]]
    return [bb.element for kk, bb in enumerate(branches)
            if kk != k and bb.role == "source_flow"
            and ((label[index[bb.node_from]] == side) != (label[index[bb.node_to]] == side))]


def _components(n: int, edges) -> np.ndarray:
    """Component label of each of ``n`` nodes joined by ``edges`` (union-find with path halving;
    scipy's csgraph would import scipy.sparse.linalg into every load)."""
    parent = list(range(n))
    for a, b, _ in edges:
        while parent[a] != a:
            parent[a] = a = parent[parent[a]]
        while parent[b] != b:
            parent[b] = b = parent[parent[b]]
        if a != b:
            parent[max(a, b)] = min(a, b)
    for i in range(n):      # roots have smaller indices: one pass settles every node
        parent[i] = parent[parent[i]]
    return np.asarray(parent, dtype=np.int64)


def _check_connectivity(nodes: List[str], branches: Sequence[Branch]) -> None:
    # components and degrees on index arrays: a copy of the graph as an undirected networkx graph
    # cost a second per 30,000 branches
    index = {n: i for i, n in enumerate(nodes)}
    edges = [(index[b.node_from], index[b.node_to], b.element) for b in branches]
    if not edges:
        raise StructureError("the netlist has no elements")
    ends = np.array([e[:2] for e in edges], dtype=np.int64)
    n = len(nodes)
    label = _components(n, edges)
    floating = np.flatnonzero(label != label[index[DATUM]])
    if floating.size:
        part = label[floating[0]]        # the part of the first floating node, in node order
        comp = [nodes[i] for i in np.flatnonzero(label == part)]
        elems = sorted({el for a, _, el in edges if label[a] == part})
        raise StructureError(
            f"floating node(s) {sorted(comp)}: no connection to the datum node 0", elems,
            hint="connect one node of this part to 0 (gnd), e.g. ground a transformer secondary")
    degree = np.bincount(ends.ravel(), minlength=n)
    dangling = [nodes[i] for i in np.flatnonzero(degree == 1) if nodes[i] != DATUM]
    if dangling:
        # as in SPICE a warning: the element carries no through variable, which
        # is well posed unless it is a through source (a cut set the structure rejects)
        ones = {index[n] for n in dangling}
        elems = sorted({el for a, b, el in edges if a in ones or b in ones})
        warnings.warn(f"node(s) {dangling} connected to a single element terminal ({', '.join(elems)}): "
                      "no current (force) flows through it", NetlistWarning, stacklevel=2)


class _UnionFind:
    def __init__(self):
        self.parent: Dict[str, str] = {}

    def find(self, a: str) -> str:
        p = self.parent.setdefault(a, a)
        while p != a:
            self.parent[a] = self.parent.setdefault(p, p)
            a, p = p, self.parent[p]
        return a

    def union(self, a: str, b: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[ra] = rb
        return True


def select_tree(branches: Sequence[Branch]) -> np.ndarray:
    """Choose a spanning forest by priority.

    Parameters
    ----------
    branches : sequence of Branch
        In model order; ties in priority keep this order.

    Returns
    -------
    numpy.ndarray of bool
        ``in_tree[k]`` for each branch.
    """
    order = sorted(range(len(branches)), key=lambda k: (branches[k].priority, k))
    uf = _UnionFind()
    in_tree = np.zeros(len(branches), dtype=bool)
    for k in order:
        br = branches[k]
        if uf.union(br.node_from, br.node_to):
            in_tree[k] = True
    return in_tree


def loop_entries(branches: Sequence[Branch], in_tree: np.ndarray):
    """The nonzero entries of the fundamental loop matrix (:func:`loop_matrix`), without scipy.

    Parameters
    ----------
    branches, in_tree
        As for :func:`loop_matrix`.

    Returns
    -------
    rows, cols, vals : list of int
        The entries ``M[rows[i], cols[i]] = vals[i]`` (in {-1, 1}).
    shape : (int, int)
        ``(n_links, n_tree)``.
    paths : list of list of int
        Each link's fundamental loop, as :func:`loop_matrix` returns it.
    """
    tree_idx = [k for k in range(len(branches)) if in_tree[k]]
    link_idx = [k for k in range(len(branches)) if not in_tree[k]]
    col = {k: j for j, k in enumerate(tree_idx)}
    adj: Dict[str, List[Tuple[str, int]]] = {}
    for k in tree_idx:
        b = branches[k]
        adj.setdefault(b.node_from, []).append((b.node_to, k))
        adj.setdefault(b.node_to, []).append((b.node_from, k))
    parent: Dict[str, Tuple[str, int]] = {}
    depth: Dict[str, int] = {}
    for root in list(adj):
        if root in depth:
            continue
        depth[root] = 0
        stack = [root]
        while stack:
            n = stack.pop()
            for m, k in adj[n]:
                if m not in depth:
                    depth[m] = depth[n] + 1
                    parent[m] = (n, k)
                    stack.append(m)
    rows, cols, vals = [], [], []
    paths: List[List[int]] = []
    for r, k in enumerate(link_idx):
        b = branches[k]
        a, z = b.node_from, b.node_to
        if a not in depth or z not in depth:
            raise StructureError(f"branch {b.name} is not connected to the tree", [b.element])
        # v_link = e(a) - e(z) = sum over the tree path a -> z of signed tree voltages
        up_a: List[Tuple[int, int]] = []   # (branch, sign) walking from a upwards
        up_z: List[Tuple[int, int]] = []
        x, y = a, z
        while depth[x] > depth[y]:
            p, kk = parent[x]
            up_a.append((kk, 1 if branches[kk].node_from == x else -1))
            x = p
        while depth[y] > depth[x]:
            p, kk = parent[y]
            up_z.append((kk, -1 if branches[kk].node_from == y else 1))
            y = p
        while x != y:
            p, kk = parent[x]
            up_a.append((kk, 1 if branches[kk].node_from == x else -1))
            x = p
            p, kk = parent[y]
            up_z.append((kk, -1 if branches[kk].node_from == y else 1))
            y = p
        path = up_a + up_z
        paths.append([kk for kk, _ in path])
        for kk, s in path:
            rows.append(r)
            cols.append(col[kk])
            vals.append(s)
    return rows, cols, vals, (len(link_idx), len(tree_idx)), paths


def loop_matrix(branches: Sequence[Branch], in_tree: np.ndarray) -> Tuple["scipy.sparse.csr_matrix", List[List[int]]]:
    """Fundamental loop matrix ``M`` (links x tree branches) with ``v_L = M v_T``.

    Parameters
    ----------
    branches : sequence of Branch
    in_tree : numpy.ndarray of bool

    Returns
    -------
    M : scipy.sparse.csr_matrix of int
        Shape (n_links, n_tree), entries in {-1, 0, 1}; rows follow the order
        of links in ``branches``, columns the order of tree branches.
    paths : list of list of int
        For each link, the indices (into ``branches``) of the tree branches of
        its fundamental loop.
    """
    rows, cols, vals, shape, paths = loop_entries(branches, in_tree)
    import scipy.sparse as sps      # here: loading a netlist takes the entries alone (loop_entries)
    M = sps.csr_matrix((np.array(vals, dtype=np.int64), (rows, cols)), shape=shape)
    return M, paths
