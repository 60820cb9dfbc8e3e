"""Fit time of a grey-box fit on the numeric engine against the generated loop's, by circuit size.

Two families (``--family``):

* ``mesh``: :func:`phsym.benchmarks.rc_mesh` (``n x n`` RC mesh, corner-driven)
  with one mesh resistor free (``Rf``, between ``n0_0`` and ``n0_1``) and a
  diode at ``n0_1`` (free ``Is``).  Data: the numeric engine's backward-Euler
  run at the true values (1.5 kOhm, 1 nA); the fit starts from 2.5 kOhm, 10 nA
  and fits ``v(n0_1)`` and the middle node; 0.2 us steps.
* ``rtl``: :func:`phsym.benchmarks.rtl_chain` of ``n`` gates with every
  pull-up ``Rpu`` (640 Ohm) and the last load ``CL`` (5 pF) free; data: the
  numeric engine's run at 0.1 ns steps; the fit starts from 800 Ohm, 8 pF and
  fits the first two gates' outputs.
  Each (engine, n) runs in its own
process under a time limit; the generated engine gets a fresh code cache (its
build is part of what is measured), the numeric engine the given cache (the
engine and the diode's kernel compiled before, as after phsym's warm-up).

Usage::

    python benchmarks/fit_numeric.py --sizes 3 5 10 20 --generated 3 5 --steps 200 --timeout 600
    python benchmarks/fit_numeric.py --family rtl --sizes 2 --generated 2 --steps 150
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
from phsym.benchmarks import rc_mesh, rtl_chain
from phsym.identify import ParameterEstimator
family, n, engine, steps, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
if family == "mesh":
    deck = rc_mesh(n, steps=10).replace("RH0_0 n0_0 n0_1 1000", "RH0_0 n0_0 n0_1 {Rf}")
    head, rest = deck.split("\n", 1)
    text = f"{head}\n.param Rf=1.5k Is=1e-9\n.model DX D(IS={{Is}} N=1)\nD1 n0_1 0 DX\n{rest}"
    h, labels, start = 0.2e-6, ["v(n0_1)", f"v(n{n // 2}_{n // 2})"], {"Rf": 2500.0, "Is": 1e-8}
else:
    deck = rtl_chain(n, steps=10).replace(f"CL{n} n{n} 0 5e-12", f"CL{n} n{n} 0 {{CL}}")
    head, rest = deck.split("\n", 1)
    text = f"{head}\n.param CL=5p Rpu=640\n{rest.replace('RC vcc y 640', 'RC vcc y {Rpu}')}"
    h, labels, start = 1e-10, ["v(n1)", "v(n2)"], {"CL": 8e-12, "Rpu": 800.0}
open(path, "w").write(text)
model = phsym.load(path)
res = phsym.Simulator(model, 1 / h, "backward_euler", engine="numeric").run(duration=steps * h)
t1 = time.perf_counter()
est = ParameterEstimator(model, list(start), labels, method="backward_euler", engine=engine, initial=start).fit(res)
t2 = time.perf_counter()
print(json.dumps(dict(family=family, n=n, engine=est.engine_, branches=model.size["branches"], steps=steps,
                      fit_s=round(t2 - t1, 2), total_s=round(t2 - t0, 2), evaluations=int(est.result_.nfev),
                      params={k: float(f"{v:.10g}") for k, v in est.params_.items()})))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=("mesh", "rtl"), default="mesh")
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
                out = subprocess.run([sys.executable, "-c", CHILD, args.family, str(n), engine, str(args.steps),
                                      str(Path(tmp) / "mesh.cir")], env=env, capture_output=True, text=True,
                                     timeout=args.timeout)
                line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else json.dumps(
                    dict(family=args.family, n=n, engine=engine, error=out.stderr.strip().splitlines()[-1:]))
            except subprocess.TimeoutExpired:
                line = json.dumps(dict(family=args.family, n=n, engine=engine,
                                       error=f"killed after {args.timeout:.0f} s"))
            print(line, f"(process {time.perf_counter() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
