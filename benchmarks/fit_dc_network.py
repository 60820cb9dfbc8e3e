"""Benchmark: grey-box fit of the DC power network (seed 001, benchmarks.md section 2).

Run from the repository root::

    python3.11 benchmarks/fit_dc_network.py [--truth be|fine] [--runs 10] [--json out.json]

Data: nominal theta* = {L: 2, C1: 0.01, C2: 0.02, R_L: 1, R_G: 6, R_R: 3}; input
u(t) = sum_{i=1..40} sin(2 pi i f0 t + phi_i), f0 = 0.1 Hz, phases uniform in
[0, 2 pi); 50 s at Ts = 0.005 s (10,000 steps); train / validation / test
records with different input realisations and random initial states; Gaussian
output noise with std = std(clean output) * 10^(-SNR/20).

``--truth be`` (default) generates the data with phsym's backward Euler at Ts
(the discretisation the model uses, as in seed 001); ``--truth fine`` with the
implicit midpoint rule at Ts/20 sampled every 20 steps (a continuous-time
truth), fitted with the midpoint scheme at Ts.

(a) output y = I_G (= y(VG)), SNR 30 / 20 / 10 dB: NRMS on the test record
    against the noisy and the noise-free output.  The initial state is
    estimated with the parameters during the fit, and on validation/test
    records from their first 2 s with the fitted parameters.
(b) outputs (I_G, V1, V2) at SNR 40 dB, ``--runs`` independent records:
    relative parameter deviations.
(c) wall time per fit (module loaded from the cache; the first-ever run also
    compiles once).

NRMS = RMS(y_hat - y) / std(y) (seed 001, eq. 14) = ||y_hat - y|| / ||y - mean(y)||.
"""
from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

import phsym
from phsym.identify import ParameterEstimator
from phsym.common.schemes import get_scheme
from phsym.identify import UnidentifiableParameterWarning, nrms
from phsym.identify.data import measurements, step_targets

ROOT = Path(__file__).resolve().parent.parent
THETA = {"L": 2.0, "C1": 0.01, "C2": 0.02, "R_L": 1.0, "R_G": 6.0, "R_R": 3.0}
START = {"L": 1.5, "C1": 0.015, "C2": 0.015, "R_L": 1.5, "R_G": 4.5, "R_R": 4.0}
TS, T_END, F0, NH = 0.005, 50.0, 0.1, 40
OUT3 = ["y(VG)", "v(n1)", "v(n2)"]


def record(model, rng, truth: str):
    """One noise-free record: t, u, outputs (step values for the BE truth, grid samples otherwise), true x0."""
    t = np.arange(int(round(T_END / TS)) + 1) * TS
    ph = rng.uniform(0, 2 * np.pi, NH)
    u_fun = lambda tt: sum(np.sin(2 * np.pi * (i + 1) * F0 * tt + ph[i]) for i in range(NH))  # noqa: E731
    x0 = np.array([THETA["C1"] * rng.uniform(-2, 2), THETA["L"] * rng.uniform(-0.3, 0.3),
                   THETA["C2"] * rng.uniform(-2, 2)])
    if truth == "be":
        res = phsym.Simulator(model, 1 / TS, "backward_euler").run(u={"VG": u_fun(t)}, x0=x0)
        y = {k: res[k] for k in OUT3}          # step values, as the simulator reports them
    else:
        sub = 20
        tf = np.arange((len(t) - 1) * sub + 1) * (TS / sub)
        res = phsym.Simulator(model, sub / TS, "midpoint").run(u={"VG": u_fun(tf)}, x0=x0)
        # midpoint step values live at step midpoints: average neighbours to get grid values
        y = {}
        for k in OUT3:
            s = res[k]
            grid = np.empty(len(tf))
            grid[1:-1] = 0.5 * (s[:-1] + s[1:])
            grid[0], grid[-1] = s[0], s[-1]
            y[k] = grid[::sub]
    return t, u_fun(t), y, x0


def noisy(y, snr, rng):
    return {k: v + rng.standard_normal(v.size) * np.std(v) * 10 ** (-snr / 20) for k, v in y.items()}


