"""The ``phsym`` command line.

Subcommands: ``show`` (structure of a netlist), ``simulate``, ``op``, ``ac``, ``dc``, ``tf``, ``identify``,
``identify-mech``, ``fit``, ``learn``, ``cache``, ``sweep``, ``export`` (each implemented next to the code it drives).
"""
from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import sys
from typing import List, Optional

from .version import __version__
from .errors import PhsymError

__all__ = ["main", "build_parser"]

#: Subcommand -> the module that adds its parser (``add_parser(subparsers)``) and runs it.
PLUGINS = {"simulate": "phsym.simulation.cli.simulate", "op": "phsym.simulation.cli.op",
           "ac": "phsym.simulation.cli.ac", "dc": "phsym.simulation.cli.dc", "tf": "phsym.simulation.cli.tf",
           "identify": "phsym.identify.cli_identify", "identify-mech": "phsym.identify.cli_mech",
           "fit": "phsym.identify.cli_fit", "learn": "phsym.identify.cli_learn",
           "cache": "phsym.simulation.cli.cache", "sweep": "phsym.simulation.cli.sweep",
           "export": "phsym.simulation.cli.export"}


def _show(args: argparse.Namespace) -> int:
    from .model import load
    from .report import checks_pass, describe_json, describe_text
    model = load(args.file)
    if args.symbolic:
        model.structure         # build it whatever the size: describe and the checks then use it
    if args.latex:
        print(model.to_latex())
    elif args.json:
        print(describe_json(model))
    else:
        print(describe_text(model))
    netlist = getattr(model, "netlist", None)        # a saved LinearPHS has none
    if netlist is not None and any(el.kind == "learned" for el in netlist.elements) and not (args.latex or args.json):
        from .identify.learned.show import laws_text, plot_laws, saved_laws
        print(laws_text(model))
        if args.plot:
            plot_laws(saved_laws(model).values(), args.plot)
    elif args.plot:
        print("phsym show: --plot draws learned laws; this netlist has none", file=sys.stderr)
    return 0 if checks_pass(model) else 1


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """Return the argument parser with all available subcommands, or with only ``command``'s.

    Parameters
    ----------
    command : str, optional
        A subcommand: the parser holds it alone, which parses that
        command's arguments as the full parser does (argparse builds the
        other dozen parsers in about 20 ms, a tenth of a warm run).
    """
    p = argparse.ArgumentParser(prog="phsym", description="Port-Hamiltonian modelling from netlists.")
    p.add_argument("--version", action="version", version=f"phsym {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    if command in (None, "show"):
        _add_show(sub)
    for name, mod in PLUGINS.items():
        if command not in (None, name):
            continue
        try:
            m = importlib.import_module(mod)
        except ImportError as exc:
            if exc.name and mod.startswith(exc.name):
                continue   # subcommand not installed in this build
            raise
        m.add_parser(sub)
    return p


def _add_show(sub) -> None:
    s = sub.add_parser("show", help="print states, ports, parameters, H, structure and checks")
    s.add_argument("file", help="netlist file")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--latex", action="store_true", help="print LaTeX")
    g.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--symbolic", action="store_true",
                   help="build the symbolic structure of a large model (above 400 branches) to print and check it")
    s.add_argument("--plot", default=None, help="write a figure of each learned law (learn(...) element) with "
                                                "its confidence band and excited range, e.g. laws.png")
    s.set_defaults(func=_show)


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``phsym`` command."""
    # The interpreter's shutdown runs full collections that walk every live object: after a run that
    # built a model (sympy) and loaded numba, 0.5-0.7 s of CPU to find no garbage.  Frozen objects are
    # left out of them; the rest of the shutdown (atexit handlers, flushes, module teardown) is unchanged.
    atexit.unregister(gc.freeze)        # once, however often main runs in this process
    atexit.register(gc.freeze)
    words = sys.argv[1:] if argv is None else list(argv)
    # the command is the first word when no option precedes it; otherwise (or for help) the full parser
    parser = build_parser(words[0] if words and (words[0] in PLUGINS or words[0] == "show") else None)
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except PhsymError as exc:
        print(f"phsym: error: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"phsym: error: {exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print("phsym: error: out of memory (too many steps or too large a model for this machine; "
              "check --fs and --duration units: 48k, 10m)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
