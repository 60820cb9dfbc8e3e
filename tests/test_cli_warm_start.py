"""``phsym simulate`` of a netlist run before: the whole process imports no sympy, networkx or lark, nor
the card readers for a deck without control cards."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

NET = Path(__file__).resolve().parent.parent / "netlists"

# the CLI's main in a child process, then the heavy modules it imported
_CHILD = """
import json, sys
from phsym.cli import main
code = main({argv!r})
print(json.dumps({{"code": code, "imported": [m for m in ("sympy", "scipy", "networkx", "numba", "lark",
                                                      "scipy.linalg", "scipy.sparse.linalg", "subprocess", "phsym.netlist.cards")
                                            if m in sys.modules]}}))
"""


def _cli(env, argv):
    res = subprocess.run([sys.executable, "-c", _CHILD.format(argv=argv)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_warm_cli_run_reads_no_netlist_and_builds_no_model(tmp_path):
    env = dict(os.environ, PHSYM_CACHE_DIR=str(tmp_path / "phsym"), PHSYM_AOT="0")
    env.setdefault("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    net = tmp_path / "rlc.cir"
    shutil.copy(NET / "rlc.cir", net)
    argv = ["simulate", str(net), "--fs", "48k", "--duration", "1m", "--out", str(tmp_path / "x.csv"), "--quiet"]
    cold = _cli(env, argv)
    assert cold["code"] == 0 and "sympy" in cold["imported"]
    warm = _cli(env, argv)
    assert warm["code"] == 0 and not {"sympy", "networkx", "lark", "phsym.netlist.cards"} & set(warm["imported"]), warm


def test_show_builds_the_model_without_scipy_linalg(tmp_path):
    # the structure layer, the model and its checks import scipy.linalg (0.2-0.3 s) only where a
    # dense LU or eigenvalues are computed, and scipy.sparse.linalg (which imports it) only for a sparse LU
    env = dict(os.environ, PHSYM_CACHE_DIR=str(tmp_path / "phsym"))
    shown = _cli(env, ["show", str(NET / "diode_clipper.cir")])
    assert shown["code"] == 0 and "sympy" in shown["imported"], shown
    assert not {"scipy.linalg", "scipy.sparse.linalg"} & set(shown["imported"]), shown


def test_command_leaves_its_heap_out_of_the_shutdown_collections():
    # registered before main's handler, so it runs after it (atexit is last in, first out)
    child = ("import atexit, gc\n"
             "atexit.register(lambda: print('frozen', gc.get_freeze_count()))\n"
             "from phsym.cli import main\n"
             "main([])\n")
    res = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    frozen = int(res.stdout.strip().splitlines()[-1].split()[1])
    assert frozen > 10_000, res.stdout
