"""Newton robustness (issue 10, item 3): junction-voltage limiting, subdivision
of failed steps, a DC operating point by gmin and source stepping.

References are independent: every step of the half-wave rectifier is solved
here by bisection (scipy's brentq on a monotone scalar equation written by
hand), the diode chain's operating point likewise.
"""
import warnings

import numpy as np
import pytest
import scipy.optimize as so

import phsym
from phsym.errors import SimulationWarning
from phsym.simulation.dcsolve import DCProblem, gmin_stepping, solve_dc, source_stepping
from phsym.simulation.initial import state_scales
from phsym.simulation.analyses.op import dc_state, operating_point
from phsym.simulation.simulator import Simulator

IS, VT, GMIN = 1e-14, 0.02585, 1e-12
R1, C1, RL, AMP, F0 = 0.1, 100e-6, 1e3, 50.0, 50.0
# 50 V peak through 0.1 ohm into 100u || 1k, sampled at only 500 Hz (10 samples
# per period): before junction limiting the predictor overshot into exp() and
# the run stopped at step 12 with "non-finite residual"
RECTIFIER = f"V1 in 0 SIN(0 {AMP} {F0})\nR1 in a {R1}\nD1 a out Is={IS}\nC1 out 0 {C1}\nRL out 0 {RL}\n"


def _diode(v):
    return IS * np.expm1(v / VT) + GMIN * v


def _reference_step(q, u0, u1, h):
    """One discrete-gradient (midpoint for the linear C) step of the rectifier, by bisection.

    Unknown: the junction voltage vd.  Midpoint capacitor voltage
    vbar = ubar - R1 i - vd, q' = 2 C vbar - q, and q' - q = h (i - vbar / RL):
    strictly decreasing in vd.
    """
    ub = 0.5 * (u0 + u1)

    def f(vd):
        i = _diode(vd)
        vbar = ub - R1 * i - vd
        return (2 * C1 + h / RL) * vbar - 2 * q - h * i

    vd = so.brentq(f, -2 * AMP - 10, 2.0, xtol=1e-15, rtol=1e-15, maxiter=500)
    vbar = ub - R1 * _diode(vd) - vd
    return 2 * C1 * vbar - q


@pytest.fixture(scope="module")
def rectifier():
    return phsym.parse(RECTIFIER)


@pytest.mark.parametrize("engine", ["generated", "numeric"])
def test_rectifier_at_low_rate_converges_to_the_exact_steps(rectifier, engine):
    fs = 500.0
    sim = Simulator(rectifier, fs, engine=engine)
    if engine == "generated":
        assert "def junc(" in sim._gen.source          # the loop limits the diode's junction voltage
    res = sim.run(duration=0.04)
    q, u = 0.0, res.u[:, 0]
    ref = [q]
    for k in range(len(res.t) - 1):
        q = _reference_step(q, u[k], u[k + 1], 1 / fs)
        ref.append(q)
    np.testing.assert_allclose(res.x[:, 0], ref, rtol=1e-9, atol=1e-15)
    assert res.max_balance_error < 1e-11 and "subdivided" not in res.info
    assert res.iterations.max() < 20


def test_failed_step_is_subdivided_with_exact_balance(rectifier):
    # Newton capped at 10 iterations cannot take step 9 at 400 Hz (the diode
    # turns on hard): it is taken as two half steps with the input interpolated
    fs, k = 400.0, 9
    sim = Simulator(rectifier, fs, maxit=10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = sim.run(duration=0.04)
    assert res.info["subdivided"] == {k: 2}
    assert any(issubclass(w.category, SimulationWarning) and "sub-steps" in str(w.message) for w in caught)
    u, h = res.u[:, 0], 1 / fs
    q = _reference_step(res.x[k, 0], u[k], 0.5 * (u[k] + u[k + 1]), h / 2)
    q = _reference_step(q, 0.5 * (u[k] + u[k + 1]), u[k + 1], h / 2)
    assert res.x[k + 1, 0] == pytest.approx(q, rel=1e-9)
    # stored energy change of step k = h * (supplied - dissipated), averaged over its sub-steps
    scale = max(abs(res.P_supplied[k]), abs(res.P_diss[k]))
    assert abs(res.balance[k]) <= 1e-12 * scale
    assert res.H[k + 1] - res.H[k] == pytest.approx(h * (res.P_supplied[k] - res.P_diss[k]), rel=1e-12)
    # the steps before are the unsubdivided run's
    full = Simulator(rectifier, fs).run(duration=0.04)
    np.testing.assert_allclose(res.x[:k + 1], full.x[:k + 1], rtol=1e-9)


def test_flag_mode_still_flags_after_subdivision(rectifier):
    res = Simulator(rectifier, 500.0, maxit=1, on_error="flag").run(duration=0.01)
    assert res.info["failed_steps"] > 0 and res.flags[0] == 1


# ------------------------------------------------------------------ DC
V_CHAIN, R_CHAIN = 100.0, 1.0
# three diodes (with their capacitances) in series, 100 V through 1 ohm: about
# 31 A; scipy's trust-region solver (phsym's DC solver before) overflowed exp()
CHAIN = (f"V1 in 0 {V_CHAIN}\nR1 in n0 {R_CHAIN}\nD0 n0 n1\nC0 n0 n1 1n\nD1 n1 n2\nC1 n1 n2 1n\n"
         "D2 n2 0\nC2 n2 0 1n\n")


def _chain_reference():
    def f(vd):
        return V_CHAIN - R_CHAIN * _diode(vd) - 3 * vd
    vd = so.brentq(f, 0.0, 2.0, xtol=1e-15, rtol=1e-15)
    return vd, _diode(vd)


@pytest.fixture(scope="module")
def chain():
    return phsym.parse(CHAIN)


def test_hard_driven_diode_chain_operating_point(chain):
    vd, i = _chain_reference()
    x = dc_state(chain, np.array([V_CHAIN]))
    np.testing.assert_allclose(x, 1e-9 * vd, rtol=1e-10)     # q = C v on each capacitor
    op = operating_point(chain)
    assert op.nodes["n0"] == pytest.approx(3 * vd, rel=1e-10)
    assert op.nodes["n2"] == pytest.approx(vd, rel=1e-10)
    assert op.currents["R1"] == pytest.approx(i, rel=1e-9)


def test_gmin_and_source_stepping_reach_the_same_point(chain):
    S = chain.structure
    values = chain.parameter_values()
    sc = state_scales(S, values)
    P = DCProblem(S, values, np.array([V_CHAIN]), np.zeros(S.n_x), np.arange(S.n_x), sc)
    z0 = np.zeros(S.n_x + S.n_w + S.n_lambda)
    direct, how = solve_dc(P, z0)
    assert how == "newton"
    for z in (gmin_stepping(P, z0), source_stepping(P, z0)):
        assert z is not None
        np.testing.assert_allclose(P.split(z)[0], P.split(direct)[0], rtol=1e-10)
    # with a large gmin the diodes are nearly shorted; the law's extra term is g w
    z_g, _ = P.newton(z0, g=1e-2)
    r, J = P.evaluate(z_g, g=1e-2)
    assert np.max(np.abs(r)) < 1e-9
    # the Jacobian is exact (central differences)
    zt = direct + 1e-3
    r0, J0 = P.evaluate(zt)
    fd = np.column_stack([(P.evaluate(zt + e)[0] - P.evaluate(zt - e)[0]) / 2e-7
                          for e in 1e-7 * np.eye(zt.size)])
    np.testing.assert_allclose(J0, fd, rtol=1e-5, atol=1e-6 * np.abs(J0).max())
