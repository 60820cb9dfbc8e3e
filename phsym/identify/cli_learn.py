"""``phsym learn``: learn the law of a storage element from CSV state data.

Usage::

    phsym learn NETLIST DATA.csv [--element C1] [--inputs V1] [--time t] \
        [--derivative central|spline|gp] [--samples 64] [--variable q] \
        [--out law.txt] [--plot law.png] [--quiet]

The netlist gives the structure (its descriptor form ``E xi' = (J - R) z + B u``,
see :meth:`phsym.identify.EffortGP.from_model`); the element to learn is
written ``H=learn`` in the netlist (or named by ``--element``, its law then
ignored).  The CSV needs a header row with the time column, one
column per descriptor variable (``q_C1``, ``e_R1``, ...: ``phsym learn`` lists
them when one is missing) and the input columns.  Derivatives come from the
time series; ``--samples`` evenly spaced rows train the GP.  The learned law
is printed (and written by ``--out``) as netlist text ``H={...}`` to put on
the element's line; ``--plot`` compares ``(J - R) z`` of the learned model
with the data's ``E xi' - B u``.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ..clitools import Subcommand, plot_data_and_fit, read_csv_columns, split_names

__all__ = ["COMMAND", "add_parser", "build_parser", "run", "main"]

_VARIABLES = {"capacitor": "q", "inductor": "phi", "mass": "p", "spring": "x", "inertia": "p", "torsion": "x"}


def _fill(p: argparse.ArgumentParser) -> None:
    p.add_argument("netlist", help="netlist file (the structure; the element's law is ignored)")
    p.add_argument("data", help="CSV file with a header row")
    p.add_argument("--element", default=None, help="storage element whose law is learned "
                                                    "(default: the one written H=learn)")
    p.add_argument("--inputs", default=None, help="comma-separated input columns (default: the model's inputs)")
    p.add_argument("--time", default="t", help="name of the time column (default: t)")
    p.add_argument("--derivative", default="central", choices=("central", "spline", "gp"),
                   help="derivative estimate from the series (default: central)")
    p.add_argument("--samples", type=int, default=64, help="training rows, evenly spaced (default 64)")
    p.add_argument("--restarts", type=int, default=3, help="optimiser starts (default 3)")
    p.add_argument("--variable", default=None, help="the law's variable in the netlist (default by kind: q, phi, ...)")
    p.add_argument("--out", default=None, help="write the law (netlist text H={...})")
    p.add_argument("--plot", default=None, help="write a PNG comparing the learned model with the data")
    p.add_argument("--quiet", action="store_true", help="no progress output")


def run(args: argparse.Namespace) -> int:
    """Execute the subcommand; returns the process exit code.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of :func:`add_parser`.
    """
    from ..errors import PhsymError
    from ..model import load
    from .gp import EffortGP, estimate_derivative

    say = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    try:
        model = load(args.netlist)
        gp = EffortGP.from_model(model, learn=[args.element] if args.element else None, restarts=args.restarts)
        element = args.element or [el.name for el in model.netlist.elements if el.law is not None and el.law.learn][0]
        states = list(gp.names)
        inputs = split_names(args.inputs) or list(model.inputs)
        cols = read_csv_columns(args.data, [args.time] + states + inputs)
        t = cols[args.time]
        X = np.column_stack([cols[c] for c in states])
        U = np.column_stack([cols[c] for c in inputs])
        say(f"structure: states {', '.join(states)}; inputs {', '.join(inputs)}; {len(t)} samples")
        diff = [j for j in range(len(states)) if np.any(np.asarray(gp.E)[:, j] != 0)]
        Xdot = estimate_derivative(t, X, args.derivative, columns=diff)
        rows = np.unique(np.linspace(0, len(t) - 1, min(args.samples, len(t))).astype(int))
        say(f"fitting the GP on {len(rows)} samples ({args.derivative} derivatives from the series) ...")
        start = time.perf_counter()
        gp.fit(X, U, Xdot=Xdot, train_index=rows)
        say(f"done in {time.perf_counter() - start:.2f} s; log marginal likelihood {gp.log_marginal_likelihood_:.4g}; "
            f"R^2 on all samples {gp.score(X, U, Xdot=Xdot):.6f}")
        kind = model.netlist.element(element).kind
        variable = args.variable or _VARIABLES.get(kind, "x")
        state = states[gp.storage[0]]
        law = gp.law(state, variable)
    except (OSError, ValueError, KeyError, PhsymError) as exc:
        print(f"phsym learn: error: {exc}", file=sys.stderr)
        return 2
    print(f"{element}: {law}")
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(law + "\n")
    if args.plot:
        Y = Xdot @ np.asarray(gp.E).T - U @ np.asarray(gp.B).T
        fit = gp.predict_transformed(X)
        labels = [f"row {i + 1} of E xi' - B u" for i in range(Y.shape[1])]
        keep = [i for i in range(Y.shape[1]) if np.any(Y[:, i] != 0) or np.any(fit[:, i] != 0)]
        plot_data_and_fit(args.plot, t, {labels[i]: Y[:, i] for i in keep}, {labels[i]: fit[:, i] for i in keep},
                          args.time, {labels[i]: "learned (J - R) z" for i in keep})
    return 0


COMMAND = Subcommand("learn", help="learn a storage law from CSV state data (Gaussian process)",
                     description="Learn the energy law of a storage element with EffortGP on the "
                     "netlist's descriptor structure.",
                     fill=_fill, run=run)
add_parser, build_parser, main = COMMAND.add_parser, COMMAND.build_parser, COMMAND.main


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
