"""The commands SPICE users run first, on small decks: phsym simulate (every node saved, --signals,
.meas, .step, .temp lists), phsym dc, phsym tf, phsym ac with AC specifications."""
import warnings

import numpy as np
import pytest

from phsym.cli import main
from phsym.simulation.analyses.steps import run_steps
from phsym.netlist.cards import deck_settings

RC = "RC\nV1 in 0 PULSE(0 1 0 1u 1u 1m 2m)\nR1 in out {RVAL}\nC1 out 0 1u\n.param RVAL=500\n"


def _run(argv, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(argv) == 0
    return capsys.readouterr()


def test_simulate_saves_every_node_and_source_and_selects_with_signals(tmp_path, capsys):
    deck = tmp_path / "rc.cir"
    deck.write_text(RC + ".tran 10u 1m\n.meas tran vend FIND v(out) AT=1m\n.meas tran tau WHEN v(out)=0.632 RISE=1\n")
    out = tmp_path / "rc.csv"
    text = _run(["simulate", str(deck), "--out", str(out)], capsys).out
    head = out.read_text().splitlines()[0].split(",")
    assert {"v(in)", "v(out)", "i(V1)", "H", "P_diss"} <= set(head)
    # .meas printed as ngspice prints it: the RC charges to 1 - 1/e at one time constant
    tau = float(next(line for line in text.splitlines() if line.startswith("tau")).split("=")[1])
    assert tau == pytest.approx(0.5e-3, rel=0.02)
    _run(["simulate", str(deck), "--out", str(out), "--signals", "v(out),i(v1)"], capsys)
    assert out.read_text().splitlines()[0] == "t,v(out),i(v1)"


def test_step_param_writes_one_table_per_step(tmp_path, capsys):
    deck = tmp_path / "rc.cir"
    deck.write_text(RC + ".step param RVAL list 250 2k\n.tran 10u 1m\n")
    text = _run(["simulate", str(deck), "--out", str(tmp_path / "r.csv")], capsys).out
    assert "step 1 (RVAL=250)" in text and "step 2 (RVAL=2000)" in text
    a, b = (np.genfromtxt(tmp_path / f"r.step{k}.csv", delimiter=",", names=True) for k in (1, 2))
    # the smaller resistor charges faster: exp(-t/0.25ms) against exp(-t/2ms)
    assert a["vout"][-1] > b["vout"][-1] > 0.3


def test_temperature_list_runs_the_deck_at_each_temperature(tmp_path):
    deck = tmp_path / "d.cir"
    deck.write_text("D\nI1 0 a DC 1m\nD1 a 0 DM\nC1 a 0 1n\n.model DM D(IS=1e-14)\n.temp 0 100\n.tran 1u 20u\n")
    d = deck_settings(deck)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = run_steps(deck, d.analyses, d.tran.fs, d.tran.stop, d.x0)
    cold, hot = (r.signals["v(a)"][-1] for r in runs)
    # the forward voltage falls with temperature (IS grows faster than Vt): ngspice-39 gives about
    # -1.7 mV/K at 1 mA for this card; phsym's level-1 law the same within a few percent
    assert [r.values["temp"] for r in runs] == [0.0, 100.0]
    assert -2.2e-3 < (hot - cold) / 100 < -1.4e-3


def test_dc_and_tf_commands_print_spice_tables(tmp_path, capsys):
    deck = tmp_path / "div.cir"
    deck.write_text("DIV\nVIN 1 0 DC 1\nR1 1 2 1k\nR2 2 0 3k\n.dc VIN 0 2 1\n.tf V(2) VIN\n"
                    ".meas dc vmid FIND v(2) AT=1\n.end\n")
    printed = _run(["dc", str(deck)], capsys)
    rows = printed.out.strip().splitlines()
    assert rows[0] == "VIN,v(1),v(2),i(VIN)"
    np.testing.assert_allclose([float(x) for x in rows[-1].split(",")], [2.0, 2.0, 1.5, -5e-4], rtol=1e-12)
    assert "vmid" in printed.err and "7.500000e-01" in printed.err        # .meas dc beside the table
    text = _run(["tf", str(deck)], capsys).out
    assert text.splitlines() == ["transfer_function = 7.500000e-01", "vin#input_impedance = 4.000000e+03",
                                 "output_impedance_at_v(2) = 7.500000e+02"]


def test_ac_excites_the_decks_ac_sources_superposed(tmp_path, capsys):
    # two sources into one node through equal resistors: v(o) = (V1 + V2) / 2, with V2 = 2 at 90 degrees
    deck = tmp_path / "sum.cir"
    deck.write_text("SUM\nV1 a 0 DC 0 AC 1\nV2 b 0 AC 2 90\nR1 a o 1k\nR2 b o 1k\n.ac LIN 1 1k 1k\n")
    out = tmp_path / "ac.csv"
    _run(["ac", str(deck), "--signal", "v(o)", "--out", str(out)], capsys)
    f, db, ph = np.loadtxt(out, delimiter=",", skiprows=1)
    assert db == pytest.approx(20 * np.log10(abs((1 + 2j) / 2))) and ph == pytest.approx(np.degrees(np.angle(1 + 2j)))
    _run(["ac", str(deck), "--signal", "v(o)", "--source", "V2", "--out", str(out)], capsys)
    assert np.loadtxt(out, delimiter=",", skiprows=1)[1] == pytest.approx(20 * np.log10(0.5))
