"""SPICE deck conventions: title line, .end, .tran, .ic, .options, .temp, .include/.lib, skipped cards."""
import argparse
import warnings

import numpy as np
import pytest

import phsym
from phsym.errors import NetlistError, NetlistWarning
from phsym.netlist import parse_netlist
from phsym.netlist.cards import BOLTZMANN_OVER_Q, deck_settings
from phsym.simulation.cli import simulate as cli_simulate
from phsym.simulation.run import _with_includes

RC = "V1 in 0 DC 1\nR1 in out 1k\nC1 out 0 1u\n"


def _quiet_parse(text, file=None):
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no warning expected
        return parse_netlist(text, file)


def _error(text, file=None) -> NetlistError:
    with pytest.raises(NetlistError) as info:
        parse_netlist(text, file)
    return info.value


def _cli(argv):
    p = argparse.ArgumentParser()
    cli_simulate.add_parser(p.add_subparsers())
    args = p.parse_args(["simulate"] + argv)
    return args.func(args)


# ------------------------------------------------------------------ title line
@pytest.mark.parametrize("first", ["Full-wave bridge rectifier", "RC low-pass filter", "Diode clipper",
                                   "Test { unbalanced", "simple deck (v2), 50 Hz"])
def test_first_line_is_the_title_when_not_an_element(first):
    nl = _quiet_parse(first + "\n" + RC)
    assert nl.title == first
    assert [e.name for e in nl.elements] == ["V1", "R1", "C1"]


def test_first_line_element_or_comment_or_card_is_not_a_title():
    assert _quiet_parse(RC).title == ""
    assert [e.name for e in _quiet_parse("R9 in 0 5\n" + RC).elements][0] == "R9"
    assert _quiet_parse("* comment\n" + RC).title == ""
    assert _quiet_parse(".param a=1\n" + RC).title == ""
    # only physical line 1 can be the title (after a blank line, it is a statement)
    assert _error("\nRC low-pass\n" + RC).line == 2


def test_dot_title_wins_and_still_works():
    assert _quiet_parse("My deck\n" + RC + ".title Other\n").title == "Other"
    assert _quiet_parse(".title X Y\n" + RC).title == "X Y"


def test_invalid_element_with_digit_is_title_with_a_warning():
    with pytest.warns(NetlistWarning, match=r"line 1 'D1 clipper' is read as the title"):
        nl = parse_netlist("D1 clipper\n" + RC)
    assert nl.title == "D1 clipper" and len(nl.elements) == 3


def test_errors_after_the_title_keep_their_positions():
    err = _error("Title line\nV1 in 0 DC 1\nR1 in out\n", "deck.cir")
    assert (err.file, err.line) == ("deck.cir", 3)


def test_end_stops_reading():
    nl = _quiet_parse("T\n" + RC + ".end\nthis is not read ( {\n")
    assert len(nl.elements) == 3


# ------------------------------------------------------------------ .tran
def test_tran_card_fields():
    d = _quiet_parse("T\n" + RC + ".tran 0.1m 60m 1m 5u UIC\n").deck
    assert (d.tran.step, d.tran.stop, d.tran.start, d.tran.tmax, d.tran.uic) == (1e-4, 60e-3, 1e-3, 5e-6, True)
    assert d.tran.fs == pytest.approx(1e4) and d.x0 is None
    d = _quiet_parse("T\n" + RC + ".TRAN 10u 5m\n").deck
    assert d.tran.uic is False and d.x0 == "dc"


@pytest.mark.parametrize("card, col, msg", [(".tran 1m", 1, "needs TSTEP and TSTOP"),
                                             (".tran 1m x", 10, "TSTOP must be a number"),
                                             (".tran 10m 1m", 7, "longer than TSTOP"),
                                             (".tran -1m 5m", 7, "TSTEP must be positive"),
                                             (".tran 1u 5m 0 1u 3", 18, "after TMAX"),
                                             (".tran 1u 5m 6m", 13, "TSTART 0.006 is not before")])
def test_tran_errors_point_at_the_value(card, col, msg):
    err = _error("T\n" + RC + card + "\n")
    assert err.line == 5 and err.column == col and msg in err.message


def test_cli_uses_tran_dc_start_and_flags_override(tmp_path, capsys):
    deck = tmp_path / "rc.cir"
    deck.write_text("RC low-pass\n" + RC + ".tran 10u 5m\n")
    out = tmp_path / "r.csv"
    assert _cli([str(deck), "--out", str(out), "--quiet"]) == 0
    assert "500 steps" in capsys.readouterr().out
    data = np.genfromtxt(out, delimiter=",", names=True)
    # DC operating point: the capacitor is charged to 1 V and stays there
    np.testing.assert_allclose(data["q_C1"], 1e-6, rtol=1e-9)
    assert _cli([str(deck), "--fs", "20k", "--duration", "1m", "--x0", "ic", "--out", str(out), "--quiet"]) == 0
    data = np.genfromtxt(out, delimiter=",", names=True)
    assert len(data) == 21 and data["q_C1"][0] == 0.0
    # from zero the charge follows 1 - exp(-t / RC) (midpoint at h/RC = 0.05: error < 1e-3)
    np.testing.assert_allclose(data["q_C1"], 1e-6 * (1 - np.exp(-data["t"] / 1e-3)), atol=1e-9)


