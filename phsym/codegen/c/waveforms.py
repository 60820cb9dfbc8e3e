"""Netlist source waveforms in C, as :func:`phsym.netlist.shapes.evaluate_shape` computes them.

A source that is not an input of the exported library keeps its netlist
waveform: ``NAME_process`` evaluates it at the time of each sample,
``t = k * h`` with ``k`` the sample index since the last reset (the
simulator's grid, ``(first + arange(n)) * h``; no accumulated sum, no drift).
The C repeats numpy's operations in numpy's order (constants numpy would
compute once are computed here in Python and written as exact literals), so
the samples are the simulator's floats: numpy's float64 ``sin``/``exp``/
``expm1`` are libm's on the machines the tests run on.
"""
from __future__ import annotations

import math
from typing import List, Sequence

import numpy as np

from ...errors import ExportError
from ...netlist.shapes import PULSE_EDGE
from .subset import literal

__all__ = ["waveform_function"]


def _lit(v: float) -> str:
    return literal(float(v))


def _pulse(a: Sequence[float]) -> List[str]:
    full = [0.0, 0.0, 0.0, 0.0, 0.0, np.inf, np.inf]
    full[:len(a)] = list(a)
    v1, v2, td, tr, tf, pw, per = full
    tr = tr if tr > 0 else PULSE_EDGE
    tf = tf if tf > 0 else PULSE_EDGE
    body = [f"    double tau = t - {_lit(td)};"]
    if np.isfinite(per) and per > 0:
        # np.mod of a non-negative tau by a positive period is fmod
        body.append(f"    if (tau >= 0.0) tau = fmod(tau, {_lit(per)});")
    body += [f"    if (tau >= 0.0 && tau < {_lit(tr)})",
             f"        return {_lit(v1)} + {_lit(v2 - v1)} * tau / {_lit(tr)};",
             f"    if (tau >= {_lit(tr)} && tau < {_lit(tr + pw)})",
             f"        return {_lit(v2)};",
             f"    if (tau >= {_lit(tr + pw)} && tau < {_lit(tr + pw + tf)})",
             f"        return {_lit(v2)} + {_lit(v1 - v2)} * (tau - {_lit(tr)} - {_lit(pw)}) / {_lit(tf)};",
             f"    return {_lit(v1)};"]
    return body


def _pwl(a: Sequence[float]) -> List[str]:
    xs, ys = list(a[0::2]), list(a[1::2])
    n = len(xs)
    # np.interp: the left/right values outside, the point itself on a knot, else slope * (t - x_j) + y_j
    return [f"    static const double X[{n}] = {{{', '.join(_lit(v) for v in xs)}}};",
            f"    static const double Y[{n}] = {{{', '.join(_lit(v) for v in ys)}}};",
            "    int lo = 0, hi = %d, j;" % (n - 1),
            "    double slope, r;",
            "    if (isnan(t)) return t;",
            "    if (t < X[0]) return Y[0];",
            f"    if (t >= X[{n - 1}]) return Y[{n - 1}];",
            "    while (hi - lo > 1) {     /* the last j with X[j] <= t */",
            "        j = (lo + hi) / 2;",
            "        if (X[j] <= t) lo = j; else hi = j;",
            "    }",
            "    j = lo;",
            "    if (X[j] == t) return Y[j];",
            "    slope = (Y[j + 1] - Y[j]) / (X[j + 1] - X[j]);",
            "    r = slope * (t - X[j]) + Y[j];",
            "    if (isnan(r)) {",
            "        r = slope * (t - X[j + 1]) + Y[j + 1];",
            "        if (isnan(r) && Y[j] == Y[j + 1]) r = Y[j];",
            "    }",
            "    return r;"]


def waveform_function(name: str, shape: str, args: Sequence[float]) -> str:
    """A ``static double name(double t)`` evaluating a netlist waveform.

    Parameters
    ----------
    name : str
        C function name.
    shape : str
        ``dc``, ``sin``, ``pulse``, ``pwl``, ``exp`` or ``sffm`` (arity already checked by the netlist).
    args : sequence of float
        The waveform's numeric arguments.

    Returns
    -------
    str
        The C function.
    """
    a = [float(v) for v in np.asarray(args, dtype=np.float64)]
    shape = shape.lower()
    if shape == "dc":
        body = ["    (void)t;", f"    return {_lit(a[0])};"]
    elif shape == "sin":
        off, amp = a[:2]
        freq, delay, damp, phase = (a[2:] + [0.0] * 4)[:4]
        phi = float(np.radians(phase))
        w = 2 * np.pi * freq
        before = off + amp * math.sin(phi)     # the simulator's value before the delay (netlist.shapes)
        body = [f"    double tau = t - {_lit(delay)};",
                f"    if (!(tau >= 0.0)) return {_lit(before)};",
                f"    return {_lit(off)} + {_lit(amp)} * sin({_lit(w)} * tau + {_lit(phi)})"
                f" * exp({_lit(-damp)} * (tau > 0.0 ? tau : 0.0));"]
    elif shape == "exp":
        v1, v2, td1, tau1, td2, tau2 = (a + [0.0] * 4)[:6]
        body = [f"    double rise = t > {_lit(td1)} ? {_lit(v2 - v1)} * -expm1(-(t - {_lit(td1)}) / {_lit(tau1)}) : 0.0;",
                f"    double fall = t > {_lit(td2)} ? {_lit(v1 - v2)} * -expm1(-(t - {_lit(td2)}) / {_lit(tau2)}) : 0.0;",
                f"    return {_lit(v1)} + rise + fall;"]
    elif shape == "sffm":
        off, amp, fc, mdi, fsig = (a + [0.0] * 3)[:5]
        body = [f"    return {_lit(off)} + {_lit(amp)} * sin({_lit(2 * np.pi * fc)} * t + {_lit(mdi)}"
                f" * sin({_lit(2 * np.pi * fsig)} * t));"]
    elif shape == "pulse":
        body = _pulse(a)
    elif shape == "pwl":
        body = _pwl(a)
    else:
        raise ExportError(f"C export: no C for the waveform shape {shape!r}")
    return "\n".join([f"static double {name}(double t)", "{"] + body + ["}"])
