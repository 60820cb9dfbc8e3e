"""SPICE deck corpus: phsym against ngspice on the same deck and step.

Run from the repository root (needs ngspice on PATH)::

    PYTHONPATH=. python benchmarks/bench_spice.py [--decks a,b] [--long]

For every deck of ``tests/decks`` (``.tran TSTEP TSTOP``):

* phsym cold: ``phsym simulate DECK --quiet`` in a fresh process with an
  empty cache (sympy derivation, code generation, numba compilation);
* phsym warm: the same command again (cache filled: snapshot and numba
  cache), whole process, and the steps/s of its compiled loop alone;
* ngspice: ``ngspice -b`` on the same deck with ``tran TSTEP TSTOP 0 TSTEP``
  (default tolerances, print step = TMAX = TSTEP) and ``wrdata`` of the
  same nodes, whole process;
* the largest difference over the non-source nodes, relative to the node's
  swing, of phsym and of that ngspice run against the tight ngspice
  reference in ``tests/decks/refs``.

``--long`` adds an audio-rate run of the diode clipper deck at 48 kHz for
1 s (``--fs 48k --duration 1``; ngspice ``tran 20.833u 1 0 20.833u``).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.decks import corpus  # noqa: E402


def _timed(cmd, env=None, cwd=None):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
    return wall, proc.stdout


def _phsym(path, cache, extra=()):
    env = dict(os.environ, PHSYM_CACHE_DIR=str(cache / "phc"), NUMBA_CACHE_DIR=str(cache / "nbc"),
               PHSYM_AOT="0", PYTHONPATH=str(ROOT))
    wall, out = _timed([sys.executable, "-m", "phsym.cli", "simulate", str(path), "--quiet", *extra], env=env)
    m = re.search(r"(\d+) steps .* in ([0-9.e+-]+) s \(([0-9.e+-]+) steps/s\)", out)
    return wall, int(m.group(1)), float(m.group(3))


def _ngspice(path, nodes, step, stop, uic):
    tmp = corpus.DECKS / f".bench_{path.stem}.cir"
    out = corpus.DECKS / f".bench_{path.stem}.txt"
    lines = [ln for ln in path.read_text().splitlines()
             if not ln.strip().lower().startswith(".tran") and ln.strip().lower() != ".end"]
    lines += [".control", "set wr_singlescale", "set wr_vecnames",
              f"tran {step!r} {stop!r} 0 {step!r}" + (" uic" if uic else ""),
              f"wrdata {out.name} " + " ".join(f"v({n})" for n in nodes), "quit", ".endc", ".end"]
    tmp.write_text("\n".join(lines) + "\n")
    try:
        wall, text = _timed(["ngspice", "-b", tmp.name], cwd=corpus.DECKS)
        if "too small" in text or not out.exists():
            return wall, None, None
        data = np.loadtxt(out, skiprows=1)
    finally:
        tmp.unlink(missing_ok=True)
        out.unlink(missing_ok=True)
    if data[-1, 0] < stop * (1 - 1e-9):
        return wall, None, None
    keep = np.concatenate([[True], np.diff(data[:, 0]) > 0])
    return wall, data[keep, 0], {n: data[keep, 1 + i] for i, n in enumerate(nodes)}


def _rel_err(t, ref, got, nodes):
    worst = 0.0
    for n in nodes:
        ok = np.isfinite(got[n])
        worst = max(worst, np.max(np.abs(got[n][ok] - ref[n][ok])) / max(np.ptp(ref[n]), 0.1))
    return worst


def bench_deck(path, tmpdir, fs=None, duration=None):
    from phsym.netlist.cards import deck_settings
    tran = deck_settings(path).tran
    step = 1.0 / fs if fs else tran.step
    stop = duration or tran.stop
    extra = ("--fs", repr(fs), "--duration", repr(stop)) if fs else ()
    cache = Path(tmpdir) / path.stem
    cold, steps, _ = _phsym(path, cache, extra)
    warm, _, loop_rate = _phsym(path, cache, extra)
    nodes = corpus.signal_nodes(path)
    ng_wall, ng_t, ng_v = _ngspice(path, nodes, step, stop, tran.uic)
    row = dict(deck=path.stem + (f" @{fs:g} Hz, {stop:g} s" if fs else ""), steps=steps, cold=cold, warm=warm,
               loop_rate=loop_rate, warm_rate=steps / warm, ng_wall=ng_wall, ng_rate=round(stop / step) / ng_wall,
               ng_points=None if ng_t is None else len(ng_t), err=None, ng_err=None)
    if path.stem in corpus.NO_REFERENCE or fs:
        return row
    t, ref, _ = corpus.load_reference(path)
    compared = [n for n in ref if n not in corpus.source_nodes(path)]
    res = corpus.run_deck(path)
    row["err"] = _rel_err(t, ref, corpus.node_waveforms(res, compared, t), compared)
    if ng_t is not None:
        row["ng_err"] = _rel_err(t, ref, {n: np.interp(t, ng_t, ng_v[n]) for n in compared}, compared)
    return row


def need_ngspice() -> None:
    """Stop with a message before any work when ngspice is not on PATH."""
    if shutil.which("ngspice") is None:
        raise SystemExit("ngspice is not on PATH (apt-get install ngspice)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decks", help="comma-separated deck names (default: all)")
    ap.add_argument("--long", action="store_true", help="add the 48 kHz, 1 s diode clipper run")
    args = ap.parse_args(argv)
    need_ngspice()
    paths = corpus.deck_paths()
    if args.decks:
        paths = [p for p in paths if p.stem in args.decks.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            rows.append(bench_deck(p, tmp))
            print(rows[-1], file=sys.stderr, flush=True)
        if args.long:
            rows.append(bench_deck(corpus.DECKS / "diode_clipper.cir", tmp, fs=48000.0, duration=1.0))
    f = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
    print("| deck | steps | phsym cold [s] | phsym warm [s] | phsym warm steps/s (process) | phsym loop steps/s "
          "| ngspice [s] | ngspice steps/s (process) | ngspice time points | warm / ngspice | phsym err | ngspice err |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['deck']} | {r['steps']} | {r['cold']:.2f} | {r['warm']:.2f} | {r['warm_rate']:.3g} | "
              f"{r['loop_rate']:.3g} | {r['ng_wall']:.3f} | {r['ng_rate']:.3g} | {f(r['ng_points'], 'd')} | "
              f"{r['ng_wall'] and r['warm_rate'] / r['ng_rate']:.2f} | {f(r['err'], '.1e')} | {f(r['ng_err'], '.1e')} |")


if __name__ == "__main__":
    main()
