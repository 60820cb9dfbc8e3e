"""Diode .model parity with SPICE level 1: accepted names, ignored ones warned once, RS."""
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

import phsym
from phsym.errors import NetlistError, NetlistWarning
from phsym.netlist import parse_netlist

VT = 0.02585


def test_spice_level1_names_accepted_ignored_ones_in_one_warning():
    text = ("T\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DA\nD2 b 0 DB\n"
            ".model DA D(IS=1e-14 N=1.05 CJO=2p VJ=0.7 M=0.5 FC=0.5 TT=5n BV=100 IBV=1u)\n"
            ".model DB D(is=2n n=1.7 eg=1.11 xti=3 kf=0 af=1 level=1)\n")
    with pytest.warns(NetlistWarning) as rec:
        nl = parse_netlist(text)
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 1
    assert "DA: CJO, VJ, M, FC, TT, BV, IBV; DB: EG, XTI, KF, AF, LEVEL" in msgs[0]
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
