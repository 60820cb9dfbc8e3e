"""Storages solved through their effort (junction charges with transit time): Newton's unknown
is the junction voltage's increment, and the step is the same as through the charge."""
from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import phsym
from phsym.codegen.newton.module import parameter_array
from phsym.codegen.steps import step_equations
from phsym.components.junction import (JunctionEnergy, JunctionEnergyAt, JunctionVoltage, charge_energy,
                                       charge_voltage, junction_storage)
# SPICE's junction charge written out in numpy by the tests (independent of phsym's laws)
from tests.test_diode_charge import TT_PARAMS, tt_charge
MODULES = [{"JunctionVoltage": JunctionVoltage._imp_, "JunctionEnergy": JunctionEnergy._imp_,
            "JunctionEnergyAt": JunctionEnergyAt._imp_}, "math"]


def test_effort_law_is_the_charge_law_written_through_the_voltage():
    q = sp.Symbol("q_D1.cj", real=True)
    H, law = junction_storage(q, *(sp.Float(a) for a in TT_PARAMS))
    assert str(law.effort) == "v_D1.cj"
    e = law.effort
    by_q, by_e = sp.diff(law.energy, q), sp.diff(law.energy, e)
    for v in (-5.3, -2.0, -0.1, 0.0, 0.2, 0.36, 0.6, 0.8):
        Q = tt_charge(v, *TT_PARAMS)
        assert float(law.state.subs(e, v)) == pytest.approx(Q, rel=1e-13, abs=1e-30)
        assert charge_voltage(Q, *TT_PARAMS) == pytest.approx(v, rel=1e-12, abs=1e-12)
        # H(Q, v) is H(Q) at the charge's own voltage, dH/dQ = v, and stationary in v there
        at = {q: Q, e: v}
        assert float(law.energy.subs(at).evalf()) == pytest.approx(float(H.subs(q, Q).evalf()), rel=1e-9,
                                                                   abs=1e-30)
        assert float(by_q.subs(at)) == v
        assert abs(float(by_e.subs(at))) <= 1e-12 * abs(Q) + 1e-30
        assert float(by_e.subs({q: Q, e: v + 0.01})) == pytest.approx(Q - tt_charge(v + 0.01, *TT_PARAMS),
                                                                      rel=1e-12)


def test_kernels_stay_finite_where_unused_exponentials_overflow():
    # the energy kernel of generated loops skips a term with a zero factor (no transit time, no
    # breakdown): 0 * inf is nan where a Newton trial voltage makes the exponential overflow
    no_tt = (2e-12, 0.7, 0.4, 0.5, 0.0, 1e-14, 0.02585, 1e-12, 1.0, 0.0)
    assert math.isfinite(charge_energy(1e-9, 40.0, *no_tt))
    no_bv = TT_PARAMS[:9] + (0.0,)
    assert math.isfinite(charge_energy(-1e-11, -80.0, *no_bv))


DECK = """Diode with series resistance, depletion and diffusion charge, driven through a resistor
.model DX D(IS=2.52n N=1.752 RS=0.568 CJO=4p M=0.4 TT=20n)
V1 in 0 SIN(0 2 1k)
R1 in a 1k
D1 a 0 DX
C1 a 0 10n
.end
"""


def _solve(eq, num, v0):
    """Newton on the lambdified step equations (numpy, independent of the generated loop)."""
    F = sp.lambdify(eq.V, [f.xreplace(num) for f in eq.F], modules=MODULES)
    J = sp.lambdify(eq.V, [[sp.diff(f, v).xreplace(num) for v in eq.V] for f in eq.F], modules=MODULES)
    v = np.array(v0, dtype=float)
    for _ in range(100):
        d = np.linalg.solve(np.array(J(*v), dtype=float), -np.array(F(*v), dtype=float))
        v += d
        if np.all(np.abs(d) <= 1e-14 * (np.abs(v) + 1e-30)):
            break
    return v


