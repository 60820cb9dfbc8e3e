"""phsym: port-Hamiltonian modelling from netlists.

Pipeline (one subpackage per stage): netlist text -> :mod:`phsym.netlist`
-> graph (:mod:`phsym.graph`) -> structure (:mod:`phsym.structure`) ->
discretisation and code generation (:mod:`phsym.codegen`) -> simulation
(:mod:`phsym.simulation`) -> identification (:mod:`phsym.identify`).
"""
from .errors import (IdentificationError, NetlistError, NetlistWarning,
                     PhsymError, PhsymWarning, SimulationError, StructureError)
from .model import Model, load, parse
from .structure.linear import LinearPHS

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "PhsymError", "NetlistError", "StructureError", "SimulationError",
    "IdentificationError", "PhsymWarning", "NetlistWarning",
    "Model", "parse", "load", "LinearPHS",
]
