"""Diode .model parity with SPICE level 1: accepted names, ignored ones warned once, RS."""
import argparse
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

import phsym
from phsym.errors import NetlistError, NetlistWarning
from phsym.netlist import parse_netlist
from phsym.simulation.cli import simulate as cli_simulate

VT = 0.02585


def test_spice_level1_names_accepted_ignored_ones_in_one_warning():
    text = ("T\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DA\nD2 b 0 DB\n"
            ".model DA D(IS=1e-14 N=1.05 CJO=2p VJ=0.7 M=0.5 FC=0.5 TT=5n BV=100 IBV=1u)\n"
            ".model DB D(is=2n n=1.7 eg=1.11 xti=3 kf=0 af=1 level=1)\n")
    with pytest.warns(NetlistWarning) as rec:
        nl = parse_netlist(text)
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 1
    assert "DB: KF, AF, LEVEL)" in msgs[0] and "DA" not in msgs[0]   # EG, XTI: temperature law
    assert nl.parameters["DA.N"].default == 1.05 and nl.parameters["DB.Is"].default == 2e-9


def test_unknown_model_parameter_still_an_error():
    with pytest.raises(NetlistError) as info:
        parse_netlist("T\nV1 a 0 1\nD1 a 0 DA\n.model DA D(IS=1n FOO=3)\n")
    err = info.value
    assert (err.line, err.column) == (4, 19) and "unknown diode model parameter 'FOO'" in err.message
    assert "RS" in err.hint and "CJO" in err.hint


def test_no_series_resistance_no_internal_node():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = phsym.parse("T\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DA\nD2 b 0 RS=0\n.model DA D(IS=1n)\n")
    assert [d.element for d in m.structure.dissipative] == ["R1", "D1", "D2"]
    assert not any(k.endswith(".Rs") for k in m.netlist.parameters if k.startswith("DA"))


@pytest.mark.parametrize("where", ["card", "element"])
def test_series_resistance_matches_an_independent_solution(where):
    # V -> D (IS, N, RS) -> R to ground, DC: V = N Vt ln(1 + i/IS) + (RS + R) i
    Is, N, Rs, R = 1e-14, 1.2, 10.0, 100.0
    card = f".model DA D(IS={Is} N={N}" + (f" RS={Rs})" if where == "card" else ")")
    inst = "D1 a b DA" + ("" if where == "card" else f" rs={Rs}")
    m = phsym.parse(f"T\nV1 a 0 DC 2\n{inst}\nR1 b 0 {R}\n{card}\n.probe i(D1) v(a,b) v(D1)\n")
    assert [d.element for d in m.structure.dissipative] == ["D1", "D1.rs", "R1"]
    res = phsym.simulate(m, 1000, duration=0.003)
    i_ref = brentq(lambda i: N * VT * np.log1p(i / Is) + (Rs + R) * i - 2.0, 0.0, 2.0 / (Rs + R), xtol=1e-16)
    np.testing.assert_allclose(res["i(D1)"][1:], i_ref, rtol=1e-10)
    np.testing.assert_allclose(res["v(a,b)"][1:] - res["v(D1)"][1:], Rs * i_ref, rtol=1e-9)
    # the series resistor's dissipation is counted: P_diss = V i
    np.testing.assert_allclose(res["P_diss"][1:], 2.0 * i_ref, rtol=1e-9)


def test_series_resistance_must_be_nonnegative():
    with pytest.raises((NetlistError, phsym.StructureError)):
        phsym.parse("T\nV1 a 0 1\nD1 a 0 RS=-1\n")


# ------------------------------------------------------------------ GMIN
def test_gmin_default_option_and_dissipation():
    text = "T\nV1 a 0 DC -1\nD1 a 0 DA\n.model DA D(IS=1e-14)\n.probe i(D1)\n"
    assert phsym.parse(text).netlist.parameters["DA.Gmin"].default == 1e-12
    m = phsym.parse(text + ".options GMIN=1e-9\n")
    assert m.netlist.parameters["DA.Gmin"].default == 1e-9
    res = phsym.simulate(m, 1000, duration=0.002)
    i_ref = 1e-14 * np.expm1(-1 / VT) - 1e-9          # reverse: -Is - GMIN * 1 V
    np.testing.assert_allclose(res["i(D1)"][1:], i_ref, rtol=1e-12)
    np.testing.assert_allclose(res["P_diss"][1:], -1.0 * i_ref, rtol=1e-12)


BRIDGE = """Full-wave bridge rectifier
V1 ac1 ac2 SIN(0 10 50)
D1 ac1 out DMOD
D2 ac2 out DMOD
D3 0 ac1 DMOD
D4 0 ac2 DMOD
C1 out 0 100u
R1 out 0 1k
.model DMOD D(IS={Is} N={N})
.tran 20.833333u 60m
"""


