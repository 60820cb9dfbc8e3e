"""Numeric waveform shapes (numpy and the C library's functions through :mod:`math`; the checks live in
:mod:`phsym.netlist.waveforms`).

A warm start evaluates cached waveforms with these functions without
importing sympy.

>>> import numpy as np
>>> evaluate_shape("pwl", np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.5, 3.0]))
array([1., 2.])
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import NetlistError

__all__ = ["evaluate_shape", "PULSE_EDGE"]

#: Rise/fall time used when a PULSE gives none (or zero), in seconds.
PULSE_EDGE = 1e-12


def _libm(f, x) -> np.ndarray:
    """``f`` of each element of ``x`` by the C library (Python's :mod:`math`): numpy's vectorised
    ``exp``/``sin`` on AVX-512 machines differ from it by an ulp, and exported C code
    (:mod:`phsym.codegen.c.waveforms`) samples the same waveforms with the C library's functions."""
    def one(v: float) -> float:
        try:
            return f(v)
        except OverflowError:       # numpy's inf (exp, expm1), dropped by the callers' where
            return math.inf
        except ValueError:          # sin(inf): numpy's nan
            return math.nan
    x = np.asarray(x, dtype=np.float64)
    flat, out = x.ravel(), np.empty(x.size)
    for k in range(0, x.size, _CHUNK):      # Python floats a chunk at a time: a long run's times as one
        part = flat[k:k + _CHUNK].tolist()  # list would take four times their array's memory
        out[k:k + len(part)] = list(map(one, part))
    return out.reshape(x.shape)


_CHUNK = 1 << 16


def _pulse(a: np.ndarray, t: np.ndarray) -> np.ndarray:
    full = [0.0, 0.0, 0.0, 0.0, 0.0, np.inf, np.inf]
    full[:len(a)] = list(a)
    v1, v2, td, tr, tf, pw, per = full
    tr = tr if tr > 0 else PULSE_EDGE
    tf = tf if tf > 0 else PULSE_EDGE
    tau = t - td
    if np.isfinite(per) and per > 0:
        tau = np.where(tau >= 0, np.mod(tau, per), tau)
    out = np.full_like(t, v1)
    rise = (tau >= 0) & (tau < tr)
    out[rise] = v1 + (v2 - v1) * tau[rise] / tr
    high = (tau >= tr) & (tau < tr + pw)
    out[high] = v2
    fall = (tau >= tr + pw) & (tau < tr + pw + tf)
    out[fall] = v2 + (v1 - v2) * (tau[fall] - tr - pw) / tf
    return out


def evaluate_shape(shape: str, a: np.ndarray, t) -> np.ndarray:
    """Evaluate a waveform of ``shape`` with numeric arguments ``a`` at times ``t``.

    Parameters
    ----------
    shape : str
        ``"dc"``, ``"sin"``, ``"pulse"``, ``"pwl"``, ``"exp"`` or ``"sffm"`` (arity already checked).
    a : ndarray
        Arguments (see :mod:`phsym.netlist.waveforms` for their meaning).
    t : array_like
        Times in seconds.

    Returns
    -------
    numpy.ndarray
        float64 array with the shape of ``t``.
    """
    t = np.asarray(t, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    if shape == "dc":
        return np.full(t.shape, a[0], dtype=np.float64)
    if shape == "sin":
        off, amp = a[:2]
        freq, delay, damp, phase = (list(a[2:]) + [0.0, 0.0, 0.0, 0.0])[:4]
        phi = np.radians(phase)
        tau = t - delay
        decay = _libm(math.exp, -damp * np.maximum(tau, 0.0)) if damp else 1.0      # exp(-0.0) == 1.0
        wave = off + amp * _libm(math.sin, 2 * np.pi * freq * tau + phi) * decay
        return np.where(tau >= 0, wave, off + amp * math.sin(phi)).astype(np.float64)
    if shape == "exp":
        v1, v2, td1, tau1, td2, tau2 = (list(a) + [0.0] * 4)[:6]
        rise = np.where(t > td1, (v2 - v1) * -_libm(math.expm1, -(t - td1) / tau1), 0.0)
        fall = np.where(t > td2, (v1 - v2) * -_libm(math.expm1, -(t - td2) / tau2), 0.0)
        return (v1 + rise + fall).astype(np.float64)
    if shape == "sffm":
        off, amp, fc, mdi, fsig = (list(a) + [0.0] * 3)[:5]
        phase = 2 * np.pi * fc * t + mdi * _libm(math.sin, 2 * np.pi * fsig * t)
        return (off + amp * _libm(math.sin, phase)).astype(np.float64)
    if shape == "pulse":
        return _pulse(a, t.ravel()).reshape(t.shape)
    if shape == "pwl":
        return np.interp(t, a[0::2], a[1::2]).astype(np.float64)
    raise NetlistError(f"unknown waveform shape {shape!r}", hint="use DC, SIN, PULSE or PWL")
