"""``phsym.simulate``: build (or load) a simulator and run it, in one call."""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np

from ..codegen import aot
from ..errors import BuildError, SimulationError, SimulationInputError
from ..netlist.deckfile import settings_of
from .result import SimulationResult
from .signals import sample_rate
from .warm import (UPGRADE_PREFIX, load_plan, outdated, request_upgrade, save_plan, snapshot_key,
                   upgrade_request)

__all__ = ["simulate", "upgrade_snapshots"]

_INCLUDES = re.compile(rb"^[ \t]*\.(inc|lib)", re.IGNORECASE | re.MULTILINE)
_MEASURES = re.compile(rb"^[ \t]*\.(meas|four)", re.IGNORECASE | re.MULTILINE)


def _with_includes(path, text: bytes) -> bytes:
    """The deck's bytes followed by those of every file it includes (for the snapshot key)."""
    if not _INCLUDES.search(text):
        return text
    from ..netlist.include import read_deck_lines
    deck = read_deck_lines(text.decode("utf-8-sig"), str(path))
    return b"\0".join([text] + [Path(f).read_bytes() for f in deck.files])


def _measured(res: SimulationResult, source) -> SimulationResult:
    """``res`` with a deck's ``.meas tran`` and ``.four`` results in ``res.info`` (``measures``, ``fourier``)."""
    if isinstance(source, (str, os.PathLike)) and Path(source).suffix.lower() != ".json":
        try:
            text = Path(source).read_bytes()
        except OSError:
            return res
        if not (_MEASURES.search(text) or _INCLUDES.search(text)):
            return res      # no card to read: a warm start imports no parser (lark)
        from ..netlist.cards import deck_settings
        from .measure import after_transient
        res.info.update(after_transient(res, deck_settings(source).analyses))
    return res


def simulate(model, fs: Optional[float] = None, u=None, duration: Optional[float] = None, x0=None,
             params: Optional[Mapping[str, float]] = None, method: str = "auto",
             progress: Optional[Callable[[int, int], None]] = None, warm_start: bool = True,
             align: str = "grid", controls: Optional[Mapping[str, object]] = None, **options) -> SimulationResult:
    """Simulate a model, a netlist file or a saved LinearPHS in one call.

    A netlist file simulated before (same text, rate, method and options, no
    parameter overrides) starts warm: from a cached plan, without building
    the symbolic model (see :mod:`phsym.simulation.warm`); one run the first time
    without sympy when it is a deck of plain parts (:mod:`phsym.simulation.cold`).

    Parameters
    ----------
    model : Model, LinearPHS, str or pathlib.Path
        A model, a netlist file, or a ``.json`` file written by :meth:`LinearPHS.save`.
    fs : float, optional
        Sample rate in Hz.  For a netlist file with a SPICE ``.tran TSTEP
        TSTOP [UIC]`` card it defaults to ``1/TSTEP``; the card then also
        gives the default ``duration`` (TSTOP), the start (the DC operating
        point unless ``UIC``) and its ``.options`` (``tol``, ``maxit``), as
        ``phsym simulate DECK`` does.
    u : array_like or dict, optional
        Inputs (see :meth:`phsym.simulation.Simulator.run`); netlist
        waveforms are the default.
    duration : float, optional
        Length in seconds (needed when no input array fixes it).
    x0 : array_like, dict or "dc", optional
        Initial state.
    params : dict, optional
        Parameter overrides by name.
    method : str
        Scheme (see :class:`~phsym.simulation.Simulator`).
    progress : callable(done, total), optional
        Called after each chunk of steps.
    warm_start : bool
        Use and fill the warm-start cache (default True).
    align : {"grid", "samples"}
        How input arrays map to steps (see :meth:`Simulator.run`):
        ``"samples"`` for sampled signals such as WAV files (``N`` samples
        in, ``N`` step values out, aligned).
    controls : dict, optional
        Signals of the netlist's control parameters by name (see
        :meth:`Simulator.run`); a run with controls builds the model (their
        values are checked against the elements' domains).
    **options
        Passed to :class:`~phsym.simulation.Simulator`.

    Returns
    -------
    SimulationResult
    """
    is_file = isinstance(model, (str, os.PathLike))
    if fs is None:
        if not is_file or Path(model).suffix.lower() == ".json":
            raise SimulationInputError("fs is required (only a netlist file's .tran card can give it)")
        deck = settings_of(model)
        fs, duration, x0 = deck.run_defaults(str(model), None, duration, x0)
        options = {**deck.simulator_options(), **options}
    fs = sample_rate(fs)
    dc = isinstance(x0, str) and x0.strip().lower() == "dc"
    # a DC start is part of the snapshot when the netlist's own waveforms give the first input
    eligible = (warm_start and is_file and Path(model).suffix.lower() != ".json" and not params
                and not (dc and u is not None) and not controls)
    key = None
    if eligible:
        try:
            text = _with_includes(model, Path(model).read_bytes())
        except (OSError, ValueError):
            eligible = False     # the symbolic path reports the missing file or the bad include
        else:
            key = snapshot_key(text, fs, method, {**options, " x0": "dc"} if dc else options)
            plan = None if outdated(key) else load_plan(key)
            if plan is not None:
                try:
                    return _measured(plan.run(u, duration, None if dc else x0, progress,
                                              info={"warm_start": True}, align=align), model)
                except ImportError:     # its generated module left the cache: rebuild below
                    pass
    if is_file and not params and not controls and Path(model).suffix.lower() != ".json":
        from .cold import cold_run      # a deck of plain parts: the numeric engine without sympy
        cold = cold_run(str(model), fs, method, options, u, duration, x0, progress, align)
        if cold is not None:
            res, plan, fp = cold
            if eligible and key is not None:
                _save_snapshot(_first_plan(plan, res, dc, x0), key, fp, str(model), fs, method, options, dc)
            return _measured(res, model)
    from ..model import load            # the symbolic path: sympy, scipy (a warm start needs neither)
    from .simulator import Simulator
    source = model
    if is_file:
        model = load(model)
    sim = Simulator(model, fs, method, **options)
    res = sim.run(u=u, duration=duration, x0=x0, params=params, progress=progress, align=align, controls=controls)
    if eligible and key is not None:
        _save_snapshot(_snapshot_plan(sim, res, dc, x0), key, sim.upgrade, str(source), fs, method, options, dc)
    return _measured(res, source)


