"""Sweep benchmark: a Python loop of single runs vs ``phsym.sweep`` on threads,
a 2-process pool and a dask LocalCluster of 2 worker processes.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_sweep.py [--runs 1000] [--quick] [--json out.json]

Protocol (issue 15): 1000 diode-clipper runs (netlists/diode_clipper.cir,
48 kHz, 0.1 s of its 1 V 1 kHz sine, Rs and C uniform within +-10 %) and
1000 series-RLC runs (netlists/rlc.cir, same rate and length, R and C
within +-10 %), each as

(a) a Python loop of ``Simulator.run(params=...)`` keeping the probe signals,
(b) ``phsym.sweep`` in-process (threads, the default),
(c) ``phsym.sweep`` on a ``ProcessPoolExecutor(2)``,
(d) ``phsym.sweep`` on a ``dask.distributed.LocalCluster`` of 2 single-threaded worker processes.

Compilation happens once before the timings; pools and clusters are started
and warmed (each worker builds its simulator) before their timed sweep, and
their start-up is reported on its own.  Also measured: the stepping time of a
run (``result.info["wall_time"]``), the per-run overhead of a serial sweep
beyond the stepping (in the interleaved batches, and in one sweep of all the
runs: its time minus its compiled calls' own time, best of 3), and the
per-task overhead of the pool and the cluster
(chunks of one-step runs), from which docs/sweeps.md estimates the scaling
on N workers.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import phsym  # noqa: E402

FS = 48000.0
MODELS = {"diode clipper": ("netlists/diode_clipper.cir", {"Rs": 0.1, "C": 0.1}),
          "series RLC": ("netlists/rlc.cir", {"R": 0.1, "C": 0.1})}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def python_loop(model, params, duration):
    sim = phsym.Simulator(model, FS)
    names = list(params)
    t0 = time.perf_counter()
    kept, stepping = [], 0.0
    for i in range(len(params[names[0]])):
        res = sim.run(duration=duration, params={n: float(params[n][i]) for n in names})
        kept.append({p.label: res[p.label] for p in res.names.probes})
        stepping += res.info["wall_time"]
    return time.perf_counter() - t0, stepping / len(kept)


def plan_time(model, params, n=50):
    """Seconds to build the plan (numbers of a run) of one parameter set, the GIL-bound part of a run
    (BLAS on one thread, as in a sweep)."""
    from phsym.common.parallel import single_blas_thread
    sim = phsym.Simulator(model, FS)
    names = list(params)
    with single_blas_thread():       # as in a sweep
        sim.plan({k: float(params[k][-1]) for k in names})      # the per-simulator set-up, not timed
        t0 = time.perf_counter()
        for i in range(min(n, len(params[names[0]]))):
            sim.plan({k: float(params[k][i]) for k in names})
        return (time.perf_counter() - t0) / min(n, len(params[names[0]]))


def timed_sweep(model, params, duration, executor):
    t0 = time.perf_counter()
    res = phsym.sweep(model, FS, params, duration=duration, executor=executor)
    wall = time.perf_counter() - t0
    assert res.ok.all(), res.failures
    return wall, res


def direct_overhead(model, params, duration, repeats=3):
    """Seconds per run of one serial sweep of all the runs beyond its compiled calls' own time
    (``result.wall_time``), best of ``repeats``: the overhead with nothing else interleaved."""
    best = np.inf
    for _ in range(repeats):
        wall, res = timed_sweep(model, params, duration, "serial")
        best = min(best, (wall - float(res.wall_time.sum())) / len(res))
    return best


def parallel_ceiling(n=200):
    """Speed-up of 2 threads over 1 on pure compiled work (a nogil loop of about 1 ms, no Python):
    what the machine's load leaves of the second core while the sweeps are timed."""
    from concurrent.futures import ThreadPoolExecutor
    from numba import njit

    @njit(nogil=True)
    def busy(m):
        s = 0.0
        for i in range(m):
            s += np.sin(i * 1e-3)
        return s

    busy(10)
    m = 40000
    t0 = time.perf_counter()
    for _ in range(n):
        busy(m)
    one = time.perf_counter() - t0
    with ThreadPoolExecutor(2) as pool:
        t0 = time.perf_counter()
        list(pool.map(busy, [m] * n))
        two = time.perf_counter() - t0
    return one / two


