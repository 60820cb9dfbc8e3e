"""Law kernels called from Python, outside the compiled loop (a few instances at a time).

Held storages of the DC problem need their effort at a given state, a run
from a given state needs the start effort of each storage solved through its
effort (the inversion of ``x(e)``), and the state scales need the gradient
along each state: all through the same compiled kernels, by their ctypes
addresses.
"""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Mapping

import numpy as np

from ....codegen.laws.build import Kernel, effort_state_kernel, gradient_kernel
from ....errors import SimulationError
from ....structure.circuit.values import placeholder_values

if TYPE_CHECKING:       # a circuit described by numbers is solved without sympy
    import sympy as sp


__all__ = ["call", "gradient_at", "effort_of_state"]


def call(kernel: Kernel, P: np.ndarray, IN: np.ndarray) -> np.ndarray:
    """``OUT`` of ``kernel`` for the rows of ``P`` and ``IN`` (``n x width``).

    Parameters
    ----------
    kernel : Kernel
        A loaded kernel.
    P, IN : ndarray (n, ...)
        Placeholders and inputs (moving, then constant), one row per instance.
    """
    P = np.ascontiguousarray(np.atleast_2d(P), dtype=float)
    IN = np.ascontiguousarray(np.atleast_2d(IN), dtype=float)
    n = P.shape[0]
    OUT = np.zeros((n, kernel.width))
    dbl = ctypes.POINTER(ctypes.c_double)
    W = np.zeros((n, max(kernel.n_pre, 1)))
    args = (n, P.ctypes.data_as(dbl), IN.ctypes.data_as(dbl), OUT.ctypes.data_as(dbl), W.ctypes.data_as(dbl))
    if kernel.n_pre:        # the values fixed over a step first
        _ABI(kernel.prepare)(*args)
    _ABI(kernel.address)(*args)
    return OUT


#: The kernels' C signature (:mod:`phsym.codegen.laws.abi`), numba's or C's alike.
_ABI = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.POINTER(ctypes.c_double)] * 4)


def _params(s, values: Mapping[sp.Symbol, float]) -> np.ndarray:
    return placeholder_values([s.placeholders], values, [s.element])


def effort_of_state(s, x: float, values: Mapping[sp.Symbol, float], tol: float = 1e-15) -> float:
    """The effort ``e`` with ``x(e) = x`` of a storage solved through its effort (safeguarded
    Newton on the increasing ``x(e)``, bracketed by doubling).

    Parameters
    ----------
    s : StorageItem
        The storage (one state, :attr:`~phsym.structure.circuit.data.StorageItem.by_effort`).
    x : float
        Its state.
    values : mapping of sympy.Symbol to float
        Parameter values.
    tol : float
        Relative tolerance on ``e``.
    """
    k = effort_state_kernel(s.form, s.element)
    P = _params(s, values)

    def f(e):
        out = call(k, P, np.array([[e]]))[0]
        return out[0] - x, out[1]
    if x == 0.0:
        return 0.0
    lo, hi, step = 0.0, 0.0, 0.1
    r0, _ = f(0.0)
    if r0 == 0.0:
        return 0.0
    up = r0 < 0.0       # x(0) below the target: the root lies above
    for _ in range(200):
        e = step if up else -step
        r, _ = f(e)
        if np.isfinite(r) and (r >= 0.0) == up:
            lo, hi = (0.0, e) if up else (e, 0.0)
            break
        step *= 2.0
    else:
        raise SimulationError(f"cannot find the effort of {s.element} at its state {x:g}",
                              quantity=s.element)
    e = 0.5 * (lo + hi)
    for _ in range(200):
        r, dr = f(e)
        if r == 0.0:
            return e
        if r > 0.0:
            hi = e
        else:
            lo = e
        en = e - r / dr if dr > 0.0 else 0.5 * (lo + hi)
        if not (lo < en < hi):
            en = 0.5 * (lo + hi)
        if abs(en - e) <= tol * (1.0 + abs(e)) or hi - lo <= tol * (1.0 + abs(e)):
            return en
        e = en
    return e


def gradient_at(s, x: np.ndarray, values: Mapping[sp.Symbol, float], effort: bool = False) -> np.ndarray:
    """``dH/dx`` of a nonlinear storage at its states ``x`` (``effort``: a storage solved through its
    effort, whose gradient is the effort of its state).

    Parameters
    ----------
    s : StorageItem
        The storage.
    x : ndarray
        Its states.
    values : mapping of sympy.Symbol to float
        Parameter values.
    effort : bool
        Through the effort law (one state).
    """
    if effort:
        return np.array([effort_of_state(s, float(x[0]), values)])
    k = gradient_kernel(s.form, len(s.states), s.element)
    return call(k, _params(s, values), np.asarray(x, dtype=float)[None, :])[0, :len(s.states)]
