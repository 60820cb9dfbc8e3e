"""phsym: port-Hamiltonian modelling from netlists.

Pipeline (one subpackage per stage; each imports only the stages before it):
components (:mod:`phsym.components`, the element vocabulary) -> netlist text
(:mod:`phsym.netlist`) -> topology (:mod:`phsym.graph`) -> structure
(:mod:`phsym.structure`) -> model (:mod:`phsym.model`) -> code generation
(:mod:`phsym.codegen`) -> simulation (:mod:`phsym.simulation`) ->
identification (:mod:`phsym.identify`); shared infrastructure in
:mod:`phsym.common` and :mod:`phsym.errors`.  See docs/architecture.md.

Every subpackage and public name is an attribute of this package, imported
on first use (sympy, scipy and numba take about a second to import, and a
warm simulation of a cached netlist needs none of them).
"""
from .common.lazy import attach
from .errors import (BuildError, CacheWarning, ClippingWarning, DataFileError, IdentificationError, MissingDependencyError, NetlistError,
                     NetlistWarning, PhsymError, PhsymWarning, ResourceError, SignalError, SimulationError, SimulationInputError,
                     StructureError, UnknownNameError)

from .version import __version__

__getattr__, __dir__ = attach(
    __name__,
    submodules=["common", "components", "netlist", "graph", "structure", "model", "codegen", "simulation",
                "identify", "report", "cli", "benchmarks"],
    attributes={"Model": "model", "parse": "model", "load": "model", "LinearPHS": "structure.linear",
                "Simulator": "simulation.simulator", "SimulationResult": "simulation.result",
                "simulate": "simulation.run", "sweep": "simulation.sweeps.api", "grid": "simulation.sweeps.params",
                "sampling": "simulation.sweeps.params", "SweepResult": "simulation.sweeps.result",
                "UnidentifiableParameterWarning": "identify.warnings",
                "SchemeMismatchWarning": "identify.warnings"})

__all__ = [
    "__version__",
    "PhsymError", "NetlistError", "StructureError", "SimulationError", "SimulationInputError", "SignalError",
    "IdentificationError", "UnknownNameError", "DataFileError", "MissingDependencyError", "BuildError", "ResourceError",
    "PhsymWarning",
    "NetlistWarning", "CacheWarning", "ClippingWarning", "UnidentifiableParameterWarning", "SchemeMismatchWarning",
    "Model", "parse", "load", "simulate", "Simulator", "SimulationResult", "LinearPHS",
    "sweep", "grid", "sampling", "SweepResult",
]
