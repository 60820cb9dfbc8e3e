"""``phsym dc FILE``: DC sweeps (SPICE's ``.dc``) as a table of ``v(node)`` and ``i(vsource)`` columns."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``dc`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser(
        "dc", help="DC sweep of sources, parameters or the temperature (SPICE's .dc; CSV, plot)",
        description="Operating points over the deck's .dc card (or --sweep): one or two swept sources, "
                    ".param names or TEMP, each point from the last; every node voltage and voltage-source "
                    "current (or --signal labels), printed as CSV or written with --out.")
    p.add_argument("file", help="netlist file")
    p.add_argument("--sweep", nargs="+", metavar="ITEM",
                   help="as the .dc card: SRC START STOP STEP [SRC2 START2 STOP2 STEP2] (default: the deck's)")
    p.add_argument("--signal", action="append", default=[],
                   help="signal label, e.g. v(1) or i(vids) (default: .print dc, else every node and source)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="parameter override")
    p.add_argument("--engine", choices=("auto", "symbolic", "numeric"), default="auto",
                   help="DC solver: the symbolic structure's, or the numeric engine's nodal equations "
                        "(auto: numeric above the symbolic limit of branches)")
    p.add_argument("--out", help="write a CSV table; default: print it")
    p.add_argument("--plot", help="write a plot (e.g. dc.png; needs matplotlib)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym dc``; returns the exit status."""
    import sys

    from ...errors import SimulationError
    from ...netlist.analyses import Analyses, read_card
    from ...netlist.cards import deck_settings
    from ...netlist.source import read_statements
    from ..analyses.dcsweep import dc_sweep
    from .simulate import _number, _pairs
    deck = deck_settings(args.file).analyses
    sweeps = deck.dc
    if args.sweep:
        given = Analyses()
        read_card(read_statements(".dc " + " ".join(args.sweep))[0], given)
        sweeps = given.dc
    if not sweeps:
        raise SimulationError(f"{args.file} has no .dc card: give the sweep with --sweep SRC START STOP STEP")
    params = {k: _number(v) for k, v in _pairs(args.param, "param").items()}
    signals = args.signal or deck.prints.get("dc") or None
    res = dc_sweep(args.file, sweeps, signals=signals, params=params or None, engine=args.engine)
    res.save(args.out if args.out else sys.stdout)
    for name, value in res.measure(deck.measures).items():
        print(f"{name:<20} = {value:.6e}", file=sys.stdout if args.out else sys.stderr)   # as ngspice prints .meas
    if args.plot:
        res.plot(path=args.plot)
    return 0
