"""Audio circuits (transistors, op-amp, triode): phsym against ngspice at audio rates.

Run from the repository root (needs ngspice on PATH)::

    PYTHONPATH=. python benchmarks/bench_audio.py [--decks a,b] [--duration 1]

For each audio deck of ``tests/decks`` and each rate (48 kHz, 96 kHz), one
second of signal (``--duration``), as :func:`bench_spice.bench_deck` measures it:

* phsym: ``phsym simulate DECK --fs FS --duration D --quiet`` in a fresh
  process, cold (empty cache) and warm; the steps/s of the compiled loop
  alone, and its real-time factor ``(steps/s) / fs``;
* ngspice: ``ngspice -b`` on the same deck with ``tran 1/FS D 0 1/FS``
  (its step never larger than phsym's), whole process.

The ratio ``loop / ngspice`` compares phsym's stepping with ngspice's whole
run (ngspice has no separate figure for its stepping; its start-up is a few
milliseconds).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_spice import bench_deck  # noqa: E402
from tests.decks import corpus  # noqa: E402

#: the audio stages of the corpus
AUDIO = ("bjt_common_emitter", "bjt_emitter_follower_pnp", "mosfet_common_source", "jfet_source_follower",
         "opamp_diode_clipper")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decks", help="comma-separated deck names (default: the audio stages)")
    ap.add_argument("--duration", type=float, default=1.0, help="simulated seconds per run (default 1)")
    args = ap.parse_args(argv)
    names = args.decks.split(",") if args.decks else AUDIO
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for fs in (48000.0, 96000.0):
                r = bench_deck(corpus.DECKS / f"{name}.cir", tmp, fs=fs, duration=args.duration)
                r["fs"] = fs
                rows.append(r)
                print(r, file=sys.stderr, flush=True)
    print("| deck | fs | steps | phsym cold [s] | phsym warm [s] | phsym loop steps/s | real time x | "
          "ngspice [s] | ngspice steps/s | loop / ngspice |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['deck'].split(' @')[0]} | {r['fs'] / 1e3:g} kHz | {r['steps']} | {r['cold']:.2f} | "
              f"{r['warm']:.2f} | {r['loop_rate']:.3g} | {r['loop_rate'] / r['fs']:.2g} | {r['ng_wall']:.2f} | "
              f"{r['ng_rate']:.3g} | {r['loop_rate'] / r['ng_rate']:.1f} |")


if __name__ == "__main__":
    main()
