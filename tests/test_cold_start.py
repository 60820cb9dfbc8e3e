"""Cold start (issue 38): the numeric engine compiled into the package's directory serves a process
whose own numba cache is empty, with the generated loop's samples."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from types import SimpleNamespace

import numpy as np

import phsym
from phsym.simulation.engines.numeric import freshness
from phsym.simulation.engines.numeric.stepping import run as compiled_run
from tests.child_support import COMPILE_RECORDER

CLIPPER = Path(__file__).resolve().parent.parent / "netlists" / "diode_clipper.cir"

CHILD = """
import json, sys
from pathlib import Path
from phsym.simulation.engines.numeric import freshness
from phsym.codegen.laws import library
freshness.package_cache = lambda: Path(sys.argv[1])     # stand for the installed package's directories
library.LIBRARY = Path(sys.argv[4])
""" + COMPILE_RECORDER + """import numpy as np
import phsym
res = phsym.simulate(sys.argv[2], 48000.0, duration=10e-3)     # engine="auto", as phsym simulate
np.save(sys.argv[3], res["v(out)"])
from phsym.codegen.cache import BUILD_LOG
from phsym.codegen.laws.build import _SPECS
# numba's compile events leave out cfuncs: a law kernel loaded from numba's cache counts a cache hit;
# a kernel compiled from C (a C compiler on the machine) says "C"
import ctypes
print(json.dumps({"compiled": compiled, "engine": res.info["engine"], "written": list(BUILD_LOG),
                  "kernel_hits": sorted("C" if isinstance(k.module, ctypes.CDLL) else k.module.kernel.cache_hits
                                        for k in _SPECS.values())}))
