"""phsym op / operating_point: DC operating point against closed forms."""
import json

import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

from phsym.cli import main
from phsym.simulation import operating_point

VT, IS, GMIN = 0.02585, 1e-14, 1e-12


def test_resistor_diode_divider_matches_the_scalar_equation(tmp_path):
    deck = tmp_path / "d.cir"
    deck.write_text("Diode divider\nV1 a 0 SIN(5 1 50)\nR1 a b 1k\nD1 b 0\nR2 b 0 10k\n.tran 1m 10m\n.end\n")
    op = operating_point(deck)
    # SIN(5 1 50) at t = 0 is its offset 5 V
    v = brentq(lambda v: (5 - v) / 1e3 - IS * np.expm1(v / VT) - GMIN * v - v / 1e4, 0, 5, xtol=1e-15)
    i_d = IS * np.expm1(v / VT) + GMIN * v
    assert op.nodes["a"] == pytest.approx(5.0, abs=1e-12)
    assert op.nodes["b"] == pytest.approx(v, rel=1e-9)
    assert op.currents["R1"] == pytest.approx((5 - v) / 1e3, rel=1e-9)
    assert op.currents["D1"] == pytest.approx(i_d, rel=1e-8)
    assert op.voltages["D1"] == pytest.approx(v, rel=1e-9)
    assert op.power["R2"] == pytest.approx(v * v / 1e4, rel=1e-8)
    # the source delivers what the rest absorbs
    assert op.power["V1"] == pytest.approx(-5 * (5 - v) / 1e3, rel=1e-9)
    assert abs(sum(op.power.values())) <= 1e-12 * abs(op.power["V1"])


def test_diode_series_resistance_gives_an_internal_node(tmp_path):
    deck = tmp_path / "rs.cir"
    deck.write_text("RS\nV1 a 0 DC 2\nR1 a b 100\nD1 b 0 DR\n.model DR D(IS=1e-14 N=1 RS=10)\n")
    op = operating_point(deck)
    i = op.currents["D1"]
    assert op.nodes["b"] - op.nodes["D1#j"] == pytest.approx(10 * i, rel=1e-9)
    assert (2 - op.nodes["b"]) / 100 == pytest.approx(i, rel=1e-9)
    assert op.nodes["D1#j"] == pytest.approx(VT * np.log1p((i - GMIN * op.nodes["D1#j"]) / IS), rel=1e-9)
    # the diode's power includes its series resistance
    assert op.power["D1"] == pytest.approx(op.nodes["b"] * i, rel=1e-9)
    assert abs(sum(op.power.values())) <= 1e-12 * abs(op.power["V1"])


def test_ic_values_are_not_held_as_in_spice_op():
    # rlc_ic_uic: .ic V(a)=2 on a source-free RLC; the operating point is all zero
    op = operating_point("tests/decks/rlc_ic_uic.cir")
    assert all(abs(v) < 1e-12 for v in op.nodes.values())
    assert all(abs(v) < 1e-12 for v in op.state.values())


def test_inductor_shorts_capacitor_opens_and_params_override():
    from phsym import parse
    m = parse("RLC\nV1 a 0 DC 2\nR1 a b 100\nL1 b c 1m\nR2 c 0 300\nC1 c 0 1u\nI1 0 c DC 1m\n")
    op = operating_point(m)
    # superposition: 2 V through 400 ohm, 1 mA into node c: v(c) = 2*300/400 + 1m*(100*300/400)
    vc = 2 * 300 / 400 + 1e-3 * 75
    assert op.nodes["c"] == pytest.approx(vc, rel=1e-10)
    assert op.nodes["b"] == pytest.approx(vc, rel=1e-10)          # no DC drop across L1
    assert op.currents["C1"] == pytest.approx(0.0, abs=1e-15)
    assert op.currents["L1"] == pytest.approx((2 - vc) / 100, rel=1e-10)
    assert op.state["q_C1"] == pytest.approx(1e-6 * vc, rel=1e-10)
    assert op.power["L1"] == pytest.approx(0.0, abs=1e-15)
    op2 = operating_point(m, params={"R2": 100.0})
    assert op2.nodes["c"] == pytest.approx(2 * 100 / 200 + 1e-3 * 50, rel=1e-10)


