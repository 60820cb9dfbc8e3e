"""Structure layer: graph -> port-Hamiltonian (DAE) structure."""
from .linear import LinearPHS

__all__ = ["LinearPHS"]
