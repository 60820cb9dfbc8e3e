"""The per-structure linear template (phsym.simulation.engines.linear.template) against the general path.

The template builds the dense loop of a small linear model without sympy or
scipy.sparse per parameter set; its matrices must be those of the general
path (descriptor_matrices + LinearEngine on scipy.sparse) to round-off, for
models with algebraic variables, gyrators and parameter overrides, and a run
through it must match the closed-form series RLC.
"""
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.simulation.engines.linear import plans as simmod
from phsym.simulation.engines.linear.template import linear_template

ROOT = Path(__file__).resolve().parents[1]
ARRAYS = ("G", "Yc", "Wc", "pw", "Q", "Ec")


@pytest.mark.parametrize("name,params", [("rlc", {"R": 33.0, "C": 2.2e-6}), ("c_parallel_v", None),
                                         ("loudspeaker_gyrator", None), ("transformer", None)])
@pytest.mark.parametrize("method", ["midpoint", "backward_euler"])
def test_template_loop_equals_general_path(monkeypatch, name, params, method):
    model = phsym.load(ROOT / "netlists" / f"{name}.cir")
    assert linear_template(model.structure, model.parameter_values().keys()) is not None
    fast = phsym.Simulator(model, 48000.0, method).plan(params).loop
    monkeypatch.setattr(simmod, "linear_template", lambda *a: None)
    slow = phsym.Simulator(model, 48000.0, method).plan(params).loop
    for k in ARRAYS:
        a, b = getattr(fast, k), getattr(slow, k)
        assert a.shape == b.shape, k
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(b).max(initial=0.0)), err_msg=k)


def test_template_run_matches_closed_form_rlc():
    """Midpoint on the series RLC is the bilinear map of the ODE: compare 2000 steps with it."""
    model = phsym.load(ROOT / "netlists" / "rlc.cir")
    R, L, C, fs = 47.0, 1e-3, 1e-6, 48000.0
    N = 2000
    u = np.sin(2 * np.pi * 1000 * np.arange(N + 1) / fs)
    res = phsym.Simulator(model, fs).run(u={"V1": u}, params={"R": R})
    A = np.array([[0.0, 1 / L], [-1 / C, -R / L]])          # x = (q_C1, phi_L1)
    B = np.array([0.0, 1.0])
    h = 1 / fs
    Mi = np.linalg.inv(np.eye(2) - 0.5 * h * A)
    Ad, Bd = Mi @ (np.eye(2) + 0.5 * h * A), Mi @ (h * B)
    x = np.zeros(2)
    X = [x]
    for k in range(N):
        x = Ad @ x + Bd * 0.5 * (u[k] + u[k + 1])
        X.append(x)
    X = np.array(X)
    ours = np.column_stack([res["q_C1"], res["phi_L1"]])
    for j in range(2):
        np.testing.assert_allclose(ours[:, j], X[:, j], rtol=0, atol=1e-10 * np.abs(X[:, j]).max())
    assert res.max_balance_error < 1e-10


def test_negative_value_is_reported_through_the_template():
    model = phsym.load(ROOT / "netlists" / "rlc.cir")
    with pytest.raises(phsym.errors.PhsymError):
        phsym.Simulator(model, 48000.0).run(duration=1e-3, params={"R": -1.0})


def test_compiled_balance_summary_is_the_result_property():
    """The one-pass kernel a sweep uses gives the float of SimulationResult.max_balance_error,
    and the Newton iteration maximum and sum."""
    from phsym.codegen.kernels.sweep import run_summary
    from phsym.simulation.sweeps.exec import _max_balance
    model = phsym.load(ROOT / "netlists" / "rlc.cir")
    for method in ("midpoint", "backward_euler"):        # exact balance, and numerical dissipation
        res = phsym.Simulator(model, 48000.0, method).run(duration=2e-3, params={"R": 21.0})
        assert _max_balance(res) == res.max_balance_error
    rng = np.random.default_rng(3)
    H, Pd, Ps = rng.standard_normal(11), rng.standard_normal(10), rng.standard_normal(10)
    IT = rng.integers(1, 9, 10)
    mb, scale, itmax, itsum = run_summary(H, Pd, Ps, 0.1, IT, True)
    bal = (H[1:] - H[:-1]) / 0.1 + Pd - Ps
    assert mb == np.max(np.abs(bal))
    assert scale == max(np.max(np.abs(np.diff(H)) / 0.1), np.max(np.abs(Pd)), np.max(np.abs(Ps)))
    assert (itmax, itsum) == (IT.max(), IT.sum()) and itsum / 10 == np.mean(IT)
    assert run_summary(np.zeros(3), np.zeros(2), np.zeros(2), 0.1, IT[:0], False) == (0.0, 1.0, 0, 0)
    for bad in (np.nan, np.inf):
        Pd[4] = bad
        assert np.isnan(run_summary(H, Pd, Ps, 0.1, IT, True)[0])


