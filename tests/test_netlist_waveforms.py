"""Waveform evaluation against hand-computed values."""
import numpy as np
import pytest
import sympy as sp

from phsym.errors import NetlistError
from phsym.netlist import parse_netlist
from phsym.components import Waveform
from phsym.netlist.waveforms import PULSE_EDGE, evaluate_waveform


def wf(shape, *args):
    return Waveform(shape, tuple(sp.Float(a) for a in args))


def test_dc_shape_and_dtype():
    out = evaluate_waveform(wf("dc", 5), np.zeros((2, 3)))
    assert out.shape == (2, 3) and out.dtype == np.float64 and np.all(out == 5.0)


def test_sin_hand_values():
    w = wf("sin", 1, 2, 50)  # 1 + 2 sin(2 pi 50 t)
    t = np.array([0.0, 0.005, 0.01, 0.015])
    np.testing.assert_allclose(evaluate_waveform(w, t), [1, 3, 1, -1], atol=1e-12)


def test_sin_delay_and_damping():
    w = wf("sin", 0.5, 1, 1, 1, 2)  # delay 1 s, damping 2 1/s
    t = np.array([0.0, 0.999, 1.25])
    expected = [0.5, 0.5, 0.5 + np.sin(2 * np.pi * 0.25) * np.exp(-2 * 0.25)]
    np.testing.assert_allclose(evaluate_waveform(w, t), expected, rtol=1e-12)


def test_pulse_full():
    w = wf("pulse", 0, 10, 1, 1, 2, 3, 10)  # td=1 tr=1 tf=2 pw=3 per=10
    t = np.array([0.0, 1.0, 1.5, 2.0, 4.9, 5.0, 6.0, 7.0, 9.0, 11.5, 12.0])
    expected = [0, 0, 5, 10, 10, 10, 5, 0, 0, 5, 10]
    np.testing.assert_allclose(evaluate_waveform(w, t), expected, atol=1e-9)


def test_pulse_defaults_are_a_step():
    w = wf("pulse", 1, 3)
    t = np.array([-1.0, 0.0, PULSE_EDGE / 2, 1.0, 1e6])
    np.testing.assert_allclose(evaluate_waveform(w, t), [1, 1, 2, 3, 3])


def test_pwl_interpolation_and_hold():
    w = wf("pwl", 1, 0, 2, 4, 4, 0)
    t = np.array([0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 9.0])
    np.testing.assert_allclose(evaluate_waveform(w, t), [0, 0, 2, 4, 2, 0, 0])


def test_parameter_values():
    a = sp.Symbol("A", real=True)
    w = Waveform("sin", (sp.Integer(0), 2 * a, sp.Float(1)))
    out = evaluate_waveform(w, np.array([0.25]), {a: 1.5})
    assert out[0] == pytest.approx(3.0)
    with pytest.raises(NetlistError, match="A"):
        evaluate_waveform(w, np.array([0.25]))


def test_from_netlist():
    nl = parse_netlist(".param amp=2\nV1 a 0 SIN(0, {amp}, 1)\nI1 a 0 PWL(0 0 1 1)\n"
                       "V2 b 0 DC 5\nV3 c 0 amp\nV4 d 0 pulse(0 1)\nV5 e 0\n")
    vals = {p.symbol: p.default for p in nl.parameters.values()}
    t = np.array([0.25])
    assert evaluate_waveform(nl.element("V1").waveform, t, vals)[0] == pytest.approx(2.0)
    assert evaluate_waveform(nl.element("I1").waveform, t)[0] == pytest.approx(0.25)
    assert nl.element("V2").waveform.shape == "dc"
    assert evaluate_waveform(nl.element("V3").waveform, t, vals)[0] == 2.0
    assert nl.element("V4").waveform.shape == "pulse"
    assert nl.element("V5").waveform is None
