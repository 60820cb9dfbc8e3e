"""Whole-process times of ``phsym simulate`` in a fresh virtual environment, interleaved with its floors.

Issue 38 measures the first hour on a fresh venv, where the interpreter starts
without the site packages of the machine's own Python.  Set one up once::

    python -m venv /tmp/fv && git clone -q . /tmp/fv-src
    cd /tmp/fv-src && /tmp/fv/bin/pip install -q -e ".[plot,aot]"
    /tmp/fv/bin/python -m compileall -q phsym && /tmp/fv/bin/phsym cache build --package

then run (from anywhere)::

    python benchmarks/venv_start.py --python /tmp/fv/bin/python --source /tmp/fv-src [--rounds 11]

Each round runs, as fresh processes of the venv's interpreter: ``python -c
pass``, ``python -c "import numpy"``, ``python -c "import numpy, sympy"``;
a *cold* ``phsym simulate netlists/diode_clipper.cir --fs 48k --duration 10m
--out x.csv --quiet`` with new empty ``PHSYM_CACHE_DIR`` and ``NUMBA_CACHE_DIR``
(``PHSYM_AOT=0``: no background build left running; what ``cache build
--package`` put in the package's directory stays, as on an installed machine);
and a *warm* run of the same command in one cache filled before the rounds (the
snapshot on the generated loop's ahead-of-time extension: the script runs the
command until its summary says so).  Printed: wall and CPU (the child's user +
system) min / median / max, peak memory, the load average.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def _once(cmd, env) -> tuple:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tempfile.gettempdir())      # ``-m`` puts the working directory on sys.path
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd)} failed")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _fill(cmd, env, limit: float = 300.0) -> None:
    """Run ``cmd`` (which prints its summary) until its warm start is on the generated loop's extension
    twice in a row (the background builds are done)."""
    end, done = time.monotonic() + limit, 0
    while time.monotonic() < end and done < 2:      # twice in a row: nothing left to move
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                             cwd=tempfile.gettempdir()).stdout     # not a tree on sys.path (``-m``)
        done = done + 1 if "generated" in out and "warm start (ahead of time)" in out else 0
        time.sleep(2.0 if done else 5.0)
    if done >= 2:
        return
    raise SystemExit("the warm cache did not reach the generated loop's extension")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True, help="the venv's interpreter")
    ap.add_argument("--source", required=True, help="the phsym tree installed in it (for the netlist)")
    ap.add_argument("--rounds", type=int, default=11, help="rounds (default 11)")
    args = ap.parse_args(argv)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("PHSYM_") and k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    py = args.python
    sim = [py, "-m", "phsym.cli", "simulate", os.path.join(args.source, "netlists", "diode_clipper.cir"),
           "--fs", "48k", "--duration", "10m"]
    rows = {"python -c pass": [], "import numpy": [], "import numpy, sympy": [], "cold": [], "warm": []}
    loads = []
    with tempfile.TemporaryDirectory() as warm:
        wenv = dict(base, PHSYM_CACHE_DIR=os.path.join(warm, "phsym"), NUMBA_CACHE_DIR=os.path.join(warm, "numba"))
        wout = os.path.join(warm, "x.csv")
        _fill(sim + ["--out", wout], wenv)      # not --quiet: its summary says where it started
        for _ in range(args.rounds):
            for label, code in (("python -c pass", "pass"), ("import numpy", "import numpy"),
                                ("import numpy, sympy", "import numpy, sympy")):
                rows[label].append(_once([py, "-c", code], base))
            with tempfile.TemporaryDirectory() as tmp:
                env = dict(base, PHSYM_AOT="0", PHSYM_CACHE_DIR=os.path.join(tmp, "phsym"),
                           NUMBA_CACHE_DIR=os.path.join(tmp, "numba"))
                rows["cold"].append(_once(sim + ["--out", os.path.join(tmp, "x.csv"), "--quiet"], env))
            rows["warm"].append(_once(sim + ["--out", wout, "--quiet"], wenv))
            loads.append(os.getloadavg()[0])
    print(f"{args.rounds} rounds, interleaved; {py}; load average {min(loads):.2f}-{max(loads):.2f}")
    print("| process | wall min / median / max [s] | CPU min / median / max [s] | peak [MB] |")
    print("|---|---|---|---|")
    for label, got in rows.items():
        wall, cpu, peak = zip(*got)
        f = lambda xs: f"{min(xs):.3f} / {statistics.median(xs):.3f} / {max(xs):.3f}"     # noqa: E731
        print(f"| {label} | {f(wall)} | {f(cpu)} | {max(peak):.0f} |")
    print("warm runs in order [s]:", " ".join(f"{w:.2f}" for w, _, _ in rows["warm"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
