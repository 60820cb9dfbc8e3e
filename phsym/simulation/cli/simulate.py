"""``phsym simulate``: run a netlist from the command line."""
from __future__ import annotations

import argparse
from pathlib import Path
import re
from typing import Any, Dict, Optional, Tuple

import numpy as np

from ...clitools import ProgressBar
from ...common.schemes import STIFF
from ...errors import SimulationError
from ..io.audio import WAV_FORMATS, read_wav

__all__ = ["add_parser", "run", "input_source", "input_sources"]

_WAV = re.compile(r"^(?P<path>.+\.wav)(?::(?P<channel>\d+))?$", re.IGNORECASE)

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
                   help="input signal: an expression in t (sin(2*pi*1k*t)), a number, FILE.wav, "
                        "FILE.wav:CHANNEL (1-based), FILE.csv:COLUMN; NAME1,NAME2=FILE.wav maps the "
                        "channels of a multichannel file to several sources.  File inputs are sampled "
                        "signals: one step per sample, output sample k at input sample k, the rate "
                        "of a WAV file is the default --fs and its length the default duration; "
                        "inputs not given follow their netlist waveform")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="parameter override")
    p.add_argument("--control", action="append", default=[], metavar="NAME=SPEC",
                   help="drive a control parameter (.param NAME=VALUE control) during the run: an "
                        "expression in t (0.5+0.4*sin(2*pi*2*t)), a number, FILE.wav[:CHANNEL] or "
                        "FILE.csv:COLUMN, sampled as the inputs are")
    p.add_argument("--method", default="auto",
                   help="auto, discrete_gradient, midpoint or backward_euler (default auto)")
    p.add_argument("--engine", default="auto", choices=("auto", "generated", "numeric", "linear"),
                   help="auto (default: the generated loop where this machine has compiled it and the circuit is "
                        "small, the numeric engine otherwise; docs/simulation.md), generated, numeric or linear")
    p.add_argument("--stiff", default="auto", choices=STIFF,
                   help="how junction charges step: backward_euler (their gradient at the step's end, "
                        "L-stable; the energy this dissipates is P_num, part of P_diss), scheme (as "
                        "--method says), or auto (default: backward_euler for steps of 1 us or longer)")
    p.add_argument("--x0", default=None, help="initial state: 'dc' for the DC operating point, 'ic' for "
                                              "the initial conditions (default: 'dc' for a .tran card "
                                              "without UIC, else 'ic')")
    p.add_argument("--out", help="write the result (.csv, .npz or .wav)")
    p.add_argument("--signals", "--signal", dest="signal",
                   help="signals written, comma-separated: the columns of .csv/.npz besides t (default: states, "
                        "inputs, outputs, every node voltage v(node) and voltage-source current i(V1), or the "
                        "deck's .save/.print/.probe selection, and the powers), the channels of .wav (default: "
                        "first probe or output)")
    p.add_argument("--normalize", action="store_true",
                   help="scale the .wav output to a peak of 1 (default: physical levels)")
    p.add_argument("--wav-format", default="float32", choices=sorted(WAV_FORMATS),
                   help="sample format of the .wav output (default float32; integer formats clip "
                        "beyond 1 with a warning)")
    p.add_argument("--plot", help="write a plot (e.g. result.png)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def _number(text: str) -> float:
    from ...netlist.numbers import parse_number
    return parse_number(text.strip())


def _wav_channels(spec: str, fs: Optional[float], n_names: int) -> Tuple[np.ndarray, int]:
    """``(samples (n, k), rate)`` of a ``FILE.wav[:CHANNEL]`` spec for ``n_names`` inputs."""
    m = _WAV.match(spec)
    rate, data = read_wav(m.group("path"))
    if fs is not None and abs(rate - fs) > 1e-9 * fs:
        raise SimulationError(f"{m.group('path')} has sample rate {rate} Hz, the simulation runs at {fs:g} Hz "
                              "(resample the file, or leave out --fs to run at the file's rate)")
    if m.group("channel"):
        c = int(m.group("channel"))
        if not 1 <= c <= data.shape[1]:
            raise SimulationError(f"{spec}: channel {c} does not exist (the file has {data.shape[1]})")
        data = data[:, c - 1:c]
    if data.shape[1] != n_names:
        raise SimulationError(f"{spec} has {data.shape[1]} channel(s) for {n_names} input(s): write "
                              f"A,B=FILE.wav to map channels to inputs, or FILE.wav:1 to take one channel")
    return data, rate


def input_source(spec: str, fs: float):
    """Turn an ``--input`` SPEC into an array or a callable of t.

    Parameters
    ----------
    spec : str
        A number, an expression in ``t``, ``FILE.wav[:CHANNEL]`` (one
        channel) or ``FILE.csv:COLUMN``.
    fs : float
        The simulation's rate (a WAV file must have it).
    """
    spec = spec.strip()
    low = spec.lower()
    if _WAV.match(spec):
        return _wav_channels(spec, fs, 1)[0][:, 0]
    if ".csv:" in low:
        path, col = spec.rsplit(":", 1)
        from ...clitools import read_csv_columns
        try:
            return read_csv_columns(path, [col])[col]
        except ValueError as exc:
            raise SimulationError(str(exc)) from None
    try:
        return _number(spec)
    except Exception:
        pass
    import sympy as sp
    from ...netlist.expressions import parse_expression
    t = sp.Symbol("t", real=True)
    expr = parse_expression(spec, {"t": t})   # safe parser: no eval of the text
    if expr.free_symbols - {t}:
        raise SimulationError(f"input expression {spec!r} uses unknown names "
                              f"{sorted(str(s) for s in expr.free_symbols - {t})}")
    f = sp.lambdify(t, expr, "numpy")

    def wave(tt):
        with np.errstate(all="ignore"):     # an overflow is a non-finite sample, which the run reports
            return np.broadcast_to(np.asarray(f(tt), dtype=float), np.shape(tt))
    return wave


def input_sources(pairs: Dict[str, str], fs: Optional[float]) -> Tuple[Dict[str, Any], Optional[int], bool]:
    """The ``--input`` pairs as inputs by name.

    Parameters
    ----------
    pairs : dict of str to str
        ``NAME`` (or ``NAME1,NAME2`` for the channels of one WAV file) -> SPEC.
    fs : float or None
        The rate given on the command line (``None``: the WAV files' rate).

    Returns
    -------
    (dict, int or None, bool)
        Inputs by name (WAV channels as arrays, other specs as text for
        :func:`input_source` once the rate is known), the rate of the WAV
        inputs, and whether any input is a sampled file (WAV or CSV).
    """
    out: Dict[str, Any] = {}
    rates = set()
    files = False
    for name, spec in pairs.items():
        names = [n.strip() for n in name.split(",") if n.strip()]
        spec = spec.strip()
        if _WAV.match(spec):
            data, rate = _wav_channels(spec, fs, len(names))
            rates.add(rate)
            out.update({n: data[:, c] for c, n in enumerate(names)})
            files = True
            continue
        if len(names) != 1:
            raise SimulationError(f"--input {name}=...: several names need a multichannel WAV file")
        files = files or ".csv:" in spec.lower()
        out[names[0]] = spec
    if len(rates) > 1:
        raise SimulationError(f"the WAV inputs have different rates {sorted(rates)} Hz")
    return out, (rates.pop() if rates else None), files


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


def _stepped(args: argparse.Namespace, deck, fs: float, duration, x0) -> int:
    """A deck with ``.step`` cards or a ``.temp`` list: one run and one table (``OUT.stepK.csv``) per step."""
    from ..analyses.steps import run_steps
    if args.out and Path(args.out).suffix.lower() != ".csv":
        raise SimulationError(f"--out {args.out}: a stepped deck writes one .csv table per step")
    runs = run_steps(args.file, deck.analyses, fs, duration, None if x0 is None else x0, method=args.method,
                     **deck.simulator_options())
    for k, r in enumerate(runs, start=1):
        where = ""
        if args.out:
            out = Path(args.out)
            path = out.with_name(f"{out.stem}.step{k}{out.suffix}")
            r.save(path)
            where = f" -> {path}"
        values = ", ".join(f"{n}={v:g}" for n, v in r.values.items())
        print(f"step {k} ({values}): max power-balance residual {r.balance:.3g} (relative){where}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym simulate``; returns the exit status."""
    from ..run import simulate
    from ...netlist.deckfile import settings_of
    from ...netlist.settings import DeckSettings
    _check_outputs(args)        # before the run: a typo must not cost the simulation
    deck = settings_of(args.file) if Path(args.file).suffix.lower() != ".json" else DeckSettings()
    fs_given = _number(args.fs) if args.fs is not None else None
    u, wav_rate, sampled = input_sources(_pairs(args.input, "input"), fs_given)
    fs, duration, x0 = deck.run_defaults(args.file, fs_given if fs_given is not None else wav_rate,
                                         _number(args.duration) if args.duration else None, args.x0)
    if sampled and not args.duration:
        duration = None         # file inputs give the length
    u = {k: input_source(v, fs) if isinstance(v, str) else v for k, v in u.items()}
    cspecs = _pairs(args.control, "control")
    if any(_WAV.match(v) or ".csv:" in v.lower() for v in cspecs.values()):
        sampled = True          # a file control is a sampled signal, as a file input is
    controls = {k: input_source(v, fs) for k, v in cspecs.items()}
    params = {k: _number(v) for k, v in _pairs(args.param, "param").items()}
    if (deck.analyses.steps or deck.analyses.temps) and not (u or controls or params):
        return _stepped(args, deck, fs, duration, x0)
    steps = int(round(duration * fs)) if duration else None
    bar = None
    if not args.quiet and steps is not None and steps >= PROGRESS_STEPS:
        bar = ProgressBar(unit="steps")
    # a netlist run before starts from its cached snapshot (no sympy)
    try:
        res = simulate(args.file, fs, u=u or None, duration=duration, x0=x0, params=params or None,
                       method=args.method, progress=bar, align="samples" if sampled else "grid",
                       stiff=args.stiff, **({"engine": args.engine} if args.engine != "auto" else {}),
                       controls=controls or None,
                       **deck.simulator_options())
    finally:
        if bar is not None:
            bar.close()
    if args.out:
        if Path(args.out).suffix.lower() == ".wav":
            signals = [x.strip() for x in args.signal.split(",")] if args.signal else None
            res.to_wav(args.out, signals, normalize=args.normalize, format=args.wav_format)
        else:
            res.save(args.out, [x.strip() for x in args.signal.split(",")] if args.signal else None)
    if args.plot:
        res.plot(path=args.plot)
    print(res.summary())
    for name, value in res.info.get("measures", {}).items():       # as ngspice prints .meas
        print(f"{name:<20} = {value:.6e}")
    for label, four in res.info.get("fourier", {}).items():
        print(four.to_text(label))
    return 0
