"""A damaged cache never locks a user out.

Every kind of cache entry (generated module, its bytecode, numba's index and
data files, the warm-start snapshot, the grammar's parse tables, the
ahead-of-time extension in tests/test_sim_warm.py) is truncated or replaced
by garbage (the module and numba's index also by a directory), as a crash
or a full disk would leave it; the next run in a fresh process must warn
once, give the arrays of a clean run and leave a cache that the run after
it uses without a warning.  Concurrent first builds
of one netlist must all succeed with identical results.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.compiled      # the children compile (their environment says so: _env)

ROOT = Path(__file__).resolve().parents[1]
NET = ROOT / "netlists" / "diode_clipper.cir"
FIELDS = ("x", "y", "H", "P_diss", "iterations")

_CHILD = r"""
import json, sys, warnings
import numpy as np
import phsym
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    r = phsym.simulate({net!r}, 48000, duration=0.005, warm_start={warm!r})
np.savez({out!r}, **{{f: getattr(r, f) for f in {fields!r}}})
print(json.dumps({{"warm": bool(r.info.get("warm_start")),
                  "cache": [str(w.message) for w in seen if issubclass(w.category, phsym.CacheWarning)],
                  "other": [str(w.message) for w in seen if not issubclass(w.category, phsym.CacheWarning)]}}))
"""


def _env(work: Path, bytecode: bool = True):
    env = dict(os.environ, PHSYM_CACHE_DIR=str(work / "phsym"), NUMBA_CACHE_DIR=str(work / "numba"),
               PHSYM_AOT="0", PHSYM_ENGINE="generated",      # the entries of the generated loop's runs
               PHSYM_JIT="1")                                # compiled: numba's files are entries too
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(env, net, out, warm=True):
    code = _CHILD.format(net=str(net), out=str(out), warm=warm, fields=FIELDS)
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _same(a, b):
    ra, rb = np.load(a), np.load(b)
    for f in FIELDS:
        assert np.array_equal(ra[f], rb[f]), f


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A cache filled by one cold run (generated module, bytecode, numba files,
    snapshot, parse tables), kept as a backup; numba keys its directory by the
    module's path, so every test restores it to the same place."""
    root = tmp_path_factory.mktemp("damage")
    work, backup = root / "work", root / "backup"
    net = root / "clipper.cir"
    shutil.copy(NET, net)
    info = _run(_env(work), net, root / "ref.npz")
    assert not info["warm"] and not info["cache"]
    shutil.copytree(work, backup)
    return root, work, backup, net


def _damage(path: Path, how: str):
    if how == "directory":          # a directory in the file's place (a botched copy or restore)
        path.unlink()
        path.mkdir()
        (path / "stray").write_text("x")
        return
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2] if how == "truncate" else os.urandom(len(raw)))


# entry -> (glob under the work directory, warm start or a symbolic run that parses the netlist)
KINDS = {
    "generated module": ("phsym/phsym_gen_*.py", True),
    "bytecode": ("phsym/__pycache__/phsym_gen_*.pyc", True),
    "numba index": ("numba/**/phsym_gen_*.nbi", True),
    "numba data": ("numba/**/phsym_gen_*.nbc", True),
    "snapshot": ("phsym/phsym_run_*.npz", True),
    "parse tables": ("phsym/phsym_lark_*.cache", False),
}

# Each chain starts from the pristine cache and damages one entry a run, in the cache the run before
# rebuilt: a run warns about its own damage alone, so the entries the run before rebuilt (every entry
# of a warm run is read by the next one, the parse tables by the next symbolic run) were good.  A
# run in a fresh process per damage, as a crash or a full disk leaves one between runs.
WARM_CHAIN = [(entry, how) for how in ("truncate", "garbage") for entry in KINDS if KINDS[entry][1]] + \
    [("generated module", "directory"), ("numba index", "directory")]
PARSE_CHAIN = [("parse tables", "truncate"), ("parse tables", "garbage")]


@pytest.mark.parametrize("chain", [WARM_CHAIN, PARSE_CHAIN], ids=["warm-start-entries", "parse-tables"])
def test_damaged_entries_are_removed_rebuilt_and_reported_once(pristine, chain):
    root, work, backup, net = pristine
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(backup, work)
    env = _env(work)
    for entry, how in chain:
        pattern, warm = KINDS[entry]
        link = f"{entry}, {how}"
        files = sorted(work.glob(pattern))
        assert files, f"{link}: no {entry} in the cache: {sorted(p.name for p in work.rglob('*'))}"
        for f in files:
            _damage(f, how)
        got = _run(env, net, root / "got.npz", warm)
        if (entry, how) == ("bytecode", "garbage"):
            # Python checks the header's magic number itself and silently compiles
            # the (checked) source again: nothing of phsym's sees the damage
            assert not got["cache"], (link, got["cache"])
        else:
            assert len(got["cache"]) == 1, (link, got["cache"])
            assert "damaged cache entry" in got["cache"][0] and "rebuilt" in got["cache"][0], (link, got["cache"])
        assert not got["other"], (link, got["other"])
        _same(root / "ref.npz", root / "got.npz")
        if how == "directory":          # the directory is gone, the entry rebuilt
            assert all(f.is_file() for f in work.glob(pattern)), link
    warm = KINDS[chain[-1][0]][1]
    again = _run(env, net, root / "again.npz", warm)        # the last rebuilt entry is good
    assert not again["cache"], again["cache"]
    assert again["warm"] == warm
    _same(root / "ref.npz", root / "again.npz")


def test_concurrent_first_builds_of_one_netlist(tmp_path):
    net = tmp_path / "clipper.cir"
    shutil.copy(NET, net)
    env = _env(tmp_path / "cache", bytecode=False)
    procs = []
    for i in range(3):
        code = _CHILD.format(net=str(net), out=str(tmp_path / f"r{i}.npz"), warm=True, fields=FIELDS)
        procs.append(subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        assert not json.loads(out.strip().splitlines()[-1])["cache"]
    for i in (1, 2):
        _same(tmp_path / "r0.npz", tmp_path / f"r{i}.npz")
    again = _run(env, net, tmp_path / "again.npz")
    assert again["warm"] and not again["cache"]
    _same(tmp_path / "r0.npz", tmp_path / "again.npz")


def test_cache_key_follows_the_kernels_generated_code_calls(monkeypatch):
    """numba's cache keeps called kernels compiled into a generated module: a changed kernel source must
    give new keys (every kernel file the generated code imports is hashed, and exists)."""
    from pathlib import Path
    from phsym.codegen import cache
    root = Path(cache.__file__).resolve().parents[1]
    assert all((root / f).is_file() for f in cache._KERNEL_FILES)
    key = cache.cache_key("body", "midpoint")
    monkeypatch.setattr(cache, "_KERNELS", ["a changed kernel"])
    assert cache.cache_key("body", "midpoint") != key
