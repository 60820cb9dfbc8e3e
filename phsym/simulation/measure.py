"""SPICE's ``.meas`` (``.measure``) evaluated after a run, as ngspice reads the card.

Against an analysis' abscissa ``x`` (time, frequency or the DC sweep) and
its signals, linearly interpolated:

* ``NAME FIND sig AT=x``; ``NAME FIND sig WHEN cond``; ``NAME WHEN cond``
  (the ``x`` of the crossing) with ``cond`` ``sig=value`` or ``sig=sig2``
  and ``RISE=n``, ``FALL=n``, ``CROSS=n`` (``LAST`` too; default: the first
  crossing), ``TD=`` (crossings before it are not counted);
* ``NAME TRIG cond TARG cond``: the ``x`` between two crossings, each
  ``sig VAL=value`` with its ``RISE``/``FALL``/``CROSS``/``TD`` (``TRIG
  AT=x`` too);
* ``NAME AVG|RMS|PP|MIN|MAX|INTEG sig [FROM=x1] [TO=x2]``.

A signal is a label (``v(out)``, ``v(a,b)``, ``i(vin)``); ``.meas ac``
takes SPICE's forms of a complex signal too: ``vdb(x)`` (dB), ``vm(x)``,
``vp(x)`` (phase, radians), ``vr(x)``, ``vi(x)``.

>>> import numpy as np
>>> t = np.linspace(0, 1, 1001)
>>> sig = {"v(a)": np.sin(2 * np.pi * 2 * t)}.__getitem__
>>> evaluate("tmax MAX v(a)", t, sig)["tmax"], round(evaluate("t2 WHEN v(a)=0 FALL=1", t, sig)["t2"], 6)
(1.0, 0.25)
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from ..errors import SimulationError

__all__ = ["evaluate", "complex_signal", "FUNCTIONS"]

_trapezoid = getattr(np, "trapezoid", None) or np.trapz      # numpy 2 renamed it

#: the measurement functions over a window
FUNCTIONS = ("avg", "rms", "pp", "min", "max", "integ", "integral", "mean")
_AC = {"vdb": lambda z: 20 * np.log10(np.maximum(np.abs(z), 1e-300)), "vm": np.abs,
       "vp": np.angle, "vr": np.real, "vi": np.imag, "v": np.real, "i": np.real,
       "idb": lambda z: 20 * np.log10(np.maximum(np.abs(z), 1e-300)), "im": np.abs, "ip": np.angle}


def complex_signal(label: str, signal: Callable[[str], np.ndarray]) -> np.ndarray:
    """A real signal of a complex analysis: ``vdb(x)``, ``vm``, ``vp``, ``vr``, ``vi`` (and ``i...``)
    of the complex ``v(x)``; a plain label is its real part.

    Parameters
    ----------
    label : str
        The signal as the card writes it.
    signal : callable
        Complex signal by plain label (``v(x)``).
    """
    m = re.fullmatch(r"\s*([a-z]+)\s*\((.*)\)\s*", label, re.IGNORECASE)
    if not m or m.group(1).lower() not in _AC:
        return np.real(signal(label))
    form = m.group(1).lower()
    return _AC[form](signal(f"{form[0]}({m.group(2)})"))


def _tokens(text: str) -> List[str]:
    """The card's words: ``v(a, b)`` kept whole, ``KEY = value`` joined to ``KEY=value``."""
    text = re.sub(r"\(\s*([^()]*?)\s*\)", lambda m: "(" + re.sub(r"\s+", "", m.group(1)) + ")", text)
    text = re.sub(r"\s*=\s*", "=", text)
    return text.split()


def _crossings(x: np.ndarray, y: np.ndarray, level: float, direction: int) -> np.ndarray:
    """The ``x`` where ``y`` crosses ``level`` (``direction`` +1 rising, -1 falling, 0 either)."""
    d = y - level
    out = []
    for k in range(len(d) - 1):
        a, b = d[k], d[k + 1]
        if a == 0 and k == 0:
            continue
        rising, falling = a < 0 <= b, a > 0 >= b
        if (direction >= 0 and rising) or (direction <= 0 and falling):
            out.append(x[k] + (x[k + 1] - x[k]) * (a / (a - b) if a != b else 0.0))
    return np.array(out)


