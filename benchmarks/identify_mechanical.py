"""Benchmark of MechanicalEstimator: the study of seed 004, chapter 5 (issue 14).

For the seed's 3-DOF system (15 dB) and 8-DOF system (appendix A.5, 20 dB):
PRBS forces on every mass (a new random level every sample, held over the
sample: the data are exactly ZOH-sampled; simulated here by the matrix
exponential, not by phsym), 6000 samples, white noise on every position at
the given SNR (per channel, by signal power), Monte Carlo over noise
realisations at each sampling time h (one input per h).  Relative errors
||dX||_F / ||X||_F of M, K, D and of A = [[0, I], [-M^-1 K, -M^-1 D]] for

* ``mech``: MechanicalEstimator (discretisation="auto");
* ``ee``: equation-error least squares of the midpoint model on the raw
  samples (the biased baseline);
* ``n4sid``: a compact PO-MOESP subspace identification (order 2n, 20 block
  rows, no feedthrough, B and x0 by least squares), d2c by the matrix logarithm and
  the second-order extraction (T = [C; C A]) - the seed's comparison;
* ``crb``: the output-error statistical bound, sqrt(trace cov(X)) / ||X||
  with cov = sigma^2 (J^T J)^-1 of the exact ZOH model at the truth.

Run:  python benchmarks/identify_mechanical.py [--runs 50] [--workers 2] [--out results.md]
      python benchmarks/identify_mechanical.py --timing 3 [--h3 ...] [--h8 ...]   (fit times, one process)
(BLAS threads are set to 1 before numpy loads; the Monte Carlo runs in a
process pool.)
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.signal as ss  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phsym.common.parallel import map_tasks  # noqa: E402
from phsym.identify.mechanical import MechanicalEstimator  # noqa: E402
from phsym.identify.mechanical.equation_error import equation_error  # noqa: E402
from phsym.identify.mechanical.oe import OutputError  # noqa: E402
from phsym.identify.mechanical.param import Parametrisation  # noqa: E402
from phsym.identify.mechanical.zoh_start import d2c_second_order  # noqa: E402


def system(name):
    """(M, D, K, SNR dB) of the seed's systems."""
    if name == "3dof":
        K = np.array([[4.0, -1, -1], [-1, 4, -1], [-1, -1, 4]])
        return np.diag([0.8, 2.0, 1.2]), 0.1 * K, K, 15.0
    a, b, c, e = 27071.1, 17071.1, 3535.5, 10000.0
    K = np.array([[a, 0, 0, 0, -e, 0, -c, -c], [0, b, 0, -e, 0, 0, -c, -c], [0, 0, a, 0, -c, c, -e, 0],
                  [0, -e, 0, b, c, -c, 0, 0], [-e, 0, -c, c, a, 0, 0, 0], [0, 0, c, -c, 0, b, 0, -e],
                  [-c, -c, -e, 0, 0, 0, a, 0], [-c, -c, 0, 0, 0, -e, 0, b]])
    a, b, c, e = 136.4, 86.4, 17.7, 50.0
    D = np.array([[a, 0, 0, 0, -e, 0, -c, -c], [0, b, 0, -e, 0, 0, -c, -c], [0, 0, a, 0, -c, c, -e, 0],
                  [0, -e, 0, b, c, -c, 0, 0], [-e, 0, -c, c, a, 0, 0, 0], [0, 0, c, -c, 0, b, 0, -e],
                  [-c, -c, -e, 0, 0, 0, a, 0], [-c, -c, 0, 0, 0, -e, 0, b]])
    return 100.0 * np.eye(8), D, K, 20.0


def first_order(M, D, K):
    n = M.shape[0]
    Mi = np.linalg.inv(M)
    return np.block([[np.zeros((n, n)), np.eye(n)], [-Mi @ K, -Mi @ D]]), np.vstack([np.zeros((n, n)), Mi])


def zoh_data(M, D, K, h, N, seed):
    """PRBS forces (level per sample) and exact ZOH positions from rest."""
    n = M.shape[0]
    u = np.sign(np.random.default_rng(seed).standard_normal((N, n)))
    u[0] = 0.0
    A, B = first_order(M, D, K)
    Ad, Bd, *_ = ss.cont2discrete((A, B, np.eye(2 * n), np.zeros((2 * n, n))), h, method="zoh")
    x = np.zeros(2 * n)
    q = np.zeros((N, n))
    for k in range(N - 1):
        x = Ad @ x + Bd @ u[k]
        q[k + 1] = x[:n]
    return u, q


