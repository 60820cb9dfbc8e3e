"""``phsym sweep``: a parameter sweep or Monte Carlo study from the command line.

``--param NAME=SPEC`` gives the values of one parameter: ``1k:10k:10`` (10
values evenly spaced), ``1k:100k:5log`` (5 values evenly spaced in log),
``1k,2.2k,4.7k`` (a list) or ``2.2k`` (one value).  Several parameters form
the Cartesian product (``--grid``, the default) or are zipped (``--zip``).
With ``--monte-carlo N`` the names vary around their netlist values by
``--tol`` (or ``--param NAME=TOL%`` per name).  Runs execute on every core,
or on a dask cluster with ``--scheduler ADDRESS`` (``--scheduler local``
starts one); a progress bar counts runs.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

from ...clitools import ProgressBar, Subcommand
from ...errors import MissingDependencyError, PhsymError, SimulationInputError
from ..sweeps.params import DISTRIBUTIONS

__all__ = ["COMMAND", "add_parser", "build_parser", "run", "main", "parse_values"]


def _number(text: str) -> float:
    from ...netlist.numbers import parse_number
    try:
        return parse_number(text.strip())
    except Exception:
        raise SimulationInputError(f"not a number: {text!r}") from None


def parse_values(spec: str) -> np.ndarray:
    """Values of ``--param NAME=SPEC``: ``A:B:N``, ``A:B:Nlog``, ``a,b,c`` or ``a``.

    Parameters
    ----------
    spec : str
        The text after ``=``; numbers take SPICE suffixes (``1k``, ``10n``).
    """
    spec = spec.strip()
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) != 3:
            raise SimulationInputError(f"range {spec!r}: use START:STOP:COUNT (or COUNTlog)")
        a, b, n = _number(parts[0]), _number(parts[1]), parts[2].strip().lower()
        log = n.endswith("log")
        try:
            count = int(n[:-3] if log else n)
        except ValueError:
            raise SimulationInputError(f"range {spec!r}: COUNT must be an integer") from None
        if count < 1:
            raise SimulationInputError(f"range {spec!r}: COUNT must be at least 1")
        if log:
            if a <= 0 or b <= 0:
                raise SimulationInputError(f"range {spec!r}: a log range needs positive ends")
            return np.geomspace(a, b, count)
        return np.linspace(a, b, count)
    return np.array([_number(s) for s in spec.split(",") if s.strip()], dtype=float)


def _tolerance(text: str) -> float:
    text = text.strip()
    return _number(text[:-1]) / 100.0 if text.endswith("%") else _number(text)


def _fill(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="netlist file")
    p.add_argument("--param", action="append", default=[], metavar="NAME=SPEC",
                   help="values of a parameter: START:STOP:COUNT, START:STOP:COUNTlog, a,b,c or a value; "
                        "with --monte-carlo: NAME or NAME=TOL%%")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--grid", action="store_true", help="Cartesian product of the --param values (default)")
    mode.add_argument("--zip", action="store_true", help="zip the --param values (equal counts)")
    p.add_argument("--monte-carlo", type=int, metavar="N", help="N runs with random tolerances")
    p.add_argument("--tol", default="5%", help="tolerance of --monte-carlo (default 5%%)")
    p.add_argument("--distribution", default="uniform", choices=DISTRIBUTIONS,
                   help="distribution of --monte-carlo (default uniform)")
    p.add_argument("--seed", type=int, default=None, help="seed of --monte-carlo")
    p.add_argument("--fs", required=True, help="sample rate in Hz (e.g. 48k)")
    p.add_argument("--duration", required=True, help="simulated time of each run in s (e.g. 10m)")
    p.add_argument("--method", default="auto", help="scheme (default auto)")
    p.add_argument("--signal", action="append", default=[], help="signal to keep (repeatable; default: the "
                                                                 "probes, else the port outputs)")
    p.add_argument("--out", help="write the runs: .nc (xarray), .npz (all arrays) or .csv (the run table)")
    p.add_argument("--plot", help="write a plot of the first signal over all runs (e.g. sweep.png)")
    p.add_argument("--scheduler", help="dask scheduler ADDRESS (tcp://host:8786), or 'local' for a local "
                                       "cluster; default: threads in this process")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _params(args: argparse.Namespace) -> Tuple[Dict[str, np.ndarray], str]:
    pairs: List[Tuple[str, str]] = []
    for item in args.param:
        name, _, spec = item.partition("=")
        if not name.strip():
            raise SimulationInputError(f"--param expects NAME=SPEC, got {item!r}")
        pairs.append((name.strip(), spec.strip()))
    if not pairs:
        try:
            from ...model import load
            known = ", ".join(load(args.file).parameters) or "none (write .param cards)"
        except PhsymError:
            known = "see phsym show FILE"
        what = ("--param NAME (or NAME=TOL%) for each parameter to vary" if args.monte_carlo is not None
                else "--param NAME=SPEC")
        raise SimulationInputError(f"give at least one {what}; the netlist's parameters: {known}")
    if args.monte_carlo is not None:
        from ..sweeps.params import sampling
        tol = {n: (_tolerance(s) if s else _tolerance(args.tol)) for n, s in pairs}
        return sampling(args.file, args.monte_carlo, tol, distribution=args.distribution, seed=args.seed), \
            f"Monte Carlo, {args.monte_carlo} runs"
    missing = [n for n, s in pairs if not s]
    if missing:
        raise SimulationInputError(f"--param {missing[0]} has no values (NAME=SPEC, or use --monte-carlo)")
    cols = {n: parse_values(s) for n, s in pairs}
    if args.zip:
        return cols, "zipped"
    from ..sweeps.params import grid
    return grid(cols), "grid"


def _executor(address):
    if not address:
        return None, None
    if address == "local":
        return "dask", None
    try:
        from distributed import Client
    except ImportError as exc:
        raise MissingDependencyError("--scheduler needs dask.distributed (pip install 'phsym[dask]')") from exc
    client = Client(address)
    return client, client


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym sweep``; returns the exit status (1 when every run failed).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of :func:`add_parser`.
    """
    from ..sweeps.api import sweep
    for opt, path, kinds in (("--out", args.out, (".nc", ".npz", ".csv")), ("--plot", args.plot, None)):
        if path and ((kinds and Path(path).suffix.lower() not in kinds) or not Path(path).parent.is_dir()):
            raise SimulationInputError(f"{opt} {path}: " + (f"use {', '.join(kinds)}" if kinds and Path(path)
                                       .suffix.lower() not in kinds else "its directory does not exist"))
    params, how = _params(args)
    executor, client = _executor(args.scheduler)
    bar = None if args.quiet else ProgressBar(unit="runs")
    try:
        res = sweep(args.file, _number(args.fs), params, duration=_number(args.duration),
                    outputs=args.signal or None, method=args.method, executor=executor, progress=bar)
    finally:
        if bar is not None:
            bar.close()
        if client is not None:
            client.close()
    if args.out:
        res.save(args.out)
    if args.plot and res.ok.any():
        res.plot(path=args.plot)
    print(f"{how}: {res.summary()}")
    for i, err in list(res.failures.items())[:5]:
        values = ", ".join(f"{n}={v:g}" for n, v in zip(res.names, res.values[i]))
        print(f"  run {i} ({values}) failed: {type(err).__name__}: {err}", file=sys.stderr)
    if len(res.failures) > 5:
        print(f"  ... and {len(res.failures) - 5} more failed runs", file=sys.stderr)
    return 0 if res.ok.any() else 1


COMMAND = Subcommand("sweep", help="simulate a netlist over a grid or a Monte Carlo set of parameter values",
                     description="Parameter sweep (grid or zipped values) or Monte Carlo tolerance study of a "
                     "netlist on every core or a dask cluster.  Numbers accept SPICE suffixes (48k, 10m).",
                     fill=_fill, run=run)
add_parser, build_parser, main = COMMAND.add_parser, COMMAND.build_parser, COMMAND.main


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
