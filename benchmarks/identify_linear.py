"""Benchmark of structure-preserving linear PHS identification (issue 4).

Reproduces the protocol of seed 000 (Guenther, Jacob, Totzeck):

1. model-order reduction of the 50-cell mass-spring-damper chain (n = 100,
   io_dim = 2) from a chirp + sine input on [0, 1], identified orders
   20..120, cross-validation with square wave + cosine;
2. the n = 5 synthetic cases (noise-free; noise 0.01 / 0.05 / 0.25) with a
   genuinely port-Hamiltonian truth (PSD R).

Reference outputs are computed with scipy.signal.lsim (exact for the
piecewise-linear input), not with the time stepper used for fitting.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/identify_linear.py [--quick]
(BLAS threading is set to 1 below before numpy loads: for n <= 120 the
multi-threaded BLAS only adds overhead on a 2-core machine.)
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.signal as ss  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phsym import LinearPHS  # noqa: E402
from phsym.benchmarks import msd_chain  # noqa: E402
from phsym.common.schemes import get_scheme  # noqa: E402
from phsym.identify import LinearPHSEstimator  # noqa: E402
from phsym.identify.linear_simulation import simulate as grid_simulation  # noqa: E402

SEED_TABLE = {20: 9.48, 40: 7.47, 60: 4.51, 80: 4.45, 100: 3.93, 120: 6.66}


def seed_inputs(t):
    u = np.column_stack([ss.chirp(t, f0=3, t1=1, f1=20), np.sin(2 * np.pi * 3 * t)])
    u_cv = np.column_stack([ss.square(t, duty=0.1), np.cos(np.pi * t)])
    return u, u_cv


def reference(sys_: LinearPHS, t, u, x0=None):
    return ss.lsim(sys_.to_scipy(), u, t, X0=x0, interp=True)[1].reshape(len(t), -1)


def on_grid(model, t, u, x0, method):
    """Outputs at the grid times of the identifier's own discretisation (the seed's metric)."""
    return grid_simulation(model.J, model.R, model.Q, model.B, x0, u, t[1] - t[0], get_scheme(method))[1]


def predict(est, t, u):
    return on_grid(est.model_, t, u, est.x0_, est.method)


def rel_inf(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def l2(a, t):
    return float(np.sqrt(np.trapezoid(np.sum(a * a, axis=1), t)))


def msd_benchmark(sizes, max_iter, configs):
    truth = msd_chain(50, 2, 1.0, 4.0, 4.0)
    t = np.linspace(0.0, 1.0, 1001)
    u, u_cv = seed_inputs(t)
    y, y_cv = reference(truth, t, u), reference(truth, t, u_cv)
    # warm up numba (compile or load the cache) outside the timings
    LinearPHSEstimator(4, max_iter=2).fit(t, u, y)
    rows = []
    for label, kw in configs:
        for n in sizes:
            start = {}

            def grab(k, model, x0, cost, start=start):
                if k == 0:
                    start["y"] = on_grid(model, t, u, x0, est.method)

            est = LinearPHSEstimator(n, max_iter=max_iter, random_state=0, **kw)
            t0 = time.perf_counter()
            est.fit(t, u, y)
            wall = time.perf_counter() - t0
            # second, untimed pass (0 iterations) only to record the start error
            LinearPHSEstimator(n, max_iter=0, random_state=0, callback=grab, **kw).fit(t, u, y)
            R_min = float(np.linalg.eigvalsh(est.model_.R).min())
            rows.append(dict(config=label, n=n, train0=100 * rel_inf(start["y"], y),
                             train=100 * rel_inf(predict(est, t, u), y),
                             cv=100 * rel_inf(predict(est, t, u_cv), y_cv),
                             cost0=float(est.history_["cost"][0]), cost=est.cost_,
                             iters=est.n_iter_, evals=est.n_evals_, time=wall, R_min=R_min,
                             hist=est.history_["cost"]))
            r = rows[-1]
            print(f"{label:27s} n={n:3d} start {r['train0']:6.1f}% train {r['train']:6.2f}% (seed {SEED_TABLE[n]:.2f}%) "
                  f"cv {r['cv']:6.2f}%  cost {r['cost0']:.2e} -> {r['cost']:.2e}  "
                  f"it {r['iters']} ev {r['evals']}  {r['time']:.2f}s  min eig R {R_min:.1e}",
                  flush=True)
    return rows


def synthetic_truth(seed=0):
    rng = np.random.default_rng(seed)
    n, m = 5, 2
    A = rng.uniform(-1, 1, (n, n))
    S = np.triu(A, 1)
    L = rng.uniform(-1, 1, (n, 2))
    return LinearPHS(S - S.T, L @ L.T, np.diag([1.0, 2.0, 3.0, 4.0, 5.0]),
                     rng.uniform(-1, 1, (n, m)))


def synthetic_benchmark(max_iter):
    truth = synthetic_truth(0)
    t = np.linspace(0.0, 1.0, 1001)
    u, u_cv = seed_inputs(t)
    y, y_cv = reference(truth, t, u), reference(truth, t, u_cv)
    x0_true = np.array([0.5, -0.3, 0.2, 0.1, -0.4])
    y_x0 = reference(truth, t, u, x0_true)
    rng = np.random.default_rng(1)
    cases = [
        ("J,R,B (Q = I gauge)", dict(free=("J", "R", "B")), y, y, y_cv),
        ("J,R,Q,B, lambda=1e-3 log Q", dict(free=("J", "R", "Q", "B"), regularization=1e-3),
         y, y, y_cv),
        ("x0 only (J,R,Q,B true)", dict(free=("x0",), fixed=dict(J=truth.J, R=truth.R,
                                                                Q=truth.Q, B=truth.B)),
         y_x0, y_x0, None),
    ]
    for sigma in (0.01, 0.05, 0.25):
        cases.append((f"J,R,B noise {sigma}", dict(free=("J", "R", "B")),
                      y + sigma * rng.standard_normal(y.shape), y, y_cv))
    rows = []
    for label, kw, data, clean, clean_cv in cases:
        est = LinearPHSEstimator(5, max_iter=max_iter, random_state=0, **kw)
        t0 = time.perf_counter()
        est.fit(t, u, data)
        wall = time.perf_counter() - t0
        # error of the initial guess (same start): re-run 0 iterations
        est0 = LinearPHSEstimator(5, max_iter=0, random_state=0, **kw).fit(t, u, data)
        row = dict(case=label, cost0=float(est.history_["cost"][0]), cost=est.cost_,
                   err0=float(np.max(np.abs(predict(est0, t, u) - clean))),
                   err=float(np.max(np.abs(predict(est, t, u) - clean))), time=wall,
                   iters=est.n_iter_)
        if clean_cv is not None:
            d = predict(est, t, u_cv) - clean_cv
            row["cv_l2"], row["cv_inf"] = l2(d, t), float(np.max(np.abs(d)))
        rows.append(row)
        cv = (f"cv L2 {row['cv_l2']:.2e} inf {row['cv_inf']:.2e}" if "cv_l2" in row else "")
        print(f"{label:30s} cost {row['cost0']:.2e} -> {row['cost']:.2e}  "
              f"|y-y_ref|_inf {row['err0']:.2e} -> {row['err']:.2e}  {cv}  {wall:.2f}s",
              flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sizes 20 and 60 only")
    ap.add_argument("--max-iter", type=int, default=100)
    args = ap.parse_args(argv)
    sizes = [20, 60] if args.quick else [20, 40, 60, 80, 100, 120]
    configs = [
        ("lbfgs/midpoint/data", dict(optimizer="lbfgs", init="data")),
        ("lbfgs/midpoint/seed", dict(optimizer="lbfgs", init="seed")),
        ("cg/midpoint/seed", dict(optimizer="cg", init="seed")),
        ("cg/explicit_euler/seed", dict(optimizer="cg", init="seed", method="explicit_euler")),
    ]
    print("== 50-cell MSD chain, seed 000 protocol ==")
    rows = msd_benchmark(sizes, args.max_iter, configs)
    print("\n== convergence: cost after k iterations (n = 60, seed start) ==")
    for r in rows:
        if r["n"] == 60 and r["config"] in ("lbfgs/midpoint/seed", "cg/midpoint/seed"):
            h = r["hist"]
            ks = [k for k in (0, 10, 25, 50, 100) if k < len(h)]
            print(f"{r['config']:22s} " + "  ".join(f"k={k}: {h[k]:.2e}" for k in ks))
    print("\n== n = 5 synthetic cases (PSD-R truth, lbfgs/midpoint/data, 300 iterations) ==")
    synthetic_benchmark(300)


if __name__ == "__main__":
    main()
