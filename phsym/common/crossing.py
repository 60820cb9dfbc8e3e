"""Where an increasing function first reaches zero: the rule of a state's scale.

:func:`phsym.simulation.initial.state_scales` and the numeric engine
(:mod:`phsym.simulation.engines.numeric.parts`) scale a state where its own
gradient first reaches 1 in magnitude, found by :func:`crossing`.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

__all__ = ["crossing"]


def crossing(f: Callable[[float], float]) -> Optional[float]:
    """Smallest positive ``z`` with ``f(z) >= 0`` for an increasing ``f`` with ``f(0+) < 0``, to 1e-6.

    Bracketed from ``z = 1`` by halving or doubling (storages' scales span
    1e-12 to 1e6, so a few dozen evaluations), then bisected; where ``f``
    cannot be evaluated on the way (an exponential law overflowing), by
    doubling from 1e-30 instead; ``None`` when ``f`` never reaches 0.
    """
    def ok(z):
        try:
            v = f(z)
        except (ValueError, OverflowError, ZeroDivisionError):
            return None
        return bool(np.isfinite(v) and v >= 0)

    first = ok(1.0)
    if first is None:
        return _crossing_from_zero(ok)
    lo, hi = (0.5, 1.0) if first else (1.0, 2.0)
    for _ in range(300):
        state = ok(lo if first else hi)
        if state is None:       # the law cannot be evaluated out there (overflow): approach from 0
            return _crossing_from_zero(ok)
        if first and state:
            lo, hi = 0.5 * lo, lo
        elif not first and not state:
            lo, hi = hi, 2.0 * hi
        else:
            break
    else:
        return None
    return _bisect(ok, lo, hi)


def _bisect(ok, lo: float, hi: float) -> float:
    """Shrink ``[lo, hi]`` (``ok(lo)`` false, ``ok(hi)`` true) to 1e-6 relative; returns ``hi``."""
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _crossing_from_zero(ok) -> Optional[float]:
    """The slow bracket of :func:`crossing`: doubling from 1e-30, stopping at the first crossing."""
    lo, hi = 1e-30, 1e-30
    for _ in range(300):
        hi *= 2.0
        state = ok(hi)
        if state is None:
            return None
        if state:
            return _bisect(ok, lo, hi)
        lo = hi
    return None
