"""The electromagnetic pickup (variable air gap coupling a string to a
magnet and a coil): the flux, the string and the output voltage against
the hand-derived ODE solved by scipy's solve_ivp; the energy balance."""
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

import phsym
from phsym.common.physics import MU0

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
