"""The hysteretic felt (Hunt-Crossley contact): a dissipation whose law reads a storage state.

Independent references: the hammer's ODE integrated by scipy (Radau, tight
tolerances), the second-order convergence of the scheme towards it, the
elastic limit alpha = 0, the hysteresis loop and the exact discrete energy
balance of a law evaluated at the step's midpoint state.
"""
from pathlib import Path

import numpy as np
import pytest
import scipy.integrate as si

import phsym
from phsym.errors import StructureError

M, K, P, ALPHA, V0 = 0.03, 1e9, 2.5, 0.2, 3.0
HAMMER = f"M1 v 0 mass m={M} IC={V0}\nH1 v 0 felt K={K} p={P} alpha={{a}}\n"
NETLIST = Path(__file__).resolve().parents[1] / "netlists" / "piano_hammer.cir"


def _reference(alpha, T):
    def f(t, z):
        v, x = z
        F = K * x ** P * (1 + alpha * v) if x > 0 else 0.0
        return [-F / M, v]
    return si.solve_ivp(f, (0, T), [V0, 0.0], method="Radau", rtol=1e-12, atol=1e-15, dense_output=True,
                        max_step=1e-6)


def test_felt_matches_the_hammer_ode_at_second_order():
    T = 2e-3
    m = phsym.parse(HAMMER.format(a=ALPHA))
    sol = _reference(ALPHA, T)
    errs = []
    for fs in (100e3, 200e3, 400e3):
        r = phsym.simulate(m, fs, duration=T)
        assert r.max_balance_error < 1e-12
        errs.append(np.max(np.abs(r.x[:, 0] / M - sol.sol(r.t)[0])))
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(orders > 1.8), (errs, orders)
    assert errs[-1] < 2e-5


def test_felt_hysteresis_dissipates_and_the_elastic_limit_rebounds():
    T = 3e-3
    lossy = phsym.simulate(phsym.parse(HAMMER.format(a=ALPHA)), 400e3, duration=T)
    elastic = phsym.simulate(phsym.parse(HAMMER.format(a=0.0)), 400e3, duration=T)
    v_out = lossy.x[-1, 0] / M
    assert v_out == pytest.approx(_reference(ALPHA, T).y[0, -1], rel=1e-4)
    assert -V0 < v_out < -0.5 * V0                       # rebounds, slower than it came
    # the kinetic energy lost is what the felt's damper dissipated (rectangle rule of P_diss)
    lost = 0.5 * M * (V0 ** 2 - v_out ** 2)
    assert np.sum(lossy.P_diss) * lossy.info["h"] == pytest.approx(lost, rel=1e-9)
    assert elastic.x[-1, 0] / M == pytest.approx(-V0, rel=1e-6)
    assert np.all(elastic.P_diss == 0)
    # force against compression: loading above unloading at the same compression
    x = lossy.x[:, 1]
    F = -np.diff(lossy.x[:, 0]) * 400e3                  # force on the hammer, per step
    xm = 0.5 * (x[1:] + x[:-1])
    top = int(np.argmax(xm))
    probe = 0.5 * xm[top]
    up = np.interp(probe, xm[:top], F[:top])
    down = np.interp(probe, xm[top:][::-1], F[top:][::-1])
    assert up > 1.2 * down > 0


def test_felt_structure_and_errors():
    m = phsym.parse(HAMMER.format(a=ALPHA))
    assert all(m.check().values())
    (d,) = m.structure.dissipative
    assert d.element == "H1.d" and d.reads == (m.structure.states.index(m.structure.states[1]),)
    with pytest.raises(StructureError, match="mobility"):
        phsym.parse("M1 v 0 mass m=1\nH1 v 0 felt K=1e6 analogy=impedance\n")


def test_piano_hammer_netlist_runs_from_its_own_deck():
    r = phsym.simulate(NETLIST)             # the deck's .tran: 48 kHz, 50 ms, from the ICs
    assert r.max_balance_error < 1e-12 and not r.flags.any()
    assert r.x[-1, 0] / M == pytest.approx(_reference(ALPHA, 3e-3).y[0, -1], rel=1e-3)


def test_negative_powers_print_as_divisions_with_their_precedence():
    # the contact at its gap needed 1.0 / 0.0 (inf, an untaken branch) instead
    # of 0.0 ** -3 (ZeroDivisionError in numba); the denominator keeps its sums
    import math

    import sympy as sp

    from phsym.codegen.printing import pr
    a, b, x = sp.symbols("a b x", real=True)
    for expr in ((a * b - a) ** -1, (a + b) ** -2 * x, x ** -3 + a, (a * b) ** sp.Rational(-3, 2)):
        code = pr(expr)
        got = eval(code, {"math": math, "a": 1.7, "b": 2.3, "x": 0.9})   # generated code, not netlist text
        assert got == pytest.approx(float(expr.subs({a: 1.7, b: 2.3, x: 0.9})), rel=1e-14), code
    assert pr(x ** -3).startswith("(1.0 / ")
