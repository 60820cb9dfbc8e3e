"""The electromagnetic pickup (variable air gap coupling a string to a
magnet and a coil): the flux, the string and the output voltage against
the hand-derived ODE solved by scipy's solve_ivp; the energy balance; the
magnetic node potentials of the DC operating point and of a transient against
the loop law (source mmf = coil mmf + gap mmf)."""
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import phsym
from phsym.common.physics import MU0
from phsym.simulation.analyses.op import numeric_operating_point, operating_point

NET = Path(__file__).resolve().parent.parent / "netlists" / "pickup.cir"


def test_pickup_against_the_hand_ode():
    Um, N, g0, A, Rc, m, k, c, RL = 50, 8000, 2e-3, 100e-6, 2e6, 1e-3, 1.2e3, 5e-3, 1e5
    fs, T = 96000, 0.03
    res = phsym.simulate(NET, fs, duration=T, x0=None, warm_start=False)      # the .tran card says UIC
    # exact: the two-state discrete gradient works in the states' own scales (a flux of
    # uWb next to a displacement of um); in raw units it lost exactness (5e-9 relative)
    assert np.abs(res.balance).max() <= 1e-12 * res.power_scale

    def force(t):       # PULSE(0 0.05 5m 0.5m 0.5m 0 1): a triangle
        return 0.05 * np.clip(1 - np.abs(t - 5.5e-3) / 0.5e-3, 0, None)

    def rhs(t, y):      # y = (phi, x, p): phi R(x) = Um - N**2 phi' / RL; m x'' = F - k x - c x' + phi**2/(2 mu0 A)
        phi, x, p = y
        R = Rc + (g0 - x) / (MU0 * A)
        return [(Um - phi * R) * RL / N ** 2, p / m, force(t) - k * x - c * p / m + phi ** 2 / (2 * MU0 * A)]
    sol = solve_ivp(rhs, (0, T), [0, 0, 0], t_eval=res.t, rtol=1e-10, atol=1e-14, method="Radau",
                    max_step=0.1e-3)
    assert sol.success
    for i, name in enumerate(("phi_XG1", "x_XG1", "p_M1")):
        ref = sol.y[i]
        assert np.max(np.abs(res[name] - ref)) < 5e-3 * np.max(np.abs(ref)), name
    np.testing.assert_allclose(res["x_K1"], res["x_XG1"], rtol=1e-9, atol=1e-15)
    # the output voltage N phi' at the step midpoints, from the ODE's solution
    phi_dot = np.diff(sol.y[0]) * fs
    late = res.t_step > 4e-3
    v = res["v(e)"]
    assert np.max(np.abs(v[late] - N * phi_dot[late])) < 2e-2 * np.max(np.abs(v[late]))
    assert np.max(np.abs(v[late])) > 1e-3       # the pluck is heard
    # loop law U1 -> NC1.s -> XG1.m: m1 is held at Um by the magnet; the coil's mmf
    # v(m2) - v(m1) = N i, i = -v(e)/RL the current entering the coil at e
    np.testing.assert_allclose(res["v(m1)"], Um, rtol=1e-12)
    np.testing.assert_allclose(res["v(m2)"] - res["v(m1)"], -N * v / RL, rtol=0, atol=1e-9 * Um)
    assert np.ptp(res["v(m2)"]) > 0.1 * Um          # the pluck swings the coil's mmf


def _rest():
    """The DC point by hand: no current in RL, so no coil mmf; the gap takes all of Um
    (phi R(x) = Um) and the spring holds the gap's pull (k x = phi**2 / (2 mu0 A))."""
    Um, g0, A, Rc, k = 50, 2e-3, 100e-6, 2e6, 1.2e3

    def phi(x):
        return Um / (Rc + (g0 - x) / (MU0 * A))
    x = brentq(lambda x: k * x - phi(x) ** 2 / (2 * MU0 * A), 0.0, 1e-3, xtol=1e-18, rtol=1e-14)
    return Um, phi(x), x


@pytest.mark.parametrize("op", [operating_point, numeric_operating_point])
def test_pickup_operating_point_by_hand(op):
    Um, phi, x = _rest()
    res = op(phsym.load(NET))
    # m1 = Um (the source), m2 = m1 + N i = Um (i = 0), e = 0 (no flux change), s = 0 (at rest)
    assert res.nodes == pytest.approx({"m1": Um, "e": 0.0, "m2": Um, "s": 0.0}, abs=1e-12 * Um)
    assert res.voltages["U1"] == pytest.approx(Um, rel=1e-12)
    assert res.voltages["NC1.s"] == pytest.approx(0.0, abs=1e-12 * Um)
    assert res.voltages["XG1.m"] == pytest.approx(Um, rel=1e-12)
    assert res.state["phi_XG1"] == pytest.approx(phi, rel=1e-9)
    assert res.state["x_XG1"] == pytest.approx(x, rel=1e-9)
    assert res.currents["K1"] == pytest.approx(1.2e3 * x, rel=1e-9)


@pytest.mark.parametrize("engine", ["auto", "numeric"])
def test_pickup_transient_reads_the_magnet_node(engine):
    Um, phi, _ = _rest()
    res = phsym.Simulator(phsym.load(NET), 48000, engine=engine).run(duration=2e-3, x0="dc")   # before the pluck
    np.testing.assert_allclose(res["v(m1)"], Um, rtol=1e-12)          # the node m1, not the mass M1
    np.testing.assert_allclose(res["v(m2)"], Um, rtol=1e-9)
    np.testing.assert_allclose(res["v(M1)"], Um, rtol=1e-12)          # SPICE: v(X) is a node when X is one
    np.testing.assert_allclose(res["i(M1)"], 0.0, atol=1e-12)
    assert res.x[-1, 0] == pytest.approx(phi, rel=1e-9)


@pytest.mark.parametrize("engine", ["auto", "numeric"])
def test_node_named_as_an_element_is_read_as_the_node(engine):
    # node r1 between R1 (3k) and R2 (1k): v(r1) = 0.5 V, R1's own voltage 1.5 V, i(R1) 0.5 mA
    m = phsym.parse("V1 a 0 DC 2\nR1 a r1 3k\nR2 r1 0 1k\n")
    res = phsym.Simulator(m, 1000, engine=engine).run(duration=3e-3, x0="dc")
    for label, want in (("v(r1)", 0.5), ("v(R1)", 0.5), ("v(a,r1)", 1.5), ("i(R1)", 0.5e-3), ("v(R2)", 0.5)):
        np.testing.assert_allclose(res[label], want, rtol=1e-12, err_msg=label)
