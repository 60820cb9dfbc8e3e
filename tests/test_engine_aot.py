"""The numeric engine compiled ahead of time (phsym.simulation.engines.numeric.engine): the JIT engine's
results to the bit, argument checks, and a cold run that imports neither numba nor scipy."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.simulation.engines.numeric import engine, freshness, warmup

CLIPPER = Path(__file__).resolve().parent.parent / "netlists" / "diode_clipper.cir"

CHILD = """
import json, sys
from pathlib import Path
from phsym.simulation.engines.numeric import freshness
freshness.package_cache = lambda: Path(sys.argv[1])     # stands for the package's directory
from phsym.cli import main
rc = main(["simulate", sys.argv[2], "--fs", "48k", "--duration", "10m", "--out", sys.argv[3]])
from phsym.simulation.engines.numeric import engine
print(json.dumps({"rc": rc, "aot": engine.aot_ready(),
                  "modules": sorted(m for m in ("numba", "scipy", "scipy.sparse", "llvmlite") if m in sys.modules)}))
"""


def _jit_only(monkeypatch):
    monkeypatch.setattr(engine, "_LOADED", {"ext": None, "record": None})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The engine compiled ahead of time into a directory of its own (the JIT signatures from a warm-up
    run on the JIT engine, compiled already by the conftest warm-up in CI)."""
    mp = pytest.MonkeyPatch()
    try:
        _jit_only(mp)
        warmup.warm()
        d = tmp_path_factory.mktemp("package")
        engine.build(d)
    finally:
        mp.undo()
    engine._LOADED.clear()
    return d


def _use(monkeypatch, d):
    monkeypatch.setattr(freshness, "package_cache", lambda: d)
    monkeypatch.setattr(engine, "_LOADED", {})


def _run(text, engine_name="numeric", **kw):
    return phsym.Simulator(phsym.parse(text), 48000.0, engine=engine_name).run(duration=48 / 48000.0, **kw)


def test_aot_engine_steps_as_the_jit_engine_bit_for_bit(built, monkeypatch):
    _jit_only(monkeypatch)
    ref = _run(warmup.DECK, x0="dc")            # a diode with charge, a BJT, the DC operating point
    _use(monkeypatch, built)
    assert engine.aot_ready() and engine.ready()
    assert engine.entry("run").__doc__.startswith("The engine's run compiled ahead of time")

    def no_jit(name):
        raise AssertionError(f"{name}: the arguments did not fit the compiled function")
    monkeypatch.setattr(engine, "jit", no_jit)
    res = _run(warmup.DECK, x0="dc")
    assert ref.info["compiled"] == "numba cache" and res.info["compiled"] == "ahead of time"
    np.testing.assert_array_equal(res.x, ref.x)
    np.testing.assert_array_equal(res.H, ref.H)
    for k in ("v(a)", "v(c)"):
        np.testing.assert_array_equal(res[k], ref[k])


def test_aot_arguments_are_checked(built, monkeypatch):
    _use(monkeypatch, built)
    spec = engine._load()[1]["types"]["w_size"]
    assert spec == [["a", "int64", 2]]
    G = np.zeros((2, 11), dtype=np.int64)
    assert engine._fits(spec[0], G)
    assert not engine._fits(spec[0], G.astype(np.int32)) and not engine._fits(spec[0], G[:, ::2])
    ro = G.copy()
    ro.flags.writeable = False
    assert not engine._fits(spec[0], ro)
    assert not engine._fits(["t", ["f8", "b1"]], (1.0,)) and engine._fits(["t", ["f8", "b1"]], (1.0, True))
    calls = []
    monkeypatch.setattr(engine, "jit", lambda name: (lambda *a: calls.append(name) or 7))
    engine._LOADED.pop("aot:w_size", None)
    assert engine.entry("w_size")(G.astype(np.int32)) == 7 and calls == ["w_size"]     # the JIT takes it
    assert engine.entry("w_size")(G) == 1 and calls == ["w_size"]


def test_stale_or_damaged_extension_is_not_loaded(built, monkeypatch, tmp_path):
    import shutil
    d = tmp_path / "package"
    shutil.copytree(built, d)
    so, rec = engine._files(d)
    record = json.loads(rec.read_text())
    rec.write_text(json.dumps({**record, "sources": "edited"}))
    _use(monkeypatch, d)
    assert not engine.aot_ready()
    rec.write_text(json.dumps(record))
    so.write_bytes(so.read_bytes()[:1000])
    monkeypatch.setattr(engine, "_LOADED", {})
    assert not engine.aot_ready()


def test_cold_cli_run_imports_neither_numba_nor_scipy(built, monkeypatch, tmp_path):
    env = dict(os.environ, PHSYM_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               PHSYM_AOT="0")
    env.pop("PHSYM_ENGINE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(built), str(CLIPPER), str(tmp_path / "x.csv")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"rc": 0, "aot": True, "modules": []}
    # the same samples as the JIT engine's run
    _jit_only(monkeypatch)
    ref = phsym.simulate(str(CLIPPER), 48000.0, duration=10e-3, engine="numeric", warm_start=False)
    lines = [ln.split(",") for ln in (tmp_path / "x.csv").read_text().splitlines() if not ln.startswith("#")]
    j = lines[0].index("v(out)")
    v = np.array([float(r[j]) for r in lines[1:] if r[j]])
    np.testing.assert_array_equal(v, ref["v(out)"])
