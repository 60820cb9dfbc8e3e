"""Netlist parser: elements, params, .model, subcircuits, probes, positions."""
import warnings

import pytest
import sympy as sp

from phsym.errors import NetlistError, NetlistWarning
from phsym.netlist import load_netlist, parse_netlist

S = lambda name: sp.Symbol(name, real=True)  # noqa: E731

CLIPPER = """* diode clipper
.title Diode clipper
.param Rs=2.2k C=10n
.model DMOD D(IS=2.52n N=1.752)
Vin in 0 SIN(0 1 1k)
R1 in out Rs
C1 out 0 C IC=0
D1 out 0 DMOD
D2 0 out DMOD
.probe v(out) i(R1)
.end
"""


def test_clipper(tmp_path):
    path = tmp_path / "clip.cir"
    path.write_text(CLIPPER + "garbage after end ((\n")
    nl = load_netlist(path)
    assert nl.title == "Diode clipper" and nl.file == str(path)
    assert [e.name for e in nl.elements] == ["Vin", "R1", "C1", "D1", "D2"]
    assert nl.element("r1").values == {"R": S("Rs")}
    assert isinstance(nl.element("C1").ic, sp.Float) and float(nl.element("C1").ic) == 0 and nl.element("C1").values["C"] == S("C")
    d1 = nl.element("D1")
    assert d1.kind == "diode" and d1.values == {"Is": S("DMOD.Is"), "N": S("DMOD.N"),
                                                "Vt": S("DMOD.Vt"), "Gmin": S("DMOD.Gmin")}
    assert nl.element("D2").nodes == ("0", "out")
    assert nl.parameters["DMOD.Is"].default == pytest.approx(2.52e-9)
    assert nl.parameters["DMOD.Vt"].default == pytest.approx(0.02585)
    assert nl.element("Vin").waveform.shape == "sin"
    assert [p.label for p in nl.probes] == ["v(out)", "i(R1)"]


def test_no_title_means_empty():
    assert parse_netlist("Rfirst a 0 1\n").title == ""
    assert parse_netlist("* comment\nR1 a 0 1\n").title == ""


def test_element_values_make_parameters():
    nl = parse_netlist("R1 a b 1k\nC1 a 0 10uF\nL1 b 0 1mH IC=0.5\nTF1 p 0 s 0 2\nGY1 p 0 s 0 0.5\n")
    assert nl.parameters["R1"].default == 1000.0
    assert nl.parameters["R1"].symbol == S("R1")
    assert nl.element("R1").values["R"] == S("R1")
    assert nl.element("L1").ic == sp.Float(0.5) and "L1.IC" not in nl.parameters
    assert nl.element("TF1").kind == "transformer" and nl.element("TF1").nodes == ("p", "0", "s", "0")
    assert nl.element("GY1").values == {"r": S("GY1")}


def test_keyword_main_values_and_case():
    nl = parse_netlist("R1 a 0 r=2\nc1 a 0 C=3 ic=1\nD1 a 0 is=1n N=2\n")
    assert nl.parameters["R1"].default == 2.0
    assert nl.element("C1").name == "c1" and nl.parameters["c1"].default == 3.0
    assert nl.parameters["D1.Is"].default == pytest.approx(1e-9)
    assert nl.parameters["D1.N"].default == 2.0
    assert nl.parameters["D1.Vt"].default == pytest.approx(0.02585)


def test_mechanical_kinds():
    nl = parse_netlist("M1 v1 0 mass m=4\nK12 v1 v2 spring k=4 IC=0\nB1 v2 0 damper c=0.1\n"
                       "F1 v1 0 force SIN(0 1 5)\nJ1 w 0 inertia J=2\nT1 w 0 torsion k=3\n"
                       "B2 w 0 rdamper c=1\nQ1 w 0 torque\nW1 w 0 angular_velocity DC 1\n"
                       "U1 v2 0 velocity\n")
    kinds = [e.kind for e in nl.elements]
    assert kinds == ["mass", "spring", "damper", "force", "inertia", "torsion", "rdamper",
                     "torque", "angular_velocity", "velocity"]
    assert nl.element("K12").values == {"k": S("K12")}
    assert nl.element("F1").waveform.shape == "sin"


