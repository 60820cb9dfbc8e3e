"""Identification of port-Hamiltonian models from data.

Importing this package is cheap: estimators (and numba) load on first use.
"""
from __future__ import annotations

from typing import Any

__all__ = ["LinearPHSEstimator", "ParameterEstimator"]


def __getattr__(name: str) -> Any:
    if name == "LinearPHSEstimator":
        from .linear_estimator import LinearPHSEstimator
        return LinearPHSEstimator
    if name == "ParameterEstimator":
        from .parameter_estimator import ParameterEstimator
        return ParameterEstimator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
