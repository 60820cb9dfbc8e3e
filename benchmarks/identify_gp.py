"""Benchmark of GP identification of pH-DAE effort functions (issue 13).

Reproduces the protocol of seed 002 (Zaspel & Günther) on its two systems,
the RC circuit with a nonlinear capacitor (index 1) and the planar pendulum
(index 3), data by explicit Euler exactly as in the seed:

* a fixed random test set (300 samples) and, from the remaining samples,
  nested random training sets N_T = 8, 16, 32, 64, 128, five repetitions,
  RMSE per component of (J - R) z and of z on the test set (mean over the
  repetitions), against the exact effort at the test states;
* derivatives: exact (the right-hand side at the samples), estimated on the
  full series (RC: GP derivative as in the seed; pendulum: central
  differences as in the seed) and estimated from the training subset only
  (GP derivative of the sorted training samples);
* extrapolation: 32 training samples from t in [0, 20], test on (20, 30];
* both variants: the seed's multi-task effort GP ("direct") and the
  Hamiltonian GP ("energy", H on all states);
* the median wall time per fit.

The energy variant factorises a dense covariance (its hyperparameters on a
subset of 48 samples): it runs two repetitions on both systems by default
(``--energy-reps``; ``--energy-max`` limits its N_T per system).

Run:  python benchmarks/identify_gp.py [--quick] [--reps 5] [--executor threads]
      python benchmarks/identify_gp.py --timing [--reps 5] [--variants direct] [--timing-nt 64,128]   (fit times only)
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phsym.identify.gp import EffortGP, estimate_derivative  # noqa: E402
from phsym.identify.gp.seeds import pendulum, rc_circuit  # noqa: E402

FULL_METHOD = {"rc": "gp", "pendulum": "central"}
#: Where a fit's optimiser starts run (--executor): None one after the other, "threads" at the same time.
EXECUTOR = None
#: Optimiser starts per fit (--restarts; None: EffortGP's default).
RESTARTS = None


def rmse(a, b):
    return np.sqrt(np.mean((a - b) ** 2, axis=0))


def fit(s, variant, X, U, Xdot=None, t=None):
    # derivative="gp": the subset mode estimates x' by the seed's GP derivative of the training samples
    gp = EffortGP(s.E, s.J, s.R, s.B, variant=variant, hamiltonian_inputs="all", derivative="gp", executor=EXECUTOR,
                  **({} if RESTARTS is None else {"restarts": RESTARTS}))
    start, cpu = time.perf_counter(), time.process_time()
    gp.fit(X, U, Xdot=Xdot, t=t)
    gp.bench_cpu = time.process_time() - cpu       # CPU time: less inflated than wall time on a shared machine
    return gp, time.perf_counter() - start


def errors(s, gp, idx):
    z = s.effort(s.X[idx])
    zp = gp.predict(s.X[idx])
    A = s.J - s.R
    return rmse(zp @ A.T, z @ A.T), rmse(zp, z)


def learning_curves(s, variant, sizes, reps, full_xdot, log):
    sizes = list(sizes)
    rng = np.random.default_rng(0)
    N = len(s.t)
    perm = rng.permutation(N)
    test, pool = perm[:300], perm[300:]
    out = {}
    for mode in ("exact", "full", "subset"):
        for nt in sizes:
            out[(mode, nt)] = {"Az": [], "z": [], "time": [], "dx": []}
    for r in range(reps):
        order = np.random.default_rng(100 + r).permutation(pool)
        for nt in sizes:
            tr = order[:nt]
            srt = np.sort(tr)
            for mode in ("exact", "full", "subset"):
                if mode == "exact":
                    gp, dt = fit(s, variant, s.X[tr], s.U[tr], Xdot=s.Xdot[tr])
                elif mode == "full":
                    gp, dt = fit(s, variant, s.X[tr], s.U[tr], Xdot=full_xdot[tr])
                else:
                    gp, dt = fit(s, variant, s.X[srt], s.U[srt], t=s.t[srt])
                ez, e = errors(s, gp, test)
                rec = out[(mode, nt)]
                rec["Az"].append(ez)
                rec["z"].append(e)
                rec["time"].append(dt)
                diff = np.nonzero(s.E.any(axis=0))[0]       # error of the x' the fit used (training rows)
                rows = srt if mode == "subset" else tr
                rec["dx"].append(rmse(gp.derivatives_[:, diff], s.Xdot[rows][:, diff]))
            log(f"  {s.name} {variant} rep {r} N_T={nt} done")
    return out


def extrapolation(s, variant, full_xdot, reps):
    early = np.nonzero(s.t <= 20.0)[0]
    late = np.nonzero(s.t > 20.0)[0]
    res = []
    for r in range(reps):
        tr = np.random.default_rng(200 + r).choice(early, 32, replace=False)
        gp, _ = fit(s, variant, s.X[tr], s.U[tr], Xdot=full_xdot[tr])
        res.append(errors(s, gp, late)[1])
    return np.mean(res, axis=0)


def timing(variants, reps, nt=128):
    """Wall time of the N_T = 128 fits alone (the learning curves' training sets), with load averages."""
    print(f"\nfit time at N_T = {nt}, median (largest) of {reps} fits, starts on {EXECUTOR or 'serial'}; "
          f"load average at start {os.getloadavg()[0]:.2f}\n")
    print("| system | variant | derivatives | median (s) | largest (s) | median CPU (s) | evaluations (median) | load |")
    print("|---|---|---|---|---|---|---|---|")
    for s in (rc_circuit(), pendulum()):
        full_xdot = estimate_derivative(s.t, s.X, FULL_METHOD[s.name], columns=np.nonzero(s.E.any(axis=0))[0])
        pool = np.random.default_rng(0).permutation(len(s.t))[300:]
        for variant in variants:
            for mode in ("exact", "full", "subset"):
                ts, its, cpus = [], [], []
                for r in range(reps):
                    tr = np.random.default_rng(100 + r).permutation(pool)[:nt]
                    srt = np.sort(tr)
                    if mode == "subset":
                        gp, dt = fit(s, variant, s.X[srt], s.U[srt], t=s.t[srt])
                    else:
                        gp, dt = fit(s, variant, s.X[tr], s.U[tr], Xdot=(s.Xdot if mode == "exact" else full_xdot)[tr])
                    ts.append(dt)
                    its.append(gp.n_evals_)
                    cpus.append(gp.bench_cpu)
                print(f"| {s.name} | {variant} | {mode} | {np.median(ts):.2f} | {max(ts):.2f} | {np.median(cpus):.2f} "
                      f"| {int(np.median(its))} "
                      f"| {os.getloadavg()[0]:.2f} |", flush=True)


def fmt(v):
    return " ".join(f"{x:.1e}" for x in v)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N_T up to 32, one repetition")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--variants", default="direct,energy")
    ap.add_argument("--energy-reps", type=int, default=2)
    ap.add_argument("--energy-max", default="rc:128,pendulum:128", help="largest N_T of the energy variant")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--timing", action="store_true", help="only the fit times at --timing-nt (median of --reps)")
    ap.add_argument("--timing-nt", default="128", help="comma-separated N_T of --timing (default 128)")
    ap.add_argument("--executor", choices=("serial", "threads"), default="serial",
                    help="where a fit's optimiser starts run (EffortGP's executor)")
    ap.add_argument("--restarts", type=int, default=None, help="optimiser starts per fit (default: EffortGP's)")
    args = ap.parse_args(argv)
    global EXECUTOR, RESTARTS
    RESTARTS = args.restarts
    EXECUTOR = None if args.executor == "serial" else args.executor
    if args.timing:
        for nt in (int(v) for v in args.timing_nt.split(",")):
            timing(args.variants.split(","), args.reps, nt)
        return
    sizes = [8, 16, 32] if args.quick else [8, 16, 32, 64, 128]
    reps = 1 if args.quick else args.reps
    log = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    print(f"machine: {platform.machine()} {platform.processor() or ''} {platform.system()} "
          f"python {platform.python_version()}, numpy {np.__version__}; load average at start "
          f"{os.getloadavg()[0]:.2f}")
    print(f"command: python benchmarks/identify_gp.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    for s in (rc_circuit(), pendulum()):
        start = time.perf_counter()
        full_xdot = estimate_derivative(s.t, s.X, FULL_METHOD[s.name], columns=np.nonzero(s.E.any(axis=0))[0])
        t_deriv = time.perf_counter() - start
        print(f"\n### {s.name}: {len(s.t)} samples; full-series derivative ({FULL_METHOD[s.name]}) "
              f"in {t_deriv:.2f} s; RMSE per component on 300 test samples\n", flush=True)
        emax = dict((k, int(v)) for k, v in (p.split(":") for p in args.energy_max.split(",")))
        for variant in args.variants.split(","):
            vs = [n for n in sizes if variant == "direct" or n <= emax.get(s.name, 128)]
            vr = reps if variant == "direct" or args.quick else args.energy_reps
            curves = learning_curves(s, variant, vs, vr, full_xdot, log)
            print(f"\n{variant} (mean of {vr} repetitions):\n", flush=True)
            print("| derivatives | N_T | RMSE x' (training) | RMSE (J-R) z | RMSE z | median fit time (s) |")
            print("|---|---|---|---|---|---|")
            for mode in ("exact", "full", "subset"):
                for nt in vs:
                    rec = curves[(mode, nt)]
                    print(f"| {mode} | {nt} | {fmt(np.mean(rec['dx'], axis=0))} | {fmt(np.mean(rec['Az'], axis=0))} "
                          f"| {fmt(np.mean(rec['z'], axis=0))} "
                          f"| {np.median(rec['time']):.2f} |")
            ext = extrapolation(s, variant, full_xdot, vr)
            print(f"\nload average after {variant}: {os.getloadavg()[0]:.2f}")
            print(f"\nextrapolation ({variant}, N_T = 32 from t <= 20, test t > 20, full-series derivatives): "
                  f"RMSE z = {fmt(ext)}", flush=True)


if __name__ == "__main__":
    main()