def _bridge_reference(t, Is, N, gmin=1e-12, C=100e-6, R=1e3):
    """Independent solution: the source's common mode by bisection, v(out) by solve_ivp (Radau)."""
    from scipy.integrate import solve_ivp

    def diode(v):       # scalars: math's expm1 (numpy's per scalar was most of the reference's time)
        try:
            e = math.expm1(v / (N * VT))
        except OverflowError:
            e = math.inf                            # numpy's overflow, at brentq's wide bracket
        return Is * e + gmin * v

    def currents(tt, vout):
        vs, vout = 10 * math.sin(2 * math.pi * 50 * tt), float(vout)
        # the floating source: no net current into its two nodes fixes v(ac2)
        f = lambda a2: diode(-(a2 + vs)) + diode(-a2) - diode(a2 + vs - vout) - diode(a2 - vout)  # noqa: E731
        a2 = brentq(f, -20, 20, xtol=1e-15)
        return diode(a2 + vs - vout) + diode(a2 - vout)

    sol = solve_ivp(lambda tt, y: [(currents(tt, y[0]) - y[0] / R) / C], (0, t[-1]), [0.0], method="Radau",
                    t_eval=t, rtol=1e-10, atol=1e-12, max_step=2e-5)
    return sol.y[0]


def test_bridge_rectifier_matches_an_independent_solution_at_second_order(tmp_path):
    deck = tmp_path / "bridge.cir"
    deck.write_text(BRIDGE.replace(".model", ".param Is=1e-14 N=1\n.model"))
    coarse = phsym.simulate(str(deck), 48000, duration=0.06, x0="dc")      # the .tran rate and length
    fine = phsym.simulate(str(deck), 20 * 48000, duration=0.06, x0="dc")
    assert coarse.max_balance_error < 1e-9 and fine.max_balance_error < 1e-9
    ref = _bridge_reference(coarse.t, 1e-14, 1.0)
    assert np.max(ref) > 8.5
    err_coarse = np.max(np.abs(coarse["q_C1"] / 100e-6 - ref))
    err_fine = np.max(np.abs(fine["q_C1"][::20] / 100e-6 - ref))
    # measured 1.7 mV and 4.2 uV: the error falls as h**2 (20**2 = 400) down to the reference's accuracy
    assert err_coarse < 2.5e-3 and err_fine < 1e-5
    assert err_coarse / err_fine > 200


def test_bridge_rectifier_other_diode_model_runs_from_the_deck(tmp_path, capsys):
    deck = tmp_path / "bridge.cir"
    deck.write_text(BRIDGE.replace(".model", ".param Is=2.52n N=1.752\n.model"))
    p = argparse.ArgumentParser()
    cli_simulate.add_parser(p.add_subparsers())
    out = tmp_path / "b.npz"
    args = p.parse_args(["simulate", str(deck), "--quiet", "--out", str(out)])
    assert args.func(args) == 0
    assert "2880 steps" in capsys.readouterr().out
    with np.load(out) as data:
        vout = data["q_C1"] / 100e-6
    # the rectified output rises to about 10 V minus two diode drops and ripples with 1k || 100u
    assert 8.4 < vout.max() < 8.7 and vout[-1] > 7.5


# ------------------------------------------------------------------ temperature
def test_saturation_current_follows_spice_level1_temperature_law():
    from phsym.netlist.params import evaluate_parameters
    text = "T\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DA\n.model DA D(IS=1e-14 N=1.5 EG=1.2 XTI=2 TNOM=20)\n.temp 75\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # TNOM, EG, XTI are used, not ignored
        nl = parse_netlist(text)
    T, Tn = 75 + 273.15, 20 + 273.15
    vt = 1.380649e-23 * T / 1.602176634e-19
    ref = 1e-14 * (T / Tn) ** (2 / 1.5) * np.exp((T / Tn - 1) * 1.2 / (1.5 * vt))
    assert nl.parameters["DA.Is_at_T"].default == pytest.approx(ref, rel=1e-12)
    assert str(nl.element("D1").values["Is"]) == "DA.Is_at_T"
    assert nl.parameters["DA.Vt"].default == pytest.approx(vt, rel=1e-12)
    # derived: overriding the card's IS scales with it
    values = evaluate_parameters(nl.parameters, {"DA.Is": 2e-14})
    assert values[nl.parameters["DA.Is_at_T"].symbol] == pytest.approx(2 * ref, rel=1e-12)
    # defaults EG=1.11, XTI=3, TNOM from .options; T = TNOM changes nothing
    nl = parse_netlist("T\nV1 a 0 1\nD1 a 0 DA\n.model DA D(IS=1e-14)\n.options TNOM=50 TEMP=50\n")
    assert "DA.Is_at_T" not in nl.parameters
    nl = parse_netlist("T\nV1 a 0 1\nD1 a 0 DA\n.model DA D(IS=1e-14)\n.options TNOM=27 TEMP=100\n")
    T, Tn = 373.15, 300.15
    vt = 1.380649e-23 * T / 1.602176634e-19
    ref = 1e-14 * (T / Tn) ** 3 * np.exp((T / Tn - 1) * 1.11 / vt)
    assert nl.parameters["DA.Is_at_T"].default == pytest.approx(ref, rel=1e-12)
