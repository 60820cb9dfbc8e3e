"""Whole-process wall time of ``phsym simulate`` with empty caches (cold) and filled ones (warm).

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_cold_start.py [--netlist netlists/diode_clipper.cir]
        [--warm 5] [--profile] [--json out.json]

Each run is a fresh ``python -m phsym.cli simulate NETLIST --fs 48k --duration
10m --out OUT.csv`` process (interpreter start included), timed from spawn to
exit; user + system CPU time and peak memory come from the child's rusage.

* *cold*: fresh, empty ``PHSYM_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` (what the package's own
  directory holds stays: the numeric engine compiled there by ``phsym cache build --package``,
  which the script reports; ``--no-package-engine`` hides it for the run, as before that
  command);
* *warm, numba cache*: the next run in those caches, right after the cold one
  (the snapshot and numba's disk cache);
* *warm, ahead of time*: after the background builds the cold run started
  (the loop's extension module) have finished: the benchmark waits for
  every process whose ``PHSYM_CACHE_DIR`` is this run's directory.

The floor of any run is timed too: ``python -c "import numpy"`` (the
interpreter, its site packages and numpy, which every run needs).  Then one warm run under ``python -X importtime`` (the modules that took
longest, and whether sympy, scipy, numba, lark or networkx were imported) and,
with ``--profile``, a cProfile of a second cold run (its top entries by
cumulative time).  The machine's load average is printed with every
number: on a shared machine wall times grow with it, CPU times much less.
Python's bytecode cache is left on (``PYTHONDONTWRITEBYTECODE`` unset), as in
an installed package.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sympy", "scipy", "numba", "lark", "networkx")
#: Stands for the floor of any run: an interpreter that imports numpy and exits.
FLOOR = "<python -c 'import numpy'>"


def _env(cache: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PHSYM_CACHE_DIR=str(cache / "phsym"), NUMBA_CACHE_DIR=str(cache / "numba"),
               PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""))
    return env


def _command(netlist: str, out: Path, pre: List[str]) -> List[str]:
    if netlist == FLOOR:
        return [sys.executable, "-c", "import numpy"]
    return [sys.executable, *pre, "-m", "phsym.cli", "simulate", netlist, "--fs", "48k", "--duration", "10m",
            "--out", str(out), "--quiet"]


def run_once(netlist: str, cache: Path, pre: List[str] = ()) -> Dict[str, object]:
    """One whole process: wall and CPU seconds (its own, not its detached background builds'), its
    peak memory, and what it printed."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(_command(netlist, cache / "out.csv", list(pre)), env=_env(cache), stdout=out,
                                stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise SystemExit(f"phsym simulate failed:\n{stderr}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "max_rss_mb": usage.ru_maxrss / 1024,
            "load": os.getloadavg()[0], "summary": stdout.strip().splitlines()[-1] if stdout.strip() else "",
            "stderr": stderr}


def background(cache: Path) -> List[int]:
    """Processes working for this cache directory (the cold run's background builds)."""
    mine, tag = [], f"PHSYM_CACHE_DIR={cache / 'phsym'}".encode()
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and int(p.name) != os.getpid():
            try:
                if tag in (p / "environ").read_bytes().split(b"\0"):
                    mine.append(int(p.name))
            except OSError:
                pass
    return mine


def wait_background(cache: Path, limit: float) -> float:
    """Seconds until the cold run's background builds are done (at most ``limit``)."""
    t0 = time.perf_counter()
    while background(cache) and time.perf_counter() - t0 < limit:
        time.sleep(1.0)
    return time.perf_counter() - t0


def importtime(text: str, top: int = 12) -> Dict[str, object]:
    """The modules with the largest cumulative import time, and the heavy ones imported."""
    rows = []
    for line in text.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            self_us, cum_us, name = line[len("import time:"):].split("|")
            rows.append((int(cum_us), int(self_us), name.strip(), len(name) - len(name.lstrip())))
    tops = sorted((r for r in rows if r[3] == 1), reverse=True)[:top]      # top-level imports
    names = {r[2] for r in rows}
    return {"top": [(name, cum / 1e6) for cum, _, name, _ in tops],
            "total": sum(r[0] for r in rows if r[3] == 1) / 1e6,
            "heavy": [h for h in HEAVY if h in names]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--netlist", default=str(ROOT / "netlists" / "diode_clipper.cir"))
    ap.add_argument("--warm", type=int, default=5, help="warm runs of each kind (default 5)")
    ap.add_argument("--wait", type=float, default=300.0, help="longest wait for the background builds [s]")
    ap.add_argument("--profile", action="store_true", help="cProfile a second cold run")
    ap.add_argument("--json", default=None, help="write the numbers as JSON")
    ap.add_argument("--no-package-engine", action="store_true",
                    help="move the engine compiled in the package's directory aside during the runs")
    args = ap.parse_args(argv)
    out: Dict[str, object] = {"netlist": args.netlist, "python": sys.version.split()[0], "cpus": os.cpu_count()}
    ready = _package_engine(hide=args.no_package_engine)
    out["package_engine"] = ready
    print(f"numeric engine in the package's directory: {'ready' if ready else 'absent'}")
    try:
        return _main(args, out)
    finally:
        _package_engine(restore=True)


def _package_engine(hide: bool = False, restore: bool = False) -> bool:
    """Whether the package's directory holds the compiled engine (its ready stamp); ``hide`` renames
    the stamp for the runs (nothing is compiled then: the runs compile their loops), ``restore``
    puts it back."""
    stamp = ROOT / "phsym" / "simulation" / "engines" / "numeric" / "__pycache__" / "phsym-numeric-engine.ready"
    aside = stamp.with_name(stamp.name + ".aside")
    if restore:
        if aside.is_file():
            os.replace(aside, stamp)
        return stamp.is_file()
    if hide and stamp.is_file():
        os.replace(stamp, aside)
        return False
    return stamp.is_file()


def _main(args, out: Dict[str, object]) -> int:
    with tempfile.TemporaryDirectory(prefix="phsym-cold-") as tmp:
        cache = Path(tmp)
        cold = run_once(args.netlist, cache)
        print(f"cold                 {cold['wall']:6.2f} s wall  {cold['cpu']:6.2f} s CPU  "
              f"{cold['max_rss_mb']:5.0f} MB  load {cold['load']:.1f}  | {cold['summary']}")
        warm = [run_once(args.netlist, cache) for _ in range(max(1, args.warm))]
        waited = wait_background(cache, args.wait)
        aot = [run_once(args.netlist, cache) for _ in range(max(1, args.warm))]
        floor = [run_once(FLOOR, cache) for _ in range(max(1, args.warm))]
        for name, runs in (("warm, numba cache", warm), ("warm, ahead of time", aot), ("floor: import numpy", floor)):
            walls, cpus = [r["wall"] for r in runs], [r["cpu"] for r in runs]
            print(f"{name:<20} {statistics.median(walls):6.2f} s wall  {statistics.median(cpus):6.2f} s CPU  "
                  f"(median of {len(runs)}; best {min(walls):.2f} s wall, {min(cpus):.2f} s CPU)  "
                  f"{max(r['max_rss_mb'] for r in runs):5.0f} MB  load {runs[-1]['load']:.1f}  | {runs[-1]['summary']}")
        print(f"(background builds of the cold run finished {waited:.0f} s after the warm runs)")
        imp = run_once(args.netlist, cache, ["-X", "importtime"])
        it = importtime(imp["stderr"])
        print(f"\nwarm run, -X importtime: top-level imports {it['total']:.3f} s; heavy modules imported: "
              f"{', '.join(it['heavy']) or 'none'}")
        for name, sec in it["top"]:
            print(f"  {sec:7.3f} s  {name}")
        out.update(cold=cold, warm=warm, aot=aot, floor=floor, waited=waited, importtime=it)
    if args.profile:
        with tempfile.TemporaryDirectory(prefix="phsym-cold-") as tmp:
            prof = Path(tmp) / "cold.prof"
            run_once(args.netlist, Path(tmp), ["-m", "cProfile", "-o", str(prof)])
            import pstats
            print("\ncold run, cProfile (cumulative):")
            stats = pstats.Stats(str(prof))
            # the stages: imports of the heavy packages, the model, code generation, numba's compile, the run
            stats.sort_stats("cumulative").print_stats(
                r"phsym/(cli|model|simulation/(run|simulator|plan)|codegen/(cache|newton/module|laws/build)|"
                r"simulation/engines/numeric/(planner|loop))\.py|"
                r"(sympy|numba|networkx|scipy/sparse|scipy/linalg)/__init__|dispatcher\.py:\d+\(_compile_for_args", 30)
            wait_background(Path(tmp), args.wait)
    if args.json:
        for key in ("cold", "warm", "aot", "floor"):
            runs = out.get(key)
            for r in runs if isinstance(runs, list) else [runs] if runs else []:
                r.pop("stderr", None)
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