def test_cli_without_tran_needs_fs(tmp_path):
    deck = tmp_path / "rc.cir"
    deck.write_text(RC)
    with pytest.raises(phsym.SimulationError, match="no .tran card"):
        _cli([str(deck), "--duration", "1m"])
    with pytest.raises(phsym.SimulationInputError, match="no .tran card"):
        phsym.simulate(deck, duration=1e-3)
    with pytest.raises(phsym.SimulationInputError, match="fs is required"):
        phsym.simulate(phsym.parse(RC), duration=1e-3)


def test_python_simulate_reads_the_tran_card_like_the_cli(tmp_path):
    deck = tmp_path / "rc.cir"
    deck.write_text("RC low-pass\n" + RC + ".options reltol=1e-9\n.tran 10u 5m\n")
    res = phsym.simulate(deck)
    assert res.info["fs"] == pytest.approx(1e5) and len(res.t) == 501
    np.testing.assert_allclose(res.x[:, 0], 1e-6, rtol=1e-9)      # DC start: charged to 1 V
    uic = tmp_path / "uic.cir"
    uic.write_text("RC low-pass\n" + RC + ".tran 10u 1m UIC\n")
    res = phsym.simulate(uic, duration=5e-4)                       # given values win over the card
    assert len(res.t) == 51 and res.x[0, 0] == 0.0


# ------------------------------------------------------------------ .ic
def test_ic_sets_capacitor_and_inductor_initial_conditions():
    nl = _quiet_parse("T\nV1 in 0 0\nR1 in a 1\nC1 a b 1u\nC2 b 0 1u\nL1 a 0 1m\nC3 a 0 1u IC=7\n"
                      ".ic V(a)=3 v(b)={2*1} I(l1)=5m\n")
    ics = {e.name: (float(e.ic) if e.ic is not None else None) for e in nl.elements}
    assert ics == {"V1": None, "R1": None, "C1": 1.0, "C2": 2.0, "L1": 0.005, "C3": 7.0}
    assert set(nl.deck.held) == {"C1", "C2", "L1"}      # an element's own IC= wins and is not held


def test_ic_without_uic_holds_the_capacitor_in_the_dc_point(tmp_path):
    # V1 = 1 V through R1 into C1 || R2: the DC point would be 0.5 V, .ic holds 0.8 V
    text = "T\nV1 in 0 DC 1\nR1 in out 1k\nR2 out 0 1k\nC1 out 0 1u\n.ic V(out)=0.8\n"
    sim = phsym.Simulator(phsym.parse(text), 1e4)
    assert sim.run(duration=1e-4, x0="dc").x[0, 0] == pytest.approx(0.8e-6, rel=1e-10)
    sim = phsym.Simulator(phsym.parse(text.replace(".ic V(out)=0.8\n", "")), 1e4)
    assert sim.run(duration=1e-4, x0="dc").x[0, 0] == pytest.approx(0.5e-6, rel=1e-10)


def test_ic_errors_and_warning():
    base = "T\nV1 in 0 0\nR1 in a 1\nC1 a 0 1u\n"
    err = _error(base + ".ic V(nope)=1\n")
    assert (err.line, err.column) == (5, 7) and "unknown node 'nope'" in err.message
    err = _error(base + ".ic I(C1)=1\n")
    assert (err.line, err.column) == (5, 7) and "not an inductor" in err.message
    err = _error(base + ".ic V(a)=1 junk\n")
    assert (err.line, err.column) == (5, 12)
    with pytest.warns(NetlistWarning, match=r"V\(in\) sets no capacitor"):
        parse_netlist(base + ".ic V(in)=1\n")


# ------------------------------------------------------------------ .options / .temp
def test_options_used_and_others_warned_once():
    with pytest.warns(NetlistWarning) as rec:
        nl = parse_netlist("T\n" + RC + ".options RELTOL=1e-4 abstol=1e-9 itl4=40 method=gear\n"
                           ".option gmin=1e-11 noacct itl1=77\n")
    msgs = [str(w.message) for w in rec if "options" in str(w.message)]
    assert msgs == ["ignored .options (not used by phsym): METHOD, NOACCT"]
    d = nl.deck
    assert d.options == {"reltol": 1e-4, "abstol": 1e-9, "itl4": 40, "gmin": 1e-11, "itl1": 77}
    assert d.simulator_options() == {"tol": 1e-9, "maxit": 40}


@pytest.mark.parametrize("card, col", [(".options reltol=2", 17), (".options itl4=2.5", 15),
                                       (".options temp=-300", 15), (".options reltol", 10),
                                       (".options gmin=x", 15)])
def test_option_errors(card, col):
    err = _error("T\n" + RC + card + "\n")
    assert (err.line, err.column) == (5, col)


