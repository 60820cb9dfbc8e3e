"""Numeric evaluation of source waveforms (SPICE semantics).

* ``dc``: ``(value,)`` -- constant.
* ``sin``: ``(offset, amplitude, freq[, delay[, damping]])`` --
  ``offset + amplitude*sin(2*pi*freq*(t - delay))*exp(-damping*(t - delay))``
  for ``t >= delay``, ``offset`` before.
* ``pulse``: ``(v1, v2[, delay[, rise[, fall[, width[, period]]]]])`` -- ``v1``
  until ``delay``, linear ramp to ``v2`` over ``rise``, ``v2`` for ``width``,
  linear ramp back over ``fall``, then ``v1``; repeats every ``period``.
  Defaults: delay 0, rise and fall :data:`PULSE_EDGE` (1 ps; SPICE would use
  the simulation step, which a waveform does not know), width and period
  infinite.  A zero rise or fall time is replaced by :data:`PULSE_EDGE` too.
* ``pwl``: ``(t1, v1, t2, v2, ...)`` -- linear interpolation, constant before
  the first and after the last point.
* ``sin`` takes a sixth argument, the phase in degrees (ngspice):
  ``offset + amplitude*sin(2*pi*freq*(t - delay) + phase)``... and
  ``offset + amplitude*sin(phase)`` before the delay.
* ``exp``: ``(v1, v2, delay1, tau1, delay2, tau2)`` -- ``v1`` until
  ``delay1``, then ``v1 + (v2 - v1)(1 - exp(-(t - delay1)/tau1))``, and from
  ``delay2`` on the decay back to ``v1`` with ``tau2`` added.
* ``sffm``: ``(offset, amplitude, carrier, index, signal)`` --
  ``offset + amplitude*sin(2*pi*carrier*t + index*sin(2*pi*signal*t))``.

>>> import numpy as np, sympy as sp
>>> from phsym.components import Waveform
>>> evaluate_waveform(Waveform("pwl", tuple(map(sp.Float, (0, 0, 1, 2)))), np.array([0.5, 3.0]))
array([1., 2.])
"""
from __future__ import annotations

from typing import Mapping, Optional

import numpy as np
import sympy as sp

from ..errors import NetlistError
from .shapes import PULSE_EDGE, evaluate_shape
from ..components.element import Waveform

__all__ = ["evaluate_waveform", "waveform_arguments", "PULSE_EDGE", "WAVEFORM_ARITY"]

#: Accepted number of arguments per shape: (min, max); pwl: pairs, max unbounded.
WAVEFORM_ARITY = {"dc": (1, 1), "sin": (2, 6), "pulse": (2, 7), "pwl": (2, None), "exp": (2, 6), "sffm": (2, 5)}


def waveform_arguments(waveform: Waveform,
                       values: Optional[Mapping[sp.Symbol, float]] = None) -> np.ndarray:
    """Evaluate the waveform's arguments to floats, substituting ``values``.

    Raises
    ------
    NetlistError
        When an argument references a parameter missing from ``values`` or
        does not evaluate to a finite real number.
    """
    values = dict(values or {})
    out = []
    for k, arg in enumerate(waveform.args):
        expr = arg if isinstance(arg, sp.Basic) else sp.Float(float(arg))
        missing = [s for s in expr.free_symbols if s not in values]
        if missing:
            names = ", ".join(sorted(str(s) for s in missing))
            raise NetlistError(f"{waveform.shape.upper()} argument {k + 1} uses parameter(s) "
                               f"{names} without a value", waveform.location,
                               hint="pass values={symbol: number} for every parameter")
        try:
            num = complex(expr.xreplace({s: sp.Float(values[s]) for s in expr.free_symbols}).evalf())
        except (TypeError, ValueError) as exc:
            raise NetlistError(f"{waveform.shape.upper()} argument {k + 1} is not numeric: {exc}",
                               waveform.location) from None
        if num.imag != 0 or not np.isfinite(num.real):
            raise NetlistError(f"{waveform.shape.upper()} argument {k + 1} is not a finite "
                               f"real number ({num})", waveform.location)
        out.append(num.real)
    return np.asarray(out, dtype=np.float64)


def evaluate_waveform(waveform: Waveform, t, values: Optional[Mapping[sp.Symbol, float]] = None
                      ) -> np.ndarray:
    """Evaluate ``waveform`` at times ``t``.

    Parameters
    ----------
    waveform : Waveform
        A parsed waveform (shape ``dc``, ``sin``, ``pulse`` or ``pwl``).
    t : array_like
        Times in seconds.
    values : mapping of sympy.Symbol to float, optional
        Values of the parameters the arguments reference.

    Returns
    -------
    numpy.ndarray
        float64 array with the shape of ``t``.
    """
    t = np.asarray(t, dtype=np.float64)
    a = waveform_arguments(waveform, values)
    shape = waveform.shape.lower()
    if shape not in WAVEFORM_ARITY:
        raise NetlistError(f"unknown waveform shape '{waveform.shape}'", waveform.location)
    lo, hi = WAVEFORM_ARITY[shape]
    if len(a) < lo or (hi is not None and len(a) > hi) or (shape == "pwl" and len(a) % 2):
        raise NetlistError(f"{shape.upper()} has a wrong number of arguments ({len(a)})",
                           waveform.location)
    if shape == "pwl" and np.any(np.diff(a[0::2]) < 0):
        raise NetlistError("PWL times must be non-decreasing", waveform.location)
    return evaluate_shape(shape, a, t)
