"""Warm starts: snapshots of netlist runs and ahead-of-time compiled loops.

A warm run must give exactly the arrays of the symbolic run it replaces, and
must never be used when anything that changes the result differs.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.codegen import aot
from phsym.codegen import cache as C
from phsym.simulation import Simulator
from phsym.simulation.examples import chain_netlist
from phsym.simulation.summary import ModelSummary
from phsym.simulation.warm import snapshot_file, snapshot_key

ROOT = Path(__file__).resolve().parents[1]
NET = ROOT / "netlists"
FIELDS = ("x", "u", "y", "H", "P_diss", "P_supplied", "iterations", "efforts")


_ENGINE = pytest.MonkeyPatch()
_SESSION_CACHE = os.environ.get("PHSYM_CACHE_DIR")


@pytest.fixture(autouse=True)
def _engine_restored():
    yield
    _ENGINE.undo()


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A private cache directory for this module."""
    d = tmp_path_factory.mktemp("warm_cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PHSYM_CACHE_DIR", str(d))
        yield d


def _same(a, b):
    for f in FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


def _copy(tmp_path, name):
    """A copy of a bundled netlist; a nonlinear one runs on the generated loop (auto would take the
    numeric engine on a first run, and warm starts store plans of the generated and linear loops)."""
    if name == "diode_clipper.cir":
        _ENGINE.setenv("PHSYM_ENGINE", "generated")
    dst = tmp_path / name
    shutil.copy(NET / name, dst)
    return dst


@pytest.mark.parametrize("name", ["diode_clipper.cir", "rlc.cir", "dc_network.cir"])
def test_warm_run_equals_symbolic_run(cache, tmp_path, name):
    path = _copy(tmp_path, name)
    cold = phsym.simulate(path, 48000, duration=0.004)
    assert not cold.info.get("warm_start")
    warm = phsym.simulate(path, 48000, duration=0.004)
    assert warm.info["warm_start"] and isinstance(warm.model, ModelSummary)
    _same(cold, warm)
    assert warm.info["engine"] == cold.info["engine"] and warm.info["x0"] == cold.info["x0"]
    for label in cold.labels():
        assert np.array_equal(cold[label], warm[label]), label
    assert warm.max_balance_error < 1e-10
    assert warm.summary().startswith(cold.model.name)


@pytest.mark.parametrize("engine", ["auto", "numeric"])
def test_warm_probe_not_declared_builds_the_model(cache, tmp_path, engine):
    # a numeric snapshot's efforts are [potentials, currents, inputs]: its probe vectors come from
    # the numeric engine's layout, not the symbolic structure's (they differ in length)
    path = _copy(tmp_path, "diode_clipper.cir")
    cold = phsym.simulate(path, 48000, duration=0.002, engine=engine)
    warm = phsym.simulate(path, 48000, duration=0.002, engine=engine)
    assert warm.info["warm_start"] and warm.info["engine"] == ("numeric" if engine == "numeric" else "generated")
    for label in ("v(in)", "i(D1)", "v(in,out)"):
        np.testing.assert_allclose(warm[label], cold[label], rtol=0, atol=1e-15)


def test_warm_inputs_and_initial_states(cache, tmp_path):
    path = _copy(tmp_path, "diode_clipper.cir")
    phsym.simulate(path, 48000, duration=0.001)
    sim = Simulator(phsym.load(path), 48000)
    n = 97
    t = np.arange(n) / 48000
    cases = [dict(u=np.sin(2e3 * t)), dict(u={"Vin": lambda tt: 2 * np.cos(3e3 * tt)}, duration=0.002),
             dict(u={"Vin": 0.5}, duration=0.001, x0={"q_C1": 1e-9}), dict(duration=0.001, x0=[2e-9])]
    for kw in cases:
        warm = phsym.simulate(path, 48000, **kw)
        assert warm.info["warm_start"], kw
        _same(sim.run(**kw), warm)


