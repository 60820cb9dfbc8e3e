"""``phsym op FILE``: the DC operating point of a netlist (SPICE's ``.op``)."""
from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``op`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser(
        "op", help="DC operating point: node potentials, branch currents, power per element",
        description="DC operating point of a netlist with the sources at their t = 0 values "
                    "(SIN: offset, PULSE: first level); .ic values are not held, as in SPICE's .op.")
    p.add_argument("file", help="netlist file")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="parameter override")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym op``; returns the exit status."""
    from .simulate import _number, _pairs
    from ..analyses.op import operating_point
    params = {k: _number(v) for k, v in _pairs(args.param, "param").items()}
    op = operating_point(args.file, params=params or None)
    if args.json:
        print(json.dumps({"title": op.title, "nodes": op.nodes, "currents": op.currents,
                          "voltages": op.voltages, "power": op.power, "state": op.state}, indent=1))
    else:
        print(op.to_text())
    return 0
