"""``phsym simulate``: run a netlist from the command line."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Dict

import numpy as np

from ..clitools import ProgressBar
from ..errors import SimulationError

__all__ = ["add_parser", "run", "input_source"]

#: Runs with at least this many steps show a progress bar (unless --quiet).
PROGRESS_STEPS = 200_000


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``simulate`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser(
        "simulate", help="simulate a netlist with a structure-preserving scheme",
        description="Simulate a netlist (discrete gradient / midpoint / backward Euler) and write "
                    "the result.  Numbers accept SPICE suffixes (48k, 10m).  A deck's .tran card "
                    "gives the default rate (1/TSTEP), duration (TSTOP) and start (DC operating "
                    "point unless UIC); its .options give Newton's tolerance and iteration cap.")
    p.add_argument("file", help="netlist file")
    p.add_argument("--fs", help="sample rate in Hz (e.g. 48k); default: 1/TSTEP of the .tran card")
    p.add_argument("--duration", help="simulated time in s (e.g. 10m); default: TSTOP of the .tran card, "
                                      "else the length of file inputs")
    p.add_argument("--input", action="append", default=[], metavar="NAME=SPEC",
                   help="input signal: an expression in t (sin(2*pi*1k*t)), a number, FILE.wav or "
                        "FILE.csv:COLUMN; inputs not given follow their netlist waveform")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="parameter override")
    p.add_argument("--method", default="auto",
                   help="auto, discrete_gradient, midpoint or backward_euler (default auto)")
    p.add_argument("--x0", default=None, help="initial state: 'dc' for the DC operating point, 'ic' for "
                                              "the initial conditions (default: 'dc' for a .tran card "
                                              "without UIC, else 'ic')")
    p.add_argument("--out", help="write the result (.csv, .npz or .wav)")
    p.add_argument("--signal", help="signal written to .wav (default: first probe or output)")
    p.add_argument("--plot", help="write a plot (e.g. result.png)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def _number(text: str) -> float:
    from ..netlist.numbers import parse_number
    return parse_number(text.strip())


def input_source(spec: str, fs: float):
    """Turn an ``--input`` SPEC into an array or a callable of t."""
    spec = spec.strip()
    low = spec.lower()
    if low.endswith(".wav"):
        from scipy.io import wavfile
        rate, data = wavfile.read(spec)
        if abs(rate - fs) > 1e-9 * fs:
            raise SimulationError(f"{spec} has sample rate {rate} Hz, the simulation runs at {fs:g} Hz")
        data = np.asarray(data)
        if data.ndim > 1:
            data = data[:, 0]
        if data.dtype.kind == "u":      # 8-bit WAV: unsigned, 128 is zero
            half = (float(np.iinfo(data.dtype).max) + 1.0) / 2.0
            data = (data.astype(float) - half) / half
        elif data.dtype.kind == "i":    # full scale -1 .. 1 - 2**-(bits-1)
            data = data.astype(float) / -float(np.iinfo(data.dtype).min)
        return np.asarray(data, dtype=float)
    if ".csv:" in low:
        path, col = spec.rsplit(":", 1)
        from ..clitools import read_csv_columns
        try:
            return read_csv_columns(path, [col])[col]
        except ValueError as exc:
            raise SimulationError(str(exc)) from None
    try:
        return _number(spec)
    except Exception:
        pass
    import sympy as sp
    from ..netlist.expressions import parse_expression
    t = sp.Symbol("t", real=True)
    expr = parse_expression(spec, {"t": t})   # safe parser: no eval of the text
    if expr.free_symbols - {t}:
        raise SimulationError(f"input expression {spec!r} uses unknown names "
                              f"{sorted(str(s) for s in expr.free_symbols - {t})}")
    f = sp.lambdify(t, expr, "numpy")
    return lambda tt: np.broadcast_to(np.asarray(f(tt), dtype=float), np.shape(tt))


def _pairs(items, what) -> Dict[str, str]:
    out = {}
    for it in items:
        if "=" not in it:
            raise SimulationError(f"--{what} expects NAME=VALUE, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _check_outputs(args: argparse.Namespace) -> None:
    for opt, path, kinds in (("--out", args.out, (".csv", ".npz", ".wav")), ("--plot", args.plot, None)):
        if not path:
            continue
        p = Path(path)
        if kinds and p.suffix.lower() not in kinds:
            raise SimulationError(f"{opt} {path}: unsupported file type {p.suffix or '(none)'}; "
                                  f"use {', '.join(kinds)}")
        if not p.parent.is_dir():
            raise SimulationError(f"{opt} {path}: directory {p.parent} does not exist")


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym simulate``; returns the exit status."""
    from .run import simulate
    from ..netlist.cards import DeckSettings, deck_settings
    _check_outputs(args)        # before the run: a typo must not cost the simulation
    deck = deck_settings(args.file) if Path(args.file).suffix.lower() != ".json" else DeckSettings()
    fs, duration, x0 = deck.run_defaults(args.file, _number(args.fs) if args.fs is not None else None,
                                         _number(args.duration) if args.duration else None, args.x0)
    params = {k: _number(v) for k, v in _pairs(args.param, "param").items()}
    u = {k: input_source(v, fs) for k, v in _pairs(args.input, "input").items()}
    steps = int(round(duration * fs)) if duration else None
    bar = None
    if not args.quiet and steps is not None and steps >= PROGRESS_STEPS:
        bar = ProgressBar(unit="steps")
    # a netlist run before starts from its cached snapshot (no sympy)
    try:
        res = simulate(args.file, fs, u=u or None, duration=duration, x0=x0, params=params or None,
                       method=args.method, progress=bar, **deck.simulator_options())
    finally:
        if bar is not None:
            bar.close()
    if args.out:
        if Path(args.out).suffix.lower() == ".wav":
            res.to_wav(args.out, args.signal)
        else:
            res.save(args.out)
    if args.plot:
        res.plot(path=args.plot)
    print(res.summary())
    return 0
