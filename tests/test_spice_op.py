"""phsym op / operating_point: DC operating point against closed forms."""
import json

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
