"""SPICE's switch hysteresis (``VH``) where the control voltage is set by sources alone.

A voltage-controlled switch with hysteresis turns on above ``VT + VH``,
off below ``VT - VH`` and keeps its state between: it needs a memory that
phsym's steps do not carry.  When the two control nodes' potentials are
fixed by voltage sources alone (a clock, a PWM generator: the usual case),
the control voltage is a known function of time, and so is the state: the
switch then reads a hidden source ``NAME#state`` whose waveform is that
state (0 or 1, switching at the thresholds' crossings found on a grid of
50 points per TSTEP, interpolated), with ``VT = 0.5`` and ``VH = 0``.  The
state follows the sources' waveforms at the parameters' default values.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Mapping

import numpy as np
import sympy as sp

from ..components import DATUM, ElementSpec, Waveform
from ..errors import NetlistError
from .waveforms import evaluate_waveform

__all__ = ["resolve_hysteresis", "source_potentials"]

#: grid points per TSTEP where the thresholds' crossings are looked for
PER_STEP = 50


def source_potentials(elements, t: np.ndarray, values: Mapping[sp.Symbol, float]) -> Dict[str, np.ndarray]:
    """The potentials that voltage sources alone fix from the datum, as functions of ``t``.

    Parameters
    ----------
    elements : sequence of ElementSpec
        Flattened elements.
    t : ndarray
        Times.
    values : mapping of sympy.Symbol to float
        Parameter values (the sources' waveforms read them).
    """
    pots = {DATUM: np.zeros_like(t)}
    sources = [el for el in elements if el.kind == "vsource"]
    grown = True
    while grown:
        grown = False
        for el in sources:
            a, b = el.nodes
            if (a in pots) == (b in pots):
                continue
            wave = np.zeros_like(t) if el.waveform is None else evaluate_waveform(el.waveform, t, values)
            if a in pots:
                pots[b] = pots[a] - wave
            else:
                pots[a] = pots[b] + wave
            grown = True
    return pots


def _state(t: np.ndarray, v: np.ndarray, on: float, off: float) -> List[float]:
    """PWL arguments of the switch state (1 on, 0 off) for the control voltage ``v(t)``."""
    state = 1.0 if v[0] > on else 0.0
    points = [0.0, state]
    edge = 1e-6 * (t[1] - t[0])
    for k in range(1, len(t)):
        new = 1.0 if v[k] > on else 0.0 if v[k] < off else state
        if new == state:
            continue
        level = on if new else off
        a, b = v[k - 1] - level, v[k] - level
        tc = t[k - 1] + (t[k] - t[k - 1]) * (a / (a - b) if a != b else 1.0)
        tc = max(tc, points[-2] + edge)
        points += [tc, state, tc + edge, new]
        state = new
    return points


def resolve_hysteresis(elements: List[ElementSpec], values: Mapping[sp.Symbol, float], tran) -> List[ElementSpec]:
    """Switches with ``VH != 0`` read the state their sources give them (see the module docstring).

    Parameters
    ----------
    elements : list of ElementSpec
        Flattened elements.
    values : mapping of sympy.Symbol to float
        Parameter defaults.
    tran : Tran or None
        The deck's ``.tran`` card (the times the state is known for).

    Raises
    ------
    NetlistError
        A switch with hysteresis whose control voltage the circuit sets, a negative ``VH``, or a
        deck without ``.tran``.
    """
    number = lambda e: float(sp.sympify(e).xreplace(values))     # noqa: E731
    todo = [el for el in elements if el.kind == "switch" and number(el.values.get("Vh", 0)) != 0]
    if not todo:
        return elements
    hint = ("phsym keeps no state from step to step: hysteresis is followed when the control voltage is set by "
            "voltage sources alone; else set VH=0")
    if tran is None:
        raise NetlistError(f"switch {todo[0].name}: hysteresis needs the deck's .tran card (the run's times)",
                           todo[0].location, hint=hint)
    t = np.linspace(0.0, tran.stop, int(np.ceil(tran.stop / tran.step)) * PER_STEP + 1)
    pots = source_potentials(elements, t, values)
    out = list(elements)
    for el in todo:
        c, d = el.nodes[2:]
        if c not in pots or d not in pots:
            raise NetlistError(f"switch {el.name}: hysteresis (VH) of a control voltage the circuit sets",
                               el.location, hint=hint)
        vt, vh = number(el.values.get("Vt", 0)), number(el.values["Vh"])
        if vh < 0:      # on below off: no band to keep a state in
            raise NetlistError(f"switch {el.name}: negative hysteresis VH={vh:g}", el.location,
                               hint="VH is the half-width of the band where the switch keeps its state: "
                                    "give it >= 0")
        points = _state(t, pots[c] - pots[d], vt + vh, vt - vh)      # on is tested first, as ngspice
        node = f"{el.name}#state"
        hidden = ElementSpec(node, "vsource", (node, DATUM), {},
                             waveform=Waveform("pwl", tuple(sp.Float(p) for p in points), el.location),
                             location=el.location)
        values_ = dict(el.values, Vt=sp.Float(0.5), Vh=sp.Float(0.0))
        out[out.index(el)] = dataclasses.replace(el, nodes=el.nodes[:2] + (node, DATUM), values=values_)
        out.append(hidden)
    return out
