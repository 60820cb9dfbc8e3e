"""Ill-posed topologies and laws give StructureError naming the elements."""
import numpy as np
import sympy as sp
import pytest

import phsym
from phsym import StructureError
from phsym.structure.linear import LinearPHS
from tests.specbuild import build


def err(text):
    with pytest.raises(StructureError) as info:
        phsym.parse(text)
    return info.value


def test_loop_of_voltage_sources():
    e = err("V1 a 0 1\nV2 a b 2\nV3 b 0 3\nR1 a 0 1k\n")
    assert set(e.elements) == {"V1", "V2", "V3"}
    assert "loop of voltage" in str(e)


def test_cut_set_of_current_sources():
    e = err("I1 0 a 1m\nI2 a 0 2m\nV1 b 0 1\nR1 b 0 1k\n")
    assert set(e.elements) == {"I1", "I2"}
    assert "cut set of current" in str(e)


def test_force_sources_alone_on_a_node():
    e = err("F1 v 0 force\nF2 v 0 force\nM1 w 0 mass m=1\nB1 w 0 damper c=1\n")
    assert set(e.elements) == {"F1", "F2"}


def test_dangling_node_is_a_warning():
    # as in SPICE: R1 carries no current, the circuit is still well posed
    with pytest.warns(phsym.NetlistWarning, match=r"\['b'\] connected to a single element terminal \(R1\)"):
        m = phsym.parse("V1 a 0 1\nR1 a b 1k\nR2 a 0 1k\n")
    assert abs(complex(m.linearize().transfer(1j)[0, 0]) - 1e-3) < 1e-15


def test_dangling_current_source_is_a_cut_set():
    with pytest.warns(phsym.NetlistWarning):
        e = err("V1 a 0 1\nI1 a b 1m\nR2 a 0 1k\n")
    assert e.elements == ("I1",) and "cut set of current" in str(e)


def test_island_without_datum():
    e = err("V1 a 0 1\nR1 a 0 1k\nR2 c d 1k\nC2 c d 1u\n")
    assert set(e.elements) == {"R2", "C2"} and "datum" in str(e)


def test_connectivity_labels_match_networkx_on_random_graphs():
    # the load's connectivity check (a union-find on index arrays) against networkx's components
    import networkx as nx
    from phsym.graph import _components
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        edges = [(int(a), int(b), "e") for a, b in rng.integers(0, n, size=(int(rng.integers(0, 50)), 2))]
        label = _components(n, edges)
        g = nx.MultiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from((a, b) for a, b, _ in edges)
        parts = {frozenset(c) for c in nx.connected_components(g)}
        assert {frozenset(np.flatnonzero(label == k).tolist()) for k in set(label.tolist())} == parts


def test_island_of_several_parts_names_the_first_floating_part():
    e = err("V1 a 0 1\nR1 a 0 1k\nR2 c d 1k\nC2 c d 1u\nR3 e f 1k\nR4 e f 1k\n")
    assert set(e.elements) == {"R2", "C2"} and "['c', 'd']" in str(e)


def test_mixed_domains_on_a_node():
    e = err("V1 a 0 1\nR1 a 0 1k\nM1 a 0 mass m=1\n")
    assert set(e.elements) == {"V1", "R1", "M1"}
    assert "mixes domains" in str(e)


def test_non_passive_dissipation_law():
    e = err("V1 a 0 1\nR1 a b 1k\nR2 b 0 I={-v/100}\n")
    assert e.elements == ("R2",) and "not passive" in str(e)


def test_non_passive_sampled_law():
    # passive for small v but not everywhere: caught by sampling
    e = err("V1 a 0 1\nR1 a b 1k\nR2 b 0 I={v - v**3}\n")
    assert e.elements == ("R2",)


def test_coupling_coefficient_out_of_range():
    e = err("V1 a 0\nR1 a b 1\nL1 b 0 1m\nL2 c 0 1m\nR2 c 0 1\nK1 L1 L2 1.2\n")
    assert e.elements == ("K1",)


def test_coupling_of_nonlinear_inductor():
    e = err("V1 a 0\nR1 a b 1\nL1 b 0 H={phi**4}\nL2 c 0 1m\nR2 c 0 1\nK1 L1 L2 0.5\n")
    assert "K1" in e.elements


def test_unknown_parameter_override():
    m = phsym.parse("V1 a 0\nR1 a 0 1k\n")
    with pytest.raises(StructureError, match="unknown parameter"):
        m.linearize(params={"R2": 1.0})


def test_derived_parameter_follows_its_definition():
    m = phsym.parse(".param a=1k b={2*a}\nV1 x 0\nR1 x 0 b\n")
    vals = {str(k): v for k, v in m.parameter_values({"a": 5.0}).items()}
    assert vals["b"] == 10.0
    vals = {str(k): v for k, v in m.parameter_values({"a": 5.0, "b": 7.0}).items()}
    assert vals["b"] == 7.0


def test_self_loop_element():
    with pytest.raises(phsym.PhsymError):
        build([("V1", "vsource", ("a", "0")), ("R1", "resistor", ("a", "a"), {"R": 1}),
               ("R2", "resistor", ("a", "0"), {"R": 1})])


