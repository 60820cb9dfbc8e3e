"""``phsym ac FILE``: small-signal frequency response at the DC operating point (SPICE's ``.ac``)."""
from __future__ import annotations

import argparse
from typing import Any, Optional, Tuple

__all__ = ["add_parser", "run", "deck_sweep"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``ac`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser(
        "ac", help="small-signal frequency response at the DC operating point (CSV, Bode plot)",
        description="Linearise at the DC operating point (sources at their DC values) and print or "
                    "write the response of every node voltage and voltage-source current (or --signal "
                    "labels) to the deck's AC sources (AC mag phase, superposed), or to a unit "
                    "excitation of --source.")
    p.add_argument("file", help="netlist file")
    p.add_argument("--sweep", nargs=4, metavar=("DEC|OCT|LIN", "N", "FSTART", "FSTOP"),
                   help="frequency sweep as in SPICE's .ac card, e.g. --sweep dec 20 10 100k "
                        "(default: the deck's own .ac card)")
    p.add_argument("--source", help="the one source excited with unit amplitude (default: the deck's AC "
                                    "sources, else the first source)")
    p.add_argument("--signal", action="append", default=[],
                   help="signal label (default: every node voltage and voltage-source current)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="parameter override")
    p.add_argument("--engine", choices=("auto", "symbolic", "numeric"), default="auto",
                   help="small-signal model: the symbolic structure's, or the numeric engine's sparse "
                        "equations (auto: numeric above the symbolic limit of branches)")
    p.add_argument("--out", help="write a CSV table (f, dB and phase per signal); default: print it")
    p.add_argument("--plot", help="write a Bode plot (e.g. bode.png; needs matplotlib)")
    p.set_defaults(func=run)
    return p


def deck_sweep(path) -> Optional[Tuple[str, str, str, str]]:
    """The ``.ac DEC|OCT|LIN N FSTART FSTOP`` card of a deck file (its includes read), or None.

    Parameters
    ----------
    path : str or pathlib.Path
        The deck.
    """
    from ...netlist.cards import deck_settings
    ac = deck_settings(path).analyses.ac
    return None if ac is None else (ac.sweep, str(ac.points), repr(ac.fstart), repr(ac.fstop))


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym ac``; returns the exit status."""
    import sys

    from ...errors import SimulationError
    from ...netlist.cards import deck_settings
    from ..analyses.ac import ac_analysis, frequency_grid
    from .simulate import _number, _pairs
    sweep = args.sweep or deck_sweep(args.file)
    if sweep is None:
        raise SimulationError(f"{args.file} has no .ac card: give the frequencies with --sweep dec N FSTART FSTOP")
    kind, n, f1, f2 = sweep
    try:
        points = int(n)
    except ValueError:
        raise SimulationError(f"--sweep: N must be an integer, got {n!r}") from None
    f = frequency_grid(kind, points, _number(f1), _number(f2))
    params = {k: _number(v) for k, v in _pairs(args.param, "param").items()}
    res = ac_analysis(args.file, f, source=args.source, signals=args.signal or None, params=params or None,
                      engine=args.engine)
    res.save(args.out if args.out else sys.stdout)
    for name, value in res.measure(deck_settings(args.file).analyses.measures).items():
        print(f"{name:<20} = {value:.6e}", file=sys.stdout if args.out else sys.stderr)   # as ngspice prints .meas
    if args.plot:
        res.plot(path=args.plot)
    return 0
