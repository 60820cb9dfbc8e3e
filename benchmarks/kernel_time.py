"""Time of the numeric engine's law kernels in one Newton evaluation, on the scale benchmark's decks.

Run from the repository root::

    PYTHONPATH=. python benchmarks/kernel_time.py [--decks ttl=10 diode_ladder=100] [--steps 2000] [--calls 2000]

Each deck (:data:`phsym.benchmarks.FAMILIES`) is stepped ``--steps`` steps
with the numeric engine; then, at the inputs of its last step's last Newton
evaluation, the thread's CPU time of a call (best of five means of
``--calls`` calls) is reported for: every kernel group (the per-iteration
work of the laws; a step constant computed at its first use is then
already there, as in a step's later iterations), the kernels' step
preparations (once per step), and a whole Newton evaluation (inputs,
limits, kernels, residual and Jacobian values; through ``newton.evaluate``,
so with the step's known parts and preparations, as in a step's first
iteration: the engine's per-iteration ``evaluate_at`` has no Python entry).  CPU time of this thread: a
shared machine's time slicing does not move it much; compare runs made
close in time.
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


def _per_call(f, calls: int, repeat: int = 5) -> float:
    """Best over ``repeat`` of the mean CPU seconds of ``calls`` calls of ``f`` (one warm-up call)."""
    f()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        for _ in range(calls):
            f()
        best = min(best, (time.thread_time() - t0) / calls)
    return best


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decks", nargs="+", default=["ttl=3,10", "rtl=50", "diode_ladder=100,1000"],
                    help="FAMILY=SIZE,SIZE ...")
    ap.add_argument("--steps", type=int, default=2000, help="steps before the timings (default 2000)")
    ap.add_argument("--calls", type=int, default=2000, help="calls a timing (default 2000)")
    args = ap.parse_args(argv)

    import numpy as np
    import phsym
    from phsym.benchmarks import write_decks
    from phsym.netlist.cards import deck_settings
    from phsym.simulation import Simulator
    from phsym.simulation.engines.numeric import newton
    warnings.simplefilter("ignore")
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("| deck | kernel groups | instances | kernels [us] | preparations [us] | evaluation [us] |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for fam, size, path in write_decks(args.decks, tmp, args.steps):
            deck = deck_settings(str(path))
            sim = Simulator(phsym.load(str(path)), deck.tran.fs, engine="numeric",
                            **deck.simulator_options())
            loop = sim.plan().loop
            seen = []
            make = loop.carry
            loop.carry = lambda start=None: seen.append(make(start)) or seen[-1]
            sim.run(duration=args.steps * deck.tran.step, x0=None if deck.x0 == "ic" else deck.x0)
            cr = seen[-1]       # the last step's numbers, where its Newton left them
            net, lim, _ = loop._arrays(1.0 / deck.tran.fs)
            G, P = net[9], net[10]
            K, IN, INa, OUT, F, Jx = (cr["work"][i] for i in (0, 2, 3, 4, 5, 6))
            z, wold = cr["z"], cr["wold"]
            kin = np.zeros(IN.size)       # the kernels' inputs that the step's known values make
            newton.csr_add(kin, net[1][0], net[1][1], net[1][2], K, 1.0)
            # W: the kernels' step constants (absent before they had any: a tree before commit 9c2d759)
            W = (np.empty(newton.w_size(G)),) if hasattr(newton, "w_size") else ()
            if W:
                newton.prepare_groups(G, P, kin, *W)
            # (evaluate: Newton's evaluate_at is compiled without a Python entry; this one also sums the
            # step's known parts and runs the preparations, as the first iteration of a step does)
            newton.evaluate(z, K, net, lim, wold, False, IN, INa, OUT, F, Jx)
            tk = _per_call(lambda: newton.call_groups(G, P, IN, OUT, *W), args.calls)
            tp = _per_call(lambda: newton.prepare_groups(G, P, kin, *W), args.calls) if W else 0.0
            te = _per_call(lambda: newton.evaluate(z, K, net, lim, wold, True, IN, INa, OUT, F, Jx), args.calls)
            print(f"| {fam} {size} | {G.shape[0]} | {int(G[:, 1].sum())} | {tk * 1e6:.2f} | {tp * 1e6:.2f} | "
                  f"{te * 1e6:.2f} |", flush=True)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