def task_overhead(executor, n=200):
    """Seconds per task of ``n`` trivial tasks (submit, schedule, pickle, return): the fixed cost a chunk pays."""
    from phsym.common.parallel import map_tasks
    map_tasks(abs, range(4), executor)
    t0 = time.perf_counter()
    map_tasks(abs, range(n), executor)
    return (time.perf_counter() - t0) / n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--duration", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved batches per configuration")
    ap.add_argument("--quick", action="store_true", help="40 runs (development)")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args(argv)
    runs = 40 if args.quick else args.runs
    from distributed import Client, LocalCluster
    out = {"runs": runs, "rounds": args.rounds, "duration": args.duration, "fs": FS, "cpus": os.cpu_count(), "load_before": load(),
           "python": sys.version.split()[0], "models": {}}
    print(f"load average before: {out['load_before']}  ({os.cpu_count()} cpus)")
    t0 = time.perf_counter()
    pool = ProcessPoolExecutor(2)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    out["startup"] = {"pool and cluster": time.perf_counter() - t0}
    try:
        for name, (path, tol) in MODELS.items():
            path = str(ROOT / path)
            model = phsym.load(path)
            params = phsym.sampling(model, runs, tol, seed=1)
            warm = {k: v[:4] for k, v in params.items()}
            phsym.sweep(model, FS, warm, duration=args.duration)          # compile / load once
            t1 = time.perf_counter()
            phsym.sweep(path, FS, warm, duration=args.duration, executor=pool)
            phsym.sweep(path, FS, warm, duration=args.duration, executor=client)
            warm_workers = time.perf_counter() - t1
            # the machine is shared: the configurations take turns, `rounds` batches each, so
            # that a change of load between batches hits them all alike
            m = dict.fromkeys(["python loop", "sweep threads", "sweep serial", "process pool (2)",
                               "dask LocalCluster (2)"], 0.0)
            steps, ceilings, batch_steps = [], [], []
            for r in range(args.rounds):
                sl = slice(r * runs // args.rounds, (r + 1) * runs // args.rounds)
                part = {k: v[sl] for k, v in params.items()}
                a, st = python_loop(model, part, args.duration)
                m["python loop"] += a
                steps.append(st)
                b, rb = timed_sweep(model, part, args.duration, None)
                m["sweep threads"] += b
                ser, rs = timed_sweep(model, part, args.duration, "serial")
                m["sweep serial"] += ser
                batch_steps.append(float(rs.wall_time.mean()))
                ceilings.append(parallel_ceiling())
                c, rc = timed_sweep(path, part, args.duration, pool)
                m["process pool (2)"] += c
                d, rd = timed_sweep(path, part, args.duration, client)
                m["dask LocalCluster (2)"] += d
                for other in (rc, rd):
                    lab = next(iter(rb.signals))
                    assert np.allclose(other[lab], rb[lab], rtol=1e-12, atol=1e-18, equal_nan=True)
            stepping, serial = float(np.mean(steps)), m["sweep serial"]
            a = m["python loop"]
            row = {k: {"s": v, "runs/s": runs / v, "ratio": a / v} for k, v in m.items()}
            row["stepping per run (s)"] = stepping
            row["serial overhead per run (s)"] = serial / runs - stepping
            # the serial sweep's own stepping (the compiled calls it times) against its wall time
            row["serial-sweep stepping per run (s)"] = float(np.mean(batch_steps))
            row["serial-sweep overhead beyond its stepping (s)"] = serial / runs - float(np.mean(batch_steps))
            row["2-thread ceiling (pure compiled work)"] = float(np.mean(ceilings))
            row["plan build per run (s)"] = plan_time(model, params)
            row["serial-sweep overhead, one sweep of all runs (s)"] = direct_overhead(model, params, args.duration)
            row["worker warm-up (s)"] = warm_workers
            row["threads in-process"] = rb.info["executor"]
            out["models"][name] = row
            print(f"\n{name}: {runs} runs of {args.duration} s at {FS:g} Hz "
                  f"(stepping {stepping * 1e3:.3f} ms/run, serial-sweep overhead "
                  f"{row['serial overhead per run (s)'] * 1e3:.3f} ms/run, of which plan building "
                  f"{row['plan build per run (s)'] * 1e3:.3f} ms)")
            print(f"  serial sweep: stepping {row['serial-sweep stepping per run (s)'] * 1e6:.0f} us/run, "
                  f"overhead beyond it {row['serial-sweep overhead beyond its stepping (s)'] * 1e6:.0f} us/run "
                  f"({row['serial-sweep overhead, one sweep of all runs (s)'] * 1e6:.0f} us/run in one sweep of all "
                  f"runs, best of 3); "
                  f"2-thread speed-up of pure compiled work meanwhile {row['2-thread ceiling (pure compiled work)']:.2f}x")
            for k in m:
                print(f"  {k:<24} {row[k]['s']:8.3f} s {row[k]['runs/s']:9.1f} runs/s  {row[k]['ratio']:5.2f}x")
        out["task overhead (s)"] = {"process pool (2)": task_overhead(pool),
                                    "dask LocalCluster (2)": task_overhead(client)}
        print("\nper-task overhead of trivial tasks: " + ", ".join(f"{k} {v * 1e3:.3f} ms"
                                                              for k, v in out["task overhead (s)"].items()))
    finally:
        client.close()
        cluster.close()
        pool.shutdown()
    out["load_after"] = load()
    try:
        out["cpu"] = subprocess.run(["lscpu"], capture_output=True, text=True).stdout.split("Model name:")[1] \
            .splitlines()[0].strip()
    except (OSError, IndexError):
        out["cpu"] = "unknown"
    print(f"\nload average after: {out['load_after']}; cpu: {out['cpu']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
