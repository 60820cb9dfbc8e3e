"""phsym.sweep in this process: equal to single runs bit for bit, failures per
run, names checked before any run, grids and seeded Monte Carlo sets, exports."""
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.errors import MissingDependencyError, SignalError, SimulationInputError

ROOT = Path(__file__).resolve().parent.parent
CLIPPER = str(ROOT / "netlists" / "diode_clipper.cir")
RLC = str(ROOT / "netlists" / "rlc.cir")
FS, DUR = 48000.0, 0.005


@pytest.fixture(scope="module")
def clipper():
    return phsym.load(CLIPPER)


def test_threads_are_bit_identical_to_single_runs(clipper):
    params = phsym.sampling(clipper, 8, {"Rs": 0.2, "C": 0.2}, seed=3)
    res = phsym.sweep(clipper, FS, params, duration=DUR, outputs=["v(out)", "q_C1", "y(Vin)"])
    assert res.ok.all() and len(res) == 8
    sim = phsym.Simulator(clipper, FS)
    for i in range(8):
        one = sim.run(duration=DUR, params={"Rs": params["Rs"][i], "C": params["C"][i]})
        assert np.array_equal(res["v(out)"][i, 1:], one["v(out)"])        # step quantity: NaN at t[0]
        assert np.isnan(res["v(out)"][i, 0])
        assert np.array_equal(res["q_C1"][i], one["q_C1"])
        assert np.array_equal(res["y(Vin)"][i, 1:], one["y(Vin)"])
        assert res.balance[i] == one.max_balance_error
        assert res.iterations_max[i] == one.iterations.max()
    assert np.array_equal(res.t, one.t)
    # one at a time, and on a caller's thread pool: the same arrays
    serial = phsym.sweep(clipper, FS, params, duration=DUR, outputs=["v(out)"], executor="serial")
    with ThreadPoolExecutor(2) as pool:
        pooled = phsym.sweep(clipper, FS, params, duration=DUR, outputs=["v(out)"], executor=pool)
    assert np.array_equal(serial["v(out)"], res["v(out)"], equal_nan=True)
    assert np.array_equal(pooled["v(out)"], res["v(out)"], equal_nan=True)
    assert (res.iterations_mean > 0).all() and res.balance.max() < 1e-10


def _rlc_midpoint(R, L, C, u, h):
    """Trapezoidal (implicit midpoint) steps of q' = phi / L, phi' = u - R phi / L - q / C (independent)."""
    A = np.array([[-R / L, -1.0 / C], [1.0 / L, 0.0]])     # states (phi_L1, q_C1)
    B = np.array([1.0, 0.0])
    M = np.eye(2) - 0.5 * h * A
    P = np.eye(2) + 0.5 * h * A
    x = np.zeros((u.size, 2))
    for k in range(u.size - 1):
        x[k + 1] = np.linalg.solve(M, P @ x[k] + h * B * 0.5 * (u[k] + u[k + 1]))
    return x


def test_linear_sweep_matches_an_independent_integrator():
    R = np.array([5.0, 10.0, 40.0])
    res = phsym.sweep(RLC, FS, {"R": R}, duration=DUR, outputs=["phi_L1", "q_C1", "V1"])
    assert res.ok.all()
    for i, r in enumerate(R):
        x = _rlc_midpoint(r, 1e-3, 1e-6, res["V1"][i], 1.0 / FS)
        scale = np.abs(x).max(axis=0)
        assert np.abs(res["phi_L1"][i] - x[:, 0]).max() < 1e-9 * scale[0]
        assert np.abs(res["q_C1"][i] - x[:, 1]).max() < 1e-9 * scale[1]


def test_failures_stay_in_their_run(clipper):
    progress = []
    res = phsym.sweep(clipper, FS, {"C": [1e-8, -1e-8, 2e-8], "Rs": [1e3, 1e3, 0.0]}, duration=DUR,
                      progress=lambda d, n: progress.append((d, n)))
    assert res.ok.tolist() == [True, False, False]
    assert set(res.failures) == {1, 2}
    assert isinstance(res.failures[1], phsym.StructureError) and "C1" in str(res.failures[1])
    assert np.isnan(res["v(out)"][1]).all() and not np.isnan(res["v(out)"][0, 1:]).any()
    one = phsym.Simulator(clipper, FS).run(duration=DUR, params={"C": 1e-8, "Rs": 1e3})
    assert np.array_equal(res["v(out)"][0, 1:], one["v(out)"])
    assert progress[-1] == (3, 3) and len(progress) == 3
    table = res.to_pandas()
    assert table.loc[1, "error"].startswith("StructureError") and table.loc[0, "error"] == ""
    # Newton failures too (one Newton iteration is not enough for a 100 V step)
    bad = phsym.sweep(clipper, FS, {"Rs": [1e3, 2e3]}, duration=DUR, u={"Vin": 100.0}, maxit=1)
    assert not bad.ok.any() and all(isinstance(e, phsym.SimulationError) for e in bad.errors)


