"""Gaussian-process identification of pH-DAE effort functions
(:class:`EffortGP`, after Zaspel & Günther) and derivative estimation."""
from .derivatives import estimate_derivative
from .estimator import EffortGP
from .structure import UnidentifiableEffortWarning

__all__ = ["EffortGP", "UnidentifiableEffortWarning", "estimate_derivative"]