@pytest.mark.parametrize("scheme", ["discrete_gradient", "backward_euler"])
@pytest.mark.parametrize("va", [-1.5, 0.62])
def test_one_step_through_the_voltage_is_the_step_through_the_charge(scheme, va):
    m = phsym.parse(DECK)
    S = m.structure
    syms = [p.symbol for p in m.netlist.parameters.values()]
    values = [float(p.default) for p in m.netlist.parameters.values()]
    P, psub = parameter_array(syms)
    by_q = step_equations(S, scheme, psub)
    by_v = step_equations(S, scheme, psub, by_effort=True)
    i = m.states.index("q_D1.cj")
    assert by_v.by_effort == [i] and by_v.names[i] == "v_D1.cj" and by_q.names[i] == "q_D1.cj"
    law = S.storages[[st.states[0] for st in S.storages].index(S.states[i])]
    X = np.zeros(S.n_x)
    X[i] = tt_charge(va, *[float(sp.sympify(a).xreplace(dict(zip(syms, values))))
                           for a in law.hamiltonian.args[1:]])
    X[m.states.index("q_C1")] = 10e-9 * va
    h = 1 / 48000
    num = {**dict(zip(P, values)), **dict(zip(by_q.X, X)), **{s: 1e-12 for s in by_q.XS}, by_q.h: h,
           **dict(zip(by_q.UB, [1.3]))}
    vq = _solve(by_q, num, np.zeros(len(by_q.V)))
    # the loop carries the start voltage from the step before (or inverts the charge law): here va
    num.update({se: va for se, _ in by_v.s0.values()})
    vv = _solve(by_v, num, np.zeros(len(by_v.V)))
    dx_v = [float(e.xreplace(num).subs(dict(zip(by_v.V, vv))).evalf()) for e in by_v.dx]
    # the same step: state increments and port unknowns agree to Newton's tolerance
    np.testing.assert_allclose(dx_v, vq[:S.n_x], rtol=1e-9, atol=1e-24)
    np.testing.assert_allclose(vv[S.n_x:], vq[S.n_x:], rtol=1e-9, atol=1e-15)
    # and the voltage unknown is the junction voltage's increment over the step
    v_end = charge_voltage(X[i] + vq[i], *[float(sp.sympify(a).xreplace(dict(zip(syms, values))))
                                           for a in law.hamiltonian.args[1:]])
    assert va + vv[i] == pytest.approx(v_end, rel=1e-9, abs=1e-12)


def test_generated_loop_solves_junction_charges_through_their_voltage():
    m = phsym.parse(DECK)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = phsym.Simulator(m, fs=48000, engine="generated")
        r = sim.run(duration=3e-3)
    assert "v_D1.cj" in sim._gen.unknowns
    resjac = sim._gen.source[sim._gen.source.index("def resjac("):sim._gen.source.index("def junc(")]
    assert "junction_voltage(" not in resjac      # the residual inverts nothing
    assert r.max_balance_error < 1e-9
    assert np.all(np.isfinite(r.x))
    # backward Euler's gradient is the end voltage itself; the midpoint's would invert the charge law
    for scheme in ("backward_euler", "midpoint"):
        s = phsym.Simulator(m, fs=48000, method=scheme, stiff="scheme", engine="generated")
        assert ("v_D1.cj" in s._gen.unknowns) == (scheme == "backward_euler")


