"""Hostile input: how long phsym takes to refuse expression bombs, and to check large models.

Usage::

    PYTHONPATH=. python benchmarks/bench_hostile.py [--sizes 1000 4000]

Prints one line per case: the seconds from netlist text to the error (bombs)
or to the result of ``check()`` (series chains of capacitors, numeric checks
above SYMBOLIC_LIMIT).  Each bomb runs once in this process (the first one
also pays for importing sympy's functions); numbers vary with the load of
the machine.
"""
from __future__ import annotations

import argparse
import time

import phsym

RC = "V1 a 0 DC 1\nR1 a o 1k\n"
BOMBS = {
    "(q+1)^(2^64) in a law": RC + "C1 o 0 H={(q+1)^(2^64)}\n",
    "(q+q^2+1)^300 in a law": RC + "C1 o 0 H={(q+q^2+1)^300}\n",
    "sum of 20000 powers in a law": RC + "C1 o 0 H={" + "+".join(f"q^{k}" for k in range(2, 20002)) + "}\n",
    "q^1000 in a law": RC + "C1 o 0 H={q**1000}\n",
    "exp(exp(exp(10))) in a value": RC.replace("1k", "{exp(exp(exp(10)))}") + "C1 o 0 1u\n",
    "sqrt(-1) as an energy": RC + "C1 o 0 H={sqrt(-1)}\n",
}


def series(n: int) -> str:
    return ("V1 n0 0 DC 1\nR1 n0 n1 1k\n" + "".join(f"C{k} n{k} n{k + 1} 1u\n" for k in range(1, n + 1))
            + f"R2 n{n + 1} 0 1k\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 4000])
    args = ap.parse_args()
    for name, text in BOMBS.items():
        t = time.perf_counter()
        try:
            phsym.parse(text).check()
            outcome = "accepted"
        except phsym.PhsymError as exc:
            outcome = type(exc).__name__
        print(f"{name:36s} {outcome:14s} {time.perf_counter() - t:8.3f} s")
    for n in args.sizes:
        t = time.perf_counter()
        m = phsym.parse(series(n))
        t1 = time.perf_counter()
        ok = all(m.check().values())
        t2 = time.perf_counter()
        print(f"{n} series capacitors: load {t1 - t:.2f} s, check {t2 - t1:.3f} s (all pass: {ok})")


if __name__ == "__main__":
    main()
