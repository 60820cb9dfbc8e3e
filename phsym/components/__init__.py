"""Component library (constitutive laws and sign conventions)."""
from .base import (EFFORT, FLOW, Branch, Contribution, Dissipation, Port,
                   Storage, TwoPort)
from .coupling import couple_inductors
from .library import COMPONENTS, Component, component_for

__all__ = ["EFFORT", "FLOW", "Branch", "Contribution", "Dissipation", "Port",
           "Storage", "TwoPort", "COMPONENTS", "Component", "component_for",
           "couple_inductors"]
