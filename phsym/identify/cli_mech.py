"""``phsym identify-mech``: mass, damping and stiffness matrices from CSV data.

Usage::

    phsym identify-mech DATA.csv --inputs f1,f2,f3 --positions q1,q2,q3 \
        [--time t] [--out model.json] [--plot fit.png] [--netlist model.cir]

also runnable as ``python -m phsym.identify.cli_mech DATA.csv ...``.  The
CSV needs a header row; ``--time`` names the uniformly sampled time column;
forces and positions are samples at those times, the system at rest at the
first one.  ``--out`` writes the identified :class:`~phsym.LinearPHS`
(``x = (q, p)``; ``phsym show`` and ``phsym simulate`` accept it) and, next
to it, ``<out>.mdk.json`` with M, D, K, L, their standard deviations and the
discretisation kept.  A JSON summary goes to stdout.
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np

from ..clitools import Subcommand, plot_data_and_fit, read_csv_columns, split_names as _names

__all__ = ["COMMAND", "add_parser", "build_parser", "run", "main"]

_DESCRIPTION = ("Identify M, D, K (and L) of M q'' + D q' + K q = L u from sampled forces and positions, "
                "through the midpoint (variational) and/or the exact zero-order-hold model.")


def _fill(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="CSV file with a header row")
    p.add_argument("--inputs", required=True, help="comma-separated force column names")
    p.add_argument("--positions", required=True, help="comma-separated position column names (one per DOF)")
    p.add_argument("--time", default="t", help="name of the time column (default: t)")
    p.add_argument("--discretisation", choices=("auto", "midpoint", "zoh"), default="auto",
                   help="model of the sampled data (default auto: the better of both)")
    p.add_argument("--init", choices=("auto", "midpoint", "zoh", "subspace", "ls"), default="auto",
                   help="initial estimate")
    p.add_argument("--estimate-input-matrix", action="store_true",
                   help="estimate L too (normalised by M[0,0] = 1 in the start); default: L = I")
    p.add_argument("--max-iter", type=int, default=100, help="iterations per refinement (default 100)")
    p.add_argument("--out", default=None, help="write the model as JSON (LinearPHS) and <out>.mdk.json")
    p.add_argument("--netlist", default=None, help="write a mass-spring-damper netlist when the estimate has one")
    p.add_argument("--netlist-tol", type=float, default=1e-3,
                   help="relative size below which entries count as zero in --netlist (default 1e-3)")
    p.add_argument("--plot", default=None, help="write a PNG comparing measured and fitted positions")


def run(args: argparse.Namespace) -> int:
    """Execute the subcommand; returns the process exit code.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of :func:`build_parser`.
    """
    from ..errors import PhsymError
    from .mechanical import MechanicalEstimator, NotANetworkError

    inputs, positions = _names(args.inputs), _names(args.positions)
    if not inputs or not positions:
        print("phsym identify-mech: error: --inputs and --positions need at least one column", file=sys.stderr)
        return 2
    try:
        cols = read_csv_columns(args.data, [args.time] + inputs + positions)
    except (OSError, ValueError) as exc:
        print(f"phsym identify-mech: error: {exc}", file=sys.stderr)
        return 2
    t = cols[args.time]
    u = np.column_stack([cols[c] for c in inputs])
    q = np.column_stack([cols[c] for c in positions])
    est = MechanicalEstimator(len(positions), input_matrix="estimate" if args.estimate_input_matrix else None,
                              discretisation=args.discretisation, init=args.init, max_iter=args.max_iter)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(t, u, q)
        except (PhsymError, ValueError) as exc:
            print(f"phsym identify-mech: error: {exc}", file=sys.stderr)
            return 1
    for w in caught:
        print(f"phsym identify-mech: warning: {w.message}", file=sys.stderr)
    summary = {"dof": len(positions), "discretisation": est.discretisation_, "start": est.start_,
               "iterations": est.n_iter_, "r2": est.score(t, u, q), "fit_time_s": round(est.fit_time_, 3),
               "M": est.M_.tolist(), "D": est.D_.tolist(), "K": est.K_.tolist(),
               "unidentified": est.unidentified_}
    if args.out:
        model = est.model_
        model.inputs = list(inputs)
        model.save(args.out)
        mdk = {k: getattr(est, k + "_").tolist() for k in ("M", "D", "K", "L", "M_std", "D_std", "K_std", "L_std")}
        mdk.update(discretisation=est.discretisation_, h=est.h_, inputs=inputs, positions=positions)
        with open(str(args.out) + ".mdk.json", "w", encoding="utf-8") as fh:
            json.dump(mdk, fh, indent=1)
        summary["model"] = str(args.out)
    if args.netlist:
        try:
            est.to_netlist(args.netlist, tol=args.netlist_tol)
            summary["netlist"] = str(args.netlist)
        except NotANetworkError as exc:
            print(f"phsym identify-mech: warning: no netlist written: {exc}", file=sys.stderr)
    if args.plot:
        pred = est.predict(t, u)
        plot_data_and_fit(args.plot, t, {n: q[:, j] for j, n in enumerate(positions)},
                          {n: pred[:, j] for j, n in enumerate(positions)}, args.time)
        summary["plot"] = str(args.plot)
    print(json.dumps(summary))
    return 0


COMMAND = Subcommand("identify-mech", help="identify mass, damping and stiffness matrices from CSV data",
                     description=_DESCRIPTION,
                     fill=_fill, run=run)
add_parser, build_parser, main = COMMAND.add_parser, COMMAND.build_parser, COMMAND.main


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
