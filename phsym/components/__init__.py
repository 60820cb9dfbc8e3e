"""Component kinds: one class per kind, with its netlist syntax, sign
convention, state, energy and law (see :mod:`phsym.components.component`).

Importing this package registers the built-in kinds in :data:`REGISTRY`.
"""
from . import storage, dissipation, sources, twoports, coupling, magnetic, fractional, potentiometer, beam, transistors, fets, tubes, controlled, lines, felt, thermal, learnable  # noqa: F401,I001  (registers, in this order)
from .base import (EFFORT, FLOW, Branch, Contribution, Coupling, Dissipation, Port,
                   Storage, TwoPort)
from .component import REGISTRY, Component, LawForm, Registry, Value, register
from .coupling import couple_inductors
from .element import DATUM, ElementSpec, Law, Waveform

__all__ = ["EFFORT", "FLOW", "Branch", "Contribution", "Coupling", "Dissipation", "Port", "Storage",
           "TwoPort", "REGISTRY", "Component", "LawForm", "Registry", "Value", "register",
           "couple_inductors", "DATUM", "ElementSpec", "Law", "Waveform"]