def test_dc_start_is_warm_too(cache, tmp_path):
    path = tmp_path / "rc.cir"
    path.write_text("RC\nV1 in 0 SIN(1 1 1k)\nR1 in out 1k\nR2 out 0 1k\nC1 out 0 1u\n")
    cold = phsym.simulate(path, 48000, duration=0.001, x0="dc")
    assert cold.x[0, 0] == pytest.approx(0.5e-6, rel=1e-10)      # DC point at V1(0) = 1 V
    warm = phsym.simulate(path, 48000, duration=0.001, x0="dc")
    assert warm.info["warm_start"] and warm.info["x0"] == cold.info["x0"]
    _same(cold, warm)
    plain = phsym.simulate(path, 48000, duration=0.001)            # another snapshot: from zero
    assert plain.x[0, 0] == 0.0


def test_what_takes_the_symbolic_path(cache, tmp_path):
    path = _copy(tmp_path, "diode_clipper.cir")
    phsym.simulate(path, 48000, duration=0.001)
    assert phsym.simulate(path, 48000, duration=0.001).info["warm_start"]
    # parameter overrides, x0="dc" with given inputs, another rate, method or option, a Model
    assert not phsym.simulate(path, 48000, duration=0.001, params={"Rs": 1000.0}).info.get("warm_start")
    assert not phsym.simulate(path, 48000, duration=0.001, x0="dc", u={"Vin": 0.5}).info.get("warm_start")
    assert not phsym.simulate(path, 44100, duration=0.001).info.get("warm_start")
    assert not phsym.simulate(path, 48000, duration=0.001, method="midpoint").info.get("warm_start")
    assert not phsym.simulate(path, 48000, duration=0.001, tol=1e-10).info.get("warm_start")
    assert not phsym.simulate(phsym.load(path), 48000, duration=0.001).info.get("warm_start")
    assert not phsym.simulate(path, 48000, duration=0.001, warm_start=False).info.get("warm_start")
    # an edited netlist is a new model: new snapshot, new numbers
    base = phsym.simulate(path, 48000, duration=0.001)
    path.write_text(path.read_text().replace("Rs=2.2k", "Rs=1k"))
    edited = phsym.simulate(path, 48000, duration=0.001)
    assert not edited.info.get("warm_start")
    assert not np.array_equal(edited.y, base.y)


def test_warm_errors_match_the_symbolic_path(cache, tmp_path):
    path = _copy(tmp_path, "diode_clipper.cir")
    phsym.simulate(path, 48000, duration=0.001)
    with pytest.raises(phsym.SimulationError, match="non-finite"):
        phsym.simulate(path, 48000, u=np.array([0.0, np.nan, 1.0]))
    with pytest.raises(phsym.SimulationError, match="unknown input"):
        phsym.simulate(path, 48000, u={"V9": 1.0}, duration=0.001)
    with pytest.raises(phsym.SimulationError, match="x0 has 2 entries"):
        phsym.simulate(path, 48000, duration=0.001, x0=[0.0, 1.0])
    with pytest.raises(phsym.SimulationError, match="at least one step"):
        phsym.simulate(path, 48000, duration=1e-9)


def test_corrupt_or_orphaned_snapshot_falls_back(cache, tmp_path):
    path = _copy(tmp_path, "rlc.cir")
    cold = phsym.simulate(path, 48000, duration=0.001)
    key = snapshot_key(path.read_bytes(), 48000, "auto", {})
    f = snapshot_file(key)
    assert f.exists()
    f.write_bytes(b"not a zip file")
    with pytest.warns(phsym.CacheWarning, match="not a zip archive"):
        again = phsym.simulate(path, 48000, duration=0.001)
    assert not again.info.get("warm_start")          # rebuilt symbolically ...
    _same(cold, again)
    assert phsym.simulate(path, 48000, duration=0.001).info["warm_start"]    # ... and rewritten


def test_sparse_linear_models_start_warm_too(cache, tmp_path):
    path = tmp_path / "chain.cir"
    path.write_text(chain_netlist(20))          # 40 states: sparse LU path
    first = phsym.simulate(path, 1000, duration=0.01, u={"F1": 1.0, "F2": 0.5})
    assert first.info["engine"] == "linear-sparse"
    second = phsym.simulate(path, 1000, duration=0.01, u={"F1": 1.0, "F2": 0.5})
    assert second.info["warm_start"] and second.info["engine"] == "linear-sparse"
    _same(first, second)


