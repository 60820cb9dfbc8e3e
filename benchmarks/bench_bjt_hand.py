"""Common-emitter stage: phsym's generated loop against a hand-written numba loop of the same scheme.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_bjt_hand.py [--seconds 1] [--fs 48000]

The stage (Ebers-Moll NPN, divider bias, bypassed emitter resistor, coupling
capacitors; no junction charges, so the discrete gradient is the midpoint
rule on the three capacitor charges)::

    VCC 9 V, VIN 10 mV at 1 kHz, C1 in-b 10u, R1 vcc-b 82k, R2 b-0 15k,
    RC vcc-c 3.9k, RE e-0 820, CE e-0 100u, Q1 c b e, C2 c-out 1u, RL out-0 100k

The hand-written loop solves, per step, the four equations of the midpoint
step in the charge increments of C1, CE, C2 and the collector potential
(Newton with the analytic 4x4 Jacobian solved by an inlined Gaussian
elimination, started from the previous step's solution, tolerance 1e-12 on
the scaled step), the smallest formulation
I could write by hand.  Both start from phsym's DC point; the script checks
that the two trajectories agree (they are the same scheme) and reports the
steps/s of each compiled loop alone (best of three runs) and their ratio.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

import phsym

IS, BF, BR, VT, GMIN = 1e-15, 200.0, 2.0, 0.02585, 1e-12
VCC, C1, R1, R2, RC, RE, CE, C2, RL = 9.0, 10e-6, 82e3, 15e3, 3.9e3, 820.0, 100e-6, 1e-6, 100e3

NETLIST = f"""Common-emitter stage for the hand-loop benchmark
.model QN NPN(IS={IS} BF={BF} BR={BR})
VCC vcc 0 DC {VCC}
VIN in 0 SIN(0 10m 1k)
C1 in b {C1}
R1 vcc b {R1}
R2 b 0 {R2}
RC vcc c {RC}
RE e 0 {RE}
CE e 0 {CE}
Q1 c b e QN
C2 c out {C2}
RL out 0 {RL}
"""


@njit(cache=True)
def _solve4(J, F, dz):
    """dz = -J^{-1} F by Gaussian elimination with partial pivoting, in place."""
    for i in range(4):
        dz[i] = -F[i]
    for c in range(4):
        p = c
        for r in range(c + 1, 4):
            if abs(J[r, c]) > abs(J[p, c]):
                p = r
        if p != c:
            for j in range(4):
                J[c, j], J[p, j] = J[p, j], J[c, j]
            dz[c], dz[p] = dz[p], dz[c]
        for r in range(c + 1, 4):
            m = J[r, c] / J[c, c]
            for j in range(c, 4):
                J[r, j] -= m * J[c, j]
            dz[r] -= m * dz[c]
    for c in range(3, -1, -1):
        s = dz[c]
        for j in range(c + 1, 4):
            s -= J[c, j] * dz[j]
        dz[c] = s / J[c, c]


@njit(cache=True)
def hand_loop(q0, vin, h, vc0, out):
    q1, qe, q2 = q0[0], q0[1], q0[2]
    z = np.array([0.0, 0.0, 0.0, vc0])
    J = np.empty((4, 4))
    F = np.empty(4)
    dz = np.empty(4)
    iters = 0
    for k in range(vin.shape[0] - 1):
        u = 0.5 * (vin[k] + vin[k + 1])
        for it in range(100):
            d1, de, d2, vc = z[0], z[1], z[2], z[3]
            vb = u - (q1 + 0.5 * d1) / C1
            ve = (qe + 0.5 * de) / CE
            vbe, vbc = vb - ve, vb - vc
            ebe, ebc = np.exp(vbe / VT), np.exp(vbc / VT)
            ibe, ibc = IS * (ebe - 1.0) + GMIN * vbe, IS * (ebc - 1.0) + GMIN * vbc
            gbe, gbc = IS / VT * ebe + GMIN, IS / VT * ebc + GMIN
            ic, ib = ibe - ibc - ibc / BR, ibe / BF + ibc / BR
            F[0] = d1 / h + (VCC - vb) / R1 - vb / R2 - ib
            F[1] = ic + ib - ve / RE - de / h
            F[2] = (VCC - vc) / RC - ic - d2 / h
            F[3] = d2 / h - (vc - (q2 + 0.5 * d2) / C2) / RL
            a1, ae = 0.5 / C1, 0.5 / CE
            gi, gj = gbe * (1.0 + 1.0 / BF), -gbc
            J[0, 0] = 1.0 / h + (1.0 / R1 + 1.0 / R2) * a1 + (gbe / BF + gbc / BR) * a1
            J[0, 1] = gbe / BF * ae
            J[0, 2] = 0.0
            J[0, 3] = gbc / BR
            J[1, 0] = -(gi + gj) * a1
            J[1, 1] = -gi * ae - ae / RE - 1.0 / h
            J[1, 2] = 0.0
            J[1, 3] = gbc
            J[2, 0] = (gbe - gbc * (1.0 + 1.0 / BR)) * a1
            J[2, 1] = gbe * ae
            J[2, 2] = -1.0 / h
            J[2, 3] = -1.0 / RC - gbc * (1.0 + 1.0 / BR)
            J[3, 0] = 0.0
            J[3, 1] = 0.0
            J[3, 2] = 1.0 / h + 0.5 / (C2 * RL)
            J[3, 3] = -1.0 / RL
            _solve4(J, F, dz)
            for i in range(4):
                z[i] += dz[i]
            iters += 1
            if (abs(dz[0]) <= 1e-12 * (abs(q1) + 1e-12) and abs(dz[1]) <= 1e-12 * (abs(qe) + 1e-12)
                    and abs(dz[2]) <= 1e-12 * (abs(q2) + 1e-12) and abs(dz[3]) <= 1e-12 * (abs(vc) + 1.0)):
                break
        q1 += z[0]
        qe += z[1]
        q2 += z[2]
        out[k + 1, 0], out[k + 1, 1], out[k + 1, 2] = q1, qe, q2
    return iters


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--fs", type=float, default=48000.0)
    args = ap.parse_args(argv)
    model = phsym.parse(NETLIST)
    sim = phsym.Simulator(model, args.fs)
    res = sim.run(duration=args.seconds, x0="dc")          # compiles; the timed runs below are warm
    x0 = res.x[0]
    h = res.info["h"]
    vin = res.u[:, model.inputs.index("VIN")].copy()
    order = [model.states.index(s) for s in ("q_C1", "q_CE", "q_C2")]
    vc0 = float(sim.dc_solution(res.u[0])[1]["w_Q1.bc"])   # v_bc at DC -> v_c = v_b - v_bc
    vb0 = vin[0] - x0[order[0]] / C1
    out = np.zeros((vin.shape[0], 3))
    out[0] = x0[order]
    hand_loop(x0[order].copy(), vin, h, vb0 - vc0, out)      # compile
    hand, ours = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        iters = hand_loop(x0[order].copy(), vin, h, vb0 - vc0, out)
        hand.append(time.perf_counter() - t0)
        r = sim.run(duration=args.seconds, x0="dc")
        ours.append(r.info["wall_time"])
    diff = np.max(np.abs(out - r.x[:, order]) / np.max(np.abs(r.x[:, order]), axis=0))
    n = vin.shape[0] - 1
    print(f"| loop | steps/s | Newton iterations per step | unknowns |")
    print(f"| --- | --- | --- | --- |")
    print(f"| hand-written numba | {n / min(hand):.3g} | {iters / n:.2f} | 4 |")
    print(f"| phsym generated | {n / min(ours):.3g} | {r.iterations.mean():.2f} | {len(sim.plan().loop.unknowns)} |")
    print(f"\nphsym / hand = {min(hand) / min(ours):.2f}; trajectories agree to {diff:.1e} (relative, charges); "
          f"fs = {args.fs:g} Hz, {n} steps")


if __name__ == "__main__":
    main()
