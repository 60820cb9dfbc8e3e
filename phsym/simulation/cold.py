"""The cold path: a plain deck run on the numeric engine without building the symbolic model.

A deck of plain parts (:mod:`phsym.netlist.plain`: R, C, L, D, V, I with
numbers) whose elements the symbolic build has described
(:mod:`phsym.structure.circuit.kinds`) and whose law kernels are in the
caches or the package's library is assembled as a circuit of numbers and
planned by :class:`~.engines.numeric.planner.NumericPlanner`, with the
choices the :class:`~.simulator.Simulator` makes of a model: the scheme of
``method="auto"`` (backward Euler for an index-2 circuit, midpoint for a
linear one, the discrete gradient otherwise) and the engine of
``engine="auto"`` (:func:`~.engines.choice.choose`).  No sympy is imported.

:func:`cold_run` returns ``None`` whenever the symbolic path is needed -- a
deck that is not plain, an element or law form never described
(:class:`~phsym.structure.circuit.kinds.NotDescribed`,
:class:`~phsym.codegen.laws.build.UnknownForm`), a structure error, an
engine other than the numeric one, an option it does not read, a run that
fails -- and the caller then runs the symbolic path, which gives the same
samples, or the error, as always.

Like the symbolic path on the numeric engine, a cold run of a small
nonlinear circuit starts the generated loop's background build and asks it
to move the warm-start snapshot onto the loop (:mod:`.warm`); the
fingerprint of the loop is computed from the plain deck
(:func:`~.engines.choice.plain_fingerprint`).
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Optional, Tuple

from ..common.schemes import NEWTON_SCHEMES, auto_method, get_scheme, stiff_rule

__all__ = ["cold_run", "PLAIN_ENV"]

#: Environment variable that turns the cold path off (``0``): every run builds the symbolic model.
PLAIN_ENV = "PHSYM_PLAIN"

#: The :class:`~.simulator.Simulator` options a cold run reads (anything else: the symbolic path).
_OPTIONS = ("engine", "tol", "maxit", "on_error", "record_efforts", "stiff")


def _circuit(deck):
    """The circuit of numbers of a plain deck, its sources' waveforms on their port records."""
    from ..structure.circuit.kinds import assemble
    c, _, _ = assemble(deck.elements)
    waves = {e.name: e.waveform for e in deck.elements}
    c.ports = [replace(p, record=replace(p.record, waveform=waves.get(p.record.element))) for p in c.ports]
    return c


def _choices(c, deck, fs: float, method: str, options) -> Optional[Tuple[str, str, Optional[str], bool]]:
    """``(scheme, stiff rule, fingerprint of the generated loop to build or None, whether engine
    "auto" chose)`` as the Simulator chooses them on the numeric engine, or ``None`` when it would
    choose another engine."""
    from .engines.choice import ENGINE_ENV, GENERATED_LIMIT, auto_engine, plain_fingerprint, ready_module
    linear = all(s.linear for s in c.storages) and all(d.linear and not d.nullator for d in c.dissipations)
    if isinstance(method, str) and method.strip().lower() == "auto":
        method = auto_method(c.index2, linear)
    scheme = get_scheme(method, NEWTON_SCHEMES).name
    stiff = stiff_rule(options.get("stiff", "auto"), 1.0 / fs)
    engine = str(options.get("engine", "auto")).strip().lower()
    auto = engine == "auto" and not os.environ.get(ENGINE_ENV, "").strip()
    if engine == "auto":
        engine = os.environ.get(ENGINE_ENV, "").strip().lower() or "auto"
    n = len(c.branches)
    fp = plain_fingerprint(deck, scheme, stiff) if not linear and n <= GENERATED_LIMIT else None
    if engine == "auto":
        # the Simulator's rule; a circuit with obstacles is left to the symbolic path at any size
        if c.numeric_obstacles() or auto_engine(n, linear, (), lambda: ready_module(fp) is not None) != "numeric":
            return None     # the linear engine or the generated loop: the symbolic path builds or loads it
    elif engine != "numeric":
        return None
    return scheme, stiff, fp, auto


def cold_run(path: str, fs: float, method: str, options, u, duration, x0, progress, align: str):
    """Run the plain deck ``path`` without sympy; ``(result, plan, fingerprint)`` or ``None`` (see the
    module docstring).  ``fingerprint`` names the generated loop whose background build was started
    (``None``: none was).

    Parameters
    ----------
    path : str
        The netlist file.
    fs : float
        Sample rate in Hz.
    method : str
        Scheme (``"auto"`` or a name).
    options : mapping
        :class:`~.simulator.Simulator` options.
    u, duration, x0, progress, align
        As :meth:`~.simulator.Simulator.run`.
    """
    from ..netlist.plain import NotPlain, read_plain
    from .engines.choice import ENGINE_ENV
    engine = str(options.get("engine", "auto")).strip().lower()
    if engine == "auto":
        engine = os.environ.get(ENGINE_ENV, "").strip().lower() or "auto"
    dc = isinstance(x0, str) and x0.strip().lower() == "dc"
    if set(options) - set(_OPTIONS) or (isinstance(x0, str) and not dc) or engine not in ("auto", "numeric") \
            or os.environ.get(PLAIN_ENV, "").strip().lower() in ("0", "off", "no", "false"):
        return None
    try:
        deck = read_plain(path)
    except NotPlain:
        return None
    try:
        c = _circuit(deck)
        chosen = _choices(c, deck, fs, method, options)
        if chosen is None:
            return None
        scheme, stiff, fp, auto = chosen
        plan, planner = _plan(c, deck, fs, scheme, stiff, options)
        desc = start = None
        if dc:      # as Simulator.run: the DC point for the first input sample, Newton's start there
            p = planner.dc_point(plan.inputs(u, duration, align)[0], {}, True)
            x0, start, desc = p.x, planner._start_of(p), "dc operating point for the first input sample"
        res = plan.run(u, duration, x0, progress, 0, x0_desc=desc, align=align, start=start, controls=None)
    except Exception:       # noqa: BLE001 - not described, an unknown form, a structure error, a failed
        return None     # run: the symbolic path runs the deck again and reports what it finds
    if fp is not None:      # as the Simulator: the next run gets the unrolled loop
        from .engines.choice import start_generated_build
        if not (start_generated_build(path, scheme, options.get("stiff", "auto"), fs) and auto):
            fp = None
    return res, plan, fp


def _plan(c, deck, fs: float, scheme: str, stiff: str, options):
    """The numeric engine's plan of the circuit ``c`` of ``deck``, and its planner (the Simulator's checks
    of its options)."""
    from .engines.numeric.planner import NumericPlanner
    from .summary import ModelSummary
    tol, maxit = float(options.get("tol", 1e-12)), int(options.get("maxit", 200))
    on_error, efforts = options.get("on_error", "raise"), options.get("record_efforts", "auto")
    if not (0 < tol < 1) or maxit < 1 or on_error not in ("raise", "flag") or efforts not in (True, False, "auto"):
        raise ValueError("an option the Simulator refuses")
    active = [c.branches[d.branch].name for d in c.dissipations if d.active]
    summary = ModelSummary(deck.name, c.states, c.inputs, [f"y({u})" for u in c.inputs], deck.probes, deck.file,
                           active, (), {}, deck.saved)
    planner = NumericPlanner(None, fs, scheme, stiff, tol, maxit, on_error == "flag", efforts, circuit=c,
                             summary=summary)
    return planner.plan(values={}, by_name=deck.parameters), planner