def test_laws():
    nl = parse_netlist(".param C0=1u a4=2 Is=1e-12 Vt=25m r0=1 r3=0.1\n"
                       "C1 a b H={q**2/(2*C0) + a4*q**4}\n"
                       "R1 a b I={Is*(exp(v/Vt)-1)}\nR2 a b V={r0*i + r3*i^3}\n"
                       "L1 a 0 H={phi^2}\nK1 a 0 spring H={x^2}\nT1 a 0 torsion H={theta^2}\n"
                       "M1 a 0 mass H={p^2/2}\n")
    q, v, i = S("q"), S("v"), S("i")
    c1 = nl.element("C1")
    assert c1.law.key == "H" and c1.law.variable == q and c1.values == {}
    assert c1.law.expr == q ** 2 / (2 * S("C0")) + S("a4") * q ** 4
    assert nl.element("R1").law.expr == S("Is") * (sp.exp(v / S("Vt")) - 1)
    assert nl.element("R2").law.expr == S("r0") * i + S("r3") * i ** 3
    assert nl.element("L1").law.variable == S("phi")
    assert nl.element("K1").law.variable == S("x")
    assert nl.element("T1").law.variable == S("theta")
    assert nl.element("M1").law.variable == S("p")


def test_params_derived_any_order_and_case_insensitive_use():
    nl = parse_netlist("R1 a 0 {2*RB}\n.param rb={ra*3} RA=2\nR2 a 0 ra\n")
    rb = nl.parameters["rb"]
    assert rb.expression == 3 * S("RA") and rb.default == 6.0
    assert nl.parameters["RA"].expression is None
    assert nl.element("R1").values["R"] == 2 * S("rb") and "R1" not in nl.parameters
    assert nl.element("R2").values["R"] == S("RA")


def test_param_alias_is_derived():
    nl = parse_netlist(".param a=1 b=a\nR1 x 0 b\n")
    assert nl.parameters["b"].expression == S("a") and nl.parameters["b"].default == 1.0


@pytest.mark.parametrize("text, message, line, column", [
    (".param a={b+1} b={2*a}\nR1 x 0 a\n", "cyclic parameter definitions: a -> b -> a", 1, 8),
    (".param a={a}\n", "cyclic", 1, 8),
    (".param a=1\nR1 x 0 {a + zz}\n", "undefined parameter 'zz'", 2, 13),
    ("R1 x 0 zz\n", "undefined parameter 'zz'", 1, 8),
    (".param Ra=1\n.param RA=2\n", "differs only by case", 2, 8),
])
def test_param_errors(text, message, line, column):
    with pytest.raises(NetlistError) as exc:
        parse_netlist(text)
    assert message in str(exc.value)
    assert (exc.value.line, exc.value.column) == (line, column)


def test_model_per_element_override_and_defaults():
    nl = parse_netlist(".model dm D IS=1n\nD1 a 0 DM N=2\nD2 a 0\n")
    assert nl.element("D1").values["Is"] == S("dm.Is")
    assert nl.element("D1").values["N"] == S("D1.N")
    assert nl.parameters["dm.N"].default == 1.0
    assert nl.element("D2").values["Is"] == S("D2.Is")
    assert nl.parameters["D2.Is"].default == 1e-14


SUB = """.param g=5
.subckt stage in out params: r=1k c={2*g}
R1 in mid r
C1 mid out 1u
R2 mid 0 {c*g}
.ends stage
.subckt pair a b
X1 a m stage r=7
X2 m b stage
.ends
X1 n1 0 stage r={2*g}
Xp p q PAIR
.probe v(X1.mid) i(x1.r1) v(Xp.X1.mid, q)
"""


