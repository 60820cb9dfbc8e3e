"""Learned laws in generated code: the compiled bump sum and the module constants.

The printer writes :class:`phsym.common.learned.LearnedBumps` as a call
``learned_bumps((x,), (order,), LRN<key>_C, LRN<key>_V, LRN<key>_W,
LRN<key>_L)``; :func:`declare` adds to a generated module the import of the
compiled :func:`~phsym.common.learned.bump_sum` and the law's arrays as
module constants (numba freezes global arrays into the machine code).  The
numbers are written into the module text, so the cache key of the module
changes with the law and a cached module never needs the ``.npz`` file.
"""
from __future__ import annotations

import re

from numba import njit

from ...common.learned import bump_sum, registered

__all__ = ["learned_bumps", "declare"]

learned_bumps = njit(cache=True, error_model="numpy")(bump_sum)

_CALL = re.compile(r"\bLRN(\d+)_C\b")


def _literal(arr) -> str:
    return "np.array(" + repr(arr.tolist()) + ", dtype=np.float64)"


def declare(text: str) -> str:
    """``text`` with the import of :data:`learned_bumps` and the arrays of every learned law it calls.

    Parameters
    ----------
    text : str
        Source of a generated module (containing ``from numba import njit``).
    """
    keys = sorted({int(k) for k in _CALL.findall(text)})
    if not keys:
        return text
    lines = ["import numpy as np", "from phsym.codegen.kernels.learned import learned_bumps"]
    for k in keys:
        law = registered(k)
        for suffix, arr in (("C", law.centers), ("V", law.values), ("W", law.slopes), ("L", law.lengths)):
            lines.append(f"LRN{k}_{suffix} = {_literal(arr)}")
    return text.replace("from numba import njit\n", "from numba import njit\n" + "\n".join(lines) + "\n", 1)
