"""Fit time of a grey-box fit on the numeric engine against the generated loop's, by circuit size.

The circuit: :func:`phsym.benchmarks.rc_mesh` (``n x n`` RC mesh, corner-driven)
with one mesh resistor free (``Rf``, between ``n0_0`` and ``n0_1``) and a
diode at ``n0_1`` (free ``Is``).  Data: the numeric engine's backward-Euler
run at the true values (1.5 kOhm, 1 nA); the fit starts from 2.5 kOhm, 10 nA
and fits ``v(n0_1)`` and the middle node.  Each (engine, n) runs in its own
process under a time limit; the generated engine gets a fresh code cache (its
build is part of what is measured), the numeric engine the given cache (the
engine and the diode's kernel compiled before, as after phsym's warm-up).

Usage::

    python benchmarks/fit_numeric.py --sizes 3 5 10 20 --generated 3 5 --steps 200 --timeout 600
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import phsym
from phsym.benchmarks import rc_mesh
from phsym.identify import ParameterEstimator
n, engine, steps, path = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
deck = rc_mesh(n, steps=10).replace("RH0_0 n0_0 n0_1 1000", "RH0_0 n0_0 n0_1 {Rf}")
head, rest = deck.split("\n", 1)
open(path, "w").write(f"{head}\n.param Rf=1.5k Is=1e-9\n.model DX D(IS={{Is}} N=1)\nD1 n0_1 0 DX\n{rest}")
model = phsym.load(path)
h = 0.2e-6
t = np.arange(steps + 1) * h
u = np.minimum(t / 1e-6, 1.0) * 2.0
labels = ["v(n0_1)", f"v(n{n // 2}_{n // 2})"]
res = phsym.Simulator(model, 1 / h, "backward_euler", engine="numeric").run(u={"V1": u})
y = {lab: np.asarray(res[lab]) for lab in labels}
t1 = time.perf_counter()
est = ParameterEstimator(model, ["Rf", "Is"], labels, method="backward_euler", engine=engine,
                         initial={"Rf": 2500.0, "Is": 1e-8}).fit(t, {"V1": u}, y)
t2 = time.perf_counter()
print(json.dumps(dict(n=n, engine=est.engine_, branches=model.size["branches"], steps=steps,
                      fit_s=round(t2 - t1, 2), total_s=round(t2 - t0, 2), evaluations=int(est.result_.nfev),
                      Rf=est.params_["Rf"], Is=est.params_["Is"])))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[3, 5, 10, 20])
    ap.add_argument("--generated", type=int, nargs="*", default=[3, 5], help="sizes also fitted on the generated loop")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    cache = os.environ.get("PHSYM_CACHE_DIR", "")
    jobs = [(n, "numeric") for n in args.sizes] + [(n, "generated") for n in args.generated]
    for n, engine in jobs:
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, PYTHONPATH=str(ROOT), PHSYM_AOT="0")
            if engine == "generated" or not cache:
                env["PHSYM_CACHE_DIR"] = str(Path(tmp) / "cache")
            t0 = time.perf_counter()
            try:
                out = subprocess.run([sys.executable, "-c", CHILD, str(n), engine, str(args.steps),
                                      str(Path(tmp) / "mesh.cir")], env=env, capture_output=True, text=True,
                                     timeout=args.timeout)
                line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else json.dumps(
                    dict(n=n, engine=engine, error=out.stderr.strip().splitlines()[-1:]))
            except subprocess.TimeoutExpired:
                line = json.dumps(dict(n=n, engine=engine, error=f"killed after {args.timeout:.0f} s"))
            print(line, f"(process {time.perf_counter() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