"""
#: Law kernels are compiled from C where there is a compiler (phsym.codegen.laws.native).
HAVE_CC = shutil.which("cc") is not None or shutil.which("gcc") is not None


def _fake_entries(d: Path, digest: str) -> None:
    d.mkdir(parents=True)
    for name in ("stepping.run-61.py311.nbi", "stepping.run-61.py311.1.nbc", "other.f-1.py311.nbi"):
        (d / name).write_bytes(b"x")
    (d / freshness.READY).write_text(digest)


def test_seed_copies_a_ready_engine_only(tmp_path):
    src, dst = tmp_path / "package", tmp_path / "user"
    _fake_entries(src, freshness._digest())
    assert freshness.seed_from_package(dst, src)
    assert sorted(p.name for p in dst.iterdir()) == sorted(
        [freshness.READY, freshness.STAMP, "stepping.run-61.py311.nbi", "stepping.run-61.py311.1.nbc"])
    assert (dst / freshness.READY).read_text() == freshness._digest()
    assert not freshness.seed_from_package(src, src)            # numba's cache is the package's own
    stale, other = tmp_path / "stale", tmp_path / "other"
    _fake_entries(stale, "compiled from other sources")
    assert not freshness.seed_from_package(other, stale) and not other.exists()


def _child(tmp_path, run: str, package: Path, lib: Path, **env_extra) -> dict:
    env = dict(os.environ, PHSYM_CACHE_DIR=str(tmp_path / run / "phsym"), NUMBA_CACHE_DIR=str(tmp_path / run / "numba"),
               PHSYM_AOT="0", **env_extra)
    env.pop("PHSYM_ENGINE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(package), str(CLIPPER), str(tmp_path / f"{run}.npy"),
                          str(lib)], env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_empty_user_caches_run_the_package_engine_with_the_generated_loops_samples(monkeypatch, tmp_path):
    from phsym.simulation.engines.numeric import engine, warmup
    # the JIT engine, compiled in this machine's numba cache (conftest warms it, unless an engine compiled
    # ahead of time in the package served the warm-up: then once here)
    monkeypatch.setattr(engine, "_LOADED", {"ext": None, "record": None})
    if not freshness.engine_ready(compiled_run):
        warmup.warm()
    src = freshness._cache_path(compiled_run)
    assert freshness.engine_ready(compiled_run)
    package, lib = tmp_path / "package", tmp_path / "library"
    shutil.copytree(src, package)
    # the package build: its law kernels compiled, and copied into the library
    first = _child(tmp_path, "build", package, lib, PHSYM_LAW_LIBRARY="write")
    assert first["engine"] == "numeric"         # auto: the engine is there, no foreground compile of a loop
    engine = {"phsym.simulation.engines.numeric." + m for m in ("call", "sparse", "newton", "stepping")}
    assert not engine & set(first["compiled"]), first["compiled"]
    assert first["written"] and first["kernel_hits"] == ["C" if HAVE_CC else 0]
    assert list(lib.glob("phsym_law_*.json"))
    # a user with empty caches: the engine and the diode's law kernel come from the package, nothing compiles
    second = _child(tmp_path, "user", package, lib)
    assert second == {"compiled": [], "engine": "numeric", "written": [], "kernel_hits": ["C" if HAVE_CC else 1]}
    ref = phsym.simulate(str(CLIPPER), 48000.0, duration=10e-3, engine="generated")
    v = np.load(tmp_path / "user.npy")
    scale = np.max(np.abs(ref["v(out)"]))
    assert np.max(np.abs(v - ref["v(out)"])) <= 1e-9 * scale


def test_first_runs_warmup_compiles_into_a_writable_package(monkeypatch, tmp_path):
    from phsym.simulation.engines import choice
    from phsym.simulation.engines.numeric import freshness
    started = []
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PHSYM_AOT", "background")
    monkeypatch.setattr(choice, "subprocess", SimpleNamespace(   # (not subprocess.Popen itself: C kernels compile)
        Popen=lambda args, **kw: started.append(args), DEVNULL=subprocess.DEVNULL))
    monkeypatch.setattr(freshness, "package_writable", lambda: True)
    assert choice.start_numeric_warmup() and started[-1][-2:] == ["phsym.simulation.engines.numeric.warmup",
                                                                  "--package"]
    (tmp_path / "phsym_ready_numeric_warmup").unlink()
    monkeypatch.setattr(freshness, "package_writable", lambda: False)       # a read-only installation
    assert choice.start_numeric_warmup() and started[-1][-1] == "phsym.simulation.engines.numeric.warmup"


def _first_numeric_run(monkeypatch, tmp_path, build):
    """A first run of the clipper on the numeric engine with the package's engine and ``build`` standing in
    for the ahead-of-time build of the generated loop; returns the result, the started background
    commands, the upgrade request, its snapshot key and loop fingerprint."""
    from phsym.simulation import run as run_mod, warm
    from phsym.simulation.engines import choice
    started = []
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PHSYM_AOT", "background")
    monkeypatch.delenv("PHSYM_ENGINE", raising=False)
    monkeypatch.setattr(choice, "subprocess", SimpleNamespace(   # (not subprocess.Popen itself: C kernels compile)
        Popen=lambda args, **kw: started.append(args), DEVNULL=subprocess.DEVNULL))
    monkeypatch.setattr(choice, "numeric_ready", lambda: True)          # the engine shipped in the package
    monkeypatch.setattr(run_mod.aot, "start_background", lambda key: False)
    monkeypatch.setattr(run_mod.aot, "build", build)
    first = phsym.simulate(str(CLIPPER), 48000.0, duration=10e-3)
    assert first.info["engine"] == "numeric"
    (request,) = tmp_path.glob(warm.UPGRADE_PREFIX + "*.json")
    key, fp = request.stem[len(warm.UPGRADE_PREFIX):], json.loads(request.read_text())["fp"]
    return first, started, request, key, fp


def test_a_first_numeric_snapshot_moves_onto_the_generated_loop_once_built(monkeypatch, tmp_path):
    """A first run picks the numeric engine; the background build of the generated loop and of its
    ahead-of-time extension saves the snapshot again on it, so later runs load the generated loop
    (issue 38's warm time)."""
    from phsym.simulation import warm
    from phsym.simulation.engines import build_generated, choice
    extensions = []
    first, started, request, key, fp = _first_numeric_run(monkeypatch, tmp_path, extensions.append)
    build = [a for a in started if "phsym.simulation.engines.build_generated" in a]
    assert build and not warm.outdated(key)            # the loop is not built yet: the snapshot serves
    again = phsym.simulate(str(CLIPPER), 48000.0, duration=10e-3)
    assert again.info["engine"] == "numeric" and again.info.get("warm_start")
    assert build_generated.main(build[-1][3:]) == 0    # the background build, in this process
    assert not request.exists() and len(extensions) == 1      # the extension was asked for before the move
    moved = phsym.simulate(str(CLIPPER), 48000.0, duration=10e-3)
    assert moved.info["engine"] == "generated" and moved.info.get("warm_start")
    scale = np.max(np.abs(first["v(out)"]))
    assert np.max(np.abs(moved["v(out)"] - first["v(out)"])) <= 1e-9 * scale
    # a request left over after its loop was built (a raced or failed move) drops the snapshot once; the
    # loop's ready mark is written here (this process may hold the module from an earlier test's cache)
    (tmp_path / f"{choice.READY_PREFIX}{fp}").write_text("0" * 24)
    (tmp_path / f"phsym_gen_{'0' * 24}.py").write_text("")
    assert warm.request_upgrade(key, fp, str(CLIPPER), 48000.0, "auto", {}, False)
    assert warm.outdated(key) and not warm.snapshot_file(key).exists() and not request.exists()
    last = phsym.simulate(str(CLIPPER), 48000.0, duration=10e-3)
    assert last.info["engine"] == "generated" and not last.info.get("warm_start")
    assert warm.snapshot_file(key).exists()


def test_a_snapshot_stays_on_the_numeric_engine_when_the_loop_has_no_extension(monkeypatch, tmp_path):
    """Without the generated loop's ahead-of-time extension a warm start would go through numba's cache
    (about 1 s more than the numeric engine's extension): the snapshot is not moved."""
    from phsym.errors import BuildError
    from phsym.simulation.engines import build_generated

    def failed(key):
        raise BuildError("no compiler here")
    first, started, request, key, fp = _first_numeric_run(monkeypatch, tmp_path, failed)
    build = [a for a in started if "phsym.simulation.engines.build_generated" in a]
    assert build_generated.main(build[-1][3:]) == 0
    assert not request.exists()
    again = phsym.simulate(str(CLIPPER), 48000.0, duration=10e-3)
    assert again.info["engine"] == "numeric" and again.info.get("warm_start")
    assert np.array_equal(again["v(out)"], first["v(out)"])


def test_parse_tables_come_from_the_package_when_the_user_cache_has_none(monkeypatch, tmp_path):
    import lark
    from phsym.netlist import grammar
    monkeypatch.setattr(grammar, "PACKAGE_TABLES", tmp_path / "package")
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path / "user"))
    written = grammar.save_package_tables()
    assert written.parent == tmp_path / "package" and written.is_file()

    def no_build(*args, **kwargs):
        raise AssertionError("the parse tables were built, not read from the package")

    grammar.statement_parser.cache_clear()
    monkeypatch.setattr(lark, "Lark", type("NoBuild", (), {"__new__": no_build, "load": lark.Lark.load}))
    try:
        parser = grammar.statement_parser()
        tree = parser.parse("R1 a b 1k\n")
        assert tree is not None
        assert (tmp_path / "user" / written.name).is_file()        # seeded into the user's cache
    finally:
        grammar.statement_parser.cache_clear()


def test_the_package_build_writes_the_bytecode_of_every_module():
    """``phsym cache build --package`` compiles phsym's modules, as a non-editable install does, so
    that no process compiles them again where ``PYTHONDONTWRITEBYTECODE`` keeps imports from it."""
    import importlib.util
    from pathlib import Path

    import phsym
    from phsym.simulation.engines.numeric.warmup import compile_bytecode
    source = Path(phsym.__file__).resolve().parent / "version.py"
    cached = Path(importlib.util.cache_from_source(str(source)))
    cached.unlink(missing_ok=True)
    assert compile_bytecode()
    assert cached.is_file() and cached.stat().st_size > 0
