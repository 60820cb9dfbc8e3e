"""Compile the numeric engine once on this machine: ``python -m phsym.simulation.engines.numeric.warmup``.

The engine's functions are compiled into numba's disk cache the first time
any circuit runs on it (about a minute on a small machine); after that a new
circuit of known kinds compiles nothing.  ``engine="auto"`` runs a small
circuit on its own generated loop while the engine is not compiled yet and
starts this module in a detached process (``PHSYM_AOT=0`` turns that off),
so that later circuits find the engine ready.  ``phsym cache build``
(without a netlist) runs it in the foreground.
"""
from __future__ import annotations

import sys

#: A circuit with the device kinds most netlists hold: its run compiles the engine and the law
#: kernels of a diode with junction charge and of a BJT.
DECK = """numeric engine warm-up
.model DW D(IS=2.52n N=1.752 RS=0.568 CJO=4p TT=5n)
.model QW NPN(IS=1e-14 BF=100 CJE=2p CJC=1p TF=0.3n)
V1 in 0 SIN(0 1 1k)
R1 in a 1k
D1 a 0 DW
C1 a 0 10n
VCC vcc 0 5
RC vcc c 2k
RB a b 10k
Q1 c b 0 QW
"""


def warm() -> bool:
    """Run :data:`DECK` on the numeric engine for a few steps; True when the engine is ready."""
    from ....model import parse
    from ...simulator import Simulator
    from .loop import NumericLoop
    sim = Simulator(parse(DECK), 48000.0, engine="numeric")
    sim.run(duration=4 / 48000.0)
    return NumericLoop.ready()


def main() -> int:
    """Warm up; returns the exit status (never raises: a background build must not disturb anyone)."""
    try:
        return 0 if warm() else 1
    except Exception:       # noqa: BLE001
        return 1


if __name__ == "__main__":      # pragma: no cover - a detached process
    sys.exit(main())
