"""``phsym identify``: fit a linear port-Hamiltonian model to CSV data.

Usage::

    phsym identify DATA.csv --inputs u1,u2 --outputs y1,y2 --order 20 \
        [--time t] [--out model.json] [--plot fit.png]

also runnable as ``python -m phsym.identify.cli_identify DATA.csv ...``.
The CSV needs a header row; ``--time`` names the (uniformly sampled) time
column.  A text progress bar with the current cost goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from ..clitools import Subcommand, ProgressBar, plot_data_and_fit, read_csv_columns, split_names as _names

__all__ = ["COMMAND", "add_parser", "build_parser", "run", "main"]


def _fill(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="CSV file with a header row")
    p.add_argument("--inputs", required=True, help="comma-separated input column names")
    p.add_argument("--outputs", required=True, help="comma-separated output column names")
    p.add_argument("--order", type=int, required=True, help="model order n (number of states)")
    p.add_argument("--time", default="t", help="name of the time column (default: t)")
    p.add_argument("--out", default=None, help="write the model as JSON (LinearPHS.load)")
    p.add_argument("--plot", default=None, help="write a PNG comparing data and fit")
    p.add_argument("--max-iter", type=int, default=200, help="iteration limit (default 200)")
    p.add_argument("--optimizer", choices=("lbfgs", "cg"), default="lbfgs")
    p.add_argument("--method", choices=("midpoint", "backward_euler", "explicit_euler"), default="midpoint",
                   help="time-stepping scheme (default midpoint)")
    p.add_argument("--init", choices=("data", "seed", "random"), default="data")
    p.add_argument("--free", default="J,R,B",
                   help="comma-separated free blocks among J,R,Q,B,x0 (default J,R,B)")
    p.add_argument("--rank", type=int, default=None, help="rank bound of R (default: order)")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Execute the subcommand; returns the process exit code."""
    from ..common.schemes import get_scheme
    from ..errors import PhsymError
    from .data import Measurements, step_targets
    from .linear_estimator import LinearPHSEstimator
    from .metrics import max_relative_error

    inputs, outputs = _names(args.inputs), _names(args.outputs)
    try:
        cols = read_csv_columns(args.data, [args.time] + inputs + outputs)
    except (OSError, ValueError) as exc:
        print(f"phsym identify: error: {exc}", file=sys.stderr)
        return 2
    t = cols[args.time]
    u = np.column_stack([cols[c] for c in inputs])
    y = np.column_stack([cols[c] for c in outputs])
    bar = None if args.quiet else ProgressBar(args.max_iter, unit="iterations (max)", eta=False)
    est = LinearPHSEstimator(args.order, free=tuple(_names(args.free)), init=args.init,
                             r_rank=args.rank, method=args.method, optimizer=args.optimizer,
                             max_iter=args.max_iter, random_state=args.seed, progress=bar)
    try:
        est.fit(t, u, y)
    except (PhsymError, ValueError) as exc:
        if bar is not None:
            bar.close()
        print(f"phsym identify: error: {exc}", file=sys.stderr)
        return 1
    if bar is not None:
        bar.close()
    model = est.model_
    model.inputs, model.outputs = list(inputs), list(outputs)
    pred = est.predict(t, u)
    target = step_targets(Measurements(t, est.h_, u, y, False), get_scheme(args.method))
    err = max_relative_error(pred.y, target)
    summary = {"order": args.order, "iterations": est.n_iter_, "cost": est.cost_, "r2": est.score(t, u, y),
               "rel_max_error": err, "fit_time_s": round(est.fit_time_, 3)}
    if args.out:
        model.save(args.out)
        if np.any(est.x0_ != 0):
            Path(str(args.out) + ".x0.json").write_text(json.dumps(est.x0_.tolist()))
        summary["model"] = str(args.out)
    if args.plot:
        plot_data_and_fit(args.plot, pred.t_step, {n: target[:, j] for j, n in enumerate(outputs)},
                          {n: pred.y[:, j] for j, n in enumerate(outputs)}, args.time)
        summary["plot"] = str(args.plot)
    if err >= 0.5:
        print(f"phsym identify: warning: the model explains little of the outputs (relative max error "
              f"{err:.2g}). The model class has no feedthrough (y = B^T Q x): an output with a direct input "
              "term, such as a source's current through a series resistor, cannot be fitted; try another "
              "output or a higher --order.", file=sys.stderr)
    print(json.dumps(summary))
    return 0


COMMAND = Subcommand("identify", help="fit a linear port-Hamiltonian model to CSV data",
                     description="Structure-preserving identification of "
                     "x' = (J - R) Q x + B u, y = B^T Q x from CSV data.",
                     fill=_fill, run=run)
add_parser, build_parser, main = COMMAND.add_parser, COMMAND.build_parser, COMMAND.main


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
