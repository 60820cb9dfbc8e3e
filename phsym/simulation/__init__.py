"""Simulation of phsym models with structure-preserving schemes.

``Simulator(model, fs, method)`` compiles (or loads from the cache) the step
of a discrete-gradient, midpoint or backward-Euler scheme and runs it;
:class:`SimulationResult` holds the arrays with the discrete power balance.
"""
from .result import SimulationResult

__all__ = ["Simulator", "SimulationResult", "simulate", "simulator"]


def __getattr__(name: str):
    if name == "simulate":
        from .warm import simulate
        globals()["simulate"] = simulate
        return simulate
    # the symbolic simulator imports sympy and scipy: only on first use
    if name in ("Simulator", "simulator"):
        import importlib
        mod = importlib.import_module(".simulator", __name__)
        # the submodule import binds ``simulator`` to the module: rebind all
        for n in ("Simulator", "simulator"):
            globals()[n] = getattr(mod, n)
        return globals()[name]
    raise AttributeError(f"module 'phsym.simulation' has no attribute {name!r}")
