"""CPU seconds of a fresh process's start on a deck: imports, ``phsym.load``, ``Simulator`` and its first step.

CPU time (``time.process_time``) rather than wall time, so that a comparison made on a shared,
loaded machine is not mostly the other processes' share of the cores.  The deck's ``.tran``
gives the step; ``engine="auto"`` unless ``PHSYM_ENGINE`` says otherwise.

    PYTHONPATH=. PHSYM_AOT=0 python benchmarks/cpu_start.py DECK.cir
"""
import os
import sys
import time

t0 = time.process_time()
import phsym  # noqa: E402  (timed)
from phsym.netlist.cards import deck_settings  # noqa: E402
from phsym.simulation import Simulator  # noqa: E402


def main(path: str) -> None:
    deck = deck_settings(path)
    t1 = time.process_time()
    model = phsym.load(path)
    t2 = time.process_time()
    sim = Simulator(model, deck.tran.fs, engine="auto", **deck.simulator_options())
    res = sim.run(duration=deck.tran.step)
    t3 = time.process_time()
    print(f"{os.path.basename(path)} import {t1 - t0:.2f} load {t2 - t1:.2f} start+first {t3 - t2:.2f} "
          f"total {t3 - t0:.2f} cpu-s engine {res.info['engine']}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