def test_carried_junction_voltage_steps_like_one_call():
    # the loop carries each junction's start voltage with the charge it belongs to: chunks, blocks
    # and a run from a state set by hand take the same steps as one call (an inversion where the
    # carry does not belong to the state, the carry otherwise)
    m = phsym.parse(DECK)
    u = 2 * np.sin(2 * np.pi * 1e3 * np.arange(96) / 48000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = phsym.Simulator(m, fs=48000, engine="generated")
        one = sim.run(duration=2e-3)
        chunked = sim.run(duration=2e-3, chunk=7)
        whole = sim.stream(signals=["v(a)"]).process(u)
        st = sim.stream(signals=["v(a)"])
        blocks = np.concatenate([st.process(u[k:k + 24]) for k in range(0, 96, 24)])
    # inversions only at a call's start and where the state is not the carry's
    assert "ve[" in sim._gen.source and sim._gen.source.count("junction_voltage(") == 2
    # the step constants of the start voltage alone (its exponential, its grading power) come from the
    # step before's end with it (carried in ve like the voltage, so chunks and blocks continue exactly)
    run = sim._gen.source[sim._gen.source.index("def run("):]
    assert re.search(r"if hot:\n\s+kc_\d+ = ve\[\d+\]", run) and re.search(r"ve\[\d+\] = nkc_\d+", run)
    np.testing.assert_array_equal(chunked.x, one.x)
    np.testing.assert_array_equal(blocks, whole)
    # from a later state of the run: the first step inverts the charge, then carries
    k = 40
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rest = sim.run({"V1": lambda t: 2 * np.sin(2 * np.pi * 1e3 * (t + k / 48000))},
                       duration=(96 - k) / 48000, x0=one.x[k])
    assert np.max(np.abs(rest.x - one.x[k:]) / np.abs(one.x).max(axis=0)) < 1e-9
    assert rest.max_balance_error < 1e-9


def test_a_control_of_the_junction_law_inverts_at_every_step():
    # the carried voltage belongs to the law's parameters: a control that moves them (here the
    # transit time) makes the loop invert v(Q) at each step instead, with the control's power booked
    deck = DECK.replace("TT=20n", "TT={tt}").replace(".model", ".param tt=20n control\n.model")
    m = phsym.parse(deck)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = phsym.Simulator(m, fs=48000, engine="generated")
        r = sim.run(duration=2e-3, controls={"tt": lambda t: 20e-9 * (1 + 0.5 * np.sin(2e3 * t))})
    assert "ve[0]" not in sim._gen.source and "ve[0]" in phsym.Simulator(phsym.parse(DECK), fs=48000, engine="generated")._gen.source
    assert r.max_balance_error < 1e-9 and np.any(r.P_control != 0)


def test_limiter_skips_its_trial_point_when_no_junction_moves_beyond_two_vt(monkeypatch, tmp_path):
    # each junction variable here is a constant multiple of one unknown: the limiter evaluates junc
    # at the trial point only when some variable moves by more than 2 Vt, with the same steps
    from phsym.codegen.newton import module as newton
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = phsym.Simulator(phsym.parse(DECK), fs=48000, engine="generated")      # the module of the tests above
        a = fast.run(duration=3e-3)
        # the variant in a cache of its own: it must not stand for the deck's loop in later tests
        monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
        monkeypatch.setattr(newton, "linear_slopes", lambda exprs, V: None)
        monkeypatch.setattr(newton, "_MEMO", None)
        slow = phsym.Simulator(phsym.parse(DECK), fs=48000, engine="generated")
        b = slow.run(duration=3e-3)
    assert "* d[" in fast._gen.source and "> 2.0 * jvt0:" in fast._gen.source
    assert "if abs(jd0" not in slow._gen.source
    np.testing.assert_allclose(a.x, b.x, rtol=1e-12, atol=1e-12 * np.abs(b.x).max())
    np.testing.assert_array_equal(a.iterations, b.iterations)


def test_transistor_ports_across_their_junction_charges_are_not_unknowns(monkeypatch, tmp_path):
    # a BJT's junction ports sit across its junction charges: their variables are those charges'
    # voltages, eliminated from the step together; the steps are those with the ports as unknowns
    from phsym.codegen import steps
    from phsym.codegen.newton import module as newton
    deck = Path(__file__).parent / "decks" / "bjt_common_emitter.cir"
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(newton, "_MEMO", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = phsym.Simulator(phsym.load(deck), fs=48000, engine="generated")
        a = sim.run(duration=5e-3, x0="dc")
        monkeypatch.setattr(steps, "_pinned_multiports", lambda *args: [])
        monkeypatch.setattr(newton, "_MEMO", None)
        ref = phsym.Simulator(phsym.load(deck), fs=48000, engine="generated")
        b = ref.run(duration=5e-3, x0="dc")
    assert "w_Q1.be" in ref._gen.unknowns and "w_Q1.be" not in sim._gen.unknowns
    assert len(sim._gen.unknowns) == len(ref._gen.unknowns) - 2
    assert a.max_balance_error < 1e-10 and b.max_balance_error < 1e-10
    scale = np.abs(b.x).max(axis=0)
    assert np.max(np.abs(a.x - b.x) / scale) < 1e-9
    assert a.iterations.max() <= 4
    # the numeric engine live against this generated loop (the live check of tests/test_engine_numeric.py
    # on a transistor stage; here, so the suite compiles this stage's loop once), with the session's
    # caches (its law kernels)
    monkeypatch.undo()
    m = phsym.load(deck)
    n = phsym.Simulator(m, 48000, engine="numeric").run(duration=5e-3, x0="dc")
    np.testing.assert_allclose(n.x, a.x, rtol=0, atol=1e-9 * np.abs(a.x).max())
    for label in [p.label for p in m.probes] + m.outputs:
        np.testing.assert_allclose(n[label], a[label], rtol=0, atol=1e-9 * max(np.abs(a[label]).max(), 1e-12))


@pytest.mark.parametrize("deck, scheme, stiff, pinned", [
    ("bjt_common_emitter", "discrete_gradient", "backward_euler", True),
    ("bjt_common_emitter", "midpoint", "scheme", False),       # charges through the charge: ports stay
    ("mosfet_common_source", "discrete_gradient", "backward_euler", False),   # plain gate capacitors
])
def test_only_ports_across_junction_charges_solved_through_their_voltage_are_pinned(deck, scheme, stiff, pinned):
    m = phsym.load(Path(__file__).parent / "decks" / f"{deck}.cir")
    P, psub = parameter_array([p.symbol for p in m.netlist.parameters.values()])
    eq = step_equations(m.structure, scheme, psub, by_effort=True, stiff=stiff)
    ports = [str(dp.w) for dp in m.structure.dissipative if dp.coupled]
    assert ports and all((w in eq.names) != pinned for w in ports), (eq.names, ports)


def test_settled_junction_voltages_are_extrapolated(monkeypatch):
    """A junction charge stepped to the end (no ringing mode) has its voltage increment predicted from
    the last two steps' increments: the same steps as restarting from no change (to Newton's
    tolerance), fewer iterations; stepped by the scheme it restarts from no change."""
    from phsym.codegen import steps
    from phsym.codegen.newton import module as newton
    fast = phsym.Simulator(phsym.parse(DECK), 48000.0, engine="generated")
    eq = steps.step_equations(phsym.parse(DECK).structure, "discrete_gradient", {}, by_effort=True,
                              stiff="backward_euler")
    assert eq.settled == eq.by_effort and len(eq.settled) == 1
    assert steps.step_equations(phsym.parse(DECK).structure, "discrete_gradient", {}, by_effort=True,
                                stiff="scheme").settled == []
    real = steps.step_equations

    def unsettled(*a, **k):
        out = real(*a, **k)
        out.settled = []
        return out
    monkeypatch.setattr(newton, "step_equations", unsettled)
    monkeypatch.setattr(newton, "_MEMO", None)
    slow = phsym.Simulator(phsym.parse(DECK), 48000.0, engine="generated")
    i = eq.by_effort[0]
    assert f"vh{i} = vold[{i}]" in fast._gen.source and f"vh{i} = vold[{i}]" not in slow._gen.source
    a, b = fast.run(duration=0.005), slow.run(duration=0.005)
    for name in a.names.states:
        assert np.allclose(a[name], b[name], rtol=1e-9, atol=1e-9 * np.abs(b[name]).max()), name
    assert a.iterations.mean() < b.iterations.mean() - 0.2, (a.iterations.mean(), b.iterations.mean())
    assert a.max_balance_error < 1e-10


def test_settled_voltages_take_the_extrapolation_with_the_smaller_record():
    """Below the diode's knee its junction voltage moves smoothly: the full change of its increment
    keeps the smaller error record (carried in ve, phsym.codegen.newton.carried), and the predictor takes it
    (phsym.codegen.newton.predictor): 2.10 iterations per step where always the half change took 2.32."""
    from phsym.codegen.newton import carried
    sim = phsym.Simulator(phsym.parse(DECK), 48000.0, engine="generated")       # the module of the tests above
    i = sim._gen.unknowns.index("v_D1.cj")
    assert f"d[{i}] = pf{i} if ve[" in sim._gen.source
    u = 0.3 * np.sin(2 * np.pi * 1e3 * np.arange(241) / 48000)
    a = sim.run({"V1": u}, duration=0.005)
    assert a.iterations.mean() < 2.2 and a.max_balance_error < 1e-10, a.iterations.mean()
    stream = sim.stream(signals=["v(a)"])
    stream.process(u)
    ve = stream._carry[2][-1]
    half = carried.base(0, 1, len(sim._gen.parameters))
    assert 0.0 <= ve[half + 1] < ve[half], (ve[half + 1], ve[half])      # full change, half change
