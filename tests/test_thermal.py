"""The thermal domain: heat capacities, irreversible heat transfer, Joule heating, sources.

Independent references: the temperatures of a linear heat network solved
in closed form (matrix exponential of C dT/dt = -G_L T + G_amb T_amb; the
entropy form H = C T0 exp(s/C) makes C dT/dt = T ds/dt the heat received),
second-order convergence towards it, the exact discrete energy balance of a
closed network, the entropy balance and its sign (second law), and a
resistor heating a body against the hand ODE.
"""
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.integrate as si

import phsym
from phsym.errors import NetlistError, SimulationError
from phsym.simulation.thermal import entropy_balance

NETLIST = Path(__file__).resolve().parents[1] / "netlists" / "heat_transfer.cir"
C1, C2, G12, G2A, TAMB, T0 = 10.0, 100.0, 1.0, 0.5, 293.15, 293.15
T_INIT = np.array([353.15, 283.15])


def _closed_form(t):
    """Temperatures of heat_transfer.cir: T' = A T + b, solved exactly."""
    A = np.array([[-G12 / C1, G12 / C1], [G12 / C2, -(G12 + G2A) / C2]])
    b = np.array([0.0, G2A * TAMB / C2])
    Teq = np.linalg.solve(A, -b)
    return Teq + sl.expm(A * np.asarray(t)[:, None, None]) @ (T_INIT - Teq)      # one batched call


def _temperatures(r):
    """T = dH/ds = T0 exp(s / C) of the two bodies."""
    return T0 * np.exp(r.x / np.array([C1, C2]))


def test_heat_transfer_matches_the_closed_form_at_second_order():
    m = phsym.load(NETLIST)
    errs = []
    for fs in (1.0, 2.0, 4.0):
        r = phsym.simulate(m, fs, duration=100.0)
        assert r.max_balance_error < 1e-10
        errs.append(np.max(np.abs(_temperatures(r) - _closed_form(r.t))))
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(orders > 1.9), (errs, orders)
    assert errs[-1] < 2e-3
    # the probes are the node temperatures of each step's (discrete-gradient) evaluation
    r = phsym.simulate(m, 4.0, duration=10.0)
    assert r["v(t1)"][0] == pytest.approx(np.mean(_temperatures(r)[:2, 0]), rel=1e-4)


@pytest.mark.parametrize("engine", ["auto", "numeric"])
def test_closed_network_keeps_its_energy_and_creates_entropy(engine):
    """Two bodies alone: the energy C1 T1 + C2 T2 is kept to round-off, the entropy grows
    by exactly what the transfer creates, towards the equilibrium temperature."""
    m = phsym.parse("TH1 a 0 heat_capacity C=10 T0=300 IC=400\nTH2 b 0 heat_capacity C=30 T0=300 IC=300\n"
                    "G1 a b heat_transfer G=3\n")
    r = phsym.simulate(m, 5.0, duration=60.0, engine=engine)
    assert np.all(r.P_diss == 0) and np.all(r.P_supplied == 0)
    assert np.ptp(r.H) <= 1e-12 * abs(r.H).max() + 1e-9
    T = 300.0 * np.exp(r.x / np.array([10.0, 30.0]))
    assert np.ptp(10 * T[:, 0] + 30 * T[:, 1]) < 1e-9
    assert T[-1] == pytest.approx([325.0, 325.0], abs=1e-6)          # (10*400 + 30*300) / 40
    b = entropy_balance(r)
    assert np.all(b["created"] > 0) and np.all(b["supplied"] == 0)
    assert np.abs(b["residual"]).max() < 1e-10 * np.abs(b["created"]).max()
    # the total created equals the entropy change C ln(Tf/Ti) summed, in closed form
    assert b["S"][-1] - b["S"][0] == pytest.approx(10 * np.log(325 / 400) + 30 * np.log(325 / 300), rel=1e-6)


