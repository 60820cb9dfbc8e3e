"""Input signals on the simulation grid (numbers only, no sympy)."""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from ..errors import SimulationError

__all__ = ["input_array", "grid_points", "check_steps", "sample_rate"]


def sample_rate(fs) -> float:
    """``fs`` as a positive finite float, else a :class:`SimulationError`.

    Parameters
    ----------
    fs : float or str
        Sample rate in Hz.
    """
    try:
        value = float(fs)
    except (TypeError, ValueError):
        raise SimulationError(f"sample rate must be a number in Hz, got {fs!r} "
                              "(the command line takes 48k; Python takes 48000)") from None
    if not (0 < value < float("inf")):
        raise SimulationError(f"sample rate must be positive and finite, got {fs}")
    return value


def grid_points(duration: Optional[float], fs: float) -> Optional[int]:
    """Grid points ``round(duration * fs) + 1`` (``None`` without a duration).

    Parameters
    ----------
    duration : float or None
        Simulated time in seconds (must be positive).
    fs : float
        Sample rate in Hz.
    """
    if duration is None:
        return None
    try:
        d = float(duration)
    except (TypeError, ValueError):
        raise SimulationError(f"duration must be a number of seconds, got {duration!r}") from None
    if not (0 < d < float("inf")):
        raise SimulationError(f"duration must be positive and finite, got {duration}")
    n = d * fs
    if n > 1e12:
        raise SimulationError(f"duration {d:g} s at {fs:g} Hz is {n:.3g} steps: too many to store "
                              "(check the units: 10m = 0.01 s)")
    return int(round(n)) + 1


def check_steps(U: np.ndarray, fs: float, duration: Optional[float]) -> int:
    """Number of steps of the input grid ``U``; at least one.

    Parameters
    ----------
    U : ndarray (N+1, n_u)
        Inputs on the grid.
    fs : float
        Sample rate in Hz.
    duration : float or None
        The requested duration (for the message).
    """
    N = U.shape[0] - 1
    if N < 1:
        raise SimulationError(
            f"the run needs at least one step: {U.shape[0]} input sample(s) at fs = {fs:g} Hz"
            + (f", duration = {float(duration):g} s" if duration is not None else "")
            + " (check the units of fs and duration: 48k = 48000, 10m = 0.01)")
    return N


def input_array(names: Sequence[str], u, n_points: Optional[int], h: float,
                waveform: Callable[[int, np.ndarray], Optional[np.ndarray]]) -> np.ndarray:
    """Inputs on the grid ``t_k = k h`` as an array ``(n_points, n_u)``.

    Parameters
    ----------
    names : sequence of str
        Input names, in column order.
    u : array_like, dict or None
        An array ``(N+1, n_u)``; or a dict name -> array, scalar or
        callable(t) (inputs not given follow ``waveform``, else zero).
    n_points : int or None
        Grid points needed (``None``: taken from ``u``).
    h : float
        Step.
    waveform : callable(i, t) -> ndarray or None
        Default signal of input ``i`` (its netlist waveform), or ``None``.

    Raises
    ------
    SimulationError
        Wrong shapes or lengths, unknown input names, non-finite samples
        (named with the sample and the first step that uses it).
    """
    U = _build(list(names), u, n_points, h, waveform)
    if not np.isfinite(U).all():
        bad = np.argwhere(~np.isfinite(U))
        k, i = (int(v) for v in bad[0])
        step = max(k - 1, 0)        # first step that uses input sample k
        raise SimulationError(f"input {names[i]} is non-finite ({U[k, i]}) at sample {k}",
                              step=step, time=(step + 1) * h, quantity=names[i])
    return U


def _build(names, u, n_points, h, waveform) -> np.ndarray:
    if u is not None and not isinstance(u, Mapping):
        try:
            arr = np.asarray(u, dtype=float)
        except (TypeError, ValueError) as exc:
            raise SimulationError(f"u is not numeric: {exc}") from None
        if arr.ndim not in (1, 2):
            raise SimulationError(f"u has shape {arr.shape}: give (samples, inputs) or one 1-D input")
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.shape[1] != len(names):
            raise SimulationError(f"u has {arr.shape[1]} columns, the model has inputs {names}")
        if n_points is not None:
            if arr.shape[0] < n_points:
                raise SimulationError(f"u has {arr.shape[0]} samples, the run needs {n_points}")
            arr = arr[:n_points]
        return np.ascontiguousarray(arr)
    given = {str(k).lower(): v for k, v in (u or {}).items()}
    unknown = set(given) - {n.lower() for n in names}
    if unknown:
        raise SimulationError(f"unknown inputs {sorted(unknown)}; the model's inputs are {names}")
    if n_points is None:
        lens = [len(v) for v in given.values() if not callable(v) and np.ndim(v) == 1]
        if not lens:
            raise SimulationError("give duration= (or input arrays) to set the run length")
        n_points = min(lens)
    t = np.arange(n_points) * h
    out = np.zeros((n_points, len(names)))
    for i, name in enumerate(names):
        src = given.get(name.lower())
        if src is None:
            w = waveform(i, t)
            if w is not None:
                out[:, i] = w
            continue
        try:
            if callable(src):
                val = np.asarray(src(t), dtype=float)
                if val.ndim > 1 or (val.ndim == 1 and val.shape[0] != n_points):
                    raise SimulationError(f"input {name}: the function returned shape {val.shape} for "
                                          f"{n_points} times (expected a scalar or ({n_points},))")
                out[:, i] = val
            elif np.ndim(src) == 0:
                out[:, i] = float(src)
            else:
                arr = np.asarray(src, dtype=float)
                if arr.ndim != 1:
                    raise SimulationError(f"input {name} has shape {arr.shape}: give one 1-D array per input")
                if arr.shape[0] < n_points:
                    raise SimulationError(f"input {name} has {arr.shape[0]} samples, the run needs {n_points}")
                out[:, i] = arr[:n_points]
        except (TypeError, ValueError) as exc:
            raise SimulationError(f"input {name} is not numeric: {exc}") from None
    return out
