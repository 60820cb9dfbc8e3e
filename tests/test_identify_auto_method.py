"""method="auto": estimators fit a simulation result (live or saved) with the scheme that made it."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.errors import DataFileError
from phsym.identify import LinearPHSEstimator, ParameterEstimator
from phsym.simulation import load_result

NET = Path(__file__).resolve().parent.parent / "netlists"
RLC = str(NET / "rlc.cir")


@pytest.fixture(scope="module")
def midpoint_run():
    # the default Simulator steps this linear model by the midpoint rule
    res = phsym.Simulator(phsym.load(RLC), 48000.0).run(duration=0.005)
    assert res.info["scheme"] == "midpoint"
    return res


def test_a_result_is_fitted_with_its_scheme_exactly(midpoint_run, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", phsym.SchemeMismatchWarning)
        est = ParameterEstimator(RLC, ["R"], ["y(V1)"], initial={"R": 20.0}).fit(midpoint_run)
        assert est.method == "auto" and est.method_ == "midpoint"
        assert abs(est.params_["R"] / 10.0 - 1) < 1e-9
        # predict and score step by the fit's scheme: the data again, to rounding
        assert est.score(midpoint_run) > 1 - 1e-12
        assert est.predict(midpoint_run.t, midpoint_run.u).info["scheme"] == "midpoint"
        # the same run saved as .npz and read back says how it was made
        saved = load_result(midpoint_run.save(tmp_path / "run.npz"))
        assert saved.info["scheme"] == "midpoint" and saved.inputs == ["V1"]
        np.testing.assert_array_equal(saved["y(V1)"], midpoint_run["y(V1)"])
        again = ParameterEstimator(RLC, ["R"], ["y(V1)"], initial={"R": 20.0}).fit(saved)
        assert again.method_ == "midpoint" and abs(again.params_["R"] / 10.0 - 1) < 1e-9


@pytest.mark.filterwarnings("ignore::phsym.identify.warnings.UnidentifiableParameterWarning")
def test_arrays_keep_the_old_default_and_an_explicit_method_still_warns(midpoint_run):
    t, u, y = midpoint_run.t, midpoint_run.u, {"y(V1)": midpoint_run["y(V1)"]}
    est = ParameterEstimator(RLC, ["R"], ["y(V1)"], initial={"R": 20.0}, max_nfev=5).fit(t, u, y)
    assert est.method_ == "backward_euler"          # measured arrays say nothing of a scheme
    with pytest.warns(phsym.SchemeMismatchWarning, match="method='midpoint'"):
        ParameterEstimator(RLC, ["R"], ["y(V1)"], initial={"R": 20.0}, method="backward_euler",
                           max_nfev=5).fit(midpoint_run)


def test_linear_estimator_follows_the_result():
    true = phsym.LinearPHS(J=[[0, 2], [-2, 0]], R=[[0.5, 0], [0, 0.1]], B=[[1.0], [0.2]])
    t = np.linspace(0, 2, 201)
    data = phsym.simulate(true, 100.0, u=np.sin(3 * t)[:, None], method="backward_euler")
    est = LinearPHSEstimator(2, max_iter=3, random_state=0).fit(data)
    assert est.method_ == "backward_euler"
    assert est.predict(data.t, data.u).info["scheme"] == "backward_euler"
    assert LinearPHSEstimator(2, max_iter=3, random_state=0).fit(data.t, data.u, data.y).method_ == "midpoint"


def test_fit_cli_reads_a_saved_run_and_its_scheme(midpoint_run, tmp_path, capsys):
    from phsym.cli import main
    run = midpoint_run.save(tmp_path / "run.npz")
    out = tmp_path / "fit.json"
    assert main(["fit", RLC, str(run), "--free", "R", "--outputs", "y(V1)", "--init", "R=20",
                 "--out", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert doc["method"] == "midpoint" and abs(doc["params"]["R"] / 10.0 - 1) < 1e-9
    assert "warning" not in capsys.readouterr().err
    with pytest.raises(DataFileError, match="reads .npz"):
        load_result(tmp_path / "fit.json")
