"""Steps per second of the numeric engine's stepping alone, on the scale benchmark's decks.

Run from the repository root::

    PYTHONPATH=. python benchmarks/steps_per_second.py [--decks ttl=3,10 rtl=50 diode_ladder=100,1000]
        [--steps 2000] [--repeat 3] [--engine numeric]

Each deck (:data:`phsym.benchmarks.FAMILIES`, the decks of ``bench_scale.py``)
is loaded once in this process; its simulator steps one step first (the DC
point, the set-up, any compile), then ``--repeat`` runs of ``--steps`` steps
from the DC point.  Reported: the best run's steps over its
``result.info["wall_time"]`` (the stepping only), the best run's steps over
the CPU time of this thread for the whole ``run`` call (DC point and result
included: a lower bound on the stepping's rate that a busy machine's time
slicing does not move), the mean Newton iterations a step, the largest
per-step balance error, and the load averages before and after (the machine
may be shared: compare runs made close in time).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decks", nargs="+", default=["ttl=3,10", "rtl=50", "diode_ladder=100,1000"],
                    help="FAMILY=SIZE,SIZE ... (default: ttl=3,10 rtl=50 diode_ladder=100,1000)")
    ap.add_argument("--steps", type=int, default=2000, help="steps a run (default 2000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs a deck, the best is reported (default 3)")
    ap.add_argument("--engine", default="numeric", help="Simulator(..., engine=ENGINE) (default numeric)")
    args = ap.parse_args(argv)

    import phsym
    from phsym.benchmarks import write_decks
    from phsym.netlist.cards import deck_settings
    from phsym.simulation import Simulator
    warnings.simplefilter("ignore")
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("| deck | steps | steps/s (best) | runs [steps/s] | CPU steps/s (best) | Newton it./step | balance |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for fam, size, path in write_decks(args.decks, tmp, args.steps):
            deck = deck_settings(str(path))
            x0 = None if deck.x0 == "ic" else deck.x0
            sim = Simulator(phsym.load(str(path)), deck.tran.fs, engine=args.engine,
                            **deck.simulator_options())
            sim.run(duration=deck.tran.step, x0=x0)
            rates, cpu, res = [], [], None
            for _ in range(args.repeat):
                t0 = time.thread_time()
                res = sim.run(duration=args.steps * deck.tran.step, x0=x0)
                cpu.append(res.t_step.size / (time.thread_time() - t0))
                rates.append(res.t_step.size / res.info["wall_time"])
            print(f"| {fam} {size} | {res.t_step.size} | {max(rates):.4g} | "
                  f"{' '.join(f'{r:.4g}' for r in rates)} | {max(cpu):.4g} | {res.iterations.mean():.3f} | "
                  f"{res.max_balance_error:.2g} |", flush=True)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