def test_subckt_flattening():
    nl = parse_netlist(SUB)
    names = [e.name for e in nl.elements]
    assert names == ["X1.R1", "X1.C1", "X1.R2", "Xp.X1.R1", "Xp.X1.C1", "Xp.X1.R2",
                     "Xp.X2.R1", "Xp.X2.C1", "Xp.X2.R2"]
    assert nl.element("X1.R1").nodes == ("n1", "X1.mid")
    assert nl.element("X1.C1").nodes == ("X1.mid", "0")
    assert nl.element("X1.R1").values["R"] == S("X1.r")
    assert nl.parameters["X1.r"].expression == 2 * S("g") and nl.parameters["X1.r"].default == 10
    assert nl.parameters["X1.c"].default == 10 and nl.parameters["X1.c"].expression == 2 * S("g")
    assert nl.element("X1.R2").values["R"] == S("X1.c") * S("g")
    assert nl.parameters["X1.C1"].default == pytest.approx(1e-6)
    assert nl.parameters["Xp.X1.r"].default == 7 and nl.parameters["Xp.X2.r"].default == 1000
    assert nl.element("Xp.X1.R1").nodes == ("p", "Xp.X1.mid")
    assert nl.element("Xp.X2.C1").nodes == ("Xp.X2.mid", "q")
    assert nl.element("Xp.X1.C1").nodes == ("Xp.X1.mid", "Xp.m")
    assert [p.label for p in nl.probes] == ["v(X1.mid)", "i(X1.R1)", "v(Xp.X1.mid,q)"]


def test_subckt_coupling_refs_are_prefixed():
    nl = parse_netlist(".subckt T a b\nL1 a 0 1m\nL2 b 0 1m\nK1 L1 L2 0.99\n.ends\nX1 p s T\n")
    assert nl.element("X1.K1").refs == ("X1.L1", "X1.L2")


def test_probes():
    nl = parse_netlist("R1 a b 1\nC1 b gnd 1\n.probe v(a) v(a,GND) i(r1)\n+ v(c1) v(b)\n")
    labels = [(p.quantity, p.nodes, p.element, p.label) for p in nl.probes]
    assert labels == [("v", ("a",), None, "v(a)"), ("v", ("a", "0"), None, "v(a,0)"),
                      ("i", (), "R1", "i(R1)"), ("v", (), "C1", "v(C1)"),
                      ("v", ("b",), None, "v(b)")]


def test_nodes_case_insensitive_datum_any_case():
    # SPICE reads node names in any case: the first spelling names the node
    nl = parse_netlist("R1 Out gNd 1\nR2 out GND 1\n")
    assert nl.element("R1").nodes == ("Out", "0") and nl.element("R2").nodes == ("Out", "0")


def test_comments_continuations_and_positions():
    text = ("* header\n"
            "R1 a   ; the resistor\n"
            "\n"
            "* interleaved comment\n"
            "  + b 1k\n"
            "C1 a 0\n"
            "+   zz\n")
    with pytest.raises(NetlistError) as exc:
        parse_netlist(text)
    assert (exc.value.line, exc.value.column) == (7, 5)
    assert exc.value.location.text == "+   zz"
    nl = parse_netlist(text.replace("zz", "1u"))
    assert nl.element("R1").nodes == ("a", "b")
    assert nl.element("R1").arg_locations["node1"].line == 5


def test_uppercase_m_warning_has_position():
    with pytest.warns(NetlistWarning, match=r"amp\.cir:2:8"):
        nl = parse_netlist("* x\nR1 a 0 1M\n", file="amp.cir")
    assert nl.parameters["R1"].default == pytest.approx(1e-3)


def test_no_warning_for_meg():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_netlist("R1 a 0 1Meg\n").parameters["R1"].default == 1e6


def test_error_message_names_file(tmp_path):
    p = tmp_path / "bad.cir"
    p.write_text("R1 a 0\n")
    with pytest.raises(NetlistError) as exc:
        load_netlist(p)
    assert str(p) in str(exc.value) and "hint:" in str(exc.value)


def test_missing_file_is_netlist_error(tmp_path):
    with pytest.raises(NetlistError):
        load_netlist(tmp_path / "nope.cir")
