"""The circuits of any size (issue 34): decks phsym reads, their counts, the references for the numeric engine.

* every family's deck parses (``phsym.netlist.parse_netlist`` at a few
  sizes, the whole ``phsym.parse`` at the smallest) and has the element,
  node, BJT and diode counts :func:`phsym.benchmarks.deck_size` states;
* the committed decks of ``tests/decks/scale`` are what the builders write
  today, and their ngspice references carry the tight options;
* the sparse MNA of ``tests/scale_support.py`` reads a mesh deck into the
  matrices written out by hand, and its trapezoidal run matches the closed
  form of a 1 x 1 mesh (an RC low-pass) and the matrix exponential of a 2 x 2
  mesh, with second-order convergence.

None of this needs ngspice or a compiled loop.
"""
import warnings

import numpy as np
import pytest
import scipy.linalg as sla

import phsym
from phsym.benchmarks import FAMILIES, deck_size, diode_ladder, rc_mesh, rtl_chain, ttl_nand_chain
from phsym.errors import NetlistWarning
from phsym.netlist import parse_netlist
from tests.decks.corpus import load_reference, signal_nodes
from tests.scale_support import REFERENCE_DECKS, SCALE_DECKS, read_rc_deck, reference_deck_text, trapezoidal

SIZES = {"ttl": (1, 3), "rtl": (1, 2, 5), "rc_mesh": (1, 2, 4), "diode_ladder": (2, 10)}


def _quiet(fn, *args):
    with warnings.catch_warnings():       # the decks' .save cards are skipped with a NetlistWarning
        warnings.simplefilter("ignore", NetlistWarning)
        return fn(*args)


@pytest.mark.parametrize("family,size", [(f, n) for f, sizes in SIZES.items() for n in sizes])
def test_deck_parses_with_the_stated_counts(family, size):
    netlist = _quiet(parse_netlist, FAMILIES[family].build(size))
    kinds = [el.kind for el in netlist.elements]
    nodes = {n for el in netlist.elements for n in el.nodes} - {"0"}
    want = deck_size(family, size)
    assert (len(kinds), len(nodes), kinds.count("bjt"), kinds.count("diode")) == \
        (want.elements, want.nodes, want.bjts, want.diodes)


@pytest.mark.parametrize("family,size,states", [("ttl", 1, 14), ("rtl", 2, 8), ("rc_mesh", 2, 4),
                                                ("diode_ladder", 2, 4)])
def test_smallest_decks_build_models(family, size, states):
    """The whole front end (graph, structure) accepts each family; the states are the capacitors and
    junction charges (TTL: 5 BJTs x 2, 3 diodes, one load; RTL: 3 BJTs x 2, 2 loads)."""
    model = _quiet(phsym.parse, FAMILIES[family].build(size))
    assert len(model.states) == states


def test_decks_are_nested_and_timed_for_ngspice():
    text = ttl_nand_chain(2)
    assert ".subckt nand2 a b y vcc" in text and "X3 c2 e2 y vcc ttl_out" in text     # a gate of subcircuits
    assert text.rstrip().endswith(".tran 5e-11 4.8e-08 0 5e-11\n.end".rstrip())       # TMAX = the step
    assert rtl_chain(1, steps=10).splitlines()[-2] == ".tran 1e-10 1e-09 0 1e-10"
    assert diode_ladder(2, stop=1e-4).splitlines()[-2] == ".tran 5e-07 0.0001 0 5e-07 uic"
    with pytest.raises(ValueError, match="even"):
        diode_ladder(3)
    with pytest.raises(ValueError, match="not both"):
        ttl_nand_chain(1, stop=1e-9, steps=10)
    with pytest.raises(ValueError, match="unknown family"):
        deck_size("ecl", 1)
    assert deck_size("ttl", 200).bjts == 1000 and deck_size("diode_ladder", 2000).diodes == 2000


@pytest.mark.parametrize("name", sorted(REFERENCE_DECKS))
def test_committed_reference_decks_match_the_builders(name):
    deck = SCALE_DECKS / f"{name}.cir"
    assert deck.read_text() == reference_deck_text(name), \
        "the builder changed: PYTHONPATH=. python tests/decks/scale/make_scale_refs.py"
    t, v, command = load_reference(deck, SCALE_DECKS / "refs")
    tran = next(ln for ln in deck.read_text().splitlines() if ln.startswith(".tran")).split()
    step, stop = float(tran[1]), float(tran[2])
    assert set(v) == set(_quiet(signal_nodes, deck)) and 200 <= t.size <= 1000 and t[-1] == pytest.approx(stop)
    assert all(w.dtype == np.float32 and w.shape == t.shape and np.all(np.isfinite(w)) for w in v.values())
    assert "reltol=1e-6 abstol=1e-12 vntol=1e-9 method=gear" in command
    assert f"tran {step!r} {stop!r} 0 {step!r}" in command                   # TMAX = the step


