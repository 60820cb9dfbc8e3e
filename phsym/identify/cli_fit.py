"""``phsym fit``: estimate netlist parameters from CSV input-output data (or a saved run, ``.npz``).

Usage::

    phsym fit NETLIST DATA.csv --free L,C1,C2 --inputs VG --outputs 'y(VG)',v(n1) \
        [--time t] [--method auto] [--stiff auto] [--x0 zero|dc|estimate] \
        [--init L=1.5,C1=0.02] [--out fit.json] [--plot fit.png]

Audio recordings: ``phsym fit NETLIST IN.wav --wav-out OUT.wav --inputs Vin
--outputs 'v(out)'`` reads the input channel(s) and the output channel(s)
(one per name, in order; levels as stored, times ``--in-gain`` /
``--out-gain``), sampled at the files' rate.  A netlist with ``learn(...)``
elements fits their laws (``--free`` then names the other parameters and may
be omitted), prints each law's trust range, ``--save FILE`` writes the
netlist with the fitted lines and ``--plot-laws FILE.png`` plots each law
with its confidence band and excited range.

The CSV needs a header row; ``--time`` names the (uniformly sampled) time
column (default ``t``); the other columns are named by the model's input names
and the output labels.  ``DATA.npz`` (or a ``.csv`` table) written by ``phsym
simulate --out`` says which scheme made it, and ``--method auto`` (default) fits
with that scheme (any other CSV table: backward Euler).  A progress line (evaluation count, cost) goes to
stderr; the table of estimates with confidence intervals and the NRMS go to
stdout.
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any, Dict, Optional

import numpy as np

from ..common.schemes import STIFF
from ..errors import IdentificationError
from ..clitools import Subcommand, ProgressBar, plot_data_and_fit, read_csv_columns, split_names as _names

__all__ = ["COMMAND", "add_parser", "build_parser", "run", "main"]


def _assignments(text: Optional[str]) -> Dict[str, float]:
    out: Dict[str, float] = {}
    for item in _names(text):
        if "=" not in item:
            raise IdentificationError(f"--init expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        from ..netlist.numbers import parse_number
        out[k.strip()] = parse_number(v.strip())     # SPICE suffixes, as in simulate --param
    return out


def _has_scheme(path: str) -> bool:
    """Whether ``path`` is a ``.csv`` table that says which scheme made it (``phsym simulate --out``)."""
    from ..simulation.io.saved import csv_info
    if not path.lower().endswith(".csv"):
        return False
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return "scheme" in csv_info([fh.readline(), fh.readline()])
    except (OSError, UnicodeDecodeError):
        return False        # read_csv_columns reports it


def _as_table_column(saved, label: str) -> np.ndarray:
    """A saved signal as a ``phsym simulate`` table holds it: a state on the grid, a step quantity
    with its empty first row."""
    v = np.asarray(saved[label], dtype=float)
    return v if v.shape[0] == saved.t.shape[0] else np.concatenate([[np.nan], v])


def _wav_columns(args: argparse.Namespace, inputs, outputs) -> Dict[str, np.ndarray]:
    """Input and output WAV channels as columns (``t`` from the sample rate)."""
    from ..errors import DataFileError
    from ..simulation.io.audio import read_wav
    if not args.wav_out:
        raise DataFileError("a WAV input recording needs --wav-out OUT.wav (the output recording)")
    rate, x = read_wav(args.data)
    rate_out, z = read_wav(args.wav_out)
    x, z = np.asarray(x, float), np.asarray(z, float)      # float32 WAVs: the fit runs in double precision
    if rate != rate_out or len(x) != len(z):
        raise DataFileError(f"{args.data} ({rate} Hz, {len(x)} samples) and {args.wav_out} ({rate_out} Hz, "
                            f"{len(z)} samples) must have the same rate and length")
    for path, data, names in ((args.data, x, inputs), (args.wav_out, z, outputs)):
        if data.shape[1] != len(names):
            raise DataFileError(f"{path} has {data.shape[1]} channel(s) for {len(names)} name(s): {names}")
    cols = {args.time: np.arange(len(x)) / float(rate)}
    cols.update({n: args.in_gain * x[:, j] for j, n in enumerate(inputs)})
    cols.update({n: args.out_gain * z[:, j] for j, n in enumerate(outputs)})
    return cols


def _fill(p: argparse.ArgumentParser) -> None:
    p.add_argument("netlist", help="netlist file with symbolic parameters")
    p.add_argument("data", help="CSV file with a header row, a run saved as .npz by phsym simulate, "
                   "or the input recording (WAV, with --wav-out)")
    p.add_argument("--free", default="", help="comma-separated parameters to estimate (besides learned laws)")
    p.add_argument("--wav-out", default=None, help="output recording (WAV) when DATA is the input WAV")
    p.add_argument("--in-gain", type=float, default=1.0, help="input WAV samples times this (default 1)")
    p.add_argument("--out-gain", type=float, default=1.0, help="output WAV samples times this (default 1)")
    p.add_argument("--save", default=None, help="write the netlist with the fitted learned laws")
    p.add_argument("--plot-laws", default=None, help="write a PNG of each learned law with its confidence band")
    p.add_argument("--inputs", default=None, help="comma-separated input columns (default: all model inputs)")
    p.add_argument("--outputs", required=True, help="comma-separated output labels, e.g. 'y(VG)',v(n1)")
    p.add_argument("--time", default="t", help="name of the time column (default: t)")
    p.add_argument("--method", default="auto",
                   choices=("auto", "backward_euler", "midpoint", "discrete_gradient"),
                   help="time-stepper (default auto: the scheme a run saved by phsym simulate (.npz, or .csv "
                        "with its '# scheme:' line) was made with, backward_euler for other tables)")
    p.add_argument("--stiff", default="auto", choices=STIFF,
                   help="how junction charges step, as phsym simulate --stiff (default auto): data made by "
                        "phsym simulate need the rule it used")
    p.add_argument("--x0", default="zero", choices=("zero", "dc", "estimate"),
                   help="initial state: zero (netlist ICs), dc or estimate")
    p.add_argument("--init", default=None, help="start values NAME=VALUE,... (default: netlist values)")
    p.add_argument("--starts", type=int, default=1, help="number of optimiser starts (default 1)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the extra starts")
    p.add_argument("--max-nfev", type=int, default=200, help="residual evaluations per start (default 200)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--out", default=None, help="write the estimates as JSON")
    p.add_argument("--plot", default=None, help="write a PNG comparing data and fit")
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
    from ..common.schemes import get_scheme
    from .data import Measurements, step_signal, step_targets
    from .parameter_estimator import ParameterEstimator
    from ..simulation.io.saved import load_result
    from .warnings import UnidentifiableParameterWarning

    try:
        model = load(args.netlist)
        inputs = _names(args.inputs) or list(model.inputs)
        outputs = _names(args.outputs)
        init = _assignments(args.init)
        if args.data.lower().endswith(".npz") or _has_scheme(args.data):
            saved = load_result(args.data)
            cols = {args.time: saved.t, **{c: saved[c] for c in inputs},
                    **{c: _as_table_column(saved, c) for c in outputs}}
        elif str(args.data).lower().endswith(".wav"):
            saved, cols = None, _wav_columns(args, inputs, outputs)
        else:
            saved, cols = None, read_csv_columns(args.data, [args.time] + inputs + outputs)
    except (OSError, ValueError, PhsymError) as exc:
        print(f"phsym fit: error: {exc}", file=sys.stderr)
        return 2
    t = cols[args.time]
    u = {c: cols[c] for c in inputs}
    y = {c: cols[c] for c in outputs}
    # a phsym simulate table leaves step quantities empty at t[0]: those columns hold step values
    first = [np.isnan(v[0]) for v in y.values()]
    if any(first):
        if not all(first):
            print("phsym fit: error: the output columns mix step values (empty first row) and grid samples",
                  file=sys.stderr)
            return 2
        y = {c: v[1:] for c, v in y.items()}
    x0: Any = None if args.x0.lower() in ("zero", "none", "ic") else args.x0.lower()
    bar = None if args.quiet else ProgressBar(args.max_nfev * max(args.starts, 1), unit="evaluations (max)", eta=False)
    learned = any(spec.kind == "learned" for spec in model.netlist.elements)
    if learned:
        from .learned import LearnedLawEstimator as Fitter
    else:
        Fitter = ParameterEstimator
        if not _names(args.free):
            print("phsym fit: error: --free is required (the netlist has no learn(...) element)", file=sys.stderr)
            return 2
    est = Fitter(model, _names(args.free), outputs, method=args.method, stiff=args.stiff,
                             initial=init or None,
                             x0=x0, n_starts=args.starts, random_state=args.seed, max_nfev=args.max_nfev,
                             confidence=args.confidence,
                             callback=(lambda k, cost, p: bar(k, cost=cost)) if bar else None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnidentifiableParameterWarning)
        try:
            est.fit(saved) if saved is not None else est.fit(t, u, y)
        except (PhsymError, ValueError) as exc:
            if bar is not None:
                bar.close()
            print(f"phsym fit: error: {exc}", file=sys.stderr)
            return 1
    if bar is not None:
        bar.close()
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    print(est.report() if learned else est.summary())
    if args.save and learned:
        with open(args.save, "w", encoding="utf-8") as fh:
            fh.write(est.netlist_text(args.netlist))
    if args.plot_laws and learned:
        from .learned.show import plot_laws
        plot_laws(est.laws_.values(), args.plot_laws)
    if args.out:
        doc = {"netlist": str(args.netlist), "method": est.method_, "stiff": est.stiff_, "outputs": outputs,
               "params": est.params_, "std": est.std_,
               "confidence": est.confidence,
               "confidence_intervals": {k: list(v) for k, v in est.confidence_intervals_.items()},
               "covariance": est.covariance_.tolist(), "nrms": est.nrms_,
               "x0": np.asarray(est.x0_).tolist(), "unidentifiable": est.unidentifiable_,
               "iterations": est.n_iter_, "cost": float(est.result_.cost), "fit_time_s": est.fit_time_}
        with open(args.out, "w") as fh:
            json.dump(doc, fh, indent=2)
    if args.plot:
        res = est.predict(t, u)
        data = {n: (v if any(first) else step_targets(Measurements(t, res.info["h"], None, v[:, None], False),
                                                      get_scheme(est.method_))[:, 0]) for n, v in y.items()}
        fitted = {n: step_signal(res, n, get_scheme(est.method_)) for n in outputs}
        plot_data_and_fit(args.plot, res.t_step, data, fitted, args.time,
                          {n: f"fit (NRMS {est.nrms_[n]:.3g})" for n in outputs})
    return 0


COMMAND = Subcommand("fit", help="estimate netlist parameters from CSV input-output data",
                     description="Grey-box output-error fit of netlist parameters with exact "
                     "sensitivities of a passivity-preserving time-stepper.",
                     fill=_fill, run=run)
add_parser, build_parser, main = COMMAND.add_parser, COMMAND.build_parser, COMMAND.main


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
