"""``phsym learn``: learn the law of a storage or dissipative element from CSV state data.

Usage::

    phsym learn NETLIST DATA.csv [--element C1] [--inputs V1] [--time t] \
        [--derivative central|spline|gp] [--samples 64] [--variable q] \
        [--out law.txt|law.npz] [--plot law.png] [--quiet]

The netlist gives the structure (its descriptor form ``E xi' = (J - R) z + B u``,
see :meth:`phsym.identify.EffortGP.from_model`); the element to learn is
written ``H=learn`` in the netlist (or named by ``--element``, its law then
ignored).  The CSV needs a header row with the time column, one
column per descriptor variable (``q_C1``, ``e_R1``, ...: ``phsym learn`` lists
them when one is missing) and the input columns.  Derivatives come from the
time series; ``--samples`` evenly spaced rows train the GP.  The learned law
is printed (and written by ``--out``) as netlist text ``H={...}`` to put on
the element's line; with ``--out law.npz`` it is saved as numbers instead
(:func:`phsym.identify.gp.laws.save_law`) and the two netlist lines that use
it are printed (``.table NAME law.npz`` and ``H={NAME(q)}``); ``--plot`` compares ``(J - R) z`` of the learned model
with the data's ``E xi' - B u``.

A dissipative element (``I=learn``, ``V=learn`` or ``--element R1``) is
learned by :class:`~phsym.identify.gp.DissipativeLawGP` from its port
samples (every other law of the netlist known); ``--samples`` rows spread
over the law's variable train it; the law is printed as ``I={...}`` text or
saved by ``--out law.npz``.
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
    p.add_argument("--serial", action="store_true", help="run the optimiser's starts one after the other "
                   "(default: at the same time on this machine's cores; the same result unless a start the "
                   "serial fit abandons early would have won)")
    p.add_argument("--variable", default=None, help="the law's variable in the netlist (default by kind: q, phi, ...)")
    p.add_argument("--out", default=None, help="write the law: netlist text H={...}, or numbers for "
                                               ".table NAME FILE.npz when the name ends in .npz")
    p.add_argument("--plot", default=None, help="write a PNG comparing the learned model with the data")
    p.add_argument("--quiet", action="store_true", help="no progress output")


def _npz(out) -> bool:
    return bool(out) and out.lower().endswith(".npz")


def _announce(element: str, path, key: str, variable: str) -> str:
    """Print the ``.table`` card of a saved law; returns the element's law text."""
    table = f"{element}_LAW".replace(".", "_")
    print(f".table {table} {path}")
    return f"{key}={{{table}({variable})}}"


def _dissipative(args: argparse.Namespace, model, element: str, say) -> int:
    """Learn a one-port dissipative law (DissipativeLawGP on the port samples of the data)."""
    import sympy as sp

    from .gp.dissipative import DissipativeLawGP, descriptor_names, port_samples
    names = descriptor_names(model)
    inputs = split_names(args.inputs) or list(model.inputs)
    cols = read_csv_columns(args.data, [args.time] + names + inputs)
    X = np.column_stack([cols[c] for c in names])
    U = np.column_stack([cols[c] for c in inputs])
    w, z = port_samples(model, element, X, U, names)
    rows = np.argsort(w)[np.unique(np.linspace(0, len(w) - 1, min(args.samples, len(w))).astype(int))]
    say(f"port samples of {element}: {len(w)} (w from {w.min():.4g} to {w.max():.4g}); fitting on {len(rows)} ...")
    start = time.perf_counter()
    gp = DissipativeLawGP(restarts=args.restarts).fit(w[rows], z[rows])
    say(f"done in {time.perf_counter() - start:.2f} s; R^2 on all samples {gp.score(w, z):.6f}; "
        f"passive on the data range: {gp.passive_}")
    given = model.netlist.element(element).law      # I=learn / V=learn: its key and variable
    law_key = given.key if given is not None else "I"
    variable = args.variable or (given.variable.name if given is not None else "v")
    if _npz(args.out):
        law = _announce(element, gp.save_law(args.out, {"element": element, "netlist": str(args.netlist)}),
                        law_key, variable)
    else:
        var = sp.Symbol(variable, real=True)
        law = f"{law_key}={{{sp.sstr(gp.numeric_law().expression(var), full_prec=True)}}}"
        if args.out:
            with open(args.out, "w") as fh:
                fh.write(law + "\n")
    print(f"{element}: {law}")
    if args.plot:
        order = np.argsort(w)
        plot_data_and_fit(args.plot, w[order], {"z": z[order]}, {"z": gp.predict(w[order])}, variable,
                          {"z": "learned law"})
    return 0


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
        element = args.element or next((el.name for el in model.netlist.elements
                                        if el.law is not None and el.law.learn), None)
        if element is not None and any(d.element.upper() == element.upper() for d in model.structure.dissipative):
            return _dissipative(args, model, element, say)
        gp = EffortGP.from_model(model, learn=[args.element] if args.element else None, restarts=args.restarts,
                                  executor=None if args.serial else "threads")
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
        if _npz(args.out):
            from .gp.laws import save_law
            path = save_law(gp, args.out, {"element": element, "netlist": str(args.netlist),
                                           "data": str(args.data)})
            law = _announce(element, path, "H", variable)
        else:
            law = gp.law(state, variable)
    except (OSError, ValueError, KeyError, PhsymError) as exc:
        print(f"phsym learn: error: {exc}", file=sys.stderr)
        return 2
    print(f"{element}: {law}")
    if args.out and not _npz(args.out):
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


COMMAND = Subcommand("learn", help="learn a storage or dissipative law from CSV state data (Gaussian process)",
                     description="Learn the energy law of a storage element with EffortGP on the "
                     "netlist's descriptor structure.",
                     fill=_fill, run=run)
add_parser, build_parser, main = COMMAND.add_parser, COMMAND.build_parser, COMMAND.main


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
