"""Simulation of phsym models with structure-preserving schemes.

``Simulator(model, fs, method)`` compiles (or loads from the cache) the step
of a discrete-gradient, midpoint or backward-Euler scheme and runs it;
:class:`SimulationResult` holds the arrays with the discrete power balance.
"""
from .result import SimulationResult
from .simulator import Simulator, simulate, simulator

__all__ = ["Simulator", "SimulationResult", "simulate", "simulator"]