def _save_snapshot(plan, key: str, upgrade: Optional[str], source: str, fs: float, method: str, options,
                   dc: bool) -> None:
    """Keep ``plan`` as the warm start ``key``; a first run on the numeric engine whose generated loop
    ``upgrade`` is being built asks to be moved onto it, a generated loop gets its ahead-of-time build."""
    if not plan.serialisable:
        return
    try:
        save_plan(plan, key)
    except (OSError, SimulationError):
        return      # a read-only cache only costs the next run its warm start
    if upgrade:
        request_upgrade(key, upgrade, source, fs, method, options, dc)
    elif plan.loop.key:      # Newton loop or unrolled linear loop
        aot.start_background(plan.loop.key)


def _starts_without_numba(key: Optional[str]) -> bool:
    """Whether the generated loop ``key`` has its ahead-of-time extension, built here if it has none (the
    caller is a background build).  A warm start through numba's cache of the loop costs about 1 s more
    than one on the numeric engine's extension, so a snapshot moves only onto a loop that starts without
    numba; with ``PHSYM_AOT=0`` or a failed build it stays on the numeric engine."""
    if not key or not aot.enabled():
        return False
    try:
        aot.build(key)
    except BuildError:
        return False
    return True


def _snapshot_plan(sim, res: SimulationResult, dc: bool, x0):
    """The plan a snapshot stores after ``sim`` ran ``res``."""
    return _first_plan(sim.plan(None), res, dc, x0)


def _first_plan(plan, res: SimulationResult, dc: bool, x0):
    """``plan`` as a snapshot of its run ``res`` keeps it: from where the run started."""
    if dc:      # the snapshot starts where this run started
        plan = copy.copy(plan)
        plan.x_ic, plan.x_ic_desc = np.array(res.x[0], dtype=float), res.info["x0"]
        plan.x_start = res.info.get("newton_start")
    elif plan.loop.KIND == "numeric" and x0 is None:      # its Newton start from the ICs, as found now
        plan = copy.copy(plan)
        plan.x_start = res.info.get("newton_start")
    return plan


def upgrade_snapshots(fp: str) -> int:
    """Save again on the generated loop ``fp`` every warm-start snapshot that waits for it (see
    :mod:`.warm`); returns how many.  Run by the background build once the loop is compiled; it also
    builds the loop's ahead-of-time extension, and a snapshot moves only when that exists.

    Parameters
    ----------
    fp : str
        Fingerprint of the compiled generated loop (:func:`~.engines.choice.fingerprint`).
    """
    from ..common.paths import cache_dir
    from ..model import load
    from .simulator import Simulator
    moved = 0
    for path in sorted(cache_dir().glob(f"{UPGRADE_PREFIX}*.json")):
        req = upgrade_request(path)
        if req is None or req["fp"] != fp:
            continue
        key = path.stem[len(UPGRADE_PREFIX):]
        try:
            source, fs, method, options, dc = req["path"], req["fs"], req["method"], req["options"], req["dc"]
            text = _with_includes(source, Path(source).read_bytes())
            if snapshot_key(text, fs, method, {**options, " x0": "dc"} if dc else options) == key:
                sim = Simulator(load(source), fs, method, **{**options, "engine": "generated"})
                res = sim.run(duration=1.0 / fs, x0="dc" if dc else None)
                plan = _snapshot_plan(sim, res, dc, None)
                if plan.serialisable and _starts_without_numba(plan.loop.key):
                    save_plan(plan, key)
                    moved += 1
        except Exception:       # noqa: BLE001 - the numeric snapshot keeps serving; outdated() drops it
            pass
        try:
            path.unlink()
        except OSError:
            pass
    return moved
