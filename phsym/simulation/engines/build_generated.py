"""Compile a netlist's generated loop in the background: ``python -m phsym.simulation.engines.build_generated
FILE METHOD STIFF FS``.

Started by :func:`~.choice.start_generated_build` after a numeric run of a
small circuit; generates the module, compiles it with one step and records
it as ready (:func:`~.choice.mark_ready`), so that ``engine="auto"`` takes
it the next time, and saves again on it the warm-start snapshots that the
numeric run left waiting (:func:`~phsym.simulation.run.upgrade_snapshots`).  Any failure leaves nothing recorded: the numeric engine
keeps running the netlist.
"""
from __future__ import annotations

import sys


def main(argv) -> int:
    """Build; returns the exit status."""
    from ...model import load
    from ..run import upgrade_snapshots
    from ..simulator import Simulator
    from .choice import fingerprint
    path, method, stiff, fs = argv[0], argv[1], argv[2], float(argv[3])
    try:
        model = load(path)
        sim = Simulator(model, fs, method=method, engine="generated", stiff=stiff)
        sim.run(duration=1.0 / fs)
        upgrade_snapshots(fingerprint(model, sim.scheme, sim.stiff))
    except Exception:       # noqa: BLE001 - a background build must never disturb anyone
        return 1
    return 0


if __name__ == "__main__":      # pragma: no cover - a detached process
    sys.exit(main(sys.argv[1:]))
