"""Learned laws in generated simulators: expression text against numbers (``.npz``).

A capacitor law ``H(q)`` learned by ``EffortGP.from_model`` (energy variant,
exact derivatives, ``N_T`` samples of the RC circuit of
``tests/test_identify_gp_laws.py``) is put into the netlist two ways:

* ``expression``: ``C1 c 0 H={...}``, the posterior mean written out
  (:func:`phsym.identify.gp.laws.hamiltonian_expression`);
* ``numeric``: ``.table C1LAW law.npz`` and ``C1 c 0 H={C1LAW(q)}``
  (:func:`phsym.identify.gp.laws.save_law`; one compiled loop over the
  samples).

Each case runs in a fresh process with empty phsym and numba caches;
``kernel`` is the one-off compilation of the shared bump-sum kernel
(:mod:`phsym.codegen.kernels.learned`, numba-cached on disk afterwards,
done before timing the numeric route), ``cold`` the wall time of ``parse`` plus the first ``simulate`` (symbolic
step, code generation, numba compilation, 12 s at 50 Hz), ``compile`` the
loop's own compile time (``info["compile_time"]``), ``steps/s`` the warm
stepping rate of a second run (100 s at 1 kHz, ``info["wall_time"]``),
``max |v - v_true|`` the largest difference of ``v(c)`` from the circuit with
the true law ``H = (2 sqrt 2 / 3) q^(3/2)`` (route ``true``, also timed) over
the 12 s run.

Command: ``python benchmarks/learned_law_runtime.py [N_T ...]`` (default 32 128).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

NET = """* RC with a learned capacitor
{table}V1 in 0 SIN(2 0.7 0.25)
R1 in c 1
C1 c 0 {law}
.probe v(c)
.end
"""


def learn(n_train: int):
    """EffortGP fitted on ``n_train`` samples spread over the charges of a scipy trajectory."""
    from scipy.integrate import solve_ivp

    import phsym
    from phsym.identify import EffortGP
    t = np.linspace(0.0, 10 * np.pi, 2000)
    u = 2.0 + np.sin(t)
    q = solve_ivp(lambda s, x: 2.0 + np.sin(s) - np.sqrt(2 * x), (0, t[-1]), [2.0], t_eval=t,
                  rtol=1e-12, atol=1e-12).y[0]
    i_r = u - np.sqrt(2 * q)
    X = np.column_stack([q, i_r])
    Xdot = np.column_stack([i_r, np.zeros_like(t)])
    tr = np.argsort(q)[np.linspace(0, len(t) - 1, n_train).astype(int)]
    gp = EffortGP.from_model(phsym.parse(NET.format(table="", law="H=learn")), noise_bounds=(1e-10, 1e-6))
    return gp.fit(X[tr], u[tr, None], Xdot=Xdot[tr])


def case(route: str, n_train: int, workdir: str) -> dict:
    """One route in this (fresh) process."""
    import phsym
    from phsym.identify.gp.laws import save_law
    from phsym.simulation import simulate
    gp = learn(n_train)
    kernel = 0.0
    if route == "numeric":      # the compiled bump sum is shared by all models: compile it before timing
        from phsym.codegen.kernels.learned import learned_bumps
        t0 = time.perf_counter()
        arrays = [np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), np.ones(1)]
        for a in arrays:            # the types of the generated module's constants: read-only arrays
            a.setflags(write=False)
        learned_bumps((0.0,), (0.0,), *arrays)
        kernel = time.perf_counter() - t0
        path = save_law(gp, os.path.join(workdir, "law.npz"))
        text = NET.format(table=f".table C1LAW {path}\n", law="H={C1LAW(q)}")
    elif route == "true":
        text = NET.format(table="", law="H={2*sqrt(2)/3*q**(3/2)}")
    else:
        text = NET.format(table="", law=gp.law("q_C1", "q"))
    t0 = time.perf_counter()
    model = phsym.parse(text)
    res = simulate(model, fs=50, duration=12.0, x0={"q_C1": 2.0})
    cold = time.perf_counter() - t0
    long = simulate(model, fs=1000, duration=100.0, x0={"q_C1": 2.0})
    scale = np.abs(res.H).max() * 50
    return {"route": route, "n_train": n_train, "cold": cold, "kernel": kernel, "compile": res.info.get("compile_time"),
            "steps_per_s": 100000 / long.info["wall_time"], "source_chars": len(text),
            "balance": float(np.abs(res.balance).max() / scale), "v": res["v(c)"].tolist()}


def main(sizes) -> None:
    rows = []
    for n in sizes:
        for route in ("numeric", "expression", "true"):
            with tempfile.TemporaryDirectory() as d:
                env = dict(os.environ, PHSYM_CACHE_DIR=os.path.join(d, "phc"), NUMBA_CACHE_DIR=os.path.join(d, "nbc"),
                           PHSYM_AOT="0")
                out = subprocess.run([sys.executable, __file__, "--case", route, str(n), d], env=env,
                                     capture_output=True, text=True, check=True)
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(f"  {route} N_T={n}: {rows[-1]['cold']:.1f} s cold", file=sys.stderr)
    print("| N_T | route | netlist chars | kernel compile (s) | cold parse + first run (s) | loop compile (s) "
          "| steps/s (warm) | balance / power scale | max abs v(c) - v_true(c) (V) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        pair = [r for r in rows if r["n_train"] == n]
        for r in pair:
            dv = np.abs(np.array(r["v"]) - np.array(pair[-1]["v"])).max()
            print(f"| {n} | {r['route']} | {r['source_chars']} | {r['kernel']:.1f} | {r['cold']:.1f} | "
                  f"{r['compile']:.1f} | "
                  f"{r['steps_per_s']:.3g} | {r['balance']:.1e} | {dv:.1e} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--case":
        print(json.dumps(case(sys.argv[2], int(sys.argv[3]), sys.argv[4])))
    else:
        main([int(a) for a in sys.argv[1:]] or [32, 128])
