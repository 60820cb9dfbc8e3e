"""``phsym ac FILE``: small-signal frequency response at the DC operating point (SPICE's ``.ac``)."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``ac`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser(
        "ac", help="small-signal frequency response at the DC operating point (CSV, Bode plot)",
        description="Linearise at the DC operating point and print or write the response of node "
                    "potentials (or --signal labels) to a unit excitation of one source.")
    p.add_argument("file", help="netlist file")
    p.add_argument("--sweep", nargs=4, required=True, metavar=("DEC|OCT|LIN", "N", "FSTART", "FSTOP"),
                   help="frequency sweep as in SPICE's .ac card, e.g. --sweep dec 20 10 100k")
    p.add_argument("--source", help="excited source (default: the first input)")
    p.add_argument("--signal", action="append", default=[], help="signal label (default: every node)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="parameter override")
    p.add_argument("--out", help="write a CSV table (f, dB and phase per signal); default: print it")
    p.add_argument("--plot", help="write a Bode plot (e.g. bode.png; needs matplotlib)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym ac``; returns the exit status."""
    import sys

    from ..errors import SimulationError
    from .ac import ac_analysis, frequency_grid
    from .cli_simulate import _number, _pairs
    kind, n, f1, f2 = args.sweep
    try:
        points = int(n)
    except ValueError:
        raise SimulationError(f"--sweep: N must be an integer, got {n!r}") from None
    f = frequency_grid(kind, points, _number(f1), _number(f2))
    params = {k: _number(v) for k, v in _pairs(args.param, "param").items()}
    res = ac_analysis(args.file, f, source=args.source, signals=args.signal or None, params=params or None)
    res.save(args.out if args.out else sys.stdout)
    if args.plot:
        res.plot(path=args.plot)
    return 0
