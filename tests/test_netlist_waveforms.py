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


def test_shapes_are_the_c_librarys_floats():
    """SIN (damped, delayed), EXP and SFFM sampled with the C library's sin, exp and expm1 (Python's
    math), as the exported C code samples them: numpy's vectorised versions differ from it by an ulp on
    AVX-512 machines.  Overflows give numpy's inf, not an exception."""
    import math
    from phsym.netlist.shapes import evaluate_shape
    t = np.arange(4001) / 48000.0
    sin = evaluate_shape("sin", np.array([0.1, 0.7, 440.0, 1e-3, 30.0, 12.0]), t)
    tau = t - 1e-3
    ref = [0.1 + 0.7 * math.sin(2 * math.pi * 440.0 * s + math.radians(12.0)) * math.exp(-30.0 * max(s, 0.0))
           if s >= 0 else 0.1 + 0.7 * math.sin(math.radians(12.0)) for s in tau]
    assert sin.tolist() == ref
    exp = evaluate_shape("exp", np.array([0.0, 1.0, 1e-3, 2e-3, 5e-2, 1e-3]), t)
    ref = [0.0 + (1.0 * -math.expm1(-(s - 1e-3) / 2e-3) if s > 1e-3 else 0.0)
           + (-1.0 * -math.expm1(-(s - 5e-2) / 1e-3) if s > 5e-2 else 0.0) for s in t]
    assert exp.tolist() == ref
    sffm = evaluate_shape("sffm", np.array([0.0, 1.0, 1e3, 2.5, 50.0]), t)
    assert sffm.tolist() == [math.sin(2 * math.pi * 1e3 * s + 2.5 * math.sin(2 * math.pi * 50.0 * s)) for s in t]
    long = np.arange(70007).reshape(7, 10001) / 48000.0        # past one chunk of the sampler, 2-D
    got = evaluate_shape("sin", np.array([0.0, 1.0, 997.0, 0.0, 3.0]), long)
    assert got.shape == long.shape
    assert got.ravel().tolist() == [math.sin(2 * math.pi * 997.0 * s) * math.exp(-3.0 * s) for s in long.ravel()]
    with np.errstate(all="raise"):
        far = evaluate_shape("exp", np.array([0.0, 1.0, 1.0, 1e-9, 2.0, 1e-9]), np.array([0.0, 1.5, 3.0]))
    assert far.tolist() == [0.0, 1.0, 0.0]
