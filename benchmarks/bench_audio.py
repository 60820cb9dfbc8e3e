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
milliseconds).  Each row is the best of ``--repeat`` rounds for each side
(default 3): on this machine one tool's time for the same run moves by up
to 2x between rounds minutes apart.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_spice import bench_deck, need_ngspice  # noqa: E402
from tests.decks import corpus  # noqa: E402

#: the audio stages of the corpus
AUDIO = ("bjt_common_emitter", "bjt_emitter_follower_pnp", "mosfet_common_source", "jfet_source_follower",
         "opamp_diode_clipper")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decks", help="comma-separated deck names (default: the audio stages)")
    ap.add_argument("--duration", type=float, default=1.0, help="simulated seconds per run (default 1)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per row, best of each side (default 3)")
    args = ap.parse_args(argv)
    need_ngspice()
    names = args.decks.split(",") if args.decks else AUDIO
    cases = [(name, fs) for name in names for fs in (48000.0, 96000.0)]
    rounds = {c: [] for c in cases}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(max(args.repeat, 1)):    # rounds over all rows: a slow spell hits one round of each
            for name, fs in cases:
                rounds[name, fs].append(bench_deck(corpus.DECKS / f"{name}.cir", tmp, fs=fs, duration=args.duration))
                print(rounds[name, fs][-1], file=sys.stderr, flush=True)
    rows = []
    for c in cases:     # the first round's cold start (later rounds find the cache), the best of the rest
        R = rounds[c]
        rows.append(dict(R[0], fs=c[1], warm=min(x["warm"] for x in R), loop_rate=max(x["loop_rate"] for x in R),
                         ng_wall=min(x["ng_wall"] for x in R), ng_rate=max(x["ng_rate"] for x in R)))
    print("| deck | fs | steps | phsym cold [s] | phsym warm [s] | phsym loop steps/s | real time x | "
          "ngspice [s] | ngspice steps/s | loop / ngspice |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['deck'].split(' @')[0]} | {r['fs'] / 1e3:g} kHz | {r['steps']} | {r['cold']:.2f} | "
              f"{r['warm']:.2f} | {r['loop_rate']:.3g} | {r['loop_rate'] / r['fs']:.2g} | {r['ng_wall']:.2f} | "
              f"{r['ng_rate']:.3g} | {r['loop_rate'] / r['ng_rate']:.1f} |")


if __name__ == "__main__":
    main()
