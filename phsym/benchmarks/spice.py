"""Writing SPICE decks that ngspice-39 and phsym both read: numbers, ``.tran``, ``.save``, durations.

Shared by the deck builders of :mod:`phsym.benchmarks.logic` and
:mod:`phsym.benchmarks.decks`.

Examples
--------
>>> tran(50e-12, 44e-9)
'.tran 5e-11 4.4e-08 0 5e-11'
>>> duration(1e-9, None, 10, 0.0)
1e-08
"""
from __future__ import annotations

from typing import List, Optional, Sequence

__all__ = ["num", "positive_int", "tran", "save", "duration"]


def num(x: float) -> str:
    """A number as SPICE and phsym both read it.

    Parameters
    ----------
    x : float
        The value.

    Returns
    -------
    str
        Ten significant digits, no suffix (``5e-11``, ``1000``).
    """
    return f"{float(x):.10g}"


def positive_int(value: int, name: str, low: int = 1, even: bool = False) -> int:
    """Check a count.

    Parameters
    ----------
    value : int
        The count (an integral float is accepted).
    name : str
        Its name, for the message.
    low : int, default 1
        Smallest allowed value.
    even : bool, default False
        Whether it must be even.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        When ``value`` is not an integer of that kind.
    """
    n = int(value)
    if n != value or n < low or (even and n % 2):
        kind = "an even integer" if even else "an integer"
        raise ValueError(f"{name} must be {kind} >= {low}, got {value!r}")
    return n


def tran(step: float, stop: float, uic: bool = False) -> str:
    """The card ``.tran h T 0 h [uic]``: TMAX = TSTEP, so ngspice never steps over phsym's step.

    Parameters
    ----------
    step, stop : float
        Step ``h`` and duration ``T`` (``0 < h <= T``).
    uic : bool, default False
        Start from the initial conditions instead of the DC operating point.

    Returns
    -------
    str
    """
    if not 0 < step <= stop:
        raise ValueError(f"need 0 < step <= stop, got step={step!r}, stop={stop!r}")
    return f".tran {num(step)} {num(stop)} 0 {num(step)}" + (" uic" if uic else "")


def save(nodes: Sequence[str]) -> List[str]:
    """``.save`` cards of node voltages, at most 16 nodes a card.

    Parameters
    ----------
    nodes : sequence of str
        Node names.

    Returns
    -------
    list of str
    """
    return [".save " + " ".join(f"v({n})" for n in nodes[i:i + 16]) for i in range(0, len(nodes), 16)]


def duration(step: float, stop: Optional[float], steps: Optional[int], default: float) -> float:
    """A run's duration from ``stop`` or a number of ``steps``, else ``default`` on the step grid.

    Parameters
    ----------
    step : float
        The step ``h``.
    stop : float or None
        Duration, as given.
    steps : int or None
        Number of steps, as given (``T = steps h``); not with ``stop``.
    default : float
        Duration when neither is given, rounded to a whole number of steps.

    Returns
    -------
    float
    """
    if stop is not None and steps is not None:
        raise ValueError("give stop or steps, not both")
    if steps is not None:
        return positive_int(steps, "steps") * step
    if stop is not None:
        return float(stop)
    return max(round(default / step), 1) * step
