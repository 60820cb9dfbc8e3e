"""Piecewise-linear laws from tables (inline ``pwl()``, ``.table`` cards and
CSV files) and storage laws given by their effort: values against numpy's
interpolation, energies against numerical quadrature, transients against
scipy's solve_ivp at tight tolerance, the discrete energy balance per step."""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import quad, solve_ivp

import phsym
from phsym.common.piecewise import piecewise_integral, pwl_expression
from phsym.errors import NetlistError

XS = [-1.0, 0.0, 0.6, 0.8]
YS = [-1e-3, 0.0, 1e-4, 1e-2]          # diode-like, monotone, through the origin


def _interp(x, xs, ys):
    """numpy interpolation with the end segments continued (the documented rule)."""
    x = np.asarray(x, float)
    y = np.interp(x, xs, ys)
    lo, hi = x < xs[0], x > xs[-1]
    y[lo] = ys[0] + (ys[1] - ys[0]) / (xs[1] - xs[0]) * (x[lo] - xs[0])
    y[hi] = ys[-1] + (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]) * (x[hi] - xs[-1])
    return y


def test_pwl_values_and_integral():
    v = sp.Symbol("v", real=True)
    f = sp.lambdify(v, pwl_expression(v, XS, YS), "numpy")
    grid = np.linspace(-2, 2, 401)
    np.testing.assert_allclose([f(a) for a in grid], _interp(grid, XS, YS), rtol=1e-13, atol=1e-18)
    F = sp.lambdify(v, piecewise_integral(pwl_expression(v, XS, YS), v), "numpy")
    for a in (-1.7, -0.3, 0.0, 0.5, 0.7, 1.9):
        ref = quad(lambda s: _interp([s], XS, YS)[0], 0, a, points=[p for p in XS if min(0, a) < p < max(0, a)],
                   epsabs=1e-15)[0]
        assert F(a) == pytest.approx(ref, rel=1e-10, abs=1e-16)


def test_collinear_segments_integrate_to_an_energy():
    # equal neighbouring lines would be joined by sympy into an Or condition the integral cannot read
    x = sp.Symbol("x", real=True)
    xs, ys = [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0], [-4.0, -2.0, 0.0, 1.0, 2.0, 5.0]
    e = pwl_expression(x, xs, ys)
    assert len(e.args) == 3
    F = sp.lambdify(x, piecewise_integral(e, x), "numpy")
    for a in (-1.5, 0.5, 2.5):
        assert F(a) == pytest.approx(quad(lambda s: np.interp(s, xs, ys), 0, a, points=xs)[0], rel=1e-12)
    m = phsym.parse(".table law -2 -4 -1 -2 0 0 1 1 2 2 3 5\nF1 v 0 force\nM1 v 0 mass m=1\nK1 v 0 spring F={law(x)}\n")
    assert m.states == ["p_M1", "x_K1"]


NET = """V1 in 0
R1 in out 1k
{line}
C1 out 0 10n
.probe v(out)
"""


@pytest.mark.parametrize("line", ["D1 out 0 I={pwl(v, -1, -1m, 0, 0, 0.6, 0.1m, 0.8, 10m)}",
                                  ".table dcurve -1 -1m 0 0 0.6 0.1m 0.8 10m\nD1 out 0 I={dcurve(v)}",
                                  ".table dcurve curve.csv\nD1 out 0 I={dcurve(v)}"])
def test_rc_with_table_resistor_against_solve_ivp(tmp_path, line):
    (tmp_path / "curve.csv").write_text("v,i\n# a diode-like curve\n-1,-1e-3\n0,0\n0.6,1e-4\n0.8,1e-2\n")
    net = tmp_path / "pwl.cir"
    net.write_text(NET.format(line=line.replace("D1", "R2")))
    fs, T = 2_000_000, 1.5e-3
    vin = lambda t: 2.0 * np.sin(2 * np.pi * 1000 * t)             # noqa: E731
    res = phsym.Simulator(phsym.load(net), fs, method="midpoint").run(u={"V1": vin}, duration=T)
    assert np.abs(res.balance).max() <= 1e-9 * res.power_scale
    sol = solve_ivp(lambda t, q: [(vin(t) - q[0] / 1e-8) / 1e3 - _interp([q[0] / 1e-8], XS, YS)[0]],
                    (0, T), [0.0], t_eval=res.t, rtol=1e-11, atol=1e-16, method="Radau")
    v_ref = sol.y[0] / 1e-8
    v_sim = res["q_C1"] / 1e-8
    assert np.max(np.abs(v_sim - v_ref)) < 1e-3 * np.max(np.abs(v_ref))
    assert 0.6 < v_sim.max() < 0.8                                         # clipped by the table


