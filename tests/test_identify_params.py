"""Grey-box parameter estimation: sensitivities, recovery, covariance, warnings, CLI."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.codegen import cache as gen_cache
from phsym.errors import IdentificationError, PhsymWarning
from phsym.codegen.newton.sensitivity import build_sensitivity
from phsym.identify import ParameterEstimator, UnidentifiableParameterWarning, nrms
from phsym.simulation.initial import state_scales

NET = Path(__file__).resolve().parent.parent / "netlists"
DC_TRUE = {"L": 2.0, "C1": 0.01, "C2": 0.02, "R_L": 1.0, "R_G": 6.0, "R_R": 3.0}
DC_OUT = ["y(VG)", "v(n1)", "v(n2)"]


def multisine(t, rng, n=40, f0=0.1):
    ph = rng.uniform(0, 2 * np.pi, n)
    return sum(np.sin(2 * np.pi * (i + 1) * f0 * t + ph[i]) for i in range(n))


def sampled(res, labels):
    """Simulator step outputs (one per step, on t_step): data as a SimulationResult gives them."""
    return {lab: np.asarray(res[lab]) for lab in labels}


@pytest.fixture(scope="module")
def dc():
    m = phsym.load(NET / "dc_network.cir")
    Ts = 0.005
    t = np.arange(2001) * Ts
    u = multisine(t, np.random.default_rng(1))
    x0 = np.array([0.01, 0.2, -0.01])
    res = phsym.Simulator(m, 1 / Ts, "backward_euler").run(u={"VG": u}, x0=x0)
    return {"model": m, "t": t, "u": u, "x0": x0, "y": sampled(res, DC_OUT), "result": res}


@pytest.fixture(scope="module")
def clipper():
    m = phsym.load(NET / "diode_clipper.cir")
    fs = 48000.0
    t = np.arange(241) / fs
    u = 4.0 * np.sin(2 * np.pi * 1000 * t)
    res = phsym.Simulator(m, fs, "discrete_gradient").run(u={"Vin": u})
    return {"model": m, "t": t, "u": u, "y": sampled(res, ["v(out)"])}


def _fd_check(model, free, outputs, scheme, U, h, x0, rel=1e-5, extra_x0=False):
    step = build_sensitivity(model, free, outputs, scheme)
    vals = model.parameter_values()
    p = np.array([vals[s] for s in step.parameters])
    xs = state_scales(model.structure, vals)
    nf, nx = len(free), model.structure.n_x
    S0 = np.hstack([np.zeros((nx, nf)), np.eye(nx)]) if extra_x0 else np.zeros((nx, nf))
    Y, DY, bad = step.run(x0, S0, U, p, xs, h)
    assert bad < 0
    idx = [step.parameters.index(model.parameter_symbols[f]) for f in free]
    for c, j in enumerate(idx):
        eps = 1e-6 * abs(p[j])
        pp, pm = p.copy(), p.copy()
        pp[j] += eps
        pm[j] -= eps
        Yp = step.run(x0, S0, U, pp, xs, h, want=False)[0]
        Ym = step.run(x0, S0, U, pm, xs, h, want=False)[0]
        fd = (Yp - Ym) / (2 * eps)
        err = np.max(np.abs(fd - DY[:, :, c])) / np.max(np.abs(DY[:, :, c]))
        assert err < rel, (free[c], err)
    if extra_x0:
        for i in range(nx):
            eps = 1e-6 * xs[i]
            xp, xm = x0.copy(), x0.copy()
            xp[i] += eps
            xm[i] -= eps
            fd = (step.run(xp, S0, U, p, xs, h, want=False)[0]
                  - step.run(xm, S0, U, p, xs, h, want=False)[0]) / (2 * eps)
            err = np.max(np.abs(fd - DY[:, :, nf + i])) / np.max(np.abs(DY[:, :, nf + i]))
            assert err < rel, (i, err)
    return step, Y


# ------------------------------------------------------------ sensitivities
def test_sensitivities_dc_network_match_finite_differences_and_simulator(dc):
    m = dc["model"]
    U = dc["u"][:401, None]
    step, Y = _fd_check(m, list(DC_TRUE), DC_OUT, "backward_euler", U, 0.005, dc["x0"].copy(), extra_x0=True)
    # the compiled sensitivity loop reproduces phsym's simulator
    res = phsym.Simulator(m, 200.0, "backward_euler").run(u={"VG": U[:, 0]}, x0=dc["x0"])
    for j, lab in enumerate(DC_OUT):
        np.testing.assert_allclose(Y[:, j], res[lab], rtol=0, atol=1e-12)


def test_state_outputs_have_exact_sensitivities_and_match_the_simulator(dc):
    # a state output (a measured charge or position) is the state at the point of the step the scheme evaluates
    from phsym.common.schemes import get_scheme
    from phsym.identify.data import step_signal
    m, scheme = dc["model"], "midpoint"
    U = dc["u"][:201, None]
    labels = ["q_C1", "v(n2)", "phi_L1"]
    step, Y = _fd_check(m, ["C1", "L", "R_R"], labels, scheme, U, 0.005, dc["x0"].copy(), extra_x0=True)
    res = phsym.Simulator(m, 200.0, scheme).run(u={"VG": U[:, 0]}, x0=dc["x0"])
    for j, lab in enumerate(labels):
        np.testing.assert_allclose(Y[:, j], step_signal(res, lab, get_scheme(scheme)), rtol=0, atol=1e-12)
    x = np.asarray(res["q_C1"])
    np.testing.assert_array_equal(step_signal(res, "q_C1", get_scheme(scheme)),
                                  0.5 * (x[:-1] + x[1:]))
    assert np.array_equal(step_signal(res, "q_C1", get_scheme("backward_euler")), x[1:])


def test_sensitivities_dae_with_algebraic_unknowns_midpoint():
    """Transformer: the ideal two-port gives lambda unknowns (a pH-DAE)."""
    m = phsym.load(NET / "transformer.cir")
    fs = 20000.0
    t = np.arange(301) / fs
    U = (np.sin(2 * np.pi * 300 * t) + 0.3 * np.sin(2 * np.pi * 1100 * t))[:, None]
    step, Y = _fd_check(m, ["n", "Rs", "Lp", "RL", "C"], ["y(V1)", "v(s)", "v(o)"], "midpoint", U, 1 / fs,
                        np.zeros(m.structure.n_x))
    assert step.n_v > step.n_x  # algebraic unknowns in the Newton system
    assert np.max(np.abs(Y[:, 2])) > 1e-3


def test_sensitivities_nonlinear_clipper_discrete_gradient(clipper):
    m = clipper["model"]
    U = clipper["u"][:, None]
    _, Y = _fd_check(m, ["DMOD.Is", "DMOD.N"], ["v(out)"], "discrete_gradient", U, 1 / 48000.0,
                     np.zeros(1), rel=1e-4)
    np.testing.assert_allclose(Y[:, 0], clipper["y"]["v(out)"], rtol=0, atol=1e-9)
    assert np.max(np.abs(Y)) > 0.5    # the diodes conduct


def test_dc_initial_state_sensitivity(dc):
    """x0='dc' depends on the parameters; its derivative is part of the sensitivity."""
    m = dc["model"]
    U = np.column_stack([1.0 + 0.3 * np.sin(np.linspace(0, 6, 201))])
    est = ParameterEstimator(m, list(DC_TRUE), DC_OUT, x0="dc")
    xs = state_scales(m.structure, m.parameter_values())
    step = est._sensitivity(m, list(DC_TRUE), DC_OUT, 0.01)
    Y, DY, bad, x = est._simulate(m, step, dict(DC_TRUE), U, 0.01, "dc", xs)
    assert bad < 0 and abs(x[2] - 0.02 * 3.0 / 10.0 * U[0, 0]) < 1e-12
    for c, name in enumerate(DC_TRUE):
        pv = dict(DC_TRUE)
        eps = 1e-6 * pv[name]
        pv[name] += eps
        Yp = est._simulate(m, step, pv, U, 0.01, "dc", xs, want=False)[0]
        pv[name] -= 2 * eps
        Ym = est._simulate(m, step, pv, U, 0.01, "dc", xs, want=False)[0]
        fd = (Yp - Ym) / (2 * eps)
        assert np.max(np.abs(fd - DY[:, :, c])) < 1e-6 * np.max(np.abs(DY[:, :, c])), name


# ------------------------------------------------------------- recovery
@pytest.mark.compiled      # two fits of 2,001 steps: their compiled sensitivity module costs less than Python
def test_exact_recovery_dc_network_all_parameters(dc):
    start = {"L": 1.5, "C1": 0.02, "C2": 0.01, "R_L": 2.0, "R_G": 4.0, "R_R": 5.0}
    est = ParameterEstimator(dc["model"], list(DC_TRUE), DC_OUT, initial=start, x0="estimate")
    assert est.fit(dc["t"], {"VG": dc["u"]}, dc["y"]) is est
    for k, v in DC_TRUE.items():
        assert abs(est.params_[k] / v - 1) < 1e-6, (k, est.params_[k])
    np.testing.assert_allclose(est.x0_, dc["x0"], rtol=1e-6)
    assert max(est.nrms_.values()) < 1e-6
    assert est.n_iter_ >= 2 and est.result_.success
    yp = est.predict(dc["t"], dc["u"])
    assert isinstance(yp, phsym.SimulationResult)        # what the simulator returns
    np.testing.assert_allclose(yp["v(n1)"], dc["y"]["v(n1)"], atol=1e-8)
    assert 1.0 - est.score(dc["t"], {"VG": dc["u"]}, dc["y"]) < 1e-12
    # changing the start values reuses the compiled module (no code generation)
    n_built = len(gen_cache.BUILD_LOG)
    est2 = ParameterEstimator(dc["model"], list(DC_TRUE), DC_OUT, initial={"L": 2.5}, x0="estimate")
    est2.fit(dc["t"], {"VG": dc["u"]}, dc["y"])
    assert len(gen_cache.BUILD_LOG) == n_built
    assert abs(est2.params_["L"] / 2.0 - 1) < 1e-6


def test_exact_recovery_clipper_is_and_n(clipper):
    est = ParameterEstimator(clipper["model"], ["DMOD.Is", "DMOD.N"], ["v(out)"], method="discrete_gradient",
                             initial={"DMOD.Is": 1e-8, "DMOD.N": 2.0})
    est.fit(clipper["t"], {"Vin": clipper["u"]}, clipper["y"])
    assert abs(est.params_["DMOD.Is"] / 2.52e-9 - 1) < 1e-6, est.params_
    assert abs(est.params_["DMOD.N"] / 1.752 - 1) < 1e-6, est.params_


# ------------------------------------------------------- uncertainty
@pytest.mark.compiled      # eight fits of 2,001 steps (the module of the exact recovery's fits)
def test_covariance_matches_monte_carlo_spread(dc):
    m = dc["model"]
    clean = {k: v for k, v in dc["y"].items()}
    est_std, draws = [], []
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        noisy = {k: v + rng.standard_normal(v.size) * 0.01 * np.std(v) for k, v in clean.items()}
        est = ParameterEstimator(m, list(DC_TRUE), DC_OUT, x0=dc["x0"])
        est.fit(dc["t"], {"VG": dc["u"]}, noisy)
        draws.append([est.params_[k] for k in DC_TRUE])
        est_std.append([est.std_[k] for k in DC_TRUE])
        lo, hi = est.confidence_intervals_["L"]
        assert lo < est.params_["L"] < hi
        # log-parameter interval p exp(+-q sd/p), q the Student-t quantile (scipy)
        from scipy.stats import t as student
        q = student.ppf(0.975, (dc["t"].size - 1) * len(DC_OUT) - len(DC_TRUE))
        p = est.params_["L"]
        np.testing.assert_allclose([lo, hi], [p * np.exp(-q * est.std_["L"] / p), p * np.exp(q * est.std_["L"] / p)],
                                   rtol=1e-10)
    emp = np.std(np.array(draws), axis=0, ddof=1)
    pred = np.mean(np.array(est_std), axis=0)
    ratio = emp / pred
    assert np.all((ratio > 1 / 3) & (ratio < 3)), dict(zip(DC_TRUE, ratio))
    pooled = np.sqrt(np.mean(ratio ** 2))
    assert 0.5 < pooled < 2.0, pooled
    # estimates scatter around the truth within a few predicted std
    bias = np.abs(np.mean(np.array(draws), axis=0) - np.array(list(DC_TRUE.values()))) / (pred / np.sqrt(8))
    assert np.all(bias < 4), bias


def test_unidentifiability_warning_with_only_generator_current(dc):
    m = dc["model"]
    rng = np.random.default_rng(7)
    n = 401   # a 2 s record
    y = dc["y"]["y(VG)"][:n]
    y = y + rng.standard_normal(n) * 0.01 * np.std(y)
    # (the warning is the covariance's, not an engine's)
    est = ParameterEstimator(m, list(DC_TRUE), ["y(VG)"], x0=dc["x0"])
    with pytest.warns(UnidentifiableParameterWarning) as rec:
        est.fit(dc["t"][:n], {"VG": dc["u"][:n]}, {"y(VG)": y})
    w = rec[0].message
    assert isinstance(w, PhsymWarning)
    assert set(est.unidentifiable_) & {"C2", "R_L", "R_R"}
    for name in est.unidentifiable_:
        assert name in str(w) and est.relative_std_[name] > 0.1
    # with the three measured outputs nothing is flagged
    noisy = {k: v[:n] + rng.standard_normal(n) * 0.01 * np.std(v[:n]) for k, v in dc["y"].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnidentifiableParameterWarning)
        est3 = ParameterEstimator(m, list(DC_TRUE), DC_OUT, x0=dc["x0"]).fit(
            dc["t"][:n], {"VG": dc["u"][:n]}, noisy)
    assert not est3.unidentifiable_


# ----------------------------------------------------------------- API
def test_api_conventions_and_errors(dc):
    m = dc["model"]
    est = ParameterEstimator(m, list(DC_TRUE), DC_OUT, bounds={"L": (0.5, 1.8)}, n_starts=2, random_state=3,
                             x0=dc["x0"])
    params = est.get_params()
    assert params["free"] == list(DC_TRUE) and params["n_starts"] == 2
    assert est.set_params(max_nfev=50) is est and est.max_nfev == 50
    with pytest.raises(ValueError):
        est.set_params(nonsense=1)
    from sklearn.base import clone
    twin = clone(est)           # parameters copied, not fitted: scikit-learn's check passes
    assert set(twin.get_params()) == set(est.get_params()) and twin.free == est.free
    np.testing.assert_array_equal(twin.x0, est.x0)
    assert twin.model.name == m.name and not hasattr(twin, "params_")
    n = 401
    est.fit(dc["t"][:n], dc["u"][:n], np.column_stack([dc["y"][k][:n] for k in DC_OUT]))
    assert 0.5 <= est.params_["L"] <= 1.8 + 1e-12     # bound active (truth is 2.0)
    assert abs(est.params_["L"] - 1.8) < 1e-6
    assert len(est.starts_) == 2
    with pytest.raises(IdentificationError):
        ParameterEstimator(m, ["nope"]).fit(dc["t"][:n], dc["u"][:n], dc["y"]["y(VG)"][:n])
    with pytest.raises(IdentificationError):
        ParameterEstimator(m, ["L"], ["v(nowhere)"]).fit(dc["t"][:n], dc["u"][:n], dc["y"]["y(VG)"][:n])
    with pytest.raises(IdentificationError):
        ParameterEstimator(m, ["L"]).predict(dc["t"][:n], dc["u"][:n])
    assert nrms(np.ones(3), np.array([0.0, 1.0, 2.0])) == pytest.approx(np.sqrt(2 / 2))


def test_cli_fit_end_to_end(dc, tmp_path, capsys):
    from phsym.cli import main
    n = 601
    rng = np.random.default_rng(5)
    cols = {"t": dc["t"][:n], "VG": dc["u"][:n]}
    for k in DC_OUT:           # step values in the row of the step's end, as phsym simulate writes them
        v = dc["y"][k][:n - 1]
        cols[k] = np.concatenate([[np.nan], v + rng.standard_normal(n - 1) * 1e-3 * np.std(v)])
    csv = tmp_path / "data.csv"
    with open(csv, "w") as fh:
        fh.write(",".join(cols) + "\n")
        for i in range(n):
            fh.write(",".join("" if np.isnan(cols[c][i]) else repr(float(cols[c][i])) for c in cols) + "\n")
    out, png = tmp_path / "fit.json", tmp_path / "fit.png"
    code = main(["fit", str(NET / "dc_network.cir"), str(csv), "--free", "L,C1,C2,R_L,R_G,R_R",
                 "--inputs", "VG", "--outputs", "y(VG),v(n1),v(n2)", "--x0", "estimate", "--init", "L=1.5,R_G=4",
                 "--out", str(out), "--plot", str(png)])
    assert code == 0
    cap = capsys.readouterr()
    assert "cost" in cap.err and "NRMS" in cap.out and "95% confidence interval" in cap.out
    doc = json.loads(out.read_text())
    assert doc["stiff"] == "auto" and doc["method"] == "backward_euler"
    assert abs(doc["params"]["L"] / 2.0 - 1) < 1e-3 and abs(doc["params"]["R_G"] / 6.0 - 1) < 1e-3
    lo, hi = doc["confidence_intervals"]["L"]
    assert lo < doc["params"]["L"] < hi
    assert png.stat().st_size > 1000
    assert main(["fit", str(NET / "dc_network.cir"), str(csv), "--free", "L", "--outputs", "v(n9)"]) == 2


@pytest.mark.parametrize("kw,msg", [
    ({"free": []}, "at least one parameter"),
    ({"confidence": 1.5}, r"confidence must lie in \(0, 1\)"),
    ({"log_params": ["C9"]}, "not free"),
    ({"x0": "bogus"}, "x0 must be an array"),
    ({"x0": [1.0]}, "x0 has 1 entries"),
    ({"x0": {"zz": 1.0}}, "unknown state 'zz'"),
])
def test_estimator_argument_errors(dc, kw, msg):
    """Bad arguments are named, not reported as a simulation failure at the start values."""
    args = {"free": ["L"], "outputs": ["y(VG)"]}
    args.update(kw)
    n = 50
    est = ParameterEstimator(dc["model"], args.pop("free"), args.pop("outputs"), **args)
    with pytest.raises(phsym.IdentificationError, match=msg):
        est.fit(dc["t"][:n], {"VG": dc["u"][:n]}, dc["y"]["y(VG)"][:n])


def test_time_column_with_nan_is_named(dc):
    t = dc["t"][:50].copy()
    t[-1] = np.nan
    with pytest.raises(phsym.IdentificationError, match="time sample 49 is not finite"):
        ParameterEstimator(dc["model"], ["L"], ["y(VG)"]).fit(t, {"VG": dc["u"][:50]}, dc["y"]["y(VG)"][:50])


def test_round_trip_on_a_raw_simulation_result(dc):
    """fit(result) with the simulator's own result: no padding or slicing by the user, and
    the estimator stores its arguments unchanged (a path stays a path)."""
    path = str(NET / "dc_network.cir")
    res = dc["result"]
    # (about the arguments, not an engine)
    est = ParameterEstimator(path, ["R_G", "C1"], DC_OUT, initial={"R_G": 4.0, "C1": 0.02}, x0=dc["x0"])
    est.fit(res)
    assert est.model == path and isinstance(est.model_, phsym.Model)
    assert abs(est.params_["R_G"] / 6.0 - 1) < 1e-6 and abs(est.params_["C1"] / 0.01 - 1) < 1e-6
    pred = est.predict(res.t, res.u, x0=dc["x0"])
    np.testing.assert_allclose(pred["y(VG)"], res["y(VG)"], rtol=0, atol=1e-9)
    # grid samples (N + 1 rows) are accepted too: backward Euler compares the step ends
    grid = {k: np.concatenate([[0.0], v]) for k, v in dc["y"].items()}
    est2 = ParameterEstimator(path, ["R_G", "C1"], DC_OUT, initial={"R_G": 4.0, "C1": 0.02},
                              x0=dc["x0"]).fit(res.t, res.u, grid)
    assert abs(est2.params_["R_G"] / 6.0 - 1) < 1e-6


def test_fitting_a_simulation_with_another_scheme_warns_and_biases():
    """A SimulationResult made with midpoint, fitted with backward Euler: a
    SchemeMismatchWarning names both schemes; with the same scheme the fit is exact."""
    path = str(NET / "rlc.cir")
    res = phsym.Simulator(phsym.load(path), 48000.0, "midpoint").run(duration=0.01)
    with pytest.warns(phsym.SchemeMismatchWarning, match="simulated with midpoint and are fitted with backward_euler"):
        biased = ParameterEstimator(path, ["R"], ["y(V1)"], initial={"R": 20.0},
                                    method="backward_euler").fit(res)
    assert abs(biased.params_["R"] / 10.0 - 1) > 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error", phsym.SchemeMismatchWarning)
        exact = ParameterEstimator(path, ["R"], ["y(V1)"], initial={"R": 20.0}, method="midpoint").fit(res)
    assert abs(exact.params_["R"] / 10.0 - 1) < 1e-9
