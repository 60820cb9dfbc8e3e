"""Regenerate the decks and ngspice references of the circuits of any size (not run by CI).

Run from the repository root (needs ngspice on PATH)::

    PYTHONPATH=. python tests/decks/scale/make_scale_refs.py [NAME ...]

For each name of ``tests.scale_support.REFERENCE_DECKS`` (default: all) the
deck is written as ``tests/decks/scale/NAME.cir`` from
:mod:`phsym.benchmarks` (the text the benchmark and the tests build), and
ngspice runs it as ``tests/decks/make_refs.py`` runs a corpus deck (the same
code): the ``.tran`` and ``.save`` cards moved into a ``.control`` block with

    .options reltol=1e-6 abstol=1e-12 vntol=1e-9 method=gear
    tran TSTEP TSTOP 0 TSTEP [uic]          (TMAX = the step)
    wrdata OUT v(node) ...                  (every top-level node)

interpolated onto 401 uniform points over ``[0, TSTOP]`` and stored as
float32 in ``tests/decks/scale/refs/NAME.npz`` (``t``, ``names``, ``v``,
``command``, ``ngspice``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))          # the repository root: tests.scale_support
sys.path.insert(0, str(HERE.parent))              # tests/decks: make_refs

from make_refs import make_reference  # noqa: E402
from tests.scale_support import REFERENCE_DECKS, SCALE_DECKS, reference_deck_text  # noqa: E402

#: ngspice's largest step is the deck's step
TMAX_DIVISOR = 1


def write_deck(name: str) -> Path:
    """Write ``tests/decks/scale/NAME.cir`` from :mod:`phsym.benchmarks`; returns its path."""
    path = SCALE_DECKS / f"{name}.cir"
    path.write_text(reference_deck_text(name))
    return path


def main(argv) -> None:
    names = list(argv) or list(REFERENCE_DECKS)
    unknown = [n for n in names if n not in REFERENCE_DECKS]
    if unknown:
        sys.exit(f"unknown reference(s) {', '.join(unknown)}: one of {', '.join(REFERENCE_DECKS)}")
    for name in names:
        dest = make_reference(write_deck(name), refs=SCALE_DECKS / "refs", tmax_divisor=TMAX_DIVISOR,
                              dtype=np.float32)
        with np.load(dest) as z:
            print(f"{name}: {dest.relative_to(SCALE_DECKS)} ({dest.stat().st_size} bytes, {z['v'].shape[0]} nodes)\n"
                  f"  {z['command']}")


if __name__ == "__main__":
    main(sys.argv[1:])
