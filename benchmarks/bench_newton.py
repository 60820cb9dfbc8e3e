"""Newton robustness (issue 10, item 3): hard diode steps and hard DC operating points.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_newton.py

Transients (discrete gradient, default tolerance 1e-12, 200 iterations):
Newton iterations per step (max, mean), steps subdivided, power-balance
residual and wall time of the compiled loop (second run, warm).  DC: the
operating point of series diode chains driven hard, with the method that
found it (limited Newton, gmin stepping, source stepping) and its wall time.
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import phsym  # noqa: E402
from phsym.simulation.dcsolve import DCProblem, solve_dc  # noqa: E402
from phsym.simulation.initial import state_scales  # noqa: E402

TRANSIENTS = {
    "clipper, 100 V sine at 1 kHz rate": (
        "V1 in 0 SIN(0 100 10)\nR1 in a 1k\nC1 a 0 10n\nD1 a 0 Is=1e-14\nD2 0 a Is=1e-14\n", 1000, 0.1),
    "half-wave 50 V, 0.1 ohm, 500 Hz rate": (
        "V1 in 0 SIN(0 50 50)\nR1 in a 0.1\nD1 a out Is=1e-14\nC1 out 0 100u\nRL out 0 1k\n", 500, 0.04),
    "1 kV pulse into diode + 1u || 10 ohm": (
        "V1 in 0 PULSE(0 1000 1m 1n 1n 10m 20m)\nR1 in a 1\nD1 a out Is=1e-15\nC1 out 0 1u\nRL out 0 10\n",
        1000, 0.02),
    "200 V pulse into 4 series diodes": (
        "V1 in 0 PULSE(0 200 1m 1n 1n 10m 20m)\nR1 in a 0.01\nD1 a b\nD2 b c\nD3 c d\nD4 d out\nC1 out 0 1u\n"
        "RL out 0 10\n", 1000, 0.02),
}


def chain(n: int, volts: float, ohms: float) -> str:
    """``n`` diodes with 1n capacitors in series, driven by ``volts`` through ``ohms``."""
    s = f"V1 in 0 {volts}\nR1 in n0 {ohms}\n"
    for i in range(n):
        b = f"n{i + 1}" if i < n - 1 else "0"
        s += f"D{i} n{i} {b}\nC{i} n{i} {b} 1n\n"
    return s


def main() -> None:
    print("| circuit | steps | Newton max | Newton mean | subdivided | balance | loop [s] |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, (net, fs, dur) in TRANSIENTS.items():
        sim = phsym.Simulator(phsym.parse(net), fs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sim.run(duration=dur)
            r = sim.run(duration=dur)
        print(f"| {name} | {len(r.t) - 1} | {r.iterations.max()} | {r.iterations.mean():.2f} | "
              f"{len(r.info.get('subdivided', {}))} | {r.max_balance_error:.1e} | {r.info['wall_time']:.4f} |")
    print()
    print("| DC chain | method | Newton iterations | diode voltage [V] | wall [s] |")
    print("| --- | --- | --- | --- | --- |")
    for n, volts, ohms in ((3, 100, 1.0), (5, 1000, 0.1), (20, 1000, 0.01)):
        m = phsym.parse(chain(n, volts, ohms))
        S, values = m.structure, m.parameter_values()
        t0 = time.perf_counter()
        P = DCProblem(S, values, np.array([float(volts)]), np.zeros(S.n_x), np.arange(S.n_x),
                      state_scales(S, values))
        z0 = np.zeros(S.n_x + S.n_w + S.n_lambda)
        z, how = solve_dc(P, z0)
        wall = time.perf_counter() - t0
        _, it = P.newton(z0)
        vd = P.split(z)[0][0] / 1e-9
        print(f"| {n} diodes, {volts} V, {ohms} ohm | {how} | {it} | {vd:.6f} | {wall:.3f} |")


if __name__ == "__main__":
    main()