def test_cache_info_and_clear_cover_snapshots(cache, tmp_path):
    path = _copy(tmp_path, "rlc.cir")
    phsym.simulate(path, 48000, duration=0.001)
    info = C.cache_info()
    assert info["snapshots"] >= 1
    assert C.clear_cache() >= 1
    assert C.cache_info()["snapshots"] == 0
    assert not phsym.simulate(path, 48000, duration=0.001).info.get("warm_start")


def test_aot_checked_rejects_wrong_arrays():
    with pytest.raises(phsym.SimulationInputError, match="float64"):
        aot.checked(lambda *a: 0, aot.RUN_TYPES[:2], np.zeros(1, np.float32), np.zeros(2))
    with pytest.raises(phsym.SimulationInputError, match="C-contiguous"):
        aot.checked(lambda *a: 0, aot.RUN_TYPES[:2], np.zeros(4)[::2], np.zeros(2))
    with pytest.raises(phsym.SimulationInputError, match="2 dimension"):
        aot.checked(lambda *a: 0, aot.RUN_TYPES[:3], np.zeros(1), np.zeros(1), np.zeros(3))
    ro = np.zeros(1)
    ro.flags.writeable = False
    with pytest.raises(phsym.SimulationInputError, match="writeable"):
        aot.checked(lambda *a: 0, aot.RUN_TYPES[:2], ro, np.zeros(1))
    assert aot.checked(lambda *a: 7, aot.RUN_TYPES[:2], np.zeros(1), np.zeros(2)) == 7


_CHILD = r"""
import json, sys
import numpy as np
import phsym
r = phsym.simulate({net!r}, 48000, duration=0.005)
np.savez({out!r}, x=r.x, y=r.y, H=r.H, P_diss=r.P_diss, iterations=r.iterations, probe=r[{probe!r}])
print(json.dumps({{"warm": bool(r.info.get("warm_start")), "compiled": r.info.get("compiled"),
                  "key": r.info["key"], "balance": r.max_balance_error,
                  "imported": [m for m in ("sympy", "scipy", "networkx", "numba", "lark") if m in sys.modules]}}))
"""


