"""Simulation benchmark: phsym vs a hand-written numba loop vs scipy solve_ivp.

Run from the repository root::

    PYTHONPATH=. python3.11 benchmarks/bench_simulate.py [--quick] [--markdown]

Models: series RLC (netlists/rlc.cir), diode clipper (netlists/diode_clipper.cir:
48 kHz, 1 s of a 1 V 1 kHz sine, Rs = 2.2k, C = 10n, Is = 2.52n, N = 1.752),
mass-spring-damper chains of 50 and 1000 cells (generated netlists).  For each:
steps/s of phsym (compiled loop, warm), of a hand-written numba loop of the
same scheme (where written) and of scipy's solve_ivp tuned to the same
accuracy, plus the wall time of a fresh process (interpreter start included)
to the first sample of ``phsym.simulate(file)``: with empty caches (cold),
with the caches that run filled (warm: snapshot and numba cache), and for
Newton models with the loop compiled ahead of time (the background build of
:mod:`phsym.codegen.aot`, run in the foreground here).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import njit
from scipy.integrate import solve_ivp


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import phsym  # noqa: E402
from phsym.simulation import Simulator  # noqa: E402
from phsym.simulation.examples import chain_netlist  # noqa: E402

FS = 48000.0
RS, CC, IS, NN, VT = 2200.0, 10e-9, 2.52e-9, 1.752, 0.02585


# ------------------------------------------------------------ hand-written
@njit(cache=True)
def clipper_hand(u, h, Rs, C, Is, nvt, X):
    """Discrete gradient (= midpoint here: linear C) with scalar Newton."""
    x = 0.0
    dx = 0.0
    X[0] = x
    for k in range(u.shape[0] - 1):
        ub = 0.5 * (u[k] + u[k + 1])
        for it in range(50):
            vb = (x + 0.5 * dx) / C
            a = vb / nvt
            ea = math.exp(a)
            eb = 1.0 / ea
            F = dx - h * ((ub - vb) / Rs - Is * (ea - eb))
            J = 1.0 + h * (0.5 / (C * Rs) + 0.5 * Is * (ea + eb) / (nvt * C))
            d = -F / J
            dx += d
            if abs(d) <= 1e-12 * (abs(x) + abs(dx) + C):
                break
        x += dx
        X[k + 1] = x
    return x


@njit(cache=True)
def linear_hand(Ad, Bd, u, X):
    """x_{k+1} = Ad x_k + Bd ubar (midpoint / bilinear), dense."""
    n = Ad.shape[0]
    m = Bd.shape[1]
    x = np.zeros(n)
    xn = np.zeros(n)
    for k in range(u.shape[0] - 1):
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += Ad[i, j] * x[j]
            for j in range(m):
                s += Bd[i, j] * 0.5 * (u[k, j] + u[k + 1, j])
            xn[i] = s
        for i in range(n):
            x[i] = xn[i]
            X[k + 1, i] = x[i]
    return x


def midpoint_matrices(A, B, h):
    n = A.shape[0]
    M = np.eye(n) - 0.5 * h * A
    return np.linalg.solve(M, np.eye(n) + 0.5 * h * A), np.linalg.solve(M, h * B)


# ------------------------------------------------------------ timing utils
def best_of(f, repeat=3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def matched_ivp(rhs, y0, T, t_eval, target_err, ref, method="RK45", jac=None):
    """Loosest rtol whose max error against ``ref`` is <= target_err; returns (time, rtol, err)."""
    for rtol in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11):
        kw = {"jac": jac} if jac is not None else {}
        t0 = time.perf_counter()
        sol = solve_ivp(rhs, (0, T), y0, method=method, rtol=rtol, atol=rtol * 1e-6, t_eval=t_eval, **kw)
        dt = time.perf_counter() - t0
        err = np.max(np.abs(sol.y.T - ref))
        if err <= target_err:
            return dt, rtol, err
    return dt, rtol, err


FIRST_CHILD = r"""
import sys, time
import json
import phsym
res = phsym.simulate({path!r}, 48000.0, duration=1 / 48000.0, u={u})
first = time.time() - float(sys.argv[1])     # from the parent's spawn: interpreter start included
print(json.dumps({{"first": first, "key": res.info.get("key"), "warm": bool(res.info.get("warm_start")),
                  "compiled": res.info.get("compiled")}}))