@pytest.mark.parametrize("params, words", [
    ({"Rx": [1.0]}, ["unknown parameter 'Rx'", "R, L, C"]),
    ({"R1": [1.0]}, ["R1 is not a parameter", "sweep R"]),
    ({"q_C1": [1.0]}, ["state or port"]),
    ({"R": [1.0, 2.0], "C": [1e-6]}, ["equal lengths"]),
    ({"R": [1.0], "r": [2.0]}, ["given twice"]),
    ([{"R": 1.0}, {"C": 1e-6}], ["run 1 sets"]),
    ({"R": ["a"]}, ["not numbers"]),
])
def test_names_and_shapes_are_checked_before_any_run(params, words):
    calls = []
    with pytest.raises(SimulationInputError) as exc:
        phsym.sweep(RLC, FS, params, duration=DUR, progress=lambda d, n: calls.append(d))
    assert all(w in str(exc.value) for w in words), str(exc.value)
    assert calls == [] and isinstance(exc.value, phsym.PhsymError)


def test_other_inputs_are_rejected():
    lin = phsym.load(RLC).linearize()
    with pytest.raises(SimulationInputError, match="no named parameters"):
        phsym.sweep(lin, FS, {"R": [1.0]}, duration=DUR)
    with pytest.raises(SimulationInputError, match="executor"):
        phsym.sweep(RLC, FS, {"R": [1.0]}, duration=DUR, executor="gpu")
    with pytest.raises(SimulationInputError, match="outputs"):
        phsym.sweep(RLC, FS, {"R": [1.0]}, duration=DUR, outputs=["v(nowhere)"])


def test_parameter_tables_grid_and_dataframe():
    g = phsym.grid({"R": [1.0, 2.0, 3.0], "C": [1e-6, 2e-6]})
    assert g["R"].tolist() == [1, 1, 2, 2, 3, 3] and g["C"].tolist() == [1e-6, 2e-6] * 3
    pd = pytest.importorskip("pandas")
    a = phsym.sweep(RLC, FS, g, duration=DUR)
    b = phsym.sweep(RLC, FS, pd.DataFrame(g), duration=DUR)
    c = phsym.sweep(RLC, FS, [{"R": r, "C": c} for r, c in zip(g["R"], g["C"])], duration=DUR)
    for other in (b, c):
        assert np.array_equal(other.values, a.values) and other.names == ["R", "C"]
        assert np.array_equal(other["v(b)"], a["v(b)"], equal_nan=True)
    assert a.parameters["C"].tolist() == g["C"].tolist()


def test_sampling_is_seeded_and_has_its_distribution(clipper):
    a = phsym.sampling(CLIPPER, 4000, {"Rs": 0.05, "C": 0.1}, seed=7)
    b = phsym.sampling(clipper, 4000, {"Rs": 0.05, "C": 0.1}, seed=7)
    c = phsym.sampling(clipper, 4000, {"Rs": 0.05, "C": 0.1}, seed=8)
    assert np.array_equal(a["Rs"], b["Rs"]) and not np.array_equal(a["Rs"], c["Rs"])
    rel = a["Rs"] / 2200.0 - 1.0
    assert np.abs(rel).max() <= 0.05 and abs(rel.std() - 0.05 / np.sqrt(3)) < 0.002   # uniform on +-5 %
    n = phsym.sampling(clipper, 20000, 0.09, names=["C"], distribution="normal", seed=1)["C"] / 1e-8 - 1
    assert abs(n.std() - 0.03) < 0.001 and abs(n.mean()) < 0.001
    ln = np.log(phsym.sampling({"C": 1e-8}, 20000, 0.09, names=["C"], distribution="lognormal", seed=1)["C"] / 1e-8)
    assert abs(ln.std() - np.log(1.09) / 3) < 0.001
    with pytest.raises(SimulationInputError, match="distribution"):
        phsym.sampling(clipper, 3, 0.1, names=["C"], distribution="beta")
    with pytest.raises(SimulationInputError, match="unknown parameter"):
        phsym.sampling(clipper, 3, {"Cx": 0.1})
    with pytest.raises(SimulationInputError, match=r"\[0, 1\)"):
        phsym.sampling(clipper, 3, {"C": 1.5})


def test_exports(tmp_path, monkeypatch):
    res = phsym.sweep(RLC, FS, {"R": [5.0, 10.0], "C": [1e-6, -1.0]}, duration=DUR)
    ds = res.to_xarray()
    assert ds["v(b)"].dims == ("run", "time") and ds["v(b)"].shape == (2, res.t.size)
    assert ds["R"].values.tolist() == [5.0, 10.0] and ds["error"].values[0] == ""
    assert res.save(tmp_path / "s.nc").stat().st_size > 0
    z = np.load(res.save(tmp_path / "s.npz"), allow_pickle=False)
    assert np.array_equal(z["signal:v(b)"], res["v(b)"], equal_nan=True) and z["names"].tolist() == ["R", "C"]
    lines = res.save(tmp_path / "s.csv").read_text().splitlines()
    assert lines[0].startswith("run,R,C,balance") and "StructureError" in lines[2]
    assert res.to_pandas("v(b)").shape == (res.t.size, 2)
    fig = res.plot(path=tmp_path / "s.png")
    assert (tmp_path / "s.png").stat().st_size > 0 and fig is not None
    with pytest.raises(SignalError, match="outputs="):
        res["i(R1)"]
    with pytest.raises(SimulationInputError, match="format"):
        res.save(tmp_path / "s.xlsx")
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(MissingDependencyError, match="xarray"):
        res.to_xarray()
    assert "2 runs (1 failed)" in repr(res)
