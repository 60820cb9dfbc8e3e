"""phsym: port-Hamiltonian modelling from netlists.

Pipeline (one subpackage per stage): netlist text -> :mod:`phsym.netlist`
-> graph (:mod:`phsym.graph`) -> structure (:mod:`phsym.structure`) ->
discretisation and code generation (:mod:`phsym.codegen`) -> simulation
(:mod:`phsym.simulation`) -> identification (:mod:`phsym.identify`).
"""
from .errors import (IdentificationError, NetlistError, NetlistWarning,
                     PhsymError, PhsymWarning, SimulationError, StructureError)

__version__ = "0.1.0"

# Imported on first use: sympy, scipy and networkx take about a second to
# import, and a warm simulation of a cached netlist needs none of them.
_LAZY = {"Model": "model", "parse": "model", "load": "model", "LinearPHS": "structure.linear"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'phsym' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def simulate(model, fs: float, u=None, duration=None, x0=None, params=None,
             method: str = "auto", progress=None, warm_start: bool = True, **options):
    """Simulate a model or netlist file in one call.

    A netlist file simulated before (same text, rate, method and options, no
    parameter overrides) starts warm: from a cached snapshot, without
    building the symbolic model (see :mod:`phsym.simulation.warm`).

    Parameters
    ----------
    model : Model, str or pathlib.Path
        A model, or the path of a netlist.
    fs : float
        Sampling rate in Hz.
    u : array_like or dict, optional
        Inputs (see :meth:`phsym.simulation.Simulator.run`); netlist
        waveforms are the default.
    duration : float, optional
        Length in seconds (needed when no input array fixes it).
    x0 : array_like, dict or "dc", optional
        Initial state.
    params : dict, optional
        Parameter overrides by name.
    method : str
        Scheme (see :meth:`Model.simulator`).
    progress : callable(done, total), optional
        Called after each chunk of steps.
    warm_start : bool
        Use and fill the warm-start snapshot cache (default True).
    **options
        Passed to :class:`phsym.simulation.Simulator`.

    Returns
    -------
    phsym.simulation.SimulationResult
    """
    from .simulation.warm import simulate as _simulate
    return _simulate(model, fs, u=u, duration=duration, x0=x0, params=params, method=method,
                     progress=progress, warm_start=warm_start, **options)


__all__ = [
    "__version__",
    "PhsymError", "NetlistError", "StructureError", "SimulationError",
    "IdentificationError", "PhsymWarning", "NetlistWarning",
    "Model", "parse", "load", "simulate", "LinearPHS",
]
