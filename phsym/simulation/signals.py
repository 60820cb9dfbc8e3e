"""Input signals on the simulation grid (numbers only, no sympy)."""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..common.names import NameTable
from ..errors import SimulationInputError

__all__ = ["input_array", "check_positive", "grid_points", "check_steps", "sample_rate", "initial_state", "check_align", "ALIGNMENTS"]

#: How input arrays map to the steps of a run (see :func:`check_align`).
ALIGNMENTS = ("grid", "samples")


def check_align(align: str) -> str:
    """``align`` if it is one of :data:`ALIGNMENTS`, else a :class:`SimulationInputError`.

    ``"grid"``: input arrays hold the ``N + 1`` grid samples ``t_0 .. t_N``
    of ``N`` steps.  ``"samples"``: they hold ``N`` samples at
    ``t_k = k / fs`` (a sampled signal, e.g. a WAV file), the run takes one
    step per sample, the step ending at sample ``k`` gives output sample
    ``k``, and the input is held at its first sample for the step before
    ``t = 0``, so ``N`` samples in give ``N`` samples out, aligned.

    Parameters
    ----------
    align : str
        ``"grid"`` or ``"samples"``.
    """
    if align not in ALIGNMENTS:
        raise SimulationInputError(f"align must be one of {ALIGNMENTS}, not {align!r}")
    return align


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
        raise SimulationInputError(f"sample rate must be a number in Hz, got {fs!r} "
                              "(the command line takes 48k; Python takes 48000)") from None
    if not (0 < value < float("inf")):
        raise SimulationInputError(f"sample rate must be positive and finite, got {fs}")
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
        raise SimulationInputError(f"duration must be a number of seconds, got {duration!r}") from None
    if not (0 < d < float("inf")):
        raise SimulationInputError(f"duration must be positive and finite, got {duration}")
    n = d * fs
    if n > 1e12:
        raise SimulationInputError(f"duration {d:g} s at {fs:g} Hz is {n:.3g} steps: too many to store "
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
        raise SimulationInputError(
            f"the run needs at least one step: {U.shape[0]} input sample(s) at fs = {fs:g} Hz"
            + (f", duration = {float(duration):g} s" if duration is not None else "")
            + " (check the units of fs and duration: 48k = 48000, 10m = 0.01)")
    return N


def input_array(names: Sequence[str], u, n_points: Optional[int], h: float,
                waveform: Callable[[int, np.ndarray], Optional[np.ndarray]], first: int = 0,
                what: str = "input") -> np.ndarray:
    """Inputs on the grid ``t_k = (first + k) h`` as an array ``(n_points, n_u)``.

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
    first : int
        Grid index of the first row (callables and waveforms are evaluated
        at ``(first + k) h``, the same times as in one long run).
    what : str
        What the columns are in error messages (``"input"``, ``"control"``).

    Raises
    ------
    SimulationError
        Wrong shapes or lengths, unknown input names, non-finite samples
        (named with the sample and the first step that uses it).
    """
    U = _build(list(names), u, n_points, h, waveform, first, what)
    # a finite sum means every sample is finite (NaN and inf propagate); the
    # sum needs no boolean temporary, so the common case costs a quarter
    if not np.isfinite(U.sum()) and not np.isfinite(U).all():
        bad = np.argwhere(~np.isfinite(U))
        k, i = (int(v) for v in bad[0])
        step = max(k - 1, 0)        # first step that uses input sample k
        raise SimulationInputError(f"{what} {names[i]} is non-finite ({U[k, i]}) at sample {k}",
                              step=step, time=(step + 1) * h, quantity=names[i])
    return U


def check_positive(U: np.ndarray, names: Sequence[str], positive: Mapping[str, str], h: float,
                   first: int = 0) -> None:
    """Refuse a sample at or below zero of an input that is an absolute quantity (a temperature bath).

    Parameters
    ----------
    U : ndarray (samples, inputs)
        Input rows.
    names : sequence of str
        Input names, in column order.
    positive : mapping of str to str
        Inputs that must stay above zero, name -> unit.
    h : float
        Step.
    first : int
        Grid index of the first row (for the step and time named).
    """
    for name, unit in positive.items():
        i = names.index(name)
        col = U[:, i]
        if col.size and not col.min() > 0.0:
            k = int(np.flatnonzero(~(col > 0.0))[0])
            step = max(first + k - 1, 0)
            raise SimulationInputError(f"input {name} is {col[k]:g} {unit} at sample {first + k}: an absolute "
                                       f"{'temperature' if unit == 'K' else 'quantity'} must stay above 0 {unit}",
                                       step=step, time=(step + 1) * h, quantity=name)


def _build(names, u, n_points, h, waveform, first, what="input") -> np.ndarray:
    if u is not None and not isinstance(u, Mapping):
        try:
            arr = np.asarray(u, dtype=float)
        except (TypeError, ValueError) as exc:
            raise SimulationInputError(f"u is not numeric: {exc}") from None
        if arr.ndim not in (1, 2):
            raise SimulationInputError(f"u has shape {arr.shape}: give (samples, inputs) or one 1-D input")
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.shape[1] != len(names):
            raise SimulationInputError(f"u has {arr.shape[1]} columns, the model has inputs {names}")
        if n_points is not None:
            if arr.shape[0] < n_points:
                raise SimulationInputError(f"u has {arr.shape[0]} samples, the run needs {n_points}")
            arr = arr[:n_points]
        return np.ascontiguousarray(arr)
    table = NameTable(((n, i) for i, n in enumerate(names)), what=what)
    given = {}
    for k, v in (u or {}).items():
        given[table.lookup(str(k), SimulationInputError)] = v
    if n_points is None:
        lens = [len(v) for v in given.values() if not callable(v) and np.ndim(v) == 1]
        if not lens:
            raise SimulationInputError("give duration= (or input arrays) to set the run length")
        n_points = min(lens)
    grid: list = []

    def t() -> np.ndarray:      # the time grid, built once and only for waveforms and callables
        if not grid:
            grid.append((first + np.arange(n_points)) * h)
        return grid[0]
    # every column is written below (zeros where nothing drives an input)
    out = np.empty((n_points, len(names)))
    for i, name in enumerate(names):
        src = given.get(i)
        if src is None:
            w = waveform(i, t())
            out[:, i] = 0.0 if w is None else w
            continue
        try:
            if callable(src):
                val = np.asarray(src(t()), dtype=float)
                if val.ndim > 1 or (val.ndim == 1 and val.shape[0] != n_points):
                    raise SimulationInputError(f"{what} {name}: the function returned shape {val.shape} for "
                                          f"{n_points} times (expected a scalar or ({n_points},))")
                out[:, i] = val
            elif np.ndim(src) == 0:
                out[:, i] = float(src)
            else:
                arr = np.asarray(src, dtype=float)
                if arr.ndim != 1:
                    raise SimulationInputError(f"{what} {name} has shape {arr.shape}: give one 1-D array per input")
                if arr.shape[0] < n_points:
                    raise SimulationInputError(f"{what} {name} has {arr.shape[0]} samples, the run needs {n_points}")
                out[:, i] = arr[:n_points]
        except (TypeError, ValueError) as exc:
            raise SimulationInputError(f"{what} {name} is not numeric: {exc}") from None
    return out


def initial_state(base: np.ndarray, base_desc: str, states: Sequence[str], x0) -> Tuple[np.ndarray, str]:
    """Initial state from ``x0`` given the netlist's own (``base``, from ICs).

    Parameters
    ----------
    base : ndarray
        State from the netlist ICs (zero elsewhere).
    base_desc : str
        What ``base`` is.
    states : sequence of str
        State names.
    x0 : None, array_like or dict
        ``None`` (use ``base``), a full state, or values by state name (the
        others keep ``base``).

    Returns
    -------
    (ndarray, str)
        The state (a new array) and its description.
    """
    out = np.array(base, dtype=float)
    if x0 is None:
        return out, base_desc
    if isinstance(x0, str):
        raise SimulationInputError(f"x0 must be an array, a dict, None or 'dc', not {x0!r}")
    if isinstance(x0, Mapping):
        table = NameTable(((n, i) for i, n in enumerate(states)), what="state")
        for k, val in x0.items():
            i = table.lookup(str(k), SimulationInputError)
            try:
                out[i] = float(val)
            except (TypeError, ValueError):
                raise SimulationInputError(f"x0[{k!r}] is not a number: {val!r}") from None
        desc = "given by name (others from ICs)"
    else:
        try:
            out = np.asarray(x0, dtype=float).reshape(-1).copy()
        except (TypeError, ValueError) as exc:
            raise SimulationInputError(f"x0 is not numeric: {exc}") from None
        if out.shape[0] != len(states):
            raise SimulationInputError(f"x0 has {out.shape[0]} entries, the model has {len(states)} states")
        desc = "given"
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        raise SimulationInputError(f"x0 is non-finite ({out[bad[0]]}) for state {states[bad[0]]}",
                                   quantity=states[bad[0]])
    return out, desc