def test_batched_sweep_is_bit_identical_to_single_runs():
    """A sweep of a small linear model builds all plans in one stack; every run equals
    the same run made alone, and a set with no passive meaning fails alone."""
    model = phsym.load(ROOT / "netlists" / "rlc.cir")
    R = [5.0, 10.0, -1.0, 47.0, 220.0]
    C = [1e-6, 2.2e-6, 1e-6, 4.7e-7, 1e-5]
    sim = phsym.Simulator(model, 48000.0)
    assert sim.batched
    for executor in ("serial", "threads"):
        res = phsym.sweep(model, 48000.0, {"R": R, "C": C}, duration=2e-3, executor=executor,
                          outputs=["v(b)", "q_C1"])
        assert list(res.failures) == [2]
        for i in (0, 1, 3, 4):
            one = sim.run(duration=2e-3, params={"R": R[i], "C": C[i]})
            assert np.array_equal(res["v(b)"][i, 1:], one["v(b)"])
            assert np.array_equal(res["q_C1"][i], one["q_C1"])
            assert res.balance[i] == one.max_balance_error
    plans = sim.plans([{"R": 5.0}, {"R": -2.0}, {"R": 9.0}])
    assert isinstance(plans[1], phsym.errors.PhsymError)
    lone = sim.plan({"R": 9.0}).loop
    for k in ARRAYS:
        assert np.array_equal(getattr(plans[2].loop, k), getattr(lone, k)), k


def test_sweep_grid_when_the_first_run_fails():
    model = phsym.load(ROOT / "netlists" / "rlc.cir")
    res = phsym.sweep(model, 48000.0, {"R": [-1.0, 10.0]}, duration=1e-3, executor="serial")
    one = phsym.Simulator(model, 48000.0).run(duration=1e-3, params={"R": 10.0})
    assert list(res.failures) == [0] and np.array_equal(res.t, one.t)
    assert np.array_equal(res["v(b)"][1, 1:], one["v(b)"]) and np.isnan(res["v(b)"][0]).all()


def test_many_sets_checked_together_give_the_single_sets_results():
    """From linplan.MANY sets on, slopes, Hessians and step singularity are checked on stacks
    (_matrices_many, _regular): a bad set among them gets the error the per-set path gives it,
    the good ones the per-set path's matrices."""
    from phsym.common.schemes import get_scheme
    from phsym.simulation.engines.linear.template import MANY
    model = phsym.load(ROOT / "netlists" / "rlc.cir")
    sim = phsym.Simulator(model, 48000.0)
    tpl, fixed = sim._template(), sim._fixed_parts()
    base = model.parameter_values()
    R = next(s for s in base if str(s) == "R")
    values = [{**base, R: 10.0 + i} for i in range(MANY + 4)]
    values[3] = {**base, R: -5.0}             # past the netlist checks: a negative slope
    values[7] = {**base, R: float("nan")}
    values[5] = values[11] = {**base, R: 0.0}       # no dissipation: a group of their own
    scheme = get_scheme("discrete_gradient")
    many = tpl.loops(values, fixed.J, True, 1 / 48000.0, scheme, 1)
    for v, got in zip(values, many):
        one = tpl.loops([v], fixed.J, True, 1 / 48000.0, scheme, 1)[0]
        if isinstance(one, Exception):
            assert type(got) is type(one) and str(got) == str(one)
        else:
            assert all(np.array_equal(getattr(got, a), getattr(one, a)) for a in ARRAYS)
    assert isinstance(many[3], Exception) and isinstance(many[7], Exception)


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")    # lu_factor on the singular ones
def test_stacked_singularity_check_is_the_per_matrix_one():
    """_regular accepts exactly the row-scaled step matrices structure.discrete.singular_step accepts."""
    from phsym.common.schemes import get_scheme
    from phsym.errors import StructureError
    from phsym.simulation.engines.linear.template import _regular
    from phsym.structure.discrete import ThetaStep, singular_step
    rng = np.random.default_rng(7)
    M = rng.standard_normal((24, 3, 3)) * 10.0 ** rng.integers(-6, 6, (24, 3, 1))
    M[2, 2] = M[2, 0] + M[2, 1]                     # dependent rows
    M[5, :, 1] = 0.0                                # a zero column
    M[9, 1] = 0.0                                   # a zero row (zero scale)
    M[11, 0, 0] = np.nan
    M[13] = [[1.0, 1.0, 0.0], [1.0, 1.0 + 1e-15, 0.0], [0.0, 0.0, 1.0]]     # a pivot below 1e-14 n
    scale = np.max(np.abs(M), axis=2)
    got = _regular(M, scale)
    for g in range(M.shape[0]):
        st = ThetaStep(M[g], np.zeros((3, 1)), np.zeros((3, 0)), np.eye(3, 1), np.eye(3), np.arange(1),
                       np.arange(1, 3), 1e-3, get_scheme("midpoint"))
        try:
            singular_step(st, scale[g])
            alone = True
        except (StructureError, ValueError):
            alone = False
        assert (g in got) == alone, g
    assert {2, 5, 9, 11, 13}.isdisjoint(got) and len(got) >= 15