def test_nrms(est, t, u, y_noisy, y_clean, label, n_init=400):
    """x0 from the first 2 s with the fitted parameters, then simulate the whole record."""
    labels = list(est.outputs)
    short = n_init - (len(t) - len(y_noisy[labels[0]]))         # step values have one sample less
    x0 = est.estimate_initial_state(t[:n_init], u[:n_init], {k: y_noisy[k][:short] for k in labels})
    yp = est.predict(t, u, x0=x0)[label]
    scheme = get_scheme(est.method)

    def ref(y):          # compare like the fit does (phsym.identify.data.step_targets)
        return step_targets(measurements(t, u, {label: y[label]}, ["VG"], [label]), scheme)[:, 0]
    return nrms(yp, ref(y_noisy)), nrms(yp, ref(y_clean))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--truth", choices=("be", "fine"), default="be")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    method = "backward_euler" if args.truth == "be" else "midpoint"
    model = phsym.load(ROOT / "netlists" / "dc_network.cir")
    rng = np.random.default_rng(args.seed)
    sets = {name: record(model, rng, args.truth) for name in ("train", "validation", "test")}
    out = {"truth": args.truth, "method": method, "a": [], "b": [], "times": []}
    print(f"# DC power network, data truth = {args.truth}, model scheme = {method}, Ts = {TS}, "
          f"{len(sets['train'][0]) - 1} steps per record\n")
    # warm-up (loads / compiles the generated modules once)
    t0 = time.perf_counter()
    for labels in (["y(VG)"], OUT3):
        ParameterEstimator(model, list(THETA), labels, method=method, x0="estimate", max_nfev=1) \
            .fit(*sets["train"][:2], {k: sets["train"][2][k] for k in labels})
    print(f"module load / compile: {time.perf_counter() - t0:.1f} s\n")

    print("## (a) output I_G = y(VG)\n")
    print("| SNR dB | noise std / std(y) | NRMS train | NRMS valid. | NRMS test (noisy) | NRMS test (noise-free) "
          "| floor | fit time s | evals | flagged |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for snr in (30, 20, 10):
        t, u, y, _ = sets["train"]
        yn = noisy(y, snr, rng)
        est = ParameterEstimator(model, list(THETA), ["y(VG)"], method=method, initial=START, x0="estimate",
                                 n_starts=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnidentifiableParameterWarning)
            est.fit(t, u, {"y(VG)": yn["y(VG)"]})
        tv, uv, yv, _ = sets["validation"]
        yvn = noisy(yv, snr, rng)
        nv, _ = test_nrms(est, tv, uv, yvn, yv, "y(VG)")
        tt, ut, yt, _ = sets["test"]
        ytn = noisy(yt, snr, rng)
        n_noisy, n_clean = test_nrms(est, tt, ut, ytn, yt, "y(VG)")
        floor = 10 ** (-snr / 20) / np.sqrt(1 + 10 ** (-snr / 10))
        print(f"| {snr} | {10 ** (-snr / 20):.3f} | {est.nrms_['y(VG)']:.4f} | {nv:.4f} | {n_noisy:.4f} | "
              f"{n_clean:.5f} | {floor:.4f} | {est.fit_time_:.2f} | {est.result_.nfev} | "
              f"{','.join(est.unidentifiable_) or '-'} |")
        out["a"].append({"snr": snr, "nrms_train": est.nrms_["y(VG)"], "nrms_valid": nv, "nrms_test_noisy": n_noisy,
                         "nrms_test_clean": n_clean, "params": est.params_, "rel_std": est.relative_std_,
                         "fit_time": est.fit_time_})
        out["times"].append(est.fit_time_)
    print("\nrelative std (Cramér-Rao) of the last (10 dB) I_G-only fit: "
          + ", ".join(f"{k} {v:.2%}" for k, v in est.relative_std_.items()))

    print(f"\n## (b) outputs (I_G, V1, V2), SNR 40 dB, {args.runs} runs\n")
    devs, stds = [], []
    for r in range(args.runs):
        t, u, y, x0 = record(model, rng, args.truth)
        yn = noisy(y, 40, rng)
        est = ParameterEstimator(model, list(THETA), OUT3, method=method, initial=START, x0="estimate")
        est.fit(t, u, yn)
        devs.append([100 * (est.params_[k] / v - 1) for k, v in THETA.items()])
        stds.append([100 * est.relative_std_[k] for k in THETA])
        out["times"].append(est.fit_time_)
        out["b"].append({"params": est.params_, "rel_std": est.relative_std_, "fit_time": est.fit_time_,
                         "nfev": est.result_.nfev})
    devs, stds = np.array(devs), np.array(stds)
    print("| parameter | median abs dev % | max abs dev % | empirical std % | predicted std % (mean) |")
    print("|---|---|---|---|---|")
    for j, k in enumerate(THETA):
        print(f"| {k} | {np.median(np.abs(devs[:, j])):.4f} | {np.max(np.abs(devs[:, j])):.4f} | "
              f"{np.std(devs[:, j], ddof=1):.4f} | {np.mean(stds[:, j]):.4f} |")
    print(f"\nall parameters: median |dev| {np.median(np.abs(devs)):.4f} %, max |dev| {np.max(np.abs(devs)):.4f} %")
    times = np.array(out["times"])
    print(f"\n## (c) wall time per fit: median {np.median(times):.2f} s, max {np.max(times):.2f} s "
          f"({len(times)} fits of 10,000 steps)")
    out["b_summary"] = {"median_abs_dev_pct": float(np.median(np.abs(devs))),
                        "max_abs_dev_pct": float(np.max(np.abs(devs)))}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=float))


if __name__ == "__main__":
    main()