def _interp(x: np.ndarray, y: np.ndarray, at: float) -> float:
    # a step's value stands at its midpoint: the run's ends lie half a step outside, read at the nearest
    slack = (x[-1] - x[0]) / max(len(x) - 1, 1)
    if not x[0] - slack <= at <= x[-1] + slack:
        raise SimulationError(f"measurement point {at:g} outside the analysis ({x[0]:g} to {x[-1]:g})")
    return float(np.interp(at, x, y))


def _number(text: str) -> float:
    from ..netlist.numbers import parse_number
    return parse_number(text, warn=False)


class _Card:
    def __init__(self, text: str, x: np.ndarray, signal: Callable[[str], np.ndarray]):
        self.text, self.x, self.signal = text, x, signal

    def error(self, what: str) -> SimulationError:
        return SimulationError(f".meas {self.text}: {what}")

    def condition(self, words: List[str], start: int) -> Tuple[float, int]:
        """The ``x`` of the crossing described from ``words[start]`` on, and where it ends."""
        head = words[start]
        k = start + 1
        if head.lower().startswith("at="):
            return _number(head[3:]), k
        if "=" in head:                                     # sig=value or sig=sig2
            left, right = head.split("=", 1)
            y = self.signal(left)
            try:
                level, y = _number(right), y
            except Exception:                               # noqa: BLE001 - another signal
                y, level = y - self.signal(right), 0.0
        else:
            y = self.signal(head)
            if k >= len(words) or not words[k].lower().startswith("val="):
                raise self.error(f"{head} needs VAL=value")
            level = _number(words[k][4:])
            k += 1
        direction, count, td = 0, "1", 0.0
        while k < len(words) and words[k].split("=")[0].lower() in ("rise", "fall", "cross", "td"):
            key, _, val = words[k].partition("=")
            if key.lower() == "td":
                td = _number(val)
            else:
                direction, count = {"rise": 1, "fall": -1, "cross": 0}[key.lower()], val
            k += 1
        xs = _crossings(self.x, y, level, direction)
        xs = xs[xs >= td]
        if not len(xs):
            raise self.error("the condition is never met")
        if count.lower() == "last":
            return float(xs[-1]), k
        n = int(_number(count))
        if n > len(xs):
            raise self.error(f"only {len(xs)} crossing(s), not {n}")
        return float(xs[n - 1]), k

    def window(self, words: List[str]) -> np.ndarray:
        lo, hi = self.x[0], self.x[-1]
        for w in words:
            key, _, val = w.partition("=")
            if key.lower() == "from":
                lo = _number(val)
            elif key.lower() == "to":
                hi = _number(val)
        inside = (self.x > lo) & (self.x < hi)
        return np.concatenate([[lo], self.x[inside], [hi]])


