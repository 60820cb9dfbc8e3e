"""Cold ``phsym simulate`` runs of two or more source trees, interleaved, each with new empty caches.

Run from anywhere::

    python benchmarks/cold_ab.py TREE [TREE ...] [--runs 9] [--netlist netlists/diode_clipper.cir]

Each run is a fresh process ``python -m phsym.cli simulate NETLIST --fs 48k --duration 10m --out
OUT.csv --quiet`` with ``PYTHONPATH=TREE``, ``PHSYM_AOT=0`` and new empty ``PHSYM_CACHE_DIR`` and
``NUMBA_CACHE_DIR`` (what a tree's package directory holds stays: run ``phsym cache build
--package`` and ``python -m compileall -q phsym`` in each tree first).  The trees take turns (A, B,
A, B, ...) so that a shared machine's load falls on all of them alike; ``python -c "import numpy"``
and ``python -c "import numpy, sympy"`` take their turns too.  Printed per tree: wall and CPU
(user + system of the child) min / median / max, peak memory, and the load average.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOORS = {"import numpy": "import numpy", "import numpy, sympy": "import numpy, sympy"}


def _once(tree: str, netlist: str) -> tuple:
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("PHSYM_ENGINE", "PHSYM_PLAIN")}
        env.update(PHSYM_AOT="0", PHSYM_CACHE_DIR=f"{tmp}/phsym", NUMBA_CACHE_DIR=f"{tmp}/numba")
        if tree in FLOORS:
            cmd = [sys.executable, "-c", FLOORS[tree]]
        else:
            env["PYTHONPATH"] = tree
            cmd = [sys.executable, "-m", "phsym.cli", "simulate", str(Path(tree) / netlist), "--fs", "48k",
                   "--duration", "10m", "--out", f"{tmp}/x.csv", "--quiet"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, cwd=tmp)     # cwd: no tree on sys.path
        _, status, usage = os.wait4(proc.pid, 0)        # this child's own CPU time and peak memory
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{cmd} failed ({proc.returncode})")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trees", nargs="+")
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--netlist", default="netlists/diode_clipper.cir")
    args = p.parse_args(argv)
    names = [str(Path(t).resolve()) for t in args.trees] + list(FLOORS)
    times = {n: [] for n in names}
    loads = []
    for _ in range(args.runs):
        for n in names:
            times[n].append(_once(n, args.netlist))
        loads.append(os.getloadavg()[0])
    print(f"{args.runs} runs each, interleaved; load average {min(loads):.1f}-{max(loads):.1f}")
    print("| run | wall min / median / max [s] | CPU min / median / max [s] | peak [MB] |")
    print("|---|---|---|---|")
    for n in names:
        wall, cpu, peak = zip(*times[n])
        f = lambda xs: f"{min(xs):.2f} / {statistics.median(xs):.2f} / {max(xs):.2f}"      # noqa: E731
        print(f"| {n} | {f(wall)} | {f(cpu)} | {max(peak):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