def test_linearphs_rejects_non_ph_matrices():
    with pytest.raises(StructureError, match="J skew"):
        LinearPHS([[0, 1], [1, 0]], np.zeros((2, 2)), None, [[1], [0]])
    with pytest.raises(StructureError, match="R PSD"):
        LinearPHS(np.zeros((2, 2)), np.diag([1.0, -1.0]), None, [[1], [0]])


@pytest.mark.parametrize("text,names", [
    ("GY1 a 0 b 0 1\nV1 a 0\nI1 0 b\n", {"GY1", "V1", "I1"}),
    ("TF1 a 0 b 0 2\nV1 a 0\nV2 b 0\n", {"TF1", "V1", "V2"}),
    ("TF1 a 0 b 0 2\nI1 0 a\nI2 0 b\n", {"TF1", "I1", "I2"}),
])
def test_sources_tied_through_two_ports_are_singular(text, names):
    e = err(text)
    assert "singular" in str(e) and set(e.elements) == names


@pytest.mark.parametrize("line,elem", [("R1 a 0 0", "R1"), ("R1 a 0 -5", "R1"),
                                       ("C1 a 0 0", "C1"), ("L1 a 0 -1m", "L1")])
def test_non_positive_linear_values(line, elem):
    e = err("V1 a 0\nR9 a 0 1\n" + line + "\n")
    assert e.elements == (elem,) and "must be positive" in str(e)


def test_non_positive_override_is_rejected():
    m = phsym.parse("V1 a 0\nR1 a 0 1k\n")
    with pytest.raises(StructureError, match="must be positive"):
        m.parameter_values({"R1": 0.0})


def test_source_free_resistive_network_is_trivial_but_valid():
    m = phsym.parse("R1 0 a 1\nR2 0 a 1\nD1 a 0\n")
    assert all(m.check().values())
    # the diode sees the parallel resistance 1/2
    vals = m.parameter_values()
    assert abs(float(m.explicit.R[0, 0].subs(vals)) - 0.5) < 1e-15


def test_override_that_makes_a_derived_parameter_non_finite():
    m = phsym.parse(".param a=2 b={1/(a-1)} c={sqrt(a)}\nV1 x 0\nR1 x 0 {b}\nR2 x 0 {c}\n")
    assert abs(m.parameter_values()[m.parameter_symbols["b"]] - 1.0) < 1e-15
    with pytest.raises(StructureError, match=r"parameter c = sqrt\(a\) is not a finite real number with a=-1"):
        m.parameter_values({"a": -1.0})
    with pytest.raises(StructureError, match="parameter b"):
        m.parameter_values({"a": 1.0})


def test_byte_order_mark_is_ignored(tmp_path):
    path = tmp_path / "bom.cir"
    path.write_bytes("\ufeffV1 a 0\nR1 a 0 1k\n".encode("utf-8"))
    assert phsym.load(path).inputs == ["V1"]


@pytest.mark.parametrize("text,line,elem", [("V1 a 0 1\nV2 a 0 2\nR1 a 0 1k\n", 2, "V2"),
                                            ("V1 a 0 1\nR1 a 0 0\n", 2, "R1"),
                                            ("V1 a 0 1\nR1 a 0 1k\nR2 b c 1k\n", 3, "R2")])
def test_structure_errors_point_at_the_netlist_line(tmp_path, text, line, elem):
    path = tmp_path / "bad.cir"
    path.write_text(text)
    with pytest.raises(StructureError) as info:
        phsym.load(path)
    e = info.value
    assert (e.location.file, e.location.line, e.location.column) == (str(path), line, 1)
    assert str(e).startswith(f"{path}:{line}:1: ") and text.split("\n")[line - 1] in str(e)
    assert elem in e.elements and e.hint


def test_initial_condition_must_be_finite():
    with pytest.raises(StructureError, match=r"IC=1/\(a - 1\) is not a finite real number") as info:
        phsym.parse(".param a=1\nV1 x 0 1\nR1 x y 1k\nC1 y 0 1u IC={1/(a-1)}\n")
    assert info.value.location.line == 4
    m = phsym.parse(".param a=2\nV1 x 0 1\nR1 x y 1k\nC1 y 0 1u IC={sqrt(a-1)}\n")
    assert phsym.Simulator(m, 1000).run(duration=0.002).x[0, 0] == pytest.approx(1e-6)     # q = C u_C
    with pytest.raises(phsym.SimulationError, match="IC=sqrt"):
        phsym.Simulator(m, 1000).run(duration=0.002, params={"a": 0.0})


def _ladder(n):
    """An RC ladder of ``n`` stages from node a (over 150 unknowns for n = 80: the sparse-LU path)."""
    lines = [f"R{k} {'a' if k == 0 else f'n{k}'} n{k + 1} 1k\nC{k} n{k + 1} 0 1n" for k in range(n)]
    return "\n".join(lines) + "\n"


def test_a_large_network_with_tied_sources_is_singular():
    e = err("TF1 a 0 b 0 2\nV1 a 0\nV2 b 0\n" + _ladder(80))
    assert "singular" in str(e) and {"TF1", "V1", "V2"} <= set(e.elements)


def test_a_large_regular_network_loads():
    m = phsym.parse("TF1 a 0 b 0 2\nV1 a 0\nRB b 0 1k\n" + _ladder(80))
    assert m.structure.n_x == 80