# ------------------------------------------------------------- n4sid + d2c
def _hankel(z, i, j):
    return np.vstack([z[r:r + j].T for r in range(i)])


def n4sid(u, y, order, i=None):
    """Deterministic PO-MOESP: (Ad, Bd, C) with no feedthrough; B and x0 by least squares."""
    N, m = u.shape
    ny = y.shape[1]
    i = i or max(order // ny + 2, 20)        # short horizons fail at fine sampling (poles crowd at z = 1)
    j = N - 2 * i + 1
    Uf, Up = _hankel(u[i:], i, j), _hankel(u, i, j)
    Yf, Yp = _hankel(y[i:], i, j), _hankel(y, i, j)
    H = np.vstack([Uf, Up, Yp, Yf]) / np.sqrt(j)
    R = np.linalg.qr(H.T, mode="r").T                   # H = R Q (lower triangular R)
    a, b = i * m, i * (m + m + ny)
    R32 = R[b:, a:b]                                    # future outputs on the past, input-free part
    U, s, _ = np.linalg.svd(R32, full_matrices=False)
    G = U[:, :order] * np.sqrt(s[:order])               # extended observability matrix
    C = G[:ny]
    A = np.linalg.lstsq(G[:-ny], G[ny:], rcond=None)[0]
    # B (and x0) by least squares: x_{k+1} = A x_k + B u_k, y = C x
    Z = np.zeros((order, order * m))
    X0 = np.eye(order)
    rows_B, rows_x = [], []
    for k in range(N):
        rows_B.append(C @ Z)
        rows_x.append(C @ X0)
        Z = A @ Z + np.kron(u[k][None, :], np.eye(order))
        X0 = A @ X0
    Phi = np.hstack([np.vstack(rows_B), np.vstack(rows_x)])
    sol = np.linalg.lstsq(Phi, y.reshape(-1), rcond=None)[0]
    B = sol[:order * m].reshape(m, order).T             # vec(B) column-major: kron(u^T, I) vec(B)
    return A, B, C


# ------------------------------------------------------------- one Monte-Carlo run
def _errors(M, D, K, Mh, Dh, Kh):
    A, _ = first_order(M, D, K)
    out = {}
    for key, X, Xh in (("M", M, Mh), ("K", K, Kh), ("D", D, Dh)):
        out[key] = float(np.linalg.norm(Xh - X) / np.linalg.norm(X))
    try:
        Ah, _ = first_order(Mh, Dh, Kh)
        out["A"] = float(np.linalg.norm(Ah - A) / np.linalg.norm(A))
    except np.linalg.LinAlgError:
        out["A"] = float("inf")
    return out


def _warm_up():
    """Load the compiled numba kernel once per worker, so that fit times do not include it."""
    from phsym.identify.mechanical.gram import _modal_filter
    _modal_filter(np.ones(1, dtype=complex), np.ones((1, 4)))   # same types as in a fit


def run_one(task):
    name, h, N, seed, rep, max_iter = task
    M, D, K, snr = system(name)
    n = M.shape[0]
    u, q = zoh_data(M, D, K, h, N, seed)
    sigma = np.sqrt(np.mean(q ** 2, axis=0)) * 10 ** (-snr / 20)
    rng = np.random.default_rng([seed, rep])
    y = q + sigma * rng.standard_normal(q.shape)
    t = np.arange(N) * h
    res = {"system": name, "h": h, "rep": rep}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        try:
            est = MechanicalEstimator(n, max_iter=max_iter).fit(t, u, y)
            res["mech"] = _errors(M, D, K, est.M_, est.D_, est.K_)
            res["mech_kind"] = est.discretisation_
            res["mech_iter"] = int(sum(est.n_iter_.values()))
        except Exception as exc:                    # a failure is a result: counted, not hidden
            res["mech"] = {"error": str(exc)}
        res["mech_time"] = time.perf_counter() - t0
        Me, De, Ke, _ = equation_error(u, y, h, np.eye(n))
        res["ee"] = _errors(M, D, K, Me, De, Ke)
        try:
            Ad, Bd, C = n4sid(u, y, 2 * n)
            Ms, Ds, Ks = d2c_second_order(Ad, Bd, C, h, np.eye(n))
            res["n4sid"] = _errors(M, D, K, Ms, Ds, Ks)
        except Exception as exc:
            res["n4sid"] = {"error": str(exc)}
    return res


def crb(name, h, N, seed):
    """Output-error bound sqrt(trace cov X)/||X|| at the truth (exact ZOH model, known sigma)."""
    M, D, K, snr = system(name)
    n = M.shape[0]
    u, q = zoh_data(M, D, K, h, N, seed)
    sigma2 = np.mean(q ** 2, axis=0) * 10 ** (-snr / 10)
    par = Parametrisation(n, n, np.eye(n))
    theta = par.pack(M, D, K, np.eye(n))
    W = np.sqrt(1.0 / sigma2)                       # whiten channels with different noise levels
    J = OutputError(par, u, q, h, "zoh").jacobian(theta).reshape(N, n, -1) * W[None, :, None]
    J = J.reshape(N * n, -1)
    G = par.matrix_jacobian(theta)
    cov = G @ np.linalg.pinv(J.T @ J) @ G.T
    t = par.n_tri
    out = {}
    r, c = par.rows, par.cols
    wts = np.where(r == c, 1.0, 2.0)                # off-diagonal entries appear twice in ||.||_F
    for k, (key, X) in enumerate((("M", M), ("D", D), ("K", K))):
        var = np.diag(cov)[k * t:(k + 1) * t]
        out[key] = float(np.sqrt(np.sum(wts * var)) / np.linalg.norm(X))
    return out


def timing(cases, reps, N):
    """Fit times in this process (no pool): ``reps`` noise realisations per (system, h), one input each."""
    warnings.simplefilter("ignore")
    _warm_up()
    for name, h in cases:
        M, D, K, snr = system(name)
        n = M.shape[0]
        u, q = zoh_data(M, D, K, h, N, 7)
        ts, its, errs = [], [], []
        for rep in range(reps):
            noise = np.random.default_rng([7, rep]).standard_normal(q.shape)
            y = q + np.sqrt(np.mean(q ** 2, 0)) * 10 ** (-snr / 20) * noise
            t0 = time.perf_counter()
            est = MechanicalEstimator(n).fit(np.arange(N) * h, u, y)
            ts.append(time.perf_counter() - t0)
            its.append(sum(est.n_iter_.values()))
            errs.append([100 * np.linalg.norm(X - Y) / np.linalg.norm(Y)
                         for X, Y in ((est.M_, M), (est.K_, K), (est.D_, D))])
        print(f"{name} h={h:g}: fit time mean {np.mean(ts):.2f} s (min {np.min(ts):.2f}, max {np.max(ts):.2f}), "
              f"LM iterations {np.mean(its):.0f}, errors M/K/D % {np.round(np.mean(errs, 0), 2).tolist()}", flush=True)


def summarise(results, bounds):
    rows = {}
    for r in results:
        rows.setdefault((r["system"], r["h"]), []).append(r)
    lines = []
    for (name, h), rs in sorted(rows.items()):
        line = {"system": name, "h": h, "runs": len(rs), "crb": bounds.get((name, h), {})}
        for meth in ("mech", "ee", "n4sid"):
            ok = [r[meth] for r in rs if "error" not in r[meth] and all(np.isfinite(list(r[meth].values())))]
            line[meth] = {k: (float(np.mean([e[k] for e in ok])), float(np.std([e[k] for e in ok])),
                              float(np.median([e[k] for e in ok])))
                          for k in ("M", "K", "D", "A")} if ok else {}
            line[meth + "_failed"] = len(rs) - len(ok)
        okm = [r["mech"] for r in rs if "error" not in r["mech"]]
        line["mech_rms"] = {k: float(np.sqrt(np.mean([e[k] ** 2 for e in okm]))) for k in ("M", "K", "D")} if okm else {}
        line["mech_time"] = (float(np.mean([r["mech_time"] for r in rs])), float(np.max([r["mech_time"] for r in rs])))
        kinds = [r.get("mech_kind") for r in rs]
        line["zoh_share"] = kinds.count("zoh") / len(kinds)
        its = [r["mech_iter"] for r in rs if "mech_iter" in r]
        line["mech_iter"] = (float(np.mean(its)), int(np.max(its))) if its else (float("nan"), 0)
        lines.append(line)
    return lines


def markdown(lines):
    out = []
    for name in sorted({ln["system"] for ln in lines}):
        out.append(f"\n### {name}\n")
        out.append("Relative errors in %, mean ± standard deviation (median) over the runs (non-finite results count as "
                   "failures); `crb`: output-error bound (root mean square); mech/crb: rms error of mech over crb.\n")
        out.append("| h | runs | X | mech | ee (equation error) | n4sid + d2c | crb | mech/crb |")
        out.append("|---|---|---|---|---|---|---|---|")
        for ln in [x for x in lines if x["system"] == name]:
            for X in ("M", "K", "D", "A"):
                cells = []
                for meth in ("mech", "ee", "n4sid"):
                    v = ln[meth].get(X)
                    cells.append(f"{100 * v[0]:.3g} ± {100 * v[1]:.2g} ({100 * v[2]:.3g})" if v else "failed")
                b = ln["crb"].get(X)
                ratio = f"{ln['mech_rms'][X] / b:.2f}" if (b and ln["mech_rms"].get(X)) else "-"
                out.append(f"| {ln['h']:g} | {ln['runs']} | {X} | " + " | ".join(cells)
                           + f" | {100 * b:.3g} | {ratio} |" if b else f"| {ln['h']:g} | {ln['runs']} | {X} | "
                           + " | ".join(cells) + " | - | - |")
        out.append("\n| h | mech fit time mean / max [s] | LM iterations mean / max | runs where ZOH model kept "
                   "| failures mech / n4sid |")
        out.append("|---|---|---|---|---|")
        for ln in [x for x in lines if x["system"] == name]:
            out.append(f"| {ln['h']:g} | {ln['mech_time'][0]:.2f} / {ln['mech_time'][1]:.2f} | "
                       f"{ln['mech_iter'][0]:.0f} / {ln['mech_iter'][1]} | "
                       f"{100 * ln['zoh_share']:.0f} % | {ln['mech_failed']} / {ln['n4sid_failed']} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=50, help="noise realisations per h (default 50)")
    p.add_argument("--workers", type=int, default=2, help="process pool size (default 2)")
    p.add_argument("--samples", type=int, default=6000)
    p.add_argument("--h3", default="0.005,0.01,0.02,0.05,0.1,0.2,0.5", help="sampling times, 3-DOF")
    p.add_argument("--h8", default="0.0005,0.001,0.002,0.005,0.01,0.02,0.05", help="sampling times, 8-DOF")
    p.add_argument("--systems", default="3dof,8dof")
    p.add_argument("--max-iter", type=int, default=100, help="MechanicalEstimator max_iter (default 100)")
    p.add_argument("--out", default=None, help="write the markdown tables here (and .json next to it)")
    p.add_argument("--timing", type=int, default=0, metavar="REPS",
                   help="only time REPS sequential fits per system and h in this process (no Monte Carlo)")
    args = p.parse_args(argv)
    hs = {"3dof": [float(x) for x in args.h3.split(",")], "8dof": [float(x) for x in args.h8.split(",")]}
    if args.timing:
        timing([(name, h) for name in args.systems.split(",") for h in hs[name]], args.timing, args.samples)
        return
    tasks, bounds = [], {}
    for name in args.systems.split(","):
        for k, h in enumerate(hs[name]):
            seed = 1000 * (name == "8dof") + k
            bounds[(name, h)] = crb(name, h, args.samples, seed)
            tasks += [(name, h, args.samples, seed, rep, args.max_iter) for rep in range(args.runs)]
    # the slow 8-DOF tasks first so that the pool stays busy to the end
    tasks.sort(key=lambda tk: (tk[0] != "8dof", -tk[1]))
    t0 = time.time()

    def progress(done, total):
        if done % 10 == 0 or done == total:
            print(f"{done}/{total} runs, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)

    # phsym's executor machinery (phsym.common.parallel.map_tasks) over a process pool
    with ProcessPoolExecutor(max_workers=args.workers, initializer=_warm_up) as pool:
        results = map_tasks(run_one, tasks, pool, progress)
    lines = summarise(results, bounds)
    md = (f"Command: `python benchmarks/identify_mechanical.py {' '.join(argv if argv is not None else sys.argv[1:])}`; "
          f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}; {args.workers} worker processes; wall time {time.time() - t0:.0f} s.\n"
          + markdown(lines))
    print(md)
    if args.out:
        Path(args.out).write_text(md, encoding="utf-8")
        Path(args.out).with_suffix(".json").write_text(json.dumps(lines, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
