"""Run-time controls: parameters marked ``control`` driven by signals during a run.

References: scipy's DOP853 at tight tolerances on the hand-written ODE of
each circuit, the closed-form work of a varying capacitance, and runs with
the same constant value given as a parameter.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import phsym
from phsym.errors import NetlistError, PhsymError, SimulationInputError
from phsym.simulation.plan import RunPlan

POT = """.param pos=0.5 control
V1 a 0 SIN(0 1 1k)
P1 a w 0 R=10k pos={pos}
C1 w 0 10n
.probe v(w)
"""

CAP = """.param c=10n control
V1 a 0 SIN(0 1 1k)
R1 a w 1k
C1 w 0 {c}
.probe v(w)
"""


def pos_of(t):
    return 0.5 + 0.45 * np.sin(2 * np.pi * 300 * t)


def c_of(t):
    return 10e-9 * (1.0 + 0.5 * np.sin(2 * np.pi * 400 * t))


def _pot_reference(t_eval):
    R, C, rend = 10e3, 10e-9, 1e-3

    def f(t, q):
        p = pos_of(t)
        Ra, Rb = R * (1 - p) + R * rend, R * p + R * rend
        v = q / C
        return (np.sin(2 * np.pi * 1e3 * t) - v) / Ra - v / Rb
    return solve_ivp(f, (0, t_eval[-1]), [0.0], t_eval=t_eval, method="DOP853", rtol=1e-12, atol=1e-20).y[0]


def _cap_reference(t_eval):
    def f(t, q):
        return (np.sin(2 * np.pi * 1e3 * t) - q / c_of(t)) / 1e3
    return solve_ivp(f, (0, t_eval[-1]), [0.0], t_eval=t_eval, method="DOP853", rtol=1e-12, atol=1e-20).y[0]


def test_parse_marks_controls_and_rejects_misuse():
    m = phsym.parse(POT)
    assert m.controls == ["pos"]
    assert phsym.parse(".param a=1 b=2 control\nV1 x 0\nR1 x 0 {a*b}\n").controls == ["b"]
    for text, words in ((".param control\nR1 a 0 1\n", "must follow"),
                        (".param a=1 control control\nR1 x 0 {a}\n", "must follow"),
                        (".param a=1 b={2*a} control\nR1 x 0 {b}\n", "defined by other parameters")):
        with pytest.raises(NetlistError, match=words) as info:
            phsym.parse(text)
        assert info.value.location.line == 1


@pytest.mark.parametrize("engine", ["generated", "numeric"])
def test_potentiometer_swept_matches_scipy_with_second_order(engine):
    m = phsym.parse(POT)
    # the linear fast path does not drive controls: auto takes one of the Newton engines
    assert phsym.Simulator(m, 48e3).engine in ("generated", "numeric")
    errs = []
    for fs in (48e3, 96e3, 192e3):
        sim = phsym.Simulator(m, fs, engine=engine)
        res = sim.run(duration=5e-3, controls={"pos": pos_of})
        assert np.allclose(res.controls["pos"], pos_of(res.t))
        assert res.max_balance_error < 1e-12
        assert not res.P_control.any()      # pos is in no storage law
        errs.append(np.max(np.abs(res.x[:, 0] - _pot_reference(res.t))) / 1e-8)   # charge / C = volts
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert errs[-1] < 3e-4 and np.all(orders > 1.9), (errs, orders)


@pytest.mark.parametrize("method", ["discrete_gradient", "midpoint", "backward_euler"])
def test_control_in_storage_law_keeps_the_energy_balance(method):
    m = phsym.parse(CAP)
    res = phsym.Simulator(m, 96e3, method).run(duration=5e-3, controls={"c": c_of})
    q, t, h = res.x[:, 0], res.t, res.info["h"]
    assert np.allclose(res.H, q ** 2 / (2 * c_of(t)), rtol=1e-12, atol=0)     # H at the sample's control
    if method == "backward_euler":      # it dissipates numerically: dH <= grad H(x_k+1) dx for convex H
        assert res.balance.max() < 1e-12 * res.power_scale and res.balance.min() < -1e-6 * res.power_scale
    else:
        assert res.max_balance_error < 1e-12
    # the work of the varying capacitance: dH/dc * dc/dt = -q^2 c' / (2 c^2), summed over the run
    cdot = 10e-9 * 0.5 * 2 * np.pi * 400 * np.cos(2 * np.pi * 400 * t)
    p_cont = -q ** 2 * cdot / (2 * c_of(t) ** 2)
    work = np.sum(0.5 * (p_cont[1:] + p_cont[:-1])) * h
    tol = 2e-2 if method == "backward_euler" else 2e-3      # first order: the jump is taken at x_k
    assert abs(res.P_control.sum() * h - work) < tol * np.sum(np.abs(p_cont)) * h
    if method == "midpoint":        # second order with the control in H, against scipy
        fine = phsym.Simulator(m, 192e3, method).run(duration=5e-3, controls={"c": c_of})
        e1 = np.max(np.abs(q - _cap_reference(t)))
        e2 = np.max(np.abs(fine.x[:, 0] - _cap_reference(fine.t)))
        assert e1 < 5e-3 * np.max(np.abs(q)) and np.log2(e1 / e2) > 1.9, (e1, e2)


def test_constant_control_equals_the_parameter_and_chunks_equal_one_call():
    sim = phsym.Simulator(phsym.parse(CAP), 48e3)
    a = sim.run(duration=2e-3, controls={"c": 22e-9})
    b = sim.run(duration=2e-3, params={"c": 22e-9})
    assert np.array_equal(a.x, b.x) and np.array_equal(a.H, b.H)
    one = sim.run(duration=2e-3, controls={"c": c_of})
    seen = []
    chunked = sim.run(duration=2e-3, controls={"c": c_of}, chunk=7, progress=lambda d, n: seen.append(d))
    assert len(seen) > 10 and np.array_equal(one.x, chunked.x) and np.array_equal(one.P_control, chunked.P_control)
    # controls not given hold params= (or the netlist's) value
    held = sim.run(duration=1e-3, params={"c": 15e-9})
    assert np.all(held.controls["c"] == 15e-9)


@pytest.mark.parametrize("engine", ["auto", "numeric"])
def test_derived_parameter_follows_its_control(engine):
    base = "V1 a 0 SIN(0 1 1k)\nR1 a w 1k\nC1 w 0 10n\n"
    derived = phsym.parse(".param pos=0.5 control\n.param g={2*pos}\n" + base + "R2 w 0 {1k*(1+g)}\n")
    direct = phsym.parse(".param pos=0.5 control\n" + base + "R2 w 0 {1k*(1+2*pos)}\n")
    a = phsym.Simulator(derived, 48e3, engine=engine).run(duration=2e-3, controls={"pos": pos_of})
    b = phsym.Simulator(direct, 48e3, engine=engine).run(duration=2e-3, controls={"pos": pos_of})
    assert np.allclose(a.x, b.x, rtol=1e-12, atol=1e-20)
    fixed = phsym.Simulator(derived, 48e3, engine=engine).run(duration=2e-3)
    assert np.max(np.abs(a.x - fixed.x)) > 1e-3 * np.max(np.abs(fixed.x))      # the control did something


@pytest.mark.parametrize("engine", ["auto", "numeric"])
def test_stream_with_controls_equals_one_run(engine):
    sim = phsym.Simulator(phsym.parse(POT), 48e3, engine=engine)
    n = 300
    u = np.sin(2 * np.pi * 1e3 * np.arange(n) / 48e3)
    pos = pos_of(np.arange(n) / 48e3)
    whole = sim.run(u={"V1": u}, controls={"pos": pos}, align="samples")
    s = sim.stream()
    out = np.concatenate([s.process({"V1": u[i:i + 64]}, controls={"pos": pos[i:i + 64]}) for i in range(0, n, 64)])
    assert np.array_equal(out, whole["v(w)"])
    with pytest.raises(SimulationInputError, match="control pos = 1.2"):     # domains checked per block
        s.process({"V1": u[:10]}, controls={"pos": 1.2})
    # a control left out of a block holds its last value
    s.reset()
    s.process({"V1": u[:10]}, controls={"pos": 0.2})
    s.process({"V1": u[10:20]})
    assert np.all(s.last.controls["pos"] == 0.2)


def test_plan_round_trip_keeps_controls():
    sim = phsym.Simulator(phsym.parse(CAP), 48e3)
    plan = sim.plan()
    warm = RunPlan.from_arrays(*plan.to_arrays())
    a = plan.run(duration=1e-3, controls={"c": c_of})
    b = warm.run(duration=1e-3, controls={"c": c_of})
    assert warm.summary.controls == ["c"]
    assert np.array_equal(a.x, b.x) and np.array_equal(a.P_control, b.P_control)


def test_bad_controls_are_clear_errors():
    sim = phsym.Simulator(phsym.parse(POT), 48e3)
    with pytest.raises(SimulationInputError, match="unknown control 'gain'"):
        sim.run(duration=1e-3, controls={"gain": 1.0})
    with pytest.raises(SimulationInputError, match="control pos = 1.5"):
        sim.run(duration=1e-3, controls={"pos": np.linspace(0.5, 1.5, 49)})
    with pytest.raises(SimulationInputError, match="control pos = -0.5"):     # a callable is checked too
        sim.run(duration=1e-3, controls={"pos": lambda t: 0.5 - 1e3 * t})
    bad = np.full(49, 0.5)
    bad[20] = np.nan
    with pytest.raises(SimulationInputError, match="control pos is non-finite"):
        sim.run(duration=1e-3, controls={"pos": bad})
    with pytest.raises(SimulationInputError, match="has 10 samples"):
        sim.run(duration=1e-3, controls={"pos": np.full(10, 0.5)})
    with pytest.raises(SimulationInputError, match="linear engine cannot follow"):
        phsym.Simulator(phsym.parse(POT), 48e3, engine="linear").run(duration=1e-3, controls={"pos": 0.3})
    plain = phsym.Simulator(phsym.parse("V1 a 0\nR1 a w 1k\nC1 w 0 1u\n"), 48e3)
    with pytest.raises(SimulationInputError, match="no control parameters") as info:
        plain.run(duration=1e-3, controls={"R1": 2e3})
    assert isinstance(info.value, PhsymError) and "control" in str(info.value)


def test_cli_control(tmp_path, capsys):
    from phsym.cli import main
    net = tmp_path / "pot.cir"
    net.write_text(POT)
    out = tmp_path / "pot.csv"
    assert main(["simulate", str(net), "--fs", "48k", "--duration", "2m", "--control",
                 "pos=0.5+0.45*sin(2*pi*300*t)", "--out", str(out), "--quiet"]) == 0
    import csv
    rows = [r for r in csv.DictReader(out.open()) if not r["t"].startswith("#")]    # the '# scheme:' line
    t = np.array([float(r["t"]) for r in rows])
    assert np.allclose([float(r["pos"]) for r in rows], pos_of(t), atol=1e-12)
    res = phsym.Simulator(phsym.parse(POT), 48e3).run(duration=2e-3, controls={"pos": pos_of})
    assert np.allclose([float(r["v(w)"]) for r in rows[1:]], res["v(w)"], rtol=1e-9, atol=1e-12)
    capsys.readouterr()
    assert main(["show", str(net)]) == 0
    assert "pos = 0.5   CONTROL" in capsys.readouterr().out


def test_bundled_overdrive_stage_small_signal_phasor_and_level_control():
    """netlists/overdrive.cir (ideal op-amp, diodes with CJO and TT, a level pot as a control): at 1 mV
    the stage is linear and its gain at 1 kHz is the phasor 1 + Zf/Zg (Zf: RF, CF and the diodes'
    zero-bias conductance and capacitance); the scheme converges to it at second order."""
    from pathlib import Path
    m = phsym.load(Path(__file__).resolve().parents[1] / "netlists" / "overdrive.cir")
    # its structure checks run in tests/test_cli_show.py (every bundled netlist)
    w, gd = 2 * np.pi * 1e3, 2.52e-9 / (1.752 * 0.02585) + 1e-12
    Zf = 1 / (1 / 51e3 + 2 * gd + 1j * w * (51e-12 + 2 * 4e-12 + 2 * 20e-9 * gd))
    H = (1 + Zf / (4.7e3 + 1 / (1j * w * 47e-9))) / (1 + 1 / (1j * w * 1e-6 * 1e6))
    errs, x0 = [], "dc"
    for fs in (48e3, 96e3):     # the operating point does not depend on the rate: solved once
        res = phsym.Simulator(m, fs).run(u={"VIN": lambda t: 1e-3 * np.sin(w * t)}, duration=6e-3, x0=x0)
        x0 = res.x[0]
        assert res.max_balance_error < 1e-9
        t = res.t_step - 0.5 / fs           # step values are midpoint values
        sel = t > 4e-3
        M = np.c_[np.sin(w * t[sel]), np.cos(w * t[sel]), np.ones(sel.sum())]
        c = np.linalg.lstsq(M, res["v(out)"][sel] - 4.5, rcond=None)[0]
        errs.append(abs((c[0] + 1j * c[1]) / 1e-3 / H - 1))
    assert errs[1] < 1e-3 and errs[0] / errs[1] > 3.0, errs
    # driven hard it clips near the diodes' knee; the level pot divides the output as its log taper says
    res = phsym.Simulator(m, 48e3).run(duration=5e-3, x0=x0, controls={"level": 0.8})
    assert res.P_active.max() > 0 and res.max_balance_error < 1e-9
    last = res.t_step > 4e-3
    t_ = (81 ** 0.8 - 1) / 80
    raw, rwb = 10e3 * (1 - t_) + 10.0, 10e3 * t_ + 10.0
    low = 1 / (1 / rwb + 1 / 100e3)
    ratio = np.ptp(res["v(lvl)"][last]) / np.ptp(res["v(out)"][last])
    assert ratio == pytest.approx(low / (raw + low), rel=2e-2)
    assert 0.5 < np.max(np.abs(res["v(out)"][last] - 4.5)) < 1.0      # 0.3 V * 11.9 = 3.6 V without clipping
