"""Measured data as estimators receive it: time grids and sample arrays.

One convention for every stage (the simulator's): ``t`` holds ``N + 1``
uniformly spaced grid times ``t_0 .. t_N``; states and inputs live on the
grid (``N + 1`` rows); step quantities - port outputs, probes, powers -
belong to the steps ``k -> k+1`` (``N`` rows, on ``t_step = t[1:]``).
Measured outputs may be given either way:

* ``N + 1`` rows: samples at the grid times (what an instrument records);
* ``N`` rows: step values, as a :class:`~phsym.simulation.SimulationResult`
  gives them (``fit(result)`` takes a result directly).

Signals are arrays with one row per sample and one column per channel (a
1-D array is one channel), or a mapping from channel name to a 1-D array.
Every check here raises :class:`~phsym.errors.IdentificationError` naming
the offending argument.
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from ..errors import IdentificationError

__all__ = ["uniform_step", "as_2d", "as_columns", "Measurements", "measurements", "step_targets", "step_signal",
           "is_result", "fit_method", "fit_stiff"]


def uniform_step(t: Any, rtol: float = 1e-6, min_samples: int = 2) -> float:
    """Step of a uniform, increasing time grid.

    Parameters
    ----------
    t : array_like
        Sample times.
    rtol : float
        Allowed relative deviation of a step from the mean step.
    min_samples : int
        Fewest samples accepted.

    Returns
    -------
    float
        The step ``h``.

    Raises
    ------
    IdentificationError
        Too few samples, non-finite times, or a grid that is not uniform and increasing.

    Examples
    --------
    >>> uniform_step([0.0, 0.5, 1.0])
    0.5
    """
    t = np.asarray(t, dtype=float).reshape(-1)
    if t.size < min_samples:
        raise IdentificationError(f"need at least {min_samples} time samples, got {t.size}")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise IdentificationError(f"time sample {bad[0]} is not finite ({t[bad[0]]})")
    d = np.diff(t)
    h = float(np.mean(d))
    # written so that NaN fails too
    if not (h > 0) or not (np.max(np.abs(d - h)) <= rtol * h):
        raise IdentificationError("time samples must be strictly increasing and uniformly spaced")
    return h


def as_2d(a: Any, name: str, n_samples: Optional[int] = None, n_columns: Optional[int] = None,
          ref: str = "t") -> np.ndarray:
    """A finite float array of shape (samples, channels).

    Parameters
    ----------
    a : array_like
        1-D (one channel) or 2-D data.
    name : str
        Argument name for messages.
    n_samples : int, optional
        Required number of rows.
    n_columns : int, optional
        Required number of columns.
    ref : str
        What ``n_samples`` is the length of, for messages (default ``"t"``).

    Returns
    -------
    numpy.ndarray
        C-contiguous float64 copy or view.

    Raises
    ------
    IdentificationError
        Wrong dimensions, wrong sizes or non-finite entries.
    """
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise IdentificationError(f"{name} is not numeric: {exc}") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise IdentificationError(f"{name} must have shape (samples, channels), got {arr.shape}")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise IdentificationError(f"{name} has {arr.shape[0]} samples, {ref} has {n_samples}")
    if n_columns is not None and arr.shape[1] != n_columns:
        raise IdentificationError(f"{name} has {arr.shape[1]} columns, expected {n_columns}")
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        k, j = (int(v) for v in bad[0])
        raise IdentificationError(f"{name} contains a non-finite value ({arr[k, j]}) at sample {k}, column {j}")
    return np.ascontiguousarray(arr)


def as_columns(data: Any, names: Sequence[str], what: str, n_samples: Optional[int] = None) -> np.ndarray:
    """Array (samples, len(names)) from a mapping (case-insensitive keys) or an array.

    Parameters
    ----------
    data : mapping of str to array_like, or array_like
        Named 1-D columns, or an array whose columns follow ``names``.
    names : sequence of str
        Channel names, in column order.
    what : str
        Argument name for messages.
    n_samples : int, optional
        Required number of rows.

    Returns
    -------
    numpy.ndarray
    """
    if isinstance(data, Mapping):
        low = {str(k).lower(): v for k, v in data.items()}
        missing = [nm for nm in names if nm.lower() not in low]
        if missing:
            raise IdentificationError(f"{what}: missing {missing}; expected {list(names)}")
        cols = [np.asarray(low[nm.lower()], float).reshape(-1) for nm in names]
        lens = sorted({c.shape[0] for c in cols})
        if len(lens) > 1:
            raise IdentificationError(f"{what}: columns of different lengths {lens}")
        arr = np.column_stack(cols) if cols else np.zeros((n_samples or 0, 0))
        return as_2d(arr, what, n_samples)
    return as_2d(data, what, n_samples, len(names))


class Measurements(NamedTuple):
    """Data of one experiment on the simulator's grid.

    Attributes
    ----------
    t : ndarray (N+1,)
        Grid times.
    h : float
        Step.
    U : ndarray (N+1, n_u)
        Inputs on the grid.
    Y : ndarray (N+1 or N, n_y)
        Outputs: grid samples or step values.
    on_steps : bool
        ``Y`` holds step values (``N`` rows).
    """

    t: np.ndarray
    h: float
    U: np.ndarray
    Y: np.ndarray
    on_steps: bool


def is_result(data: Any) -> bool:
    """Whether ``data`` is a simulation result (a :class:`~phsym.simulation.SimulationResult` or a
    :class:`~phsym.simulation.io.saved.SavedResult` read back from a file)."""
    return hasattr(data, "t_step") and hasattr(data, "labels") and hasattr(data, "info")


def fit_method(method: Any, data: Any, default: str, allowed: Sequence[str]) -> str:
    """The scheme an estimator fits ``data`` with: ``method`` as given, or for ``"auto"`` the
    scheme the data were simulated with (a result that says so, of a scheme the estimator has),
    else ``default`` (measured arrays).

    Parameters
    ----------
    method : str
        The estimator's ``method`` (``"auto"`` or a scheme name).
    data : object
        What ``fit``/``score`` received first: a result or the time grid.
    default : str
        The scheme for measured arrays.
    allowed : sequence of str
        Schemes of the estimator.

    Returns
    -------
    str
        ``"auto"`` resolved, or ``method`` unchanged (validated by the caller).

    Examples
    --------
    >>> fit_method("auto", [0.0, 0.1], "backward_euler", ("backward_euler", "midpoint"))
    'backward_euler'
    """
    if not (isinstance(method, str) and method.strip().lower() == "auto"):
        return method
    made = getattr(data, "info", {}).get("scheme") if is_result(data) else None
    return made if made in allowed else default


def fit_stiff(stiff: Any, data: Any) -> Any:
    """The rule of stiff storages a fit follows: ``stiff`` as given, or for ``"auto"`` the rule a
    simulation result recorded (``info["stiff"]``); ``"auto"`` stays for measured arrays.

    Parameters
    ----------
    stiff : str
        The estimator's ``stiff``.
    data : object
        What ``fit`` received first.
    """
    made = getattr(data, "info", {}).get("stiff") if is_result(data) else None
    auto = isinstance(stiff, str) and stiff.strip().lower() == "auto"
    return made if auto and made else stiff


def measurements(t: Any, u: Any, y: Any, inputs: Sequence[str], outputs: Sequence[str],
                 min_samples: int = 2) -> Measurements:
    """Read ``(t, u, y)``, or a :class:`~phsym.simulation.SimulationResult` passed as ``t``.

    Parameters
    ----------
    t : array_like (N+1,) or SimulationResult
        Grid times, or a simulation result (then ``u`` and ``y`` are taken
        from it: its inputs and the step values of ``outputs``).
    u : mapping or array_like (N+1, n_u)
        Inputs by name or in ``inputs`` order.
    y : mapping or array_like (N+1 or N, n_y)
        Outputs by label or in ``outputs`` order (see the module docstring).
    inputs, outputs : sequence of str
        Channel names.
    min_samples : int
        Fewest grid times accepted.
    """
    if is_result(t):
        res = t
        if u is not None or y is not None:
            raise IdentificationError("give either a SimulationResult or (t, u, y), not both")
        t, u = res.t, {name: res[name] for name in inputs}
        y = {label: res[label] for label in outputs}
    if u is None or y is None:
        raise IdentificationError("fit needs inputs u and outputs y (or a SimulationResult)")
    tt = np.asarray(t, dtype=float).reshape(-1)
    h = uniform_step(tt, min_samples=min_samples)
    n = tt.shape[0]
    U = as_columns(u, inputs, "u", n)
    first = next(iter(y.values())) if isinstance(y, Mapping) and y else y
    rows = np.shape(first)[0] if np.ndim(first) else 0
    if rows not in (n, n - 1):
        raise IdentificationError(f"y has {rows} samples: give {n} (on the grid t) or {n - 1} (step values)")
    return Measurements(tt, h, U, as_columns(y, outputs, "y", rows), rows == n - 1)


def step_targets(data: Measurements, scheme) -> np.ndarray:
    """What the step outputs of ``scheme`` are compared with (``N`` rows).

    Step values are used as they are; grid samples are taken at the point
    of the step the scheme evaluates: the step's end for backward Euler, its
    start for explicit Euler, the mean of both ends for the midpoint-type
    schemes (the midpoint value of sampled measurements).

    Parameters
    ----------
    data : Measurements
        From :func:`measurements`.
    scheme : Scheme
        The estimator's scheme (:mod:`phsym.common.schemes`).
    """
    return data.Y if data.on_steps else _grid_to_steps(data.Y, scheme)


def _grid_to_steps(Y: np.ndarray, scheme) -> np.ndarray:
    """Grid samples (``N + 1`` rows) at the point of each step ``scheme`` evaluates (``N`` rows)."""
    if scheme.inputs == "end":
        return Y[1:]
    if scheme.inputs == "start":
        return Y[:-1]
    return 0.5 * (Y[:-1] + Y[1:])


def step_signal(res: Any, label: str, scheme) -> np.ndarray:
    """A signal of a simulation result as step values (``N`` rows), as fits compare it.

    Port outputs and probes are step values already; a state (``x_C1``) lives
    on the grid and is taken at the point of each step the scheme evaluates,
    as measured grid samples are (:func:`step_targets`).

    Parameters
    ----------
    res : SimulationResult
        The result.
    label : str
        A state name, port output or probe label.
    scheme : Scheme
        The scheme (:mod:`phsym.common.schemes`).
    """
    y = np.asarray(res[label], dtype=float)
    return _grid_to_steps(y, scheme) if y.shape[0] == res.t.shape[0] else y
