"""Goodness-of-fit numbers shared by the estimators.

``score`` of every estimator is :func:`r2_score` (higher is better, 1 is a
perfect fit, as in scikit-learn); the identification literature's numbers
are here too: :func:`nrms` (seed 001) and :func:`max_relative_error`
(seed 000).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import IdentificationError

__all__ = ["nrms", "r2_score", "max_relative_error"]


def _pair(y_hat: Any, y: Any):
    a, b = np.asarray(y_hat, float), np.asarray(y, float)
    if a.shape != b.shape:
        raise IdentificationError(f"prediction has shape {a.shape}, data {b.shape}")
    return a, b


def nrms(y_hat: Any, y: Any) -> float:
    """Normalised RMS error ``RMS(y_hat - y) / std(y)`` (seed 001, eq. 14).

    Equal to ``||y_hat - y||_2 / ||y - mean(y)||_2``; for several columns the
    squared errors and variances are summed over the columns.

    Parameters
    ----------
    y_hat : array_like
        Predicted output.
    y : array_like
        Reference (measured) output, same shape.

    Examples
    --------
    >>> nrms([1.0, 1.0, 1.0], [0.0, 1.0, 2.0])
    1.0
    """
    a, b = _pair(y_hat, y)
    den = np.sum((b - b.mean(axis=0)) ** 2)
    return float(np.sqrt(np.sum((a - b) ** 2) / den)) if den > 0 else float("inf")


def r2_score(y_hat: Any, y: Any) -> float:
    """Coefficient of determination ``1 - SS_res / SS_tot`` (columns pooled), i.e. ``1 - nrms**2``.

    Parameters
    ----------
    y_hat : array_like
        Predicted output.
    y : array_like
        Reference output, same shape.
    """
    return 1.0 - nrms(y_hat, y) ** 2


def max_relative_error(y_hat: Any, y: Any) -> float:
    """``max |y_hat - y| / max |y|`` over all samples and columns (seed 000's metric).

    Parameters
    ----------
    y_hat : array_like
        Predicted output.
    y : array_like
        Reference output, same shape.
    """
    a, b = _pair(y_hat, y)
    return float(np.max(np.abs(a - b), initial=0.0) / max(np.max(np.abs(b), initial=0.0), 1e-300))
