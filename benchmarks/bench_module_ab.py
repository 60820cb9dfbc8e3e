"""Two generated step modules of one deck in one process: another commit's against this checkout's.

Separate processes on this machine moved by up to 1.6x between rounds of the
same module, so code changes to the generated loop are measured here: both
modules step the same plan, alternated ``--reps`` times, best of each::

    # the other commit's module: build it with that commit's checkout and a cache of its own
    PYTHONPATH=OLD PHSYM_CACHE_DIR=/tmp/old python -c "import phsym; phsym.Simulator(phsym.load('DECK'), fs=48000)"
    cp /tmp/old/phsym_gen_*.py /tmp/old_module.py      # a path of its own: numba caches by path
    PYTHONPATH=. python benchmarks/bench_module_ab.py DECK 48000 /tmp/old_module.py [--control "level=0.2+1.5*t"]

Both runs start from the deck's DC point; the row gives steps/s of each
(best of ``--reps`` runs of ``--duration`` seconds), their ratio and the
mean Newton iterations.  The old module must have the same unknowns and
run signature (the tables of docs/benchmarks.md, "Audio circuits").
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from newton_loop import newton_simulator, use_module  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("deck", help="netlist")
    ap.add_argument("fs", type=float, help="sample rate [Hz]")
    ap.add_argument("old", help="the other commit's generated module (a .py file)")
    ap.add_argument("--reps", type=int, default=5, help="alternations (default 5)")
    ap.add_argument("--duration", type=float, default=0.4, help="simulated seconds per run (default 0.4)")
    ap.add_argument("--control", action="append", default=[], metavar="NAME=SPEC",
                    help="a control driven as phsym simulate --control drives it, e.g. level=0.2+1.5*t")
    args = ap.parse_args(argv)
    from phsym.simulation.cli.simulate import input_source
    controls = {name: input_source(spec, args.fs) for name, spec in (c.split("=", 1) for c in args.control)}
    sim, x0 = newton_simulator(args.deck, args.fs, "bench_module_ab")
    spec = importlib.util.spec_from_file_location("ab_" + Path(args.old).stem, args.old)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    mods = {"old": old, "new": sim._gen.module}
    best, its = {k: np.inf for k in mods}, {}
    for _ in range(max(args.reps, 1)):
        for k, mod in mods.items():
            use_module(sim, mod)
            sim.run(duration=0.005, x0=x0, controls=controls or None)
            t0 = time.perf_counter()
            r = sim.run(duration=args.duration, x0=x0, controls=controls or None)
            best[k] = min(best[k], time.perf_counter() - t0)
            its[k] = float(np.asarray(r.iterations).mean())
    n = round(args.duration * args.fs)
    o, w = n / best["old"], n / best["new"]
    print("| deck | fs | old steps/s | new steps/s | ratio | mean Newton iterations |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(f"| {args.deck} | {args.fs / 1e3:g} kHz | {o:.3g} | {w:.3g} | {w / o:.2f} | {its['old']:.2f} -> {its['new']:.2f} |")


if __name__ == "__main__":
    main()
