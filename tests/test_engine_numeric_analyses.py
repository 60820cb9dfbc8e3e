"""SPICE's analyses (``.ac``, ``.op``, ``.tf``, ``.dc``) and streams on the numeric engine.

Against the symbolic structure's analyses on small decks (diodes with junction charges, BJT
stages, controlled sources, a transformer, an op-amp), and on circuits large enough for
``engine="auto"`` to choose the numeric path against independent references: a sparse nodal
analysis of an RC mesh and the closed form of an R-2R ladder (a gate chain's operating point:
tests/test_large_symbolic.py).
"""
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sps
import scipy.sparse.linalg as spla

import phsym
from phsym.benchmarks.decks import mesh_node, rc_mesh
from phsym.errors import SimulationInputError
from phsym.simulation.analyses.ac import ac_analysis

ROOT = Path(__file__).resolve().parent.parent
F = np.logspace(0, 8, 9)


@pytest.mark.parametrize("deck", ["netlists/bjtamp.cir", "netlists/transformer.cir", "netlists/loudspeaker_gyrator.cir",
                                  "tests/decks/cccs_ccvs_stage.cir", "tests/decks/twin_t_notch.cir",
                                  "tests/decks/opamp_diode_clipper.cir"])
def test_numeric_ac_is_the_symbolic_ac(deck):
    m = phsym.load(ROOT / deck)
    a = ac_analysis(m, F, engine="symbolic")
    b = ac_analysis(m, F, engine="numeric")
    assert a.source == b.source and list(a.response) == list(b.response)
    for k in a.response:
        # relative to the largest response of the deck's signals of this kind (a zero signal is rounding)
        scale = max(np.abs(v).max() for q, v in a.response.items() if q[0] == k[0])
        assert np.max(np.abs(a.response[k] - b.response[k])) <= 1e-9 * scale, k


def test_numeric_ac_of_a_diode_with_junction_charge_and_transit_time():
    m = phsym.parse("V1 in 0 DC 0.7 AC 1\nR1 in out 1k\nC1 out 0 1u\nL1 out x 1m\nR2 x 0 50\n"
                    "D1 out 0 IS=1e-14 CJO=2p TT=1n\n")
    a = ac_analysis(m, F, engine="symbolic")
    b = ac_analysis(m, F, engine="numeric")
    for k in a.response:
        assert np.allclose(b.response[k], a.response[k], rtol=1e-9, atol=1e-15), k


def _mesh_conductance(n, r=1e3, rs=100.0):
    """The nodal conductance matrix of :func:`rc_mesh` with V1 shorted (node ``n{i}_{j}``: row ``i n + j``)."""
    idx = {mesh_node(i, j): i * n + j for i in range(n) for j in range(n)}
    rows, cols, vals = [], [], []

    def conductance(a, b, g):
        for p, q, v in ((a, a, g), (b, b, g), (a, b, -g), (b, a, -g)):
            rows.append(p)
            cols.append(q)
            vals.append(v)
    for i in range(n):
        for j in range(n):
            if j + 1 < n:
                conductance(idx[mesh_node(i, j)], idx[mesh_node(i, j + 1)], 1 / r)
            if i + 1 < n:
                conductance(idx[mesh_node(i, j)], idx[mesh_node(i + 1, j)], 1 / r)
    rows.append(0)
    cols.append(0)
    vals.append(1 / rs)
    return sps.csc_matrix((vals, (rows, cols)), shape=(n * n, n * n))


def _mesh_nodal(n, f, c=1e-9, rs=100.0):
    """An independent nodal analysis of :func:`rc_mesh`: ``(G + j w C) v = b`` with V1 = 1 behind RS."""
    idx = {mesh_node(i, j): i * n + j for i in range(n) for j in range(n)}
    G = _mesh_conductance(n, rs=rs)
    b = np.zeros(n * n)
    b[0] = 1 / rs
    out = []
    for fk in f:
        v = spla.spsolve((G + 2j * np.pi * fk * c * sps.identity(n * n)).tocsc(), b.astype(complex))
        out.append(v)
    return idx, np.array(out)