def test_temperature_sets_the_diode_thermal_voltage():
    text = "T\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DMOD\nD2 b 0\n.model DMOD D(IS=1n)\n"
    vt = BOLTZMANN_OVER_Q * (50 + 273.15)
    for card in (".temp 50\n", ".options TEMP=50\n"):
        p = _quiet_parse(text + card).parameters
        assert p["DMOD.Vt"].default == pytest.approx(vt, rel=1e-12)
        assert p["D2.Vt"].default == pytest.approx(vt, rel=1e-12)
    assert _quiet_parse(text).parameters["D2.Vt"].default == 0.02585     # phsym's default, unchanged
    assert vt == pytest.approx(0.0278469, rel=1e-5)                       # k T / q at 323.15 K


# ------------------------------------------------------------------ .include / .lib
def test_include_and_lib_relative_to_the_deck(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "models.lib").write_text("* lib\n.lib fast\n.model DF D(IS=1n)\n.endl\n"
                                    ".lib slow\n.model DS D(IS=1f)\n.include more.inc\n.endl fast\n")
    (sub / "more.inc").write_text("R9 b 0 9\n")
    (tmp_path / "parts.inc").write_text("R2 b 0 2k\n")
    deck = tmp_path / "deck.cir"
    deck.write_text("Deck\nV1 a 0 1\nR1 a b 1k\n.include parts.inc\n.lib 'sub/models.lib' SLOW\nD1 b 0 DS\n")
    nl = phsym.netlist.load_netlist(deck)
    assert [e.name for e in nl.elements] == ["V1", "R1", "R2", "R9", "D1"]
    assert "DS.Is" in nl.parameters and "DF.Is" not in nl.parameters
    # the warm-start key covers included files
    key1 = _with_includes(deck, deck.read_bytes())
    (sub / "more.inc").write_text("R9 b 0 10\n")
    assert _with_includes(deck, deck.read_bytes()) != key1
    assert deck_settings(deck).tran is None


def test_include_errors_are_located(tmp_path):
    deck = tmp_path / "deck.cir"
    deck.write_text("Deck\nV1 a 0 1\n.include  nofile.inc\nR1 a 0 1\n")
    err = _error(deck.read_text(), str(deck))
    assert (err.file, err.line, err.column) == (str(deck), 3, 11)
    assert "cannot read .include file" in err.message and "relative to the directory" in err.hint
    (tmp_path / "a.inc").write_text("R2 a 0 1\n.include b.inc\n")
    (tmp_path / "b.inc").write_text("\n.inc a.inc\n")
    deck.write_text("Deck\nV1 a 0 1\n.include a.inc\n")
    err = _error(deck.read_text(), str(deck))
    assert (err.file, err.line, err.column) == (str(tmp_path / "b.inc"), 2, 6)
    assert "cycle: a.inc -> b.inc -> a.inc" in err.message
    (tmp_path / "c.lib").write_text(".lib one\nR3 a 0 1\n.endl\n")
    deck.write_text("Deck\nV1 a 0 1\n.lib c.lib two\n")
    err = _error(deck.read_text(), str(deck))
    assert (err.line, err.column) == (3, 12) and "no section 'two'" in err.message and "one" in err.hint
    deck.write_text("Deck\nV1 a 0 1\n.lib c.lib\n")
    assert _error(deck.read_text(), str(deck)).line == 3
    (tmp_path / "d.inc").write_text("R4 a 0\n")       # an error inside an included file points there
    deck.write_text("Deck\nV1 a 0 1\n.include d.inc\n")
    err = _error(deck.read_text(), str(deck))
    assert (err.file, err.line) == (str(tmp_path / "d.inc"), 1)


# ------------------------------------------------------------------ skipped cards
def test_control_blocks_and_plots_skipped_with_one_warning_output_cards_read():
    text = ("T\n" + RC + ".print tran v(out)\n.plot tran v(out) vdb(out)\n.meas tran x find v(out) when v(in)=0.5\n"
            ".control\nrun\nlet y = v(out) * 2\nplot y\n.endc\n.op\n.save all\n.tran 1u 1m\n")
    with pytest.warns(NetlistWarning) as rec:
        nl = parse_netlist(text)
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 1
    for part in (".plot (<netlist>:6:1)", ".control block (<netlist>:8:1)"):
        assert part in msgs[0]
    assert ".print" not in msgs[0] and ".meas" not in msgs[0]
    a = nl.deck.analyses
    assert a.op and a.saves == ["all"] and a.prints == {"tran": ["v(out)"]}
    assert [(m.analysis, m.text) for m in a.measures] == [("tran", "x find v(out) when v(in)=0.5")]
    assert nl.deck.tran.stop == 1e-3
    err = _error("T\n" + RC + ".control\nrun\n")
    assert (err.line, err.message) == (5, ".control without .endc")
    err = _error("T\n" + RC + ".endc\n")
    assert err.line == 5


def test_unknown_dot_command_still_an_error():
    err = _error("T\n" + RC + ".alter\n")
    assert err.line == 5 and "unknown dot-command" in err.message
