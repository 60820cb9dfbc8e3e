"""Tests of the structure-preserving linear PHS identification (issue 4)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym import IdentificationError, LinearPHS, SimulationInputError
from phsym.common.schemes import get_scheme
from phsym.benchmarks import msd_chain
from phsym.identify import LinearPHSEstimator
from phsym.identify.linear_optim import Objective, _Manifold, _qinv
from phsym.identify.linear_param import FlatMap, R_of
from phsym.identify.linear_simulation import cost_and_gradient, simulate

ROOT = Path(__file__).resolve().parents[1]


def random_phs(n: int, m: int, rank: int, seed: int) -> LinearPHS:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    Lr = 0.5 * rng.standard_normal((n, rank))
    M = rng.standard_normal((n, n))
    return LinearPHS(A - A.T, Lr @ Lr.T, M @ M.T + np.eye(n), rng.standard_normal((n, m)))


def signals(T: float = 4.0, N: int = 401):
    t = np.linspace(0.0, T, N)
    u = np.column_stack([np.sin(2 * t) + 0.5 * np.sin(7 * t), np.cos(3 * t) * np.exp(-0.2 * t)])
    return t, u


@pytest.fixture(scope="module")
def truth():
    return random_phs(3, 2, 2, seed=1)


@pytest.fixture(scope="module")
def data(truth):
    t, u = signals()
    return t, u, grid_outputs(truth, t, u)


def grid_outputs(model, t, u, x0=None, method="midpoint"):
    """Outputs at the grid times (what an instrument samples) of the midpoint trajectory."""
    x0 = np.zeros(model.n_states) if x0 is None else x0
    return simulate(model.J, model.R, model.Q, model.B, x0, u, t[1] - t[0], get_scheme(method))[1]


# ------------------------------------------------------------------ benchmark
def test_msd_chain_reference_transfer_values():
    sys_ = msd_chain(50, 2, 1.0, 4.0, 4.0)
    assert sys_.n_states == 100 and sys_.n_inputs == 2
    H01 = np.array([[0.125712 + 0.0732172j, 0.122624 + 0.0506278j],
                    [0.122624 + 0.0506278j, 0.120132 + 0.0531872j]])
    H1 = np.array([[0.21075 - 0.0901108j, 0.0225277 - 0.197312j],
                   [0.0225277 - 0.197312j, 0.0493281 + 0.00563193j]])
    np.testing.assert_allclose(sys_.transfer(0.1j), H01, atol=1e-6)
    np.testing.assert_allclose(sys_.transfer(1j), H1, atol=1e-6)
    assert all(sys_.check().values())
    assert abs(sys_.poles().real.max() + 3.93e-3) < 1e-5


def test_msd_chain_per_cell_parameters_and_errors():
    s = msd_chain(3, 1, c=[1.0, 2.0, 3.0], m=[1.0, 2.0, 4.0], k=[1.0, 1.0, 5.0])
    assert np.allclose(np.diag(s.R), [0, 1, 0, 2, 0, 3])
    assert np.allclose(s.Q[np.ix_([0, 2, 4], [0, 2, 4])], [[1, -1, 0], [-1, 2, -1], [0, -1, 6]])
    assert np.allclose(np.diag(s.Q)[1::2], [1.0, 0.5, 0.25])
    with pytest.raises(ValueError):
        msd_chain(2, 3)


# ------------------------------------------------------------- gradients
@pytest.mark.parametrize("scheme,q_ref,on_steps", [("midpoint", False, False), ("explicit_euler", False, False),
                                                   ("midpoint", True, False), ("backward_euler", False, False),
                                                   ("midpoint", False, True), ("backward_euler", False, True)])
def test_flat_gradient_matches_finite_differences(scheme, q_ref, on_steps):
    rng = np.random.default_rng(3)
    n, m, r, N, h = 4, 2, 3, 120, 0.02
    scheme = get_scheme(scheme)
    u = rng.standard_normal((N, m))
    d = rng.standard_normal((N - 1 if on_steps else N, m))
    free = ("J", "R", "Q", "B", "x0")
    ref = {"B": np.ones((n, m)), "R": np.eye(n)}
    if q_ref:
        ref["Q"] = 2 * np.eye(n)
    obj = Objective(u, d, h, scheme, free, regularization=0.05, reference=ref, regularize=free, on_steps=on_steps)
    fmap = FlatMap(n, m, r, free, q_floor=1e-3)
    A = rng.standard_normal((n, n))
    M = rng.standard_normal((n, n))
    base = {"J": A - A.T, "L": 0.5 * rng.standard_normal((n, r)), "Q": M @ M.T + np.eye(n),
            "B": rng.standard_normal((n, m)), "x0": rng.standard_normal(n)}
    v = fmap.to_vector(base)

    def f(vec):
        p, _ = fmap.to_point(vec, base)
        return obj(p, grad=False)[0]

    p, aux = fmap.to_point(v, base)
    g = fmap.pull_back(obj(p)[1], p, aux)
    for block in free + ("all",):
        dirn = np.zeros_like(v)
        sl = slice(None) if block == "all" else fmap.slices[block]
        dirn[sl] = rng.standard_normal(dirn[sl].size)
        eps = 1e-6
        fd = (f(v + eps * dirn) - f(v - eps * dirn)) / (2 * eps)
        an = float(g @ dirn)
        assert abs(fd - an) <= 1e-6 * abs(an), (block, fd, an)


@pytest.mark.parametrize("scheme", ["midpoint", "explicit_euler"])
def test_riemannian_gradient_matches_retraction_differences(scheme):
    scheme = get_scheme(scheme)
    rng = np.random.default_rng(4)
    n, m, N, h = 4, 2, 100, 0.02
    u = rng.standard_normal((N, m))
    d = rng.standard_normal((N, m))
    free = ("J", "R", "Q", "B", "x0")
    obj = Objective(u, d, h, scheme, free)
    man = _Manifold(free)
    A = rng.standard_normal((n, n))
    M = rng.standard_normal((n, n))
    p = {"J": A - A.T, "L": rng.standard_normal((n, n)) * 0.3, "Q": M @ M.T + np.eye(n),
         "B": rng.standard_normal((n, m)), "x0": rng.standard_normal(n)}
    qinv = _qinv(p, free)
    g = man.rgrad(p, obj(p)[1])
    S = rng.standard_normal((n, n))
    xi = {"J": S - S.T, "L": rng.standard_normal((n, n)), "Q": S + S.T,
          "B": rng.standard_normal((n, m)), "x0": rng.standard_normal(n)}
    eps = 1e-6
    fd = (obj(man.retract(p, qinv, xi, eps), grad=False)[0]
          - obj(man.retract(p, qinv, xi, -eps), grad=False)[0]) / (2 * eps)
    an = man.inner(p, qinv, g, xi)
    assert abs(fd - an) <= 1e-6 * abs(an)


def test_gradient_is_not_trivially_consistent():
    """A wrong adjoint (Euler gradient on midpoint cost) must fail the check."""
    rng = np.random.default_rng(5)
    n, m, N, h = 3, 1, 80, 0.05
    A = rng.standard_normal((n, n))
    J, R, Q = A - A.T, np.eye(n) * 0.2, np.eye(n)
    B, x0 = rng.standard_normal((n, m)), np.zeros(n)
    u, d = rng.standard_normal((N, m)), rng.standard_normal((N, m))
    eu, mid = get_scheme("explicit_euler"), get_scheme("midpoint")
    _, g_eu = cost_and_gradient(J, R, Q, B, x0, u, d, h, eu)
    D = rng.standard_normal((n, n))
    D = D - D.T
    eps = 1e-6
    fd = (cost_and_gradient(J + eps * D, R, Q, B, x0, u, d, h, mid, False)[0]
          - cost_and_gradient(J - eps * D, R, Q, B, x0, u, d, h, mid, False)[0]) / (2 * eps)
    assert abs(fd - np.sum(g_eu["J"] * D)) > 1e-3 * abs(fd)


# --------------------------------------------------------------- fitting
def test_recovery_noise_free(data):
    t, u, y = data
    est = LinearPHSEstimator(3, max_iter=1000, tol=1e-13, random_state=0).fit(t, u, y)
    assert 1.0 - est.score(t, u, y) < 1e-10
    # cross-check on a different input: the identified model equals the truth's I/O map
    t2, u2 = signals(4.0, 401)
    u2 = u2[:, ::-1] * np.array([1.0, -2.0])
    truth_y2 = phsym.simulate(random_phs(3, 2, 2, seed=1), 100.0, u=u2).y
    pred = est.predict(t2, u2)
    assert isinstance(pred, phsym.SimulationResult) and pred.y.shape == (400, 2)
    assert np.max(np.abs(pred.y - truth_y2)) < 1e-4 * np.max(np.abs(truth_y2))
    assert all(est.model_.check().values())
    h = est.history_
    assert len(h["cost"]) == est.n_iter_ + 1 and h["cost"][-1] < 1e-6 * h["cost"][0]
    assert set(h) >= {"cost", "grad_norm", "step"}


def test_noisy_step_data_error_at_noise_level(truth):
    """Step values (as a SimulationResult holds them) are data too."""
    t, u = signals()
    res = phsym.simulate(truth, 100.0, u=u)
    y = res.y
    sigma = 0.02
    rng = np.random.default_rng(7)
    y_noisy = y + sigma * rng.standard_normal(y.shape)
    est = LinearPHSEstimator(3, max_iter=300, random_state=0).fit(t, u, y_noisy)
    rms_clean = np.sqrt(np.mean((est.predict(t, u).y - y) ** 2))
    rms_noisy = np.sqrt(np.mean((est.predict(t, u).y - y_noisy) ** 2))
    assert rms_clean < sigma                       # fit sits inside the noise
    assert 0.8 * sigma < rms_noisy < 1.2 * sigma   # residual is the noise


@pytest.mark.parametrize("optimizer,scheme,free", [
    ("lbfgs", "midpoint", ("J", "R", "Q", "B", "x0")),
    ("cg", "explicit_euler", ("J", "R", "Q", "B", "x0")),
    ("cg", "midpoint", ("J", "R", "B")),
])
def test_structure_holds_at_every_iterate(data, optimizer, scheme, free):
    t, u, y = data
    seen = []

    def cb(k, model, x0, cost):
        assert isinstance(model, LinearPHS)
        J, R, Q = model.J, model.R, model.Q
        assert np.array_equal(J, -J.T)
        assert np.array_equal(R, R.T)
        assert np.linalg.eigvalsh(R).min() >= -1e-12 * max(1.0, np.abs(R).max())
        assert np.linalg.eigvalsh(Q).min() > 0
        seen.append(cost)

    est = LinearPHSEstimator(3, free=free, optimizer=optimizer, method=scheme, init="seed",
                             r_rank=2, max_iter=25, random_state=2, callback=cb,
                             regularization=1e-3 if "Q" in free else 0.0).fit(t, u, y)
    assert len(seen) == est.n_iter_ + 1
    assert seen[-1] < seen[0]
    assert np.linalg.matrix_rank(est.model_.R, tol=1e-10) <= 2
    if optimizer == "cg":                           # monotone Armijo descent
        assert np.all(np.diff(est.history_["cost"]) <= 0)


def test_cg_beta_rules_and_fixed_blocks(data, truth):
    t, u, y = data
    for beta in ("PR", "FR"):
        est = LinearPHSEstimator(3, optimizer="cg", cg_beta=beta, max_iter=30,
                                 random_state=0).fit(t, u, y)
        assert est.history_["cost"][-1] < 0.5 * est.history_["cost"][0]
    # only x0 free, all matrices fixed at the truth: recover the initial state
    x0 = np.array([0.3, -0.2, 0.5])
    Ad_y = grid_outputs(truth, t, u, x0)
    est = LinearPHSEstimator(3, free=("x0",), fixed={"J": truth.J, "R": truth.R, "Q": truth.Q,
                                                     "B": truth.B},
                             max_iter=200, tol=1e-14).fit(t, u, Ad_y)
    np.testing.assert_allclose(est.x0_, x0, atol=1e-6)
    with pytest.raises(IdentificationError, match="both free and fixed"):
        LinearPHSEstimator(3, free=("J",), fixed={"J": truth.J}).fit(t, u, y)


def test_save_load_round_trip(tmp_path, data):
    t, u, y = data
    est = LinearPHSEstimator(3, max_iter=50, random_state=0).fit(t, u, y)
    path = tmp_path / "model.json"
    est.model_.save(path)
    loaded = LinearPHS.load(path)
    for name in ("J", "R", "Q", "B", "E"):
        assert np.array_equal(getattr(loaded, name), getattr(est.model_, name))
    # the saved model simulates like the fitted one, through phsym.load and phsym.simulate
    again = phsym.simulate(phsym.load(path), 100.0, u=u, x0=est.x0_)
    np.testing.assert_array_equal(again.y, est.predict(t, u).y)


# -------------------------------------------------------------------- CLI
def _write_csv(path, t, u, y):
    with open(path, "w") as fh:
        fh.write("time,u1,u2,y1,y2\n")
        for row in np.column_stack([t, u, y]):
            fh.write(",".join(f"{v:.17g}" for v in row) + "\n")


def test_cli_end_to_end(tmp_path, data, capsys):
    from phsym.identify.cli_identify import main
    t, u, y = data
    csv_path = tmp_path / "data.csv"
    _write_csv(csv_path, t, u, y)
    out, png = tmp_path / "m.json", tmp_path / "fit.png"
    rc = main([str(csv_path), "--inputs", "u1,u2", "--outputs", "y1,y2", "--order", "3",
               "--time", "time", "--out", str(out), "--plot", str(png), "--max-iter", "300"])
    captured = capsys.readouterr()
    assert rc == 0
    assert "cost" in captured.err and "[" in captured.err
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert summary["rel_max_error"] < 1e-3
    model = LinearPHS.load(out)
    assert model.inputs == ["u1", "u2"]
    y_sim = phsym.simulate(model, 100.0, u=u).y
    y_mid = 0.5 * (y[1:] + y[:-1])          # midpoint step values of the grid data
    assert np.max(np.abs(y_sim - y_mid)) < 1e-3 * np.max(np.abs(y))
    assert png.stat().st_size > 1000
    # bad column -> error exit code
    assert main([str(csv_path), "--inputs", "nope", "--outputs", "y1", "--order", "2",
                 "--time", "time"]) == 2


def test_cli_module_and_subparser(tmp_path, data):
    import argparse
    from phsym.identify import cli_identify
    parser = argparse.ArgumentParser(prog="phsym")
    cli_identify.add_parser(parser.add_subparsers(dest="cmd"))
    t, u, y = data
    csv_path = tmp_path / "d.csv"
    _write_csv(csv_path, t, u, y)
    args = parser.parse_args(["identify", str(csv_path), "--inputs", "u1,u2", "--outputs",
                              "y1,y2", "--order", "2", "--time", "time", "--max-iter", "5"])
    assert args.func is cli_identify.run
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "phsym.identify.cli_identify", str(csv_path),
                           "--inputs", "u1,u2", "--outputs", "y1,y2", "--order", "2",
                           "--time", "time", "--max-iter", "10", "--out",
                           str(tmp_path / "m.json")], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "10/10" in proc.stderr
    assert LinearPHS.load(tmp_path / "m.json").n_states == 2


def test_user_initial_matrices_and_validation(truth, data):
    t, u, y = data
    est = LinearPHSEstimator(3, init={"J": truth.J, "R": truth.R, "B": truth.B, "base": "random"},
                             fixed={"Q": truth.Q}, max_iter=3).fit(t, u, y)
    assert est.history_["cost"][0] < 1e-20          # the start already is the truth
    np.testing.assert_allclose(est.model_.R, truth.R, atol=1e-8)
    with pytest.raises(IdentificationError):
        LinearPHSEstimator(3, init={"R": -np.eye(3)}).fit(t, u, y)   # indefinite R rejected
    with pytest.raises(IdentificationError):
        LinearPHSEstimator(3).fit(np.r_[t[:-1], t[-1] + 1.0], u, y)   # non-uniform grid
    with pytest.raises(IdentificationError):
        LinearPHSEstimator(3).predict(t, u)                          # not fitted


@pytest.mark.parametrize("scheme,method", [("explicit_euler", "euler"), ("midpoint", "bilinear")])
def test_simulation_equals_scipy_discretisation(scheme, method):
    """The estimator's simulator against scipy.signal: explicit Euler is
    cont2discrete(euler); the midpoint rule with averaged inputs has the
    bilinear (Tustin) transfer function, so from rest the outputs agree."""
    from scipy.signal import cont2discrete, dlsim
    s = msd_chain(3, 2)
    h = 0.01
    t = np.arange(400) * h
    u = np.column_stack([np.sin(3 * t), np.cos(5 * t) * (t > 0.5)])
    A = (s.J - s.R) @ s.Q
    C = s.B.T @ s.Q
    y = grid_outputs(s, t, u, method=scheme)
    Ad, Bd, Cd, Dd, _ = cont2discrete((A, s.B, C, np.zeros((2, 2))), h, method=method)
    _, yref, _ = dlsim((Ad, Bd, Cd, Dd, h), u)
    np.testing.assert_allclose(y, yref, rtol=0, atol=1e-12 * np.abs(yref).max())
    # the simulator's step values are the same trajectory at x_theta
    res = phsym.simulate(s, 1 / h, u=u, method=scheme)
    th = get_scheme(scheme).theta
    np.testing.assert_allclose(res.y, (1 - th) * y[:-1] + th * y[1:], rtol=0, atol=1e-12 * np.abs(yref).max())


def test_prediction_input_checks(truth, data):
    t, u, y = data
    est = LinearPHSEstimator(3, max_iter=5, random_state=0).fit(t, u, y)
    with pytest.raises(IdentificationError, match="u has 3 columns"):
        est.predict(t, np.zeros((t.size, 3)))
    with pytest.raises(IdentificationError, match="x0 has 7 entries"):
        est.predict(t, u, x0=np.zeros(7))
    with pytest.raises(SimulationInputError, match="u has 3 columns"):
        phsym.simulate(truth, 100.0, u=np.zeros((10, 3)))
    t_nan = t.copy()
    t_nan[-1] = np.nan
    with pytest.raises(IdentificationError, match="is not finite"):
        LinearPHSEstimator(3).fit(t_nan, u, y)
    with pytest.raises(IdentificationError, match="give 401 .on the grid t. or 400"):
        LinearPHSEstimator(3).fit(t, u, y[:300])


def test_scikit_learn_conventions(data):
    from sklearn.base import clone
    t, u, y = data
    est = LinearPHSEstimator(3, free=("J", "R", "B"), method="explicit_euler", max_iter=5)
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin is not est
    assert est.fit(t, u, y) is est and hasattr(est, "model_") and not hasattr(twin, "model_")
    with pytest.raises(IdentificationError, match="ambiguous"):
        LinearPHSEstimator(3, method="euler").fit(t, u, y)
    with pytest.raises(IdentificationError, match="invalid parameter 'scheme'"):
        est.set_params(scheme="midpoint")