def _child(env, net, out, probe, stderr=None):
    code = _CHILD.format(net=str(net), out=str(out), probe=probe)
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    if stderr is not None:
        stderr.append(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.compiled      # children load numba's cache, then the extension
@pytest.mark.parametrize("name,probe", [("diode_clipper.cir", "v(out)"), ("rlc.cir", "v(b)")])
def test_fresh_process_warm_start_and_ahead_of_time_loop(tmp_path, name, probe):
    """Cold, warm (numba cache, no sympy), then warm with the extension (no numba):
    the generated Newton loop of the clipper, the unrolled linear loop of the RLC."""
    env = dict(os.environ, PHSYM_CACHE_DIR=str(tmp_path / "phsym"), PHSYM_AOT="0",
               PHSYM_ENGINE="generated" if name == "diode_clipper.cir" else "")
    env.setdefault("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    net = _copy(tmp_path, name)
    cold = _child(env, net, tmp_path / "cold.npz", probe)
    assert cold["key"]
    assert not cold["warm"] and "sympy" in cold["imported"]
    warm = _child(env, net, tmp_path / "warm.npz", probe)
    assert warm["warm"] and warm["compiled"] == "numba cache"
    assert not {"sympy", "networkx", "lark"} & set(warm["imported"])
    # the background build's entry point, run in the foreground here
    build = subprocess.run([sys.executable, "-m", "phsym.codegen.aot", cold["key"]], env=env,
                           capture_output=True, text=True, timeout=600)
    if build.returncode != 0:
        pytest.fail("ahead-of-time build failed: "
                    + (tmp_path / "phsym" / f"phsym_aot_{cold['key']}.failed").read_text())
    fast = _child(env, net, tmp_path / "aot.npz", probe)
    assert fast["warm"] and fast["compiled"] == "ahead of time"
    assert not {"sympy", "networkx", "lark", "numba", "scipy"} & set(fast["imported"])
    assert fast["balance"] < 1e-10
    # a truncated extension (crash, full disk) is removed with one warning, never imported
    ext = tmp_path / "phsym" / f"{aot.AOT_PREFIX}{cold['key']}{aot._suffix()}"
    ext.write_bytes(ext.read_bytes()[:4096])
    err = []
    hurt = _child(env, net, tmp_path / "hurt.npz", probe, err)
    assert hurt["warm"] and hurt["compiled"] == "numba cache"
    assert err[0].count("CacheWarning") == 1 and "damaged cache entry" in err[0]
    assert not ext.exists()
    ref = np.load(tmp_path / "cold.npz")
    for other in ("warm.npz", "aot.npz", "hurt.npz"):
        got = np.load(tmp_path / other)
        for k in ref.files:
            assert np.array_equal(ref[k], got[k]), (other, k)


def test_corrupt_extension_is_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    key = "0" * 24
    _, ext, _, _ = aot._paths(key)
    ext.write_bytes(b"not an ELF file")
    assert aot.status(key) == "ready"
    with pytest.warns(phsym.CacheWarning, match="digest mismatch"):
        assert aot.load(key) is None
    assert aot.status(key) == "absent"       # a later run builds it again
    # a matching digest lets the import itself fail: removed as well
    ext.write_bytes(b"not an ELF file")
    aot._sidecar(ext).write_text(aot.digest(ext))
    with pytest.warns(phsym.CacheWarning, match="ahead-of-time extension"):
        assert aot.load(key) is None
    assert aot.status(key) == "absent" and not aot._sidecar(ext).exists()


def test_compile_time_is_reported_apart_from_stepping(cache, tmp_path):
    for name in ("diode_clipper.cir", "rlc.cir"):
        res = phsym.simulate(_copy(tmp_path, name), 48000, duration=0.001, warm_start=False)
        assert res.info["compile_time"] >= 0.0 and res.info["wall_time"] > 0.0
        res.info["compile_time"] = 1.5
        assert "compiling or loading the loop took 1.5 s" in res.summary()


@pytest.mark.parametrize("name", ["diode_clipper.cir", "triode_volume.cir"])
def test_numeric_engine_starts_warm(tmp_path, monkeypatch, name):
    """A snapshot of a numeric plan (its step system as numbers, the kernels by key) runs the same
    arrays in a process that plans nothing: from the ICs, and from a stored DC point with a control
    held (the session's cache: its kernels are compiled; a unique comment makes the snapshot new)."""
    # the session's cache, where this process's kernels are (the module's `cache` fixture moves it)
    monkeypatch.delenv("PHSYM_CACHE_DIR", raising=False)
    if _SESSION_CACHE is not None:
        monkeypatch.setenv("PHSYM_CACHE_DIR", _SESSION_CACHE)
    path = tmp_path / name
    path.write_text((NET / name).read_text() + f"* {os.getpid()} {tmp_path.name}\n")
    kw = dict(engine="numeric", duration=0.002) if name == "diode_clipper.cir" else dict(engine="numeric",
                                                                                           duration=0.001)
    cold = phsym.simulate(path, 48000, **kw)
    assert not cold.info.get("warm_start") and cold.info["engine"] == "numeric"
    code = ("import sys, numpy as np, phsym\n"
            f"r = phsym.simulate({str(path)!r}, 48000, **{kw!r})\n"
            "assert r.info['warm_start'] and r.info['engine'] == 'numeric'\n"
            "assert 'phsym.structure.dirac' not in sys.modules and 'lark' not in sys.modules\n"
            f"np.save({str(tmp_path / 'x.npy')!r}, r.x)\n")
    from phsym.common.paths import cache_dir
    subprocess.run([sys.executable, "-c", code], check=True,
                   env={**os.environ, "PHSYM_AOT": "0", "PHSYM_CACHE_DIR": str(cache_dir())})
    assert np.array_equal(np.load(tmp_path / "x.npy"), cold.x)
    warm = phsym.simulate(path, 48000, **kw)
    assert warm.info["warm_start"]
    _same(cold, warm)
