"""Full-wave bridge rectifier of issue 10: does it simulate, how fast, how accurately.

Run from the repository root::

    PYTHONPATH=. python3.11 benchmarks/bench_bridge.py

Deck: ``V1 ac1 ac2 SIN(0 10 50)``, four diodes (IS=1e-14 N=1 and IS=2.52n
N=1.752), ``100u || 1k``, 60 ms from the DC operating point.  For each model
and rate: steps/s of the compiled loop (second run, warm), Newton
iterations per step (max and mean), the power-balance residual and the
maximum difference of v(out) from an independent solution (the source's
common mode by bisection, v(out) by scipy's Radau at rtol 1e-10).
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import phsym  # noqa: E402
from test_spice_diode import BRIDGE, _bridge_reference  # noqa: E402


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for Is, N in ((1e-14, 1.0), (2.52e-9, 1.752)):
            deck = Path(tmp) / f"bridge_{N}.cir"
            deck.write_text(BRIDGE.replace(".model", f".param Is={Is} N={N}\n.model"))
            sim48 = None
            ref = None
            for fs in (48000, 960000):
                sim = phsym.Simulator(phsym.load(deck), fs)
                sim.run(duration=0.06, x0="dc")                 # compile / load
                t0 = time.perf_counter()
                res = sim.run(duration=0.06, x0="dc")
                wall = time.perf_counter() - t0
                if ref is None:
                    ref = _bridge_reference(res.t, Is, N) if fs == 48000 else None
                    sim48 = res
                v = res["q_C1"] / 100e-6
                err = np.max(np.abs((v if fs == 48000 else v[::20]) - ref))
                rows.append((Is, N, fs, len(res.t) - 1, wall, (len(res.t) - 1) / wall,
                             int(res.iterations.max()), float(res.iterations[1:].mean()),
                             res.max_balance_error, err))
    print("| IS | N | fs [Hz] | steps | wall [s] | steps/s | Newton max | Newton mean | balance | max err v(out) [V] |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r[0]:g} | {r[1]:g} | {r[2]:g} | {r[3]} | {r[4]:.4f} | {r[5]:.3g} | {r[6]} | {r[7]:.2f} | "
              f"{r[8]:.1e} | {r[9]:.2e} |")


if __name__ == "__main__":
    main()