def evaluate(text: str, x: np.ndarray, signal: Callable[[str], np.ndarray]) -> Dict[str, float]:
    """Evaluate one ``.meas`` card (its text after the analysis name).

    Parameters
    ----------
    text : str
        ``NAME FUNCTION ...`` (see the module docstring).
    x : ndarray
        The analysis' abscissa, increasing.
    signal : callable
        A signal's values on ``x`` by label.

    Returns
    -------
    dict of str to float
        ``{NAME: value}``, and ``{NAME + "_at": x}`` for ``MIN``/``MAX``.

    Raises
    ------
    SimulationError
        A malformed card, an unknown signal, or a condition never met.
    """
    words = _tokens(text)
    if len(words) < 2:
        raise SimulationError(f".meas {text}: needs a name and a measurement")
    name, fn = words[0], words[1].lower()
    card = _Card(text, np.asarray(x, float), signal)
    if fn == "find":
        y = card.signal(words[2])
        if len(words) > 3 and words[3].lower().startswith("at="):
            return {name: _interp(card.x, y, _number(words[3][3:]))}
        if len(words) < 5 or words[3].lower() != "when":
            raise card.error("FIND sig AT=x or FIND sig WHEN cond")
        at, _ = card.condition(words, 4)
        return {name: _interp(card.x, y, at)}
    if fn == "when":
        return {name: card.condition(words, 2)[0]}
    if fn == "trig":
        t1, k = card.condition(words, 2)
        if k >= len(words) or words[k].lower() != "targ":
            raise card.error("TRIG cond TARG cond")
        t2, _ = card.condition(words, k + 1)
        return {name: t2 - t1}
    if fn in FUNCTIONS:
        y = card.signal(words[2])
        xs = card.window(words[3:])
        ys = np.interp(xs, card.x, y)
        span = xs[-1] - xs[0]
        integral = float(_trapezoid(ys, xs))
        if fn in ("avg", "mean"):
            return {name: integral / span}
        if fn == "rms":
            return {name: float(np.sqrt(_trapezoid(ys * ys, xs) / span))}
        if fn == "pp":
            return {name: float(ys.max() - ys.min())}
        if fn in ("integ", "integral"):
            return {name: integral}
        k = int(np.argmax(ys) if fn == "max" else np.argmin(ys))
        return {name: float(ys[k]), f"{name}_at": float(xs[k])}
    raise card.error(f"unknown measurement {words[1]!r}: FIND, WHEN, TRIG/TARG, " + ", ".join(FUNCTIONS).upper())


def measure_cards(cards, analysis: str, x: np.ndarray, signal: Callable[[str], np.ndarray]) -> Dict[str, float]:
    """Every ``.meas`` card of ``analysis`` (``tran``, ``ac``, ``dc``) of a deck, by name.

    Parameters
    ----------
    cards : sequence of phsym.netlist.analyses.Measure
        The deck's cards (``Netlist.deck.analyses.measures``).
    analysis : str
        Which analysis ran.
    x : ndarray
        Its abscissa.
    signal : callable
        Its signals by label (complex for ``ac``: ``vdb(x)`` and the others are derived).

    Raises
    ------
    SimulationError
        A card that cannot be evaluated, with the card's location.
    """
    read = (lambda lab: complex_signal(lab, signal)) if analysis == "ac" else signal
    out: Dict[str, float] = {}
    for card in cards:
        if card.analysis != analysis:
            continue
        try:
            out.update(evaluate(card.text, x, read))
        except SimulationError as exc:
            where = card.location.describe() + ": " if card.location is not None else ""
            raise SimulationError(where + exc.message) from None
    return out


def after_transient(res, analyses) -> Dict[str, object]:
    """The ``.meas tran`` values and ``.four`` harmonics of a transient, as ``result.info`` keeps them.

    Step values stand at the step's midpoint for the midpoint-type schemes
    (its end for backward Euler), as SPICE's waveforms are read.

    Parameters
    ----------
    res : SimulationResult
        The run.
    analyses : phsym.netlist.analyses.Analyses
        The deck's cards.

    Returns
    -------
    dict
        ``{"measures": {name: value}, "fourier": {label: Fourier}}`` (empty when the deck has neither).
    """
    from .fourier import fourier
    tran = [m for m in analyses.measures if m.analysis == "tran"]
    if not tran and not analyses.four:
        return {}
    h = res.info["h"]
    t = res.t_step - (0.0 if "backward" in str(res.info.get("scheme", "")) else h / 2)
    signal = lambda lab: np.asarray(res[lab], float)      # noqa: E731
    out: Dict[str, object] = {"measures": measure_cards(tran, "tran", t, signal)}
    out["fourier"] = {lab: fourier(t, signal(lab), card.freq, res.t[-1]) for card in analyses.four
                      for lab in card.signals}
    return out