"""


def _first(path, u_expr, env):
    code = FIRST_CHILD.format(path=str(path), u=u_expr)
    out = subprocess.run([sys.executable, "-c", code, repr(time.time())], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


SKIP_FIRST = False


def first_sample(netlist_text, u_expr):
    """Wall time from spawning a fresh process to the first sample of ``phsym.simulate(file)``
    (interpreter start included, interpreter exit not): cold
    (empty caches), warm (numba cache and snapshot), warm with the
    ahead-of-time extension (Newton models).  Best of 2 cold / 3 warm runs."""
    if SKIP_FIRST:
        return float("nan"), (float("nan"), False), float("nan")
    cold, warm, aot = [], [], []
    for rep in range(2):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "model.cir"
            path.write_text(netlist_text)
            env = dict(os.environ, PHSYM_CACHE_DIR=str(Path(d) / "phsym"),
                       NUMBA_CACHE_DIR=str(Path(d) / "numba"), PYTHONPATH=str(ROOT), PHSYM_AOT="0")
            first = _first(path, u_expr, env)
            assert not first["warm"]
            cold.append(first["first"])
            if rep:
                continue
            for _ in range(3):
                rec = _first(path, u_expr, env)
                warm.append(rec["first"])
                snapshot = rec["warm"]       # sparse linear models have no snapshot
            if first["key"]:        # Newton loop: compile ahead of time, as the background build would
                subprocess.run([sys.executable, "-m", "phsym.codegen.aot", first["key"]], env=env, check=True)
                for _ in range(3):
                    rec = _first(path, u_expr, env)
                    assert rec["compiled"] == "ahead of time"
                    aot.append(rec["first"])
    return min(cold), (min(warm), snapshot), (min(aot) if aot else float("nan"))


def repeat_first_sample(n):
    """Cold and warm (numba cache) first samples of the clipper, ``n`` times in fresh caches."""
    import statistics
    text = (ROOT / "netlists" / "diode_clipper.cir").read_text()
    cold, warm = [], []
    for _ in range(n):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "model.cir"
            path.write_text(text)
            env = dict(os.environ, PHSYM_CACHE_DIR=str(Path(d) / "phsym"), NUMBA_CACHE_DIR=str(Path(d) / "numba"),
                       PYTHONPATH=str(ROOT), PHSYM_AOT="0")
            cold.append(_first(path, "None", env)["first"])
            warm.append(_first(path, "None", env)["first"])
    for name, v in (("cold", cold), ("warm (numba cache)", warm)):
        print(f"{name}: {', '.join(f'{t:.2f}' for t in v)}; median {statistics.median(v):.2f} s")


# ------------------------------------------------------------------ cases
def bench_rlc(T):
    m = phsym.load(ROOT / "netlists" / "rlc.cir")
    R, L, C = 10.0, 1e-3, 1e-6
    N = int(T * FS)
    t = np.arange(N + 1) / FS
    u = np.sin(2 * np.pi * 1000 * t)
    sim = Simulator(m, FS, "midpoint", record_efforts=False)
    sim.run(u={"V1": u[:10]})
    tp, res = best_of(lambda: sim.run(u={"V1": u}), repeat=7)      # 20 ms each: best of 7 on a shared machine
    iq, ip = m.states.index("q_C1"), m.states.index("phi_L1")
    A = np.array([[0, 1 / L], [-1 / C, -R / L]])
    B = np.array([[0.0], [1.0]])
    Ad, Bd = midpoint_matrices(A, B, 1 / FS)
    X = np.zeros((N + 1, 2))
    linear_hand(Ad, Bd, u[:10, None].copy(), X[:10])
    th, _ = best_of(lambda: linear_hand(Ad, Bd, u[:, None].copy(), X), repeat=7)
    ours = np.column_stack([res.x[:, iq], res.x[:, ip]])
    assert np.allclose(ours, X, atol=1e-12 * np.abs(X).max())
    Ts = min(T, 0.05)
    ns = int(Ts * FS)
    ref = solve_ivp(lambda tt, y: A @ y + B[:, 0] * np.sin(2 * np.pi * 1000 * tt), (0, Ts), [0, 0], method="DOP853",
                    rtol=1e-12, atol=1e-18, t_eval=t[:ns + 1]).y.T
    err = np.max(np.abs(ours[:ns + 1] - ref))
    ti, rtol, _ = matched_ivp(lambda tt, y: A @ y + B[:, 0] * np.sin(2 * np.pi * 1000 * tt), [0, 0], Ts, t[:ns + 1],
                              err, ref, method="RK45")
    cold, warm, aot = first_sample((ROOT / "netlists" / "rlc.cir").read_text(), "None")
    return dict(model="series RLC (2 states, midpoint, linear path)", steps=N, phsym=N / tp, hand=N / th,
                ivp=ns / ti, ivp_note=f"RK45 rtol={rtol:g}", cold=cold, warm=warm, aot=aot, err=err)


def bench_clipper(T):
    m = phsym.load(ROOT / "netlists" / "diode_clipper.cir")
    N = int(T * FS)
    t = np.arange(N + 1) / FS
    u = np.sin(2 * np.pi * 1000 * t)
    sim = Simulator(m, FS, "discrete_gradient", record_efforts=False)
    sim.run(u={"Vin": u[:10]})
    tp, res = best_of(lambda: sim.run(u={"Vin": u}))
    X = np.zeros(N + 1)
    clipper_hand(u[:10], 1 / FS, RS, CC, IS, NN * VT, X[:10])
    th, _ = best_of(lambda: clipper_hand(u, 1 / FS, RS, CC, IS, NN * VT, X))
    assert np.allclose(res.x[:, 0], X, atol=1e-9 * CC)

    def rhs(tt, y):
        v = y[0] / CC
        return [(np.sin(2 * np.pi * 1000 * tt) - v) / RS - 2 * IS * np.sinh(v / (NN * VT))]

    def jac(tt, y):
        v = y[0] / CC
        return [[-1 / (RS * CC) - 2 * IS * np.cosh(v / (NN * VT)) / (NN * VT * CC)]]
    Ts = min(T, 0.05)
    ns = int(Ts * FS)
    ref = solve_ivp(rhs, (0, Ts), [0.0], method="Radau", jac=jac, rtol=1e-12, atol=1e-22, t_eval=t[:ns + 1]).y.T
    err = np.max(np.abs(res.x[:ns + 1, :1] - ref))
    ti, rtol, _ = matched_ivp(rhs, [0.0], Ts, t[:ns + 1], err, ref, method="LSODA", jac=jac)
    cold, warm, aot = first_sample((ROOT / "netlists" / "diode_clipper.cir").read_text(), "None")
    return dict(model="diode clipper (1 state, discrete gradient, Newton)", steps=N, phsym=N / tp, hand=N / th,
                ivp=ns / ti, ivp_note=f"LSODA rtol={rtol:g}", cold=cold, warm=warm, aot=aot, err=err / CC,
                iters=float(res.iterations.mean()))


def chain_matrices(n, m=4.0, k=4.0, c=1.0):
    """x = (p_1..p_n, e_1..e_n) (momenta, spring elongations), hand-derived."""
    A = np.zeros((2 * n, 2 * n))
    for i in range(n):
        A[i, i] = -c / m
        A[i, n + i] = -k                      # spring i pulls mass i back
        if i > 0:
            A[i, n + i - 1] = k               # spring i-1 pushes mass i
        A[n + i, i] = 1 / m                   # e_i' = v_i - v_{i+1}
        if i + 1 < n:
            A[n + i, i + 1] = -1 / m
    B = np.zeros((2 * n, 2))
    B[0, 0] = B[1, 1] = 1.0
    return A, B


def bench_chain(n, T, solver="auto"):
    m = phsym.parse(chain_netlist(n))
    N = int(T * FS)
    t = np.arange(N + 1) / FS
    U = np.column_stack([np.sin(2 * np.pi * 5 * t), 0.5 * np.ones_like(t)])
    sim = Simulator(m, FS, "midpoint", record_efforts=False, linear_solver=solver)
    sim.run(u=U[:10])
    tp, res = best_of(lambda: sim.run(u=U), repeat=2)
    A, B = chain_matrices(n)
    order = [f"p_M{i}" for i in range(1, n + 1)] + [f"x_K{i}" for i in range(1, n + 1)]
    ours = np.column_stack([res[s] for s in order])
    hand = None
    if n <= 100:
        Ad, Bd = midpoint_matrices(A, B, 1 / FS)
        X = np.zeros((N + 1, 2 * n))
        linear_hand(Ad, Bd, U[:10].copy(), X[:10])
        th, _ = best_of(lambda: linear_hand(Ad, Bd, U, X), repeat=2)
        assert np.allclose(ours, X, atol=1e-9 * np.abs(X).max())
        hand = N / th
    Ts = min(T, 0.2)
    ns = int(Ts * FS)
    f = lambda tt, y: A @ y + B @ np.array([np.sin(2 * np.pi * 5 * tt), 0.5])  # noqa: E731
    ref = solve_ivp(f, (0, Ts), np.zeros(2 * n), method="DOP853", rtol=1e-12, atol=1e-16, t_eval=t[:ns + 1]).y.T
    err = np.max(np.abs(ours[:ns + 1] - ref))
    ti, rtol, _ = matched_ivp(f, np.zeros(2 * n), Ts, t[:ns + 1], err, ref, method="RK45")
    cold, warm, aot = first_sample(chain_netlist(n), "{'F1': 1.0, 'F2': 0.5}") if solver == "auto" else \
        (float("nan"), (float("nan"), False), float("nan"))
    return dict(model=f"{n}-cell chain ({2 * n} states, midpoint, {res.info['engine']})", steps=N, phsym=N / tp,
                hand=hand, ivp=ns / ti, ivp_note=f"RK45 rtol={rtol:g}", cold=cold, warm=warm, aot=aot, err=err)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--first-sample", type=int, default=0, metavar="N",
                    help="only time N cold and warm first samples of the clipper (fresh caches each)")
    ap.add_argument("--only", default="rlc,clipper,chain50,chain1000",
                    help="comma-separated cases (default: rlc,clipper,chain50,chain1000)")
    ap.add_argument("--no-first-sample", action="store_true",
                    help="skip the fresh-process first-sample timings (steps/s only)")
    a = ap.parse_args(argv)
    global SKIP_FIRST
    SKIP_FIRST = a.no_first_sample
    q = a.quick
    if a.first_sample:
        repeat_first_sample(a.first_sample)
        return
    every = {"rlc": (bench_rlc, (2.0 if q else 20.0,)), "clipper": (bench_clipper, (1.0,)),
             "chain50": (bench_chain, (50, 0.5 if q else 2.0)),
             "chain50dense": (bench_chain, (50, 0.5 if q else 2.0, "dense")), "chain1000": (bench_chain, (1000, 0.05 if q else 0.25))}
    names = [n.strip() for n in a.only.split(",") if n.strip()]
    unknown = set(names) - set(every)
    if unknown:
        ap.error(f"unknown cases {sorted(unknown)}; choose from {', '.join(every)}")
    cases = [every[n] for n in names]
    rows = []
    for f, args in cases:
        t0 = time.perf_counter()
        rows.append(f(*args))
        print(f"# {rows[-1]['model']}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if a.markdown:
        print("| model | steps | phsym steps/s | hand-written numba steps/s | phsym / hand | solve_ivp steps/s "
              "(matched accuracy) | first sample cold [s] | warm [s] | warm, ahead of time [s] |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            hand = f"{r['hand']:.3g}" if r["hand"] else "n/a"
            ratio = f"{r['phsym'] / r['hand']:.2f}" if r["hand"] else "n/a"
            print(f"| {r['model']} | {r['steps']} | {r['phsym']:.3g} | {hand} | {ratio} | "
                  f"{r['ivp']:.3g} ({r['ivp_note']}) | {r['cold']:.2f} | {r['warm'][0]:.2f}"
                  + ("" if r["warm"][1] else " (no snapshot: symbolic path)") + " | "
                  + ("n/a" if r["aot"] != r["aot"] else f"{r['aot']:.2f}") + " |")
    else:
        print(json.dumps(rows, indent=1, default=float))


if __name__ == "__main__":
    main()
