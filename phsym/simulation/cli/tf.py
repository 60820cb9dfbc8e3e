"""``phsym tf FILE``: DC transfer function (SPICE's ``.tf``): gain, input and output resistance."""
from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``tf`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser(
        "tf", help="DC transfer function, input and output resistance (SPICE's .tf)",
        description="Small-signal gain from the input source to the output at the DC operating point, "
                    "the input resistance the source sees and the output resistance, printed as ngspice "
                    "prints them (name = value).")
    p.add_argument("file", help="netlist file")
    p.add_argument("output", nargs="?", help="output, e.g. 'v(5)', 'v(a,b)', 'i(vout)' (default: the deck's .tf)")
    p.add_argument("source", nargs="?", help="input source (default: the deck's .tf)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="parameter override")
    p.add_argument("--engine", choices=("auto", "symbolic", "numeric"), default="auto",
                   help="small-signal model: the symbolic structure's, or the numeric engine's sparse "
                        "equations (auto: numeric above the symbolic limit of branches)")
    p.add_argument("--json", action="store_true", help="print JSON instead of name = value lines")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym tf``; returns the exit status."""
    from ...errors import SimulationError
    from ...netlist.cards import deck_settings
    from ..analyses.tf import transfer_function
    from .simulate import _number, _pairs
    output, source = args.output, args.source
    if output is None or source is None:
        tf = deck_settings(args.file).analyses.tf
        if tf is None:
            raise SimulationError(f"{args.file} has no .tf card: give the output and the source "
                                  "(phsym tf DECK 'v(5)' VIN)")
        output, source = output or tf.output, source or tf.source
    params = {k: _number(v) for k, v in _pairs(args.param, "param").items()}
    res = transfer_function(args.file, output, source, params=params or None, engine=args.engine)
    print(json.dumps(res.as_dict(), indent=1) if args.json else res.to_text())
    return 0
