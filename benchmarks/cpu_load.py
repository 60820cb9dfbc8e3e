"""CPU seconds of a fresh process's load of a deck: imports, ``phsym.load`` and ``Simulator`` (no step).

:mod:`cpu_start` stopped before the first step, so that a comparison of two trees does not need
the numeric engine compiled in each (``engine="numeric"``; the plan and its numbers are built).

    PYTHONPATH=. PHSYM_AOT=0 python benchmarks/cpu_load.py DECK.cir [LABEL]
"""
import sys
import time

t0 = time.process_time()
import phsym  # noqa: E402  (timed)
from phsym.netlist.cards import deck_settings  # noqa: E402
from phsym.simulation import Simulator  # noqa: E402


def main(path: str, label: str) -> None:
    deck = deck_settings(path)
    t1 = time.process_time()
    model = phsym.load(path)
    t2 = time.process_time()
    Simulator(model, deck.tran.fs, engine="numeric", **deck.simulator_options())
    t3 = time.process_time()
    print(f"{label}: import+deck {t1 - t0:.2f} load {t2 - t1:.2f} Simulator {t3 - t2:.2f} total {t3 - t0:.2f} CPU s",
          flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else sys.argv[1])