def test_numeric_ac_of_a_large_rc_mesh_is_the_nodal_analysis(tmp_path):
    n = 16       # 722 elements: above the symbolic limit, so auto runs the numeric engine
    path = tmp_path / "mesh.cir"
    path.write_text(rc_mesh(n))
    m = phsym.load(path)
    assert not m.symbolic_ready
    f = np.logspace(2, 8, 7)
    far, mid = mesh_node(n - 1, n - 1), mesh_node(n // 2, n // 2)
    res = ac_analysis(m, f, signals=["v(n0_0)", f"v({mid})", f"v({far})", "i(V1)", "i(RS)"])
    assert "structure" not in m.__dict__        # nothing symbolic was built
    idx, v = _mesh_nodal(n, f)
    for node in ("n0_0", mid, far):
        assert np.allclose(res.response[f"v({node})"], v[:, idx[node]], rtol=1e-9, atol=1e-14), node
    i_rs = (1.0 - v[:, 0]) / 100.0         # from src into the mesh
    assert np.allclose(res.response["i(RS)"], i_rs, rtol=1e-9, atol=1e-15)
    assert np.allclose(res.response["i(V1)"], -i_rs, rtol=1e-9, atol=1e-15)    # receiver convention


def test_numeric_ac_of_a_thermal_network_is_the_symbolic_one():
    """Entropy storages and heat transfers: the numeric DC point (both bodies at the bath) and
    the small-signal response to the bath's temperature agree with the symbolic path."""
    m = phsym.load(ROOT / "netlists/heat_transfer.cir")
    f = np.logspace(-4, 0, 5)
    a, b = ac_analysis(m, f, engine="numeric"), ac_analysis(m, f)
    for k in ("v(t1)", "v(t2)"):
        assert np.allclose(a.response[k], b.response[k], rtol=1e-9, atol=1e-12), k
        assert np.abs(b.response[k]).max() > 0.1


def test_numeric_ac_refuses_what_the_engine_cannot_take():
    m = phsym.parse(".param c=10n control\nV1 a 0 AC 1\nR1 a w 1k\nC1 w 0 {c}\n.probe v(w)\n")
    with pytest.raises(SimulationInputError, match="C1: a control parameter moves its storage law"):
        ac_analysis(m, F, engine="numeric")


@pytest.mark.parametrize("deck", ["netlists/cantilever.cir", "netlists/fractional_integrator.cir",
                                  "tests/decks/bjt_emitter_follower_pnp.cir", "tests/decks/cccs_ccvs_stage.cir",
                                  "tests/decks/transformer_rectifier.cir", "netlists/pickup.cir",
                                  "netlists/piano_hammer.cir"])
def test_numeric_operating_point_lists_every_element_as_the_symbolic_one(deck):
    from phsym.simulation.analyses.op import numeric_operating_point, operating_point
    m = phsym.load(ROOT / deck)
    a, b = operating_point(m), numeric_operating_point(m)
    assert list(a.currents) == list(b.currents) and set(a.nodes) == set(b.nodes) and a.domains == b.domains
    scale = max(abs(v) for v in a.currents.values())
    for k in a.currents:
        assert b.currents[k] == pytest.approx(a.currents[k], abs=1e-9 * scale), k
        assert b.voltages[k] == pytest.approx(a.voltages[k], abs=1e-9 * (1 + abs(a.voltages[k]))), k
    for n in a.nodes:       # pickup.cir: node m1 beside a mass M1
        assert b.nodes[n] == pytest.approx(a.nodes[n], abs=1e-9 * (1 + abs(a.nodes[n]))), n


def test_numeric_dc_holds_a_flat_storage_and_shunts_a_floating_node():
    """The piano hammer's DC point: the felt not touching exerts no force at any compression (its
    state is free at DC and Newton's matrix singular), and the hammer's node then only meets the
    hammer's mass at rest.  The felt is held at its start, the node shunted to the datum (SPICE's
    gshunt, 1e-12 S), as the symbolic path's least-squares point: all at rest."""
    from phsym.simulation.engines.numeric.operating import SHUNT_END
    sim = phsym.Simulator(phsym.load(ROOT / "netlists/piano_hammer.cir"), 48000, engine="numeric")
    u0 = np.zeros(1)
    p = sim._numeric.dc_point(u0, sim.model.parameter_values(None), hold_ic=False)
    assert np.array_equal(p.x, [0.0, 0.0])
    assert "x_H1 held where the storage is flat" in p.method and f"{SHUNT_END:g} S left" in p.method
    res = sim.run(duration=1e-3, x0="dc")
    assert np.all(res.x == 0.0)


def test_numeric_dc_of_the_rhodes_deck_is_an_equilibrium():
    """The Rhodes deck: the hammer's contact is flat (held), the magnet's flux bends the tine, and the
    gap's width and the tine's modal springs are joined through the beam's transformers, a
    combination the DC point keeps at its start value (the symbolic path takes the least-squares
    one there).  The point is an equilibrium: a run from it stays (independently of its rows)."""
    m = phsym.load(ROOT / "netlists/rhodes.cir")
    sim = phsym.Simulator(m, 48000, engine="numeric")
    u0 = sim.plan().inputs(None, 1e-3)[0]
    p = sim._numeric.dc_point(u0, m.parameter_values(None), hold_ic=False)
    assert "x_Cf held where the storage is flat" in p.method
    x = dict(zip(m.states, p.x))
    assert x["phi_XG1"] > 0 and x["x_BT.1"] > 1e-6      # the magnet pulls the tine's tip
    res = sim.run(duration=2e-3, x0=p.x)
    assert np.all(np.abs(res.x - p.x) <= 1e-5 * (np.abs(p.x) + sim.plan().loop.xs))


def test_numeric_transfer_function_is_the_symbolic_one():
    from phsym.simulation.analyses.tf import transfer_function
    m = phsym.load(ROOT / "tests/decks/bjt_common_emitter.cir")
    for out in ("v(c)", "i(VCC)", "v(out,e)"):
        a = transfer_function(m, out, "VCC", engine="symbolic")
        b = transfer_function(m, out, "VCC", engine="numeric")
        for x, y in ((a.gain, b.gain), (a.input_resistance, b.input_resistance),
                     (a.output_resistance, b.output_resistance)):
            assert y == pytest.approx(x, rel=1e-9), out


def test_numeric_transfer_function_of_a_large_mesh_is_the_nodal_resistance(tmp_path):
    from phsym.simulation.analyses.tf import transfer_function
    n = 16
    path = tmp_path / "mesh.cir"
    path.write_text(rc_mesh(n))
    far = mesh_node(n - 1, n - 1)
    r = transfer_function(path, f"v({far})", "V1")       # auto: numeric (no symbolic structure)
    e = np.zeros(n * n)
    e[-1] = 1.0     # a unit current into the far corner, the source shorted
    r_far = spla.spsolve(_mesh_conductance(n), e)[-1]
    # at DC the capacitors are open: no current (the source's current is rounding), the whole
    # mesh at the source's potential
    assert r.gain == pytest.approx(1.0, rel=1e-12) and abs(r.input_resistance) > 1e15
    assert r.output_resistance == pytest.approx(r_far, rel=1e-9)


def test_numeric_dc_sweep_is_the_symbolic_one():
    from phsym.netlist.analyses import Sweep
    from phsym.simulation.analyses.dcsweep import dc_sweep
    m = phsym.load(ROOT / "tests/decks/bjt_common_emitter.cir")
    sweeps = [Sweep("VCC", "source", tuple(np.linspace(0.0, 12.0, 13)))]
    a = dc_sweep(m, sweeps, engine="symbolic")
    b = dc_sweep(m, sweeps, engine="numeric")
    for k in a.signals:
        scale = max(np.abs(v).max() for q, v in a.signals.items() if q[0] == k[0])
        assert np.max(np.abs(a.signals[k] - b.signals[k])) <= 1e-8 * scale, k


def test_numeric_dc_sweep_of_a_large_r2r_ladder_halves_at_each_node():
    """An R-2R ladder (445 elements: auto runs the numeric engine): node k at V / 2^k."""
    from phsym.netlist.analyses import Sweep
    from phsym.simulation.analyses.dcsweep import dc_sweep
    n = 220
    lines = ["V1 n0 0 DC 1"] + [f"R{k} n{k} n{k + 1} 1k\nRG{k} n{k + 1} 0 2k" for k in range(n)] + [f"RT n{n} 0 2k"]
    m = phsym.parse("\n".join(lines) + "\n")
    assert not m.symbolic_ready
    v = np.array([-2.0, 0.0, 1.5, 5.0])
    res = dc_sweep(m, [Sweep("V1", "source", tuple(v))], signals=["v(n1)", "v(n2)", "v(n10)", "i(V1)"])
    for k in (1, 2, 10):
        assert np.allclose(res.signals[f"v(n{k})"], v / 2 ** k, rtol=1e-12, atol=1e-15)
    assert np.allclose(res.signals["i(V1)"], -v / 2e3, rtol=1e-12)     # the ladder is R from n0 to ground


def test_numeric_stream_equals_one_long_run():
    """Streams on the numeric engine: blocks of any size give the samples of one long run."""
    model = phsym.load(ROOT / "netlists/diode_clipper.cir")
    sim = phsym.Simulator(model, 48000, engine="numeric")
    rng = np.random.default_rng(3)
    u = 3 * np.sin(2 * np.pi * 440 * np.arange(600) / 48000) + 0.2 * rng.standard_normal(600)
    full = sim.run(u={model.inputs[0]: u}, align="samples")
    assert full.info["engine"] == "numeric"
    for sizes in ([1, 1, 5, 64], list(rng.integers(1, 200, 5))):
        s = sim.stream(signals=["v(out)"])
        k, blocks = 0, []
        for b in sizes:
            blocks.append(u[k:k + b])
            k += b
        blocks.append(u[k:])
        y = np.concatenate([s.process(b) for b in blocks])
        assert s.last.info["engine"] == "numeric"
        np.testing.assert_array_equal(y, full["v(out)"])
        np.testing.assert_array_equal(s.state, full.x[-1])
