"""CPU seconds of the numeric engine's compile, per compiled function, in a fresh numba cache.

Run from the repository root::

    PYTHONPATH=. python benchmarks/engine_compile.py [--top 25] [--keep DIR]

A child process with empty ``NUMBA_CACHE_DIR`` and ``PHSYM_CACHE_DIR`` (and the
package's own compiled engine hidden: :func:`~phsym.simulation.engines.numeric.freshness.seed_from_package`
is not called) runs the warm-up deck
(:func:`phsym.simulation.engines.numeric.warmup.warm`) with every numba
compile timed: ``Dispatcher.compile`` is wrapped, and for each function the
script reports its signatures compiled, its CPU seconds *inclusive* of the
compiles it triggered (callees compiled for it) and *exclusive* of them.
The whole warm-up's CPU time and the load averages before and after are
printed too (the machine may be shared: CPU, not wall, is the number to
compare).  ``--keep DIR`` keeps the numba cache in ``DIR``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
from collections import defaultdict
from numba.core import dispatcher
import phsym.simulation.engines.numeric.freshness as fr
fr.seed_from_package = lambda *a, **k: False        # the package's compiled engine is not this measure's
incl, excl, sigs = defaultdict(float), defaultdict(float), defaultdict(list)
stack = []
orig = dispatcher.Dispatcher.compile

def compile(self, sig):
    name = self.py_func.__module__ + "." + self.py_func.__qualname__
    before = len(self.overloads)
    t0 = time.process_time()
    stack.append(0.0)
    try:
        return orig(self, sig)
    finally:
        dt = time.process_time() - t0
        nested = stack.pop()
        if len(self.overloads) > before:       # compiled here, not found compiled or loaded
            incl[name] += dt
            excl[name] += dt - nested
            sigs[name].append(str(sig))
        if stack:
            stack[-1] += dt

dispatcher.Dispatcher.compile = compile
t0 = time.process_time()
from phsym.simulation.engines.numeric.warmup import warm
t_import = time.process_time() - t0
t0 = time.process_time()
ok = warm()
total = time.process_time() - t0
json.dump({"ok": ok, "total": total, "imports": t_import, "incl": incl, "excl": excl, "sigs": sigs}, sys.stdout)
"""


def measure(keep: str = None) -> dict:
    """One child's measure (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="engine-compile-") as tmp:
        numba_dir = keep or str(Path(tmp) / "numba")
        env = dict(os.environ, NUMBA_CACHE_DIR=numba_dir, PHSYM_CACHE_DIR=str(Path(tmp) / "phsym"), PHSYM_AOT="0",
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=25, help="functions listed, by exclusive time (default 25)")
    ap.add_argument("--keep", help="numba cache directory to fill (default: a temporary one)")
    args = ap.parse_args(argv)
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    r = measure(args.keep)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"warm-up: {r['total']:.1f} CPU s (imports {r['imports']:.1f} CPU s before it), engine ready: {r['ok']}")
    print(f"compiled functions: {len(r['incl'])}, signatures: {sum(len(s) for s in r['sigs'].values())}, "
          f"exclusive CPU s summed: {sum(r['excl'].values()):.1f}")
    print("| function | signatures | inclusive [CPU s] | exclusive [CPU s] |")
    print("| --- | --- | --- | --- |")
    for name in sorted(r["excl"], key=r["excl"].get, reverse=True)[:args.top]:
        print(f"| {name} | {len(r['sigs'][name])} | {r['incl'][name]:.2f} | {r['excl'][name]:.2f} |")


if __name__ == "__main__":
    main()
