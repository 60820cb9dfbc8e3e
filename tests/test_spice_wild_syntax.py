"""SPICE syntax as decks in the wild write it (parse level: fast).

The decks of tests/decks/wild run these forms against ngspice; here each
form is pinned on its own, with the numbers ngspice-39 gave where they
matter (the command is given next to them).
"""
import warnings

import numpy as np
import pytest
import sympy as sp

import phsym
from phsym.errors import NetlistError, NetlistWarning
from phsym.netlist import parse_netlist
from phsym.netlist.behavioral import spice_poly
from phsym.simulation.fourier import fourier
from phsym.simulation.measure import evaluate


def _quiet(text, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return parse_netlist(text, **kw)


def test_end_of_line_comments_as_ngspice_reads_them():
    nl = _quiet("t\nV1 a 0 1 $ one volt\nR1 a b 1k ; a resistor\nR2 b 0 2k // and another\n")
    assert [e.name for e in nl.elements] == ["V1", "R1", "R2"]
    with pytest.raises(NetlistError, match="malformed number"):
        parse_netlist("t\nV1 a 0 1\nR1 a 0 1k$x\n")      # no blank before $: not a comment (ngspice too)


def test_node_names_ignore_case_and_take_spice_forms():
    nl = _quiet("t\nV1 IN 0 1\nR1 in net.1 1k\nR2 NET.1 N001 1k\nR3 n001 /out 1k\nC1 /OUT gnd 1u\n")
    assert nl.element("R2").nodes == ("net.1", "N001") and nl.element("C1").nodes == ("/out", "0")
    assert nl.element("R1").nodes[0] == "IN"


def test_spice2_model_cards_and_models_named_by_digits():
    nl = _quiet("t\n.MODEL Q1 NPN BF 20 RB 100 TF .1NS CJC 2PF\n.model 1N4148 D (IS=2.52n, N=1.752)\n"
                "V1 c 0 5\nV2 b 0 0.7\nQ1 c b 0 Q1\nD1 c 0 1N4148\n")
    p = nl.parameters
    assert p["Q1.Bf"].default == 20 and p["Q1.Rb"].default == 100
    assert p["Q1.Tf"].default == pytest.approx(1e-10) and p["Q1.Cjc"].default == pytest.approx(2e-12)
    assert p["1N4148.N"].default == 1.752


def test_source_specifications_in_any_order():
    nl = _quiet("t\nvin 1 0 0.0 ac 1.0 sin(0 1 1k)\nVIN2 2 0 AC 1\nV3 3 0 DC 5 AC 2 45 PULSE 0 1 1u\n"
                "R1 1 0 1\nR2 2 0 1\nR3 3 0 1\n.tran 1u 1m\n")
    v1, v2, v3 = (nl.element(n) for n in ("vin", "VIN2", "V3"))
    assert v1.waveform.shape == "sin" and float(v1.dc) == 0.0 and tuple(map(float, v1.ac)) == (1.0, 0.0)
    assert v2.waveform.shape == "dc" and float(v2.waveform.args[0]) == 0.0 and v2.dc is None
    assert float(v3.dc) == 5.0 and tuple(map(float, v3.ac)) == (2.0, 45.0)
    # PULSE without parentheses; a missing rise/fall is TSTEP, as ngspice
    assert [float(a) for a in v3.waveform.args] == [0.0, 1.0, 1e-6, 1e-6, 1e-6]


def test_poly_coefficients_in_spice_order_against_ngspice():
    # ngspice-39 `op` of E2 10 0 POLY(2) 1 0 2 0 1 2 ... 10 at v(1)=2, v(2)=3 gives 698, and
    # E3 POLY(3) ... 0 1 1 1 1 2 3 4 5 6 at v(1)=2, v(2)=3, v(3)=2 gives 125; a single coefficient is p0
    x1, x2, x3 = 2, 3, 2
    assert spice_poly([x1, x2], list(range(1, 11))) == 698
    assert spice_poly([x1, x2, x3], [0, 1, 1, 1, 1, 2, 3, 4, 5, 6]) == 125
    assert spice_poly([sp.Symbol("x")], [5]) == 5


def test_behavioural_forms_build_one_active_kind():
    m = phsym.parse("t\nV1 a 0 2\nVS a b 1\nR1 b 0 1k\nB1 c 0 V = V(a)*2 + i(VS)*1k\nR2 c 0 1k\n"
                    "E1 d 0 TABLE {V(a)} = (0,0) (1,5) (3,6)\nR3 d 0 1k\nG1 e 0 VALUE={1m*V(a,b)}\nR4 e 0 1k\n"
                    "F1 f 0 POLY(2) VS V1 0 1 1\nR5 f 0 1k\n")
    kinds = {e.name: e.kind for e in m.netlist.elements}
    assert {kinds[n] for n in ("B1", "E1", "G1", "F1")} == {"behavioral"}
    assert [d.element for d in m.structure.dissipative if d.active] == ["B1", "E1", "G1", "F1"]
    assert m.netlist.element("VS").nodes[0] == "VS#i"        # a 1 V source keeps its port, an ammeter in series


def test_shorted_two_terminal_element_left_out_with_one_warning():
    with pytest.warns(NetlistWarning, match="both terminals on one node") as rec:
        nl = parse_netlist("t\n.subckt clamp 1 2\nD1CLAMP 0 1 DM\nR1 1 2 1k\n.ends\n.model DM D\nV1 a 0 1\n"
                           "X1 0 a clamp\n")
    assert [e.name for e in nl.elements] == ["V1", "X1.R1"] and "X1.D1CLAMP" in str(rec[0].message)
    with pytest.raises(NetlistError, match="both terminals on node"):
        parse_netlist("t\nV1 a a 5\nR1 a 0 1\n")


def test_func_global_and_ltspice_parasitics():
    nl = _quiet("t\n.func half(x) {x/2}\n.param r={half(2k)}\n.global vdd\n.subckt buf in out\n"
                "R1 vdd out r\n.ends\nVdd vdd 0 5 Rser=0.1\nC1 vdd 0 1u Rser=10 Rpar=1meg mfg=TDK\n"
                "X1 vdd o buf\nR2 o 0 1k\n")
    assert nl.parameters["r"].default == 1000.0 and nl.element("X1.R1").nodes == ("vdd", "o")
    names = [e.name for e in nl.elements]
    assert {"Vdd.rser", "C1.rser", "C1.rpar"} <= set(names) and nl.element("C1").nodes == ("vdd", "C1#s")


def test_outputs_every_node_and_source_unless_selected():
    nl = _quiet("t\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n")
    assert nl.outputs() == ["v(in)", "v(out)", "i(V1)"]
    nl = _quiet("t\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n.save v(OUT) @r1[i]\n.print tran i(v1)\n")
    assert nl.outputs() == ["v(out)", "i(V1)"] and not nl.save_all


def test_analysis_cards_read_and_malformed_ones_located():
    nl = _quiet("t\nVDS 3 0\nVGS 2 0\nR1 3 2 1k\n.DC VDS 0 10 .5 VGS 0 5 1\n.TF V(3) VGS\n.AC OCT 2 1k 4k\n")
    a = nl.deck.analyses
    assert [w.name for w in a.dc] == ["VDS", "VGS"] and len(a.dc[0].points) == 21 and a.tf.output == "v(3)"
    with pytest.raises(NetlistError, match="malformed .ac") as exc:
        parse_netlist("t\nV1 a 0 1\nR1 a 0 1\n.ac dex 10 1 1k\n")
    assert (exc.value.line, exc.value.column) == (4, 5)


def test_measurements_on_a_known_waveform():
    t = np.linspace(0.0, 2e-3, 2001)
    sig = {"v(a)": np.sin(2 * np.pi * 1e3 * t), "v(b)": np.cos(2 * np.pi * 1e3 * t)}.__getitem__
    got = {}
    for card in ("vmax MAX v(a)", "vrms RMS v(a) FROM=0 TO=1m", "t1 WHEN v(a)=0 FALL=2",
                 "dt TRIG v(a) VAL=0 RISE=1 TD=0.1m TARG v(b) VAL=0 RISE=1 TD=0.1m", "f FIND v(b) AT=0.5m",
                 "w FIND v(b) WHEN v(a)=v(b) CROSS=1", "pp PP v(a)", "avg AVG v(b) FROM=0 TO=1m"):
        got.update(evaluate(card, t, sig))
    assert got["vmax"] == pytest.approx(1.0) and got["vrms"] == pytest.approx(np.sqrt(0.5), rel=1e-5)
    assert got["t1"] == pytest.approx(1.5e-3, abs=1e-9) and got["dt"] == pytest.approx(-0.25e-3, abs=1e-8)   # cos rises first
    assert got["f"] == pytest.approx(-1.0) and got["w"] == pytest.approx(np.sqrt(0.5), rel=1e-5)
    assert got["pp"] == pytest.approx(2.0) and got["avg"] == pytest.approx(0.0, abs=1e-12)


def test_fourier_of_a_clipped_sine_shape():
    t = np.linspace(0.0, 3e-3, 3001)
    y = np.clip(np.sin(2 * np.pi * 1e3 * t), -0.5, 0.5)
    f = fourier(t, y, 1e3)
    # a symmetric clipper: odd harmonics only, in phase with the sine
    assert np.all(f.magnitude[2::2] < 1e-3) and f.magnitude[3] > 0.05
    assert f.phase[1] == pytest.approx(0.0, abs=0.5)
    assert f.thd == pytest.approx(100 * np.sqrt(np.sum(f.magnitude[2:] ** 2)) / f.magnitude[1])
