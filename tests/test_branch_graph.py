"""The branch graph as plain data (:class:`phsym.graph.BranchGraph`) against networkx.

The load builds the graph without networkx; ``Model.graph`` still gives the
networkx multigraph, and the paths the structure and the error messages take
are checked here against networkx's own algorithms.
"""
import json
import random
import subprocess
import sys

import networkx as nx

import phsym
from phsym.graph import BranchGraph, _shortest_path, tree_path


def test_model_graph_is_the_networkx_form_of_its_topology():
    m = phsym.load("netlists/diode_clipper.cir")
    assert isinstance(m.topology, BranchGraph)
    g = m.graph
    assert isinstance(g, nx.MultiDiGraph)
    assert list(g.nodes) == m.topology.nodes and dict(g.nodes(data="domain")) == m.topology.domains
    assert g.graph["branches"] == m.topology.branches
    for br, t in zip(m.topology.branches, m.topology.in_tree):
        d = g.edges[br.node_from, br.node_to, br.name]
        assert d["in_tree"] == bool(t) and d["branch"] is br and d["element"] == br.element
    assert g.number_of_edges() == len(m.topology.branches)
    # the normal tree is a spanning tree of the connected circuit
    tree = nx.Graph([(b.node_from, b.node_to) for b, t in zip(m.topology.branches, m.topology.in_tree) if t])
    assert nx.is_tree(tree) and set(tree) == set(m.topology)


def test_shortest_paths_have_networkx_lengths_on_random_graphs():
    rng = random.Random(7)
    for trial in range(200):
        n = rng.randint(1, 12)
        edges = [(str(rng.randrange(n)), str(rng.randrange(n)), f"e{k}") for k in range(rng.randint(0, 2 * n))]
        edges = [e for e in edges if e[0] != e[1]]
        g = nx.Graph([(u, v) for u, v, _ in edges])
        g.add_nodes_from(str(i) for i in range(n))
        a, b = str(rng.randrange(n)), str(rng.randrange(n))
        path = _shortest_path(edges, a, b)
        if a == b or not nx.has_path(g, a, b):
            assert path == []
            continue
        assert len(path) == nx.shortest_path_length(g, a, b), (edges, a, b)
        assert path[0][0] == a and path[-1][1] == b
        assert all(p[1] == q[0] for p, q in zip(path, path[1:]))
        labels = {lab: {u, v} for u, v, lab in edges}
        assert all({u, v} == labels[lab] for u, v, lab in path)


def test_tree_path_walks_the_normal_tree_to_the_datum():
    m = phsym.load("netlists/diode_clipper.cir")
    topo = m.topology
    for node in topo:
        path = tree_path(topo, node, "0")
        names = {b.name for b, t in zip(topo.branches, topo.in_tree) if t}
        assert all(name in names for _u, _v, name in path)
        assert (path == []) == (node == "0")
        if path:
            assert path[0][0] == node and path[-1][1] == "0"


def test_loading_and_deriving_a_deck_imports_no_networkx():
    code = ("import sys, phsym; m = phsym.load('netlists/diode_clipper.cir'); m.structure; m.check(); "
            "import json; print(json.dumps('networkx' in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) is False


def test_cut_set_message_names_the_current_sources_of_the_cut():
    text = "* cut\nI1 a 0 1m\nI2 a b 1m\nR1 b 0 1k\n"
    try:
        phsym.parse(text)
    except phsym.errors.StructureError as exc:
        assert {"I1", "I2"} <= set(exc.elements), exc.elements
    else:           # pragma: no cover - a cut set of current sources must be refused
        raise AssertionError("no error for a cut set of current sources")