def test_mna_reads_the_mesh_deck_into_hand_written_matrices():
    r, c, rs = 1e3, 1e-9, 100.0
    circuit = read_rc_deck(rc_mesh(2, r=r, c=c, rs=rs))
    order = [circuit.nodes.index(n) for n in ("n0_0", "n0_1", "n1_0", "n1_1")]
    G = circuit.G.toarray()[np.ix_(order, order)]
    g = 1 / r
    want = np.array([[2 * g + 1 / rs, -g, -g, 0], [-g, 2 * g, 0, -g], [-g, 0, 2 * g, -g], [0, -g, -g, 2 * g]])
    np.testing.assert_allclose(G, want, rtol=1e-15)
    np.testing.assert_allclose(circuit.C.toarray(), c * np.eye(4))
    np.testing.assert_allclose(circuit.B.toarray()[order, 0], [1 / rs, 0, 0, 0])
    assert [name for name, _ in circuit.sources] == ["V1"] and circuit.step == 0.2e-6


def _ramp_rc(t, tau, tr):
    """Closed form of ``tau e' + e = u`` from rest, ``u`` rising linearly to 1 over ``tr``, then held."""
    ramp = (t - tau * (1 - np.exp(-t / tau))) / tr
    at_tr = (tr - tau * (1 - np.exp(-tr / tau))) / tr
    return np.where(t < tr, ramp, 1 + (at_tr - 1) * np.exp(-(t - tr) / tau))


def test_mna_trapezoidal_matches_the_closed_form_of_a_1x1_mesh():
    """One node: V1 -> rs -> c, an RC low-pass (tau = 0.1 us) under a 1 us ramp; error O(h^2)."""
    tau, tr = 100.0 * 1e-9, 5 * 0.2e-6
    errors = []
    for h in (5e-9, 2.5e-9):
        run = trapezoidal(read_rc_deck(rc_mesh(1)), step=h, steps=round(2e-6 / h))
        errors.append(np.max(np.abs(run.node("n0_0") - _ramp_rc(run.t, tau, tr))))
    assert errors[0] < 2e-4
    assert 3.5 < errors[0] / errors[1] < 4.5            # second order


def test_mna_trapezoidal_matches_the_matrix_exponential_of_a_2x2_mesh():
    circuit = read_rc_deck(rc_mesh(2))
    C, G, B = circuit.C.toarray(), circuit.G.toarray(), circuit.B.toarray()[:, 0]
    A, b = -np.linalg.solve(C, G), np.linalg.solve(C, B)
    tr, h = 1e-6, 1e-8
    run = trapezoidal(circuit, step=h, steps=round(10e-6 / h))
    # exact response to the ramp (slope 1/tr up to tr, a grid time, then held): z = [e, u, 1], z' = M z,
    # stepped by the exact propagators expm(M h)
    M = np.zeros((6, 6))
    M[:4, :4], M[:4, 4], M[4, 5] = A, b, 1 / tr
    ramp = sla.expm(M * h)
    M[4, 5] = 0.0
    held = sla.expm(M * h)
    z, exact = np.r_[np.zeros(5), 1.0], [np.zeros(4)]
    for t in run.t[:-1]:
        z = (ramp if t < tr - h / 2 else held) @ z
        exact.append(z[:4])
    err = np.max(np.abs(run.e - np.array(exact)))
    assert err < 1e-4
    corner, right, below, far = (run.node(n)[-1] for n in ("n0_0", "n0_1", "n1_0", "n1_1"))
    assert right == pytest.approx(below, rel=1e-12)                                # symmetric
    assert 1 > corner > right > far > 0.5                                            # charging from the corner
    mids = run.midpoints()
    np.testing.assert_allclose(mids["n1_1"], 0.5 * (run.node("n1_1")[1:] + run.node("n1_1")[:-1]))


def test_write_decks_names_a_malformed_spec(tmp_path):
    import pytest
    from phsym.benchmarks import write_decks
    for spec, words in (("ttl", "FAMILY=SIZE,SIZE"), ("ttl=3,x", "FAMILY=SIZE,SIZE"), ("mesh=3", "unknown family")):
        with pytest.raises(ValueError, match=words):
            list(write_decks([spec], tmp_path))
    assert [p.name for _f, _n, p in write_decks(["rc_mesh=2"], tmp_path, steps=5)] == ["rc_mesh_2.cir"]
