"""Multiphysics benchmark: the saturating magnetic circuit against a hand-written loop.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_domains.py [--seconds 1] [--repeat 5]

netlists/magnetic_circuit.cir (a 60 V, 50 Hz source through 2 ohm into a
200-turn coil on a saturating core, ``mmf = Rc phis sinh(phi/phis)``, with a
linear air gap and eddy loss) at 48 kHz with the discrete-gradient scheme:

* phsym: ``Simulator(model, 48000, "discrete_gradient")`` run warm (the loop
  compiled before timing), steps/s of the stepping (``info["wall_time"]``);
* a hand-written numba loop of the same scheme: the flux ``phi`` is the one
  unknown (core and gap carry the same flux), the core's divided difference
  ``(H(phi + d) - H(phi)) / d = 2 Rc phis**2 sinh((phi + d/2)/phis)
  sinh(d/(2 phis)) / d`` written without cancellation, scalar Newton to the
  same relative tolerance (1e-12);
* PyPHS's published count for its magnetic_circuit example: 13 Newton
  iterations per step.

Both loops must agree on the source current to 1e-9 of its peak (asserted).
Also the Rhodes-like chain (netlists/rhodes.cir: hammer, contact, 3-mode
tine, pickup, RC load; 11 states), warm, steps/s at 48 kHz.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import phsym  # noqa: E402

FS = 48000.0
N_TURNS, R1, RC, PHIS, RG, RM, AMP, F0 = 200.0, 2.0, 5e5, 0.5e-3, 1e5, 40.0, 60.0, 50.0
PYPHS_ITERATIONS = 13       # PyPHS documentation, magnetic_circuit example


@njit(cache=True)
def magnetic_hand(u, h, N, R1, Rc, phis, Rg, Rm, I, IT):
    """Discrete gradient of the magnetic circuit, scalar Newton on the flux increment."""
    phi = 0.0
    d = 0.0
    for k in range(u.shape[0] - 1):
        ub = 0.5 * (u[k] + u[k + 1])
        it = 0
        for it in range(1, 60):
            m = (phi + 0.5 * d) / phis
            s = 0.5 * d / phis
            if abs(s) > 1e-4:
                q = math.sinh(s) / d
                dq = (s * math.cosh(s) - math.sinh(s)) / (d * d)
            else:                       # series of sinh(s)/d and its derivative
                q = (1.0 + s * s / 6.0) / (2.0 * phis)
                dq = d / (24.0 * phis ** 3)
            core = 2.0 * Rc * phis * phis * math.sinh(m) * q
            dcore = 2.0 * Rc * phis * phis * (math.cosh(m) / (2.0 * phis) * q + math.sinh(m) * dq)
            F = N * (ub - N * d / h) / R1 - core - Rg * (phi + 0.5 * d) - Rm * d / h
            J = -N * N / (h * R1) - dcore - 0.5 * Rg - Rm / h
            step = -F / J
            d += step
            if abs(step) <= 1e-12 * (abs(phi) + abs(d) + phis):
                break
        IT[k] = it
        I[k] = (ub - N * d / h) / R1
        phi += d
    return phi


def run(seconds: float, repeat: int) -> dict:
    n = int(seconds * FS)
    t = np.arange(n + 1) / FS
    u = AMP * np.sin(2 * np.pi * F0 * t)
    model = phsym.load(ROOT / "netlists" / "magnetic_circuit.cir")
    sim = phsym.Simulator(model, FS, "discrete_gradient", record_efforts=False)
    sim.run(u={"V1": u[:10]})                           # compile or load first
    best_p, res = float("inf"), None
    for _ in range(repeat):
        r = sim.run(u={"V1": u})
        if r.info["wall_time"] < best_p:
            best_p, res = r.info["wall_time"], r
    I, IT = np.zeros(n), np.zeros(n, dtype=np.int64)
    magnetic_hand(u[:10], 1 / FS, N_TURNS, R1, RC, PHIS, RG, RM, I[:9], IT[:9])
    best_h = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        magnetic_hand(u, 1 / FS, N_TURNS, R1, RC, PHIS, RG, RM, I, IT)
        best_h = min(best_h, time.perf_counter() - t0)
    y = res.y[:, 0]                                     # current the source delivers, per step
    err = float(np.max(np.abs(y - I)) / np.max(np.abs(I)))
    assert err < 1e-9, err
    return dict(steps=n, phsym=n / best_p, hand=n / best_h, err=err, its_phsym=float(res.iterations.mean()),
                its_phsym_max=int(res.iterations.max()), its_hand=float(IT.mean()),
                balance=float(np.abs(res.balance).max() / res.power_scale),
                saturation=float(np.max(np.abs(res["phi_Xcore"])) / PHIS))


def rhodes(seconds: float, repeat: int) -> dict:
    model = phsym.load(ROOT / "netlists" / "rhodes.cir")
    sim = phsym.Simulator(model, FS, "discrete_gradient", record_efforts=False)
    sim.run(duration=10 / FS)
    best, res = float("inf"), None
    for _ in range(repeat):
        r = sim.run(duration=seconds)
        if r.info["wall_time"] < best:
            best, res = r.info["wall_time"], r
    n = res.t_step.size
    return dict(steps=n, rate=n / best, its=float(res.iterations.mean()), its_max=int(res.iterations.max()),
                states=len(model.states), unknowns=sim._gen.n_v)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    load = os.getloadavg()
    r = run(a.seconds, a.repeat)
    print(f"magnetic circuit, {r['steps']} steps at 48 kHz (peak flux {r['saturation']:.1f} phis); "
          f"load average {load[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    print("| loop | steps/s | Newton iterations per step (mean, max) |")
    print("| --- | --- | --- |")
    print(f"| phsym (generated) | {r['phsym']:.3g} | {r['its_phsym']:.2f}, {r['its_phsym_max']} |")
    print(f"| hand-written numba | {r['hand']:.3g} | {r['its_hand']:.2f} |")
    print(f"| PyPHS (published) | - | {PYPHS_ITERATIONS} |")
    print(f"phsym / hand = {r['phsym'] / r['hand']:.2f}; source currents agree to {r['err']:.1e} of the peak; "
          f"phsym's balance residual {r['balance']:.1e} (relative)")
    q = rhodes(a.seconds, a.repeat)
    print(f"rhodes.cir: {q['states']} states, {q['unknowns']} Newton unknowns, {q['steps']} steps at 48 kHz: "
          f"{q['rate']:.3g} steps/s ({q['rate'] / FS:.0f}x real time), Newton iterations mean {q['its']:.2f}, "
          f"max {q['its_max']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
