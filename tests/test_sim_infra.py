"""Cache, errors, result API, sparse linear path of the simulator."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.codegen import cache as C
from phsym.errors import SimulationError
from phsym.simulation import Simulator, simulate
from phsym.simulation.examples import chain_netlist

ROOT = Path(__file__).resolve().parents[1]
NET = ROOT / "netlists"


@pytest.fixture(scope="module")
def clipper_sim():
    m = phsym.load(NET / "diode_clipper.cir")
    return Simulator(m, 48000, "discrete_gradient")


_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
import phsym
from phsym.codegen import cache as C
from phsym.simulation import Simulator
m = phsym.load({net!r})
sim = Simulator(m, 48000, "discrete_gradient", engine="generated")     # the generated loop's cache
res = sim.run(duration=0.001)
mod = sim._gen.module
print(json.dumps({{"built": len(C.BUILD_LOG), "misses": sum(mod.run.stats.cache_misses.values()),
                  "hits": sum(mod.run.stats.cache_hits.values()), "key": sim.key}}))
"""


def _child(env):
    code = _CHILD.format(root=str(ROOT), net=str(NET / "diode_clipper.cir"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.compiled      # children compile and load numba's cache
def test_second_process_does_not_recompile(tmp_path, clipper_sim):
    env = dict(os.environ)
    env.setdefault("PHSYM_CACHE_DIR", str(tmp_path / "phsym"))
    env.setdefault("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    first = _child(env)
    second = _child(env)
    assert first["key"] == second["key"] == clipper_sim.key
    assert second["built"] == 0          # module file reused
    assert second["misses"] == 0         # numba loaded the machine code
    assert second["hits"] >= 1


@pytest.mark.compiled      # counts numba's signatures
def test_parameter_change_does_not_recompile(clipper_sim):
    clipper_sim = Simulator(clipper_sim.model, 48000, "discrete_gradient")     # the module fixture's: interpreted
    before = list(C.BUILD_LOG)
    r1 = clipper_sim.run(duration=0.002, u={"Vin": 2.0})
    sigs = len(clipper_sim._gen.module.run.signatures)
    r2 = clipper_sim.run(duration=0.002, u={"Vin": 2.0}, params={"C": 20e-9, "Rs": 4.7e3})
    assert len(clipper_sim._gen.module.run.signatures) == sigs == 1
    assert C.BUILD_LOG == before
    assert not np.allclose(r1.x, r2.x)
    assert np.max(np.abs(r2.balance)) <= 1e-10 * r2.power_scale
    # same parameters through a new simulator object: same module
    assert Simulator(clipper_sim.model, 44100, "discrete_gradient").key == clipper_sim.key


def test_corrupt_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    body = "VALUE = 42\n"
    key = C.cache_key(body, "test")
    path = tmp_path / f"{C.PREFIX}{key}.py"
    path.write_text("# phsym-checksum: bad\nVALUE = (\n")      # truncated write
    with pytest.warns(phsym.CacheWarning, match="checksum mismatch"):
        mod = C.load_module(body, key)
    assert mod.VALUE == 42
    assert C.cache_info()["modules"] >= 1
    assert C.clear_cache() >= 1
    assert not path.exists()


def test_newton_failure_names_step_time_quantity(clipper_sim):
    sim = Simulator(clipper_sim.model, 48000, "discrete_gradient", maxit=1)
    with pytest.raises(SimulationError) as err:
        sim.run(duration=0.001, u={"Vin": 5.0})
    e = err.value
    assert e.step == 0 and e.time == pytest.approx(1 / 48000) and e.quantity == "q_C1"
    assert "step 0" in str(e) and "q_C1" in str(e)


def test_nan_input_raises(clipper_sim):
    # caught before stepping: names the input and the first step that uses it
    u = np.full(101, 1.0)
    u[40] = np.nan
    with pytest.raises(SimulationError) as err:
        clipper_sim.run(u={"Vin": u})
    assert err.value.step == 39 and err.value.quantity == "Vin"
    assert "non-finite" in str(err.value)


def test_non_finite_values_inside_a_step_raise(clipper_sim):
    # a 1 MV spike is clipped (junction limiting keeps the diode law finite:
    # about 1.17 V for the 450 A through 2.2k); 1e100 V overflows the law
    # inside step 39 even in 1024 sub-steps
    u = np.full(101, 1.0)
    u[40] = 1e6
    res = clipper_sim.run(u={"Vin": u})
    assert 1.1 < res["v(out)"][39] < 1.2 and res.max_balance_error < 1e-12
    u[40] = 1e100
    with pytest.raises(SimulationError) as err:
        clipper_sim.run(u={"Vin": u})
    assert err.value.step == 39 and err.value.quantity == "q_C1"
    assert "non-finite" in str(err.value) and "element C1" in str(err.value)


def test_flag_mode_continues(clipper_sim):
    sim = Simulator(clipper_sim.model, 48000, "discrete_gradient", maxit=1, on_error="flag")
    res = sim.run(duration=0.001, u={"Vin": 5.0})
    assert res.info["failed_steps"] > 0 and res.flags[0] == 1


def test_result_api(tmp_path, clipper_sim):
    res = clipper_sim.run(duration=0.002)            # netlist waveform SIN(0 1 1k)
    t = res.t_step
    np.testing.assert_allclose(res["Vin"], np.sin(2 * np.pi * 1000 * res.t), atol=1e-12)
    assert res["v(out)"].shape == t.shape and res["i(R1)"].shape == t.shape
    # i(R1) = (ubar - v(out)) / Rs on each step (midpoint-type values)
    ub = 0.5 * (res.u[1:, 0] + res.u[:-1, 0])
    np.testing.assert_allclose(res["i(R1)"], (ub - res["v(out)"]) / 2200, rtol=1e-9, atol=1e-15)
    # y(Vin) = current delivered by the source = i(R1)
    np.testing.assert_allclose(res["y(Vin)"], res["i(R1)"], rtol=1e-12, atol=1e-18)
    assert res["q_C1"].shape == res.t.shape
    with pytest.raises(KeyError):
        res["nonsense"]
    d = res.to_numpy()
    assert {"t", "H", "q_C1", "v(out)", "balance"} <= set(d)
    # tables run over the full grid: the initial instant first, where step
    # quantities (outputs, probes, powers) are undefined (NaN)
    df = res.to_pandas()
    assert list(df.index[:3]) == list(res.t[:3]) and "v(out)" in df.columns
    assert np.isnan(df["v(out)"].iloc[0]) and df["q_C1"].iloc[0] == res.x[0, 0]
    np.testing.assert_allclose(df["v(out)"].to_numpy()[1:], res["v(out)"])
    res.save(tmp_path / "r.csv")
    import csv
    with open(tmp_path / "r.csv") as fh:
        header = next(csv.reader(fh))
    back = np.genfromtxt(tmp_path / "r.csv", delimiter=",", skip_header=1)     # empty cell -> nan
    assert back.shape[0] == len(res.t) and back[0, 0] == 0.0
    # every column round-trips exactly (%.17g), step quantities after the t = 0 row
    np.testing.assert_array_equal(back[:, header.index("t")], res.t)
    np.testing.assert_array_equal(back[:, header.index("q_C1")], res["q_C1"])
    np.testing.assert_array_equal(back[1:, header.index("v(out)")], res["v(out)"])
    assert np.isnan(back[0, header.index("v(out)")])
    res.save(tmp_path / "r.npz")
    npz = np.load(tmp_path / "r.npz")
    np.testing.assert_array_equal(npz["v(out)"], res["v(out)"])
    np.testing.assert_array_equal(npz["H"], res.H)
    res.to_wav(tmp_path / "r.wav", "v(out)", normalize=True)
    from scipy.io import wavfile
    fs, data = wavfile.read(tmp_path / "r.wav")
    assert fs == 48000 and len(data) == len(t) and data.dtype == np.float32
    ref = res["v(out)"] / np.max(np.abs(res["v(out)"]))       # peak-normalised float32
    np.testing.assert_allclose(data, ref, rtol=0, atol=1e-7)
    res.plot(path=tmp_path / "r.png")
    import matplotlib.image as mpimg
    img = mpimg.imread(tmp_path / "r.png")
    assert img.ndim == 3 and img.shape[0] > 200 and np.std(img[..., :3]) > 0.05   # drawn, not blank
    s = res.summary()
    assert "steps" in s and "power-balance" in s


def test_initial_states():
    m = phsym.load(NET / "rlc.cir")
    sim = Simulator(m, 10000)
    r = sim.run(duration=0.001, x0={"q_C1": 1e-6})
    assert r["q_C1"][0] == 1e-6 and r["phi_L1"][0] == 0
    iq = m.states.index("q_C1")
    x0 = np.zeros(2)
    x0[iq] = 2e-6
    r = sim.run(duration=0.001, x0=x0)
    assert r["q_C1"][0] == 2e-6
    with pytest.raises(SimulationError):
        sim.run(duration=0.001, x0={"nope": 1})
    with pytest.raises(SimulationError):
        sim.run(duration=0.001, x0=[1.0])


def test_simulate_shortcut_from_path():
    res = simulate(str(NET / "rlc.cir"), fs=48000, duration=0.001)
    assert res.info["scheme"] == "midpoint" and len(res.t) == 49


def test_sparse_equals_dense_chain():
    m = phsym.parse(chain_netlist(12))
    u = {"F1": lambda t: np.sin(5 * t), "F2": 0.5}
    a = Simulator(m, 200, linear_solver="dense").run(duration=2.0, u=u)
    b = Simulator(m, 200, linear_solver="sparse").run(duration=2.0, u=u)
    assert a.info["engine"] == "linear-dense" and b.info["engine"] == "linear-sparse"
    np.testing.assert_allclose(b.x, a.x, rtol=0, atol=1e-12 * np.max(np.abs(a.x)))
    np.testing.assert_allclose(b.y, a.y, rtol=0, atol=1e-12 * np.max(np.abs(a.y)))
    np.testing.assert_allclose(b.efforts, a.efforts, rtol=0, atol=1e-11 * np.max(np.abs(a.efforts)))
    assert np.max(np.abs(b.balance)) <= 1e-10 * b.power_scale
