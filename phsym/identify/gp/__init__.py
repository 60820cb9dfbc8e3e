"""Gaussian-process identification of pH-DAE effort functions
(:class:`EffortGP`, after Zaspel & Günther), of scalar dissipative laws
(:class:`DissipativeLawGP`) and derivative estimation."""
from .derivatives import estimate_derivative
from .dissipative import DissipativeLawGP, NonPassiveLawWarning, port_samples
from .estimator import EffortGP
from .structure import UnidentifiableEffortWarning

__all__ = ["EffortGP", "DissipativeLawGP", "NonPassiveLawWarning", "UnidentifiableEffortWarning",
           "estimate_derivative", "port_samples"]