def test_cli_op_table_and_json(tmp_path, capsys):
    deck = tmp_path / "div.cir"
    deck.write_text("Divider\nV1 a 0 DC 9\nR1 a b 2k\nR2 b 0 1k\n.end\n")
    assert main(["op", str(deck)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("DC operating point: Divider") and "R2" in text
    assert main(["op", str(deck), "--json", "--param", "R1=1k"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["nodes"]["b"] == pytest.approx(4.5, rel=1e-12)
    assert data["power"]["V1"] == pytest.approx(-9 * 4.5e-3, rel=1e-12)


def test_ac_rc_lowpass_and_butterworth_ladder_match_closed_forms():
    from phsym.simulation import ac_analysis
    from phsym.simulation.analyses.ac import frequency_grid
    f = frequency_grid("dec", 10, 10, 1e5)
    assert len(f) == 41 and f[0] == 10 and f[-1] == pytest.approx(1e5)
    r = ac_analysis("tests/decks/rc_lowpass.cir", f, signals=["v(out)", "i(C1)"])
    s = 2j * np.pi * f
    np.testing.assert_allclose(r.response["v(out)"], 1 / (1 + s * 1e-4), rtol=1e-10)
    np.testing.assert_allclose(r.response["i(C1)"], s * 100e-9 / (1 + s * 1e-4), rtol=1e-10)
    # doubly terminated 5th-order Butterworth: |H| = 1/2 / sqrt(1 + (f/fc)^10) (g values to 4 digits)
    r = ac_analysis("tests/decks/lc_ladder5.cir", f, signals=["v(n3)"])
    np.testing.assert_allclose(np.abs(r.response["v(n3)"]), 0.5 / np.sqrt(1 + (f / 1e3) ** 10), rtol=2e-3)


def test_ac_of_a_diode_uses_its_operating_point_conductance(tmp_path):
    from phsym.simulation import ac_analysis
    deck = tmp_path / "d.cir"
    deck.write_text("Biased diode\nV1 a 0 DC 5\nR1 a b 1k\nD1 b 0\nC1 b 0 1u\n.end\n")
    v = brentq(lambda v: (5 - v) / 1e3 - IS * np.expm1(v / VT) - GMIN * v, 0, 5, xtol=1e-15)
    g = IS * np.exp(v / VT) / VT + GMIN
    f = np.array([1.0, 1e3, 1e5])
    r = ac_analysis(deck, f, signals=["v(b)"])
    expected = (1 / 1e3) / (1 / 1e3 + g + 2j * np.pi * f * 1e-6)
    np.testing.assert_allclose(r.response["v(b)"], expected, rtol=1e-7)


def test_cli_ac_csv_and_bode_plot(tmp_path, capsys):
    out, png = tmp_path / "ac.csv", tmp_path / "bode.png"
    assert main(["ac", "tests/decks/rc_lowpass.cir", "--sweep", "dec", "5", "10", "100k", "--signal", "v(out)",
                 "--out", str(out), "--plot", str(png)]) == 0
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    f = data[:, 0]
    np.testing.assert_allclose(data[:, 1], -10 * np.log10(1 + (2 * np.pi * f * 1e-4) ** 2), atol=1e-9)
    assert png.stat().st_size > 0
    assert main(["ac", "tests/decks/rc_lowpass.cir", "--sweep", "lin", "3", "1k", "3k", "--source", "nope"]) == 1
    assert "unknown source 'nope'" in capsys.readouterr().err


def test_cli_ac_reads_the_decks_ac_card(tmp_path, capsys):
    deck = tmp_path / "rc.cir"
    deck.write_text("RC\nV1 in 0 DC 0\nR1 in out 1k\nC1 out 0 100n\n.AC Oct 2 1k 4k\n.end\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the .ac card is read, not skipped
        assert main(["ac", str(deck), "--signal", "v(out)"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "f,dB v(out),phase v(out)"
    f = np.array([float(ln.split(",")[0]) for ln in lines[1:]])
    np.testing.assert_allclose(f, 1e3 * 2 ** (np.arange(5) / 2))
    deck.write_text("RC\nV1 in 0 DC 0\nR1 in out 1k\nC1 out 0 100n\n")
    assert main(["ac", str(deck)]) == 1
    assert "has no .ac card" in capsys.readouterr().err


# ngspice-39: `ngspice -b` on this deck with `V1 a 0 DC 5 AC 1` and a control block
# `op; print v(b) v(c); ac dec 2 10 100k; print vm(b) vp(b)` (27 degC)
NGSPICE_DECK = ("Bias network with a diode\nV1 a 0 DC 5\nR1 a b 1k\nD1 b c DX\nR2 c 0 100\nC1 b 0 1u\nL1 c 0 10m\n"
                ".model DX D(IS=2.52n N=1.752 RS=0.5)\n.temp 27\n.end\n")
NGSPICE_VB = 6.529362e-01
NGSPICE_AC = [(1.082835e-02, 5.612877e-02), (1.102556e-02, 1.750903e-01), (1.283675e-02, 4.918658e-01),
              (2.467119e-02, 8.650097e-01), (7.370639e-02, 4.863711e-01), (5.317334e-02, -9.96441e-01),
              (1.603809e-02, -1.40914e+00), (5.036880e-03, -1.52032e+00), (1.591675e-03, -1.55485e+00)]


def test_op_and_ac_agree_with_ngspice(tmp_path):
    from phsym.simulation import ac_analysis
    from phsym.simulation.analyses.ac import frequency_grid
    deck = tmp_path / "bias.cir"
    deck.write_text(NGSPICE_DECK)
    op = operating_point(deck)
    assert op.nodes["b"] == pytest.approx(NGSPICE_VB, rel=1e-6)
    assert op.nodes["c"] == pytest.approx(0.0, abs=1e-12)
    r = ac_analysis(deck, frequency_grid("dec", 2, 10, 1e5), signals=["v(b)"])
    ref = np.array(NGSPICE_AC)
    np.testing.assert_allclose(np.abs(r.response["v(b)"]), ref[:, 0], rtol=2e-5)
    np.testing.assert_allclose(np.angle(r.response["v(b)"]), ref[:, 1], rtol=2e-5, atol=1e-6)


def test_op_table_gives_each_domain_its_units():
    """`phsym op` of non-electrical networks: a thermal node's potential is a temperature in K and
    its through variable an entropy flow in W/K; a loudspeaker's cone moves in m/s under N."""
    from pathlib import Path
    from phsym.simulation.analyses.op import operating_point
    net = Path(__file__).resolve().parents[1] / "netlists"
    text = operating_point(net / "heat_transfer.cir").to_text()
    assert "t1                            293.15 K" in text
    assert [ln.split()[-2] for ln in text.splitlines() if ln.startswith("G12")] == ["W/K"]
    op = operating_point(net / "loudspeaker.cir")
    assert op.domains["cone"] == "translational" and op.domains["M1"] == "translational"
    assert op.domains["TF1.p"] == "electrical" and op.domains["TF1.s"] == "translational"
    text = op.to_text()
    assert any(ln.startswith("M1") and "m/s" in ln and " N " in ln for ln in text.splitlines())
    assert any(ln.startswith("R1") and " V " in ln and " A " in ln for ln in text.splitlines())