def test_entropy_balance_with_a_bath():
    r = phsym.simulate(phsym.load(NETLIST), 2.0, duration=50.0)
    b = entropy_balance(r)
    assert np.abs(b["residual"]).max() < 1e-9 * np.abs(b["supplied"]).max()
    assert np.all(b["created"] >= 0)
    # the bath receives the heat the bodies lose: its entropy flow is heat / T_amb
    heat = -r.P_supplied
    np.testing.assert_allclose(-b["supplied"] * TAMB, heat, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", ["auto", "numeric"])
def test_joule_heating_warms_a_body_as_the_hand_ode(engine):
    """V = 10 V across R = 100 ohm heating a body (C = 5 J/K) that loses heat to a 300 K bath:
    C dT/dt = V^2/R - G (T - 300); all electrical energy becomes heat."""
    net = ("V1 e 0 DC 10\nRH1 e 0 body joule R=100\nTH1 body 0 heat_capacity C=5 T0=300 IC=300\n"
           "G1 body amb heat_transfer G=0.1\nTA amb 0 temperature DC 300\n")
    m = phsym.parse(net)
    r = phsym.simulate(m, 20.0, duration=100.0, engine=engine)
    ref = si.solve_ivp(lambda t, T: [(1.0 - 0.1 * (T[0] - 300)) / 5], (0, 100), [300.0], rtol=1e-12, atol=1e-12,
                       dense_output=True)
    T = 300 * np.exp(r.x[:, 0] / 5)
    assert np.max(np.abs(T - ref.sol(r.t)[0])) < 1e-4
    assert r.max_balance_error < 1e-10
    assert np.all(r.P_diss == 0)                          # the resistor's loss is the body's heat
    np.testing.assert_allclose(r["i(RH1.e)"], 0.1, rtol=1e-12)
    b = entropy_balance(r)
    assert np.all(b["created"] > 0)
    assert np.abs(b["residual"]).max() < 1e-9 * np.abs(b["created"]).max()


def test_entropy_flow_source_and_errors():
    m = phsym.parse("S1 a 0 entropy_flow DC 0.01\nTH1 a 0 heat_capacity C=2 T0=300\n")
    r = phsym.simulate(m, 10.0, duration=10.0)
    assert r.x[-1, 0] == pytest.approx(0.1, rel=1e-12)       # s = integral of the entropy flow
    b = entropy_balance(r)
    np.testing.assert_allclose(b["supplied"], 0.01, rtol=1e-12)
    with pytest.raises(NetlistError, match="0 K"):
        phsym.parse("TH1 a 0 heat_capacity C=2\nG1 a 0 heat_transfer G=1\n")
    with pytest.raises(NetlistError, match="not above 0 K") as exc:
        phsym.parse("TH1 a 0 heat_capacity C=2 IC=-5\nTA a 0 temperature DC 300\n")
    assert exc.value.location.line == 1 and "kelvin" in str(exc.value)
    with pytest.raises(SimulationError, match="no heat capacity"):
        entropy_balance(phsym.simulate(phsym.parse("V1 a 0 DC 1\nR1 a 0 1\n"), 10.0, duration=0.1))


def test_a_bath_at_or_below_zero_kelvin_is_refused_by_run_stream_and_sweep():
    """A temperature source to the datum is an absolute temperature: a sample at or below 0 K is an
    input error naming the source and the sample (it used to run and give a negative entropy)."""
    from phsym.errors import SimulationInputError
    with pytest.raises(SimulationInputError, match=r"input TA is -10 K at sample 0: .*above 0 K"):
        phsym.simulate(str(NETLIST), 10.0, duration=1.0, params={"TAMB": -10.0})
    sim = phsym.Simulator(phsym.load(NETLIST), 10.0)
    u = np.full(11, 300.0)
    u[7] = 0.0
    with pytest.raises(SimulationInputError, match="input TA is 0 K at sample 7"):
        sim.run({"TA": u})
    stream = sim.stream()
    stream.process(np.full((5, 1), 300.0))
    with pytest.raises(SimulationInputError, match="at sample 6"):
        stream.process(np.array([[300.0], [-1.0]]))
    res = phsym.sweep(str(NETLIST), 10.0, {"TAMB": [293.0, -5.0, 300.0]}, duration=2.0)
    assert list(res.failures) == [1] and "-5 K" in str(res.failures[1])
    # between two nodes the source is a difference, of either sign
    m = phsym.parse("TH1 a 0 heat_capacity C=1 T0=300 IC=300\nTH2 b 0 heat_capacity C=1 T0=300 IC=300\n"
                    "G1 a b heat_transfer G=1\nTD a b temperature DC -5\n")
    assert m.positive_inputs == {}


def test_stream_of_the_heat_transfer_model_equals_one_run():
    """Its entropy laws are singular at zero port variables: the stream takes Newton's start from
    the initial state as a run does, block by block the same samples."""
    sim = phsym.Simulator(phsym.load(NETLIST), 10.0)
    u = np.full(41, 300.0)
    u[20:] = 280.0
    whole = sim.run({"TA": u}, align="samples")
    stream = sim.stream(signals=["v(t1)", "v(t2)"])
    y = np.vstack([stream.process(u[:15, None]), stream.process(u[15:, None])])
    assert np.array_equal(y[:, 0], whole["v(t1)"]) and np.array_equal(y[:, 1], whole["v(t2)"])


@pytest.mark.parametrize("engine", ["auto", "numeric"])
def test_dc_start_of_the_heat_transfer_model_is_the_ambient(engine):
    """x0="dc" of a thermal network: the DC solver starts its entropy-transfer ports from the
    state's temperatures (their laws divide by the temperature), and finds both bodies at the bath."""
    sim = phsym.Simulator(phsym.load(NETLIST), 10.0, engine=engine)
    res = sim.run(duration=5.0, x0="dc")
    for node in ("t1", "t2"):
        assert np.allclose(res[f"v({node})"], 293.15, rtol=1e-12)
    assert "(relative; " in res.summary() and " W)" in res.summary()


def test_balance_scale_of_a_nearly_resting_run_is_its_energy_over_the_run():
    """A charged capacitor leaking 1e-12 W: relative to that power the round-off of H looked like
    a 6e-6 residual; the scale is at least max |H| over the duration, the floats of the sweep's
    compiled summary."""
    from phsym.codegen.kernels.sweep import run_summary
    m = phsym.parse("C1 a 0 C=1u IC=1\nR1 a 0 1e30\nD1 a 0 Is=1e-30\n")
    res = phsym.simulate(m, 48000, duration=0.01)
    assert res.P_diss.max() < 1e-11
    assert res.power_scale == np.max(np.abs(res.H)) / (480 * res.info["h"])
    assert res.max_balance_error < 1e-11
    mb, scale, _, _ = run_summary(res.H, res.P_diss, res.P_supplied, res.info["h"], np.zeros(0, np.int64), False)
    assert mb / scale == res.max_balance_error


def test_entropy_divided_difference_keeps_its_digits():
    """(H(X+V) - H(X)) / V of H = C T0 (exp(s/C) - 1) at a micro-step, against 50-digit arithmetic:
    the two exponentials (about 3000 J) are not subtracted (expm1), so it holds to rounding, where
    the plain difference loses nine digits."""
    import mpmath
    import sympy as sp
    from phsym.codegen.gradients import _divided_difference
    s, X, V, XS, C, T = sp.symbols("s X V XS C T")
    dd = sp.lambdify((X, V, XS, C, T), _divided_difference(C * T * (sp.exp(s / C) - 1), s, X, V, XS), "math")
    mpmath.mp.dps = 50
    for x, v in ((1.86, 1e-5), (-3.47, 3e-5), (0.5, -2e-4), (2.0, 0.7)):
        X_, V_ = mpmath.mpf(x), mpmath.mpf(v)       # the floats the generated code receives, exactly
        exact = 10 * mpmath.mpf(T0) * (mpmath.exp((X_ + V_) / 10) - mpmath.exp(X_ / 10)) / V_
        assert abs(dd(x, v, 1.0, 10.0, T0) / float(exact) - 1) < 1e-14, (x, v)
    naive = 10 * T0 * ((np.exp((1.86 + 1e-5) / 10) - 1) - (np.exp(1.86 / 10) - 1)) / 1e-5
    assert abs(naive / dd(1.86, 1e-5, 1.0, 10.0, T0) - 1) > 1e-12       # what the subtraction gave


def test_newton_converges_near_equilibrium():
    """Late in the run the entropy increments are micro-joules: Newton still takes at most three
    iterations a step and no step needs sub-steps (before the exponentials were kept apart: up to 200
    iterations, 29 steps sub-stepped, 8.8 iterations a step on average)."""
    import warnings
    from phsym.errors import SimulationWarning
    sim = phsym.Simulator(phsym.load(NETLIST), 10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SimulationWarning)
        res = sim.run(duration=2000.0)
    assert res.iterations.max() <= 3 and res.iterations.mean() < 2.5
    assert res.max_balance_error < 1e-10
    assert np.allclose(res["v(t1)"][-1], TAMB, atol=1e-3) and np.allclose(res["v(t2)"][-1], TAMB, atol=1e-3)
