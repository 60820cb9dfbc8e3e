"""Circuits of any size on the numeric engine, against independent references.

* RC meshes against a sparse trapezoidal MNA written with scipy alone
  (``tests/scale_support.py``): the midpoint rule on a linear network is the
  trapezoidal rule, so node step values and capacitor charges agree to
  rounding;
* TTL and RTL gate chains and a diode ladder against ngspice-39
  (``tests/decks/scale/refs``, made by ``tests/decks/scale/make_scale_refs.py``),
  run as ``phsym simulate DECK`` runs them, with the exact discrete power
  balance ngspice has no equivalent of.
"""
import warnings

import numpy as np
import pytest

import phsym
from phsym.benchmarks import rc_mesh
from phsym.errors import NetlistWarning
from tests.decks import corpus
from tests.scale_support import SCALE_DECKS, read_rc_deck, trapezoidal


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():       # the decks' .save cards are skipped with a NetlistWarning
        warnings.simplefilter("ignore", NetlistWarning)
        return fn(*args, **kw)


@pytest.mark.parametrize("n", [3, 40])
def test_rc_mesh_matches_a_sparse_mna(n):
    text = rc_mesh(n, steps=60)
    circuit = read_rc_deck(text)
    ref = trapezoidal(circuit)
    model = _quiet(phsym.parse, text)
    sim = phsym.Simulator(model, 1.0 / circuit.step, engine="numeric")
    assert sim.scheme == "midpoint"
    res = sim.run(duration=circuit.stop)
    mids = ref.midpoints()
    worst = 0.0
    for node in ref.nodes[:: max(1, len(ref.nodes) // 40)]:
        got = res[f"v({node})"]
        worst = max(worst, np.max(np.abs(got - mids[node])))
    scale = np.abs(ref.e).max()
    assert worst <= 1e-11 * scale
    # the states are the capacitors' charges C e at the grid times
    c_names = [s for s in res.names.states if s.startswith("q_")]
    assert len(c_names) == n * n
    assert np.max(np.abs(res.balance)) <= 1e-10 * max(np.abs(res.P_diss).max(), 1e-300)


#: allowed error of each node, as a fraction of its swing (switching edges: 3 %, as the wild corpus)
SWITCHING = 0.03


@pytest.mark.parametrize("name", ["ttl_nand_1", "ttl_nand_3", "rtl_3", "diode_ladder_40"])
def test_gate_chains_and_ladders_match_ngspice(name):
    path = SCALE_DECKS / f"{name}.cir"
    res = _quiet(corpus.run_deck, path, engine="numeric")
    assert res.info["engine"] == "numeric" and not np.any(res.flags)
    power = max(np.abs(res.P_diss).max(), np.abs(res.P_supplied).max())
    if res.info["scheme"] != "backward_euler":
        assert np.max(np.abs(res.balance)) <= 1e-10 * power
    t, ref, command = corpus.load_reference(path, SCALE_DECKS / "refs")
    assert command.startswith("ngspice -b")
    nodes = [n for n in ref if n not in corpus.source_nodes(path)]
    got = corpus.node_waveforms(res, nodes, t)
    for n in nodes:
        inside = np.isfinite(got[n])
        swing = max(np.ptp(ref[n]), 1e-3)
        rms = np.sqrt(np.mean((got[n][inside] - ref[n][inside]) ** 2))
        assert rms <= SWITCHING * swing, (n, rms, swing)
