"""Measured data as estimators receive it: time grids and sample arrays.

One convention for every estimator: ``t`` holds ``N + 1`` uniformly spaced
sample times ``t_0 .. t_N``; signals are arrays with one row per sample and
one column per channel (a 1-D array is one channel), or a mapping from
channel name to a 1-D array.  Every check here raises
:class:`~phsym.errors.IdentificationError` naming the offending argument.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..errors import IdentificationError

__all__ = ["uniform_step", "as_2d", "as_columns"]


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


def as_2d(a: Any, name: str, n_samples: Optional[int] = None, n_columns: Optional[int] = None) -> np.ndarray:
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
        raise IdentificationError(f"{name} has {arr.shape[0]} samples, t has {n_samples}")
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
