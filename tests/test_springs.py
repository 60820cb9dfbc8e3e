"""Ready nonlinear springs: Duffing (k3), saturating (xs) and one-sided
contact, against scipy's solve_ivp on the hand-written equations of motion;
the discrete-gradient energy balance per step; the impact's rebound."""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import phsym


def _oscillator(line, force, fs=20000, T=0.05, v0=1.0, m=0.01):
    model = phsym.parse(f"* oscillator\nM1 v 0 mass m={m} IC={v0}\n{line}\n")
    res = phsym.Simulator(model, fs, method="discrete_gradient").run(duration=T)
    # lossless and unforced: the balance is dH/dt = 0, H constant to round-off
    assert np.abs(res.balance).max() / fs <= 1e-12 * res.H[0]
    assert np.ptp(res.H) <= 1e-11 * res.H[0]
    rhs = lambda t, y: [-force(y[1]), y[0] / m]                       # noqa: E731  y = (p, x)
    sol = solve_ivp(rhs, (0, T), [m * v0, 0.0], t_eval=res.t, rtol=1e-12, atol=1e-15, method="DOP853")
    return res, sol


@pytest.mark.parametrize("line,force", [
    ("K1 v 0 spring k=400 k3=4e7", lambda x: 400 * x + 4e7 * x ** 3),
    ("K1 v 0 spring k=400 xs=2m", lambda x: 400 * 2e-3 * np.tanh(x / 2e-3)),
])
def test_nonlinear_springs_against_solve_ivp(line, force):
    res, sol = _oscillator(line, force)
    x = res["x_K1"]
    assert np.max(np.abs(x - sol.y[1])) < 2e-3 * np.max(np.abs(sol.y[1]))
    m = phsym.parse("M1 v 0 mass m=1\n" + line)
    H = m.hamiltonian.xreplace({**m.parameter_values(), sp.Symbol("p_M1", real=True): 0})
    big = float(H.subs(sp.Symbol("x_K1", real=True), 1e3))
    assert np.isfinite(big) and big > 0                              # the saturating energy does not overflow


def test_contact_impact_rebounds_with_its_speed():
    K, p, gap, m, v0 = 1e6, 1.5, 1e-3, 0.01, 1.0
    force = lambda x: K * max(x - gap, 0.0) ** p                       # noqa: E731
    res, sol = _oscillator(f"C1 v 0 contact K={K} p={p} gap=1m", force, fs=200_000, T=4e-3, v0=v0)
    np.testing.assert_allclose(res["x_C1"], sol.y[1], atol=2e-3 * gap)
    v = res["p_M1"] / m
    assert v[-1] == pytest.approx(-v0, rel=1e-6)                      # elastic: exact energy, same speed back
    touching = res["x_C1"] > gap
    assert 0 < touching.sum() < len(touching)                        # it did touch, and left again
    # Hertz: contact time 3.2145 (m / K)**(2/5) v0**(-1/5) for F = K d**1.5 (m the reduced mass)
    t_contact = touching.sum() / 200_000
    assert t_contact == pytest.approx(3.2145 * (m / K) ** 0.4 * v0 ** -0.2, rel=2e-2)