def test_nonlinear_capacitor_from_its_voltage_table():
    """C1 V={pwl(q, ...)}: H is the exact integral; the transient matches solve_ivp."""
    qs, vs = [-2e-6, 0.0, 1e-6, 2e-6], [-4.0, 0.0, 1.0, 5.0]
    m = phsym.parse("V1 in 0\nR1 in out 1k\nC1 out 0 V={pwl(q, -2u, -4, 0, 0, 1u, 1, 2u, 5)}\n")
    q = m.structure.states[0]
    H = sp.lambdify(q, m.hamiltonian, "numpy")
    for a in (-3e-6, -1e-6, 5e-7, 1.5e-6, 3e-6):
        ref = quad(lambda s: _interp([s], qs, vs)[0], 0, a, points=[p for p in qs if min(0, a) < p < max(0, a)],
                   epsabs=1e-18)[0]
        assert H(a) == pytest.approx(ref, rel=1e-10)
    fs, T = 1_000_000, 3e-3
    vin = lambda t: 3.0 * np.sin(2 * np.pi * 500 * t)              # noqa: E731
    res = phsym.Simulator(m, fs, method="discrete_gradient").run(u={"V1": vin}, duration=T)
    assert np.abs(res.balance).max() <= 1e-9 * res.power_scale
    sol = solve_ivp(lambda t, x: [(vin(t) - _interp([x[0]], qs, vs)[0]) / 1e3], (0, T), [0.0], t_eval=res.t,
                    rtol=1e-11, atol=1e-18, method="Radau")
    assert np.max(np.abs(res["q_C1"] - sol.y[0])) < 1e-4 * np.max(np.abs(sol.y[0]))


def test_effort_laws_of_storages():
    m = phsym.parse("V1 a 0\nR1 a b 1k\nC1 b 0 V={q/C0 + q**3}\nL1 b 0 I={phi/2m}\n.param C0=1u\n")
    qv, pv = m.structure.states
    C0 = sp.Symbol("C0", real=True)
    assert sp.simplify(m.hamiltonian - (qv ** 2 / (2 * [s for s in m.hamiltonian.free_symbols
                                                           if s.name == "C0"][0]) + qv ** 4 / 4
                                        + 250 * pv ** 2)) == 0
    with pytest.raises(NetlistError, match="cannot integrate"):
        phsym.parse("V1 a 0\nR1 a b 1k\nC1 b 0 V={exp(q**2)*log(1 + q**4)}\n")


@pytest.mark.parametrize("text,msg,line,col", [
    ("R2 b 0 I={pwl(v, 0, 0, 0, 1)}", "x values must increase strictly", 5, 11),
    ("R2 b 0 I={pwl(v, 0, 1, 1, 0)}", "must not decrease", 5, 11),
    ("R2 b 0 I={pwl(v, 0, 0, 1, 0, 2)}", "pairs", 5, 11),
    ("R2 b 0 I={pwl(v, 0, 0, 1)}", "takes 5 or more", 5, 11),
    ("R2 b 0 I={pwl(v, 0, 0, 1, k)}", "not a number", 5, 11),
    (".table t1 0 0 1", "do not make", 5, 15),
    (".table t1 nofile.csv", "cannot read table file", 5, 11),
    (".table t1 0 0 1 1\nR2 b 0 I={t1}", "is a function", 6, 11),
])
def test_table_errors_name_the_place(tmp_path, text, msg, line, col):
    net = tmp_path / "bad.cir"
    net.write_text("* bad\nV1 a 0\nR1 a b 1k\n.param k=1\n" + text + "\n")
    with pytest.raises(NetlistError, match=msg) as err:
        phsym.load(net)
    loc = err.value.location
    assert (loc.file, loc.line, loc.column) == (str(net), line, col)
