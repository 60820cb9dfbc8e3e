"""The value constraints elements declare (``check="positive"``...), without sympy.

:class:`phsym.components.declare.Value` names one; the symbolic build and a
circuit described by numbers (:mod:`phsym.structure.circuit.kinds`) test
values with the same :func:`problem`.
"""
from __future__ import annotations

import math
from typing import Optional

__all__ = ["CHECKS", "problem"]

#: Value constraints: name -> (test, wording for messages).
CHECKS = {
    "positive": (lambda v: v > 0, "positive"),
    "nonzero": (lambda v: v != 0, "non-zero"),
    "nonnegative": (lambda v: v >= 0, "non-negative"),
    "unit": (lambda v: -1 < v < 1, "inside (-1, 1)"),
    "fraction": (lambda v: 0 <= v < 1, "in [0, 1)"),
    "closed_unit": (lambda v: 0 <= v <= 1, "in [0, 1]"),
}


def problem(check: Optional[str], value: float) -> Optional[str]:
    """Why ``value`` breaks the constraint ``check`` (or is not finite); ``None`` when it does not.

    Parameters
    ----------
    check : str or None
        A key of :data:`CHECKS`, or ``None`` (finiteness only).
    value : float
        The numeric value.
    """
    if not math.isfinite(value):
        return f"must be a finite number, got {value:g}"
    if check is not None:
        test, wording = CHECKS[check]
        if not test(value):
            return f"must be {wording}, got {value:g}"
    return None
