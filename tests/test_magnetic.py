"""The magnetic domain (gyrator-capacitor form): a coil on a linear core is
the inductor N**2/R; a saturating core with an air gap and eddy loss follows
the hand-derived ODE (scipy solve_ivp); sources have their closed forms;
the discrete energy balance holds per step; domains are checked."""
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import phsym
from phsym.errors import StructureError


def test_coil_on_linear_core_is_an_inductor():
    N, R = 50, 2.5e5                     # L = N**2 / R = 10 mH
    core = phsym.parse(f"V1 e 0\nR1 e a 4\nNC1 a 0 m 0 coil N={N}\nX1 m 0 reluctance R={R}\n")
    ind = phsym.parse("V1 e 0\nR1 e a 4\nL1 a 0 10m\n")
    s = 2j * np.pi * np.logspace(0, 4, 9)
    for sk in s:
        Hc = complex(core.linearize().transfer(sk)[0, 0])
        assert Hc == pytest.approx(1 / (4 + sk * N ** 2 / R), rel=1e-12)
        assert Hc == pytest.approx(complex(ind.linearize().transfer(sk)[0, 0]), rel=1e-12)
    u = lambda t: np.sin(2 * np.pi * 200 * t)          # noqa: E731
    a = phsym.Simulator(core, 48000).run(u={"V1": u}, duration=0.01)
    b = phsym.Simulator(ind, 48000).run(u={"V1": u}, duration=0.01)
    np.testing.assert_allclose(a.y, b.y, rtol=1e-10, atol=1e-14)
    # the flux in the core is the flux linkage over N
    np.testing.assert_allclose(a["phi_X1"] * N, b["phi_L1"], rtol=1e-10, atol=1e-16)


NET = Path(__file__).resolve().parent.parent / "netlists" / "magnetic_circuit.cir"


@pytest.mark.parametrize("method", ["discrete_gradient", "midpoint"])
def test_saturating_core_against_the_hand_ode(method):
    """Rm phi' = N i - F(phi), i = (v - N phi') / R1, F = Rc phis sinh(phi/phis) + Rg phi:
    phi' (Rm + N**2/R1) = N v / R1 - F(phi)."""
    amp = 60.0                                   # netlists/magnetic_circuit.cir
    N, R1, Rc, ps, Rg, Rm = 200, 2.0, 5e5, 5e-4, 1e5, 40.0
    m = phsym.load(NET)
    fs, T = 20000, 0.04
    res = phsym.Simulator(m, fs, method=method).run(duration=T)      # UIC: from zero flux
    if method == "discrete_gradient":                 # exact for any energy; midpoint only for quadratic ones
        assert np.abs(res.balance).max() <= 1e-10 * res.power_scale
    F = lambda p: Rc * ps * np.sinh(p / ps) + Rg * p                                   # noqa: E731
    rhs = lambda t, p: [(N * amp * np.sin(2 * np.pi * 50 * t) / R1 - F(p[0])) / (Rm + N ** 2 / R1)]  # noqa: E731
    sol = solve_ivp(rhs, (0, T), [0.0], t_eval=res.t, rtol=1e-12, atol=1e-16, method="Radau")
    assert sol.success
    phi = res["phi_Xcore"]
    np.testing.assert_allclose(res["phi_Xgap"], phi, rtol=1e-9, atol=1e-15)        # one flux through the loop
    err = np.max(np.abs(phi - sol.y[0])) / np.max(np.abs(sol.y[0]))
    assert err < 2e-4, err
    assert np.max(np.abs(phi)) > 2 * ps          # deep in saturation: the law matters
    # the current: i = (v - N phi') / R1, phi' from the hand ODE at the step midpoints
    tm = 0.5 * (res.t[1:] + res.t[:-1])
    pm = 0.5 * (sol.y[0][1:] + sol.y[0][:-1])
    dphi = (N * amp * np.sin(2 * np.pi * 50 * tm) / R1 - F(pm)) / (Rm + N ** 2 / R1)
    i_ref = (amp * np.sin(2 * np.pi * 50 * tm) - N * dphi) / R1
    assert np.max(np.abs(res["i(R1)"] - i_ref)) < 2e-3 * np.max(np.abs(i_ref))


def test_sources_closed_forms():
    s = 2j * np.pi * 300
    mmf = phsym.parse("U1 m 0 mmf\nX1 m 0 reluctance R=1e4\n")
    assert complex(mmf.linearize().transfer(s)[0, 0]) == pytest.approx(s / 1e4, rel=1e-12)   # y = flux rate
    rate = phsym.parse("U2 0 m flux_rate\nX1 m 0 reluctance R=1e4\n")
    assert complex(rate.linearize().transfer(s)[0, 0]) == pytest.approx(1e4 / s, rel=1e-12)  # y = mmf


def test_domains_are_checked():
    with pytest.raises(StructureError, match="mixes domains") as err:
        phsym.parse("V1 e 0\nNC1 e 0 m 0 coil N=5\nX1 m 0 reluctance R=1\nR1 m 0 1k\n")
    assert "R1" in str(err.value) and "X1" in str(err.value)
    with pytest.raises(StructureError, match="mixes domains"):
        phsym.parse("V1 e 0\nNC1 e 0 m 0 coil N=5\nC1 e m 1u\nX1 m 0 reluctance R=1\n")
