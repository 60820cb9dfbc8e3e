"""The DC point SPICE's analyses start from, and the signals read there.

SPICE's DC analyses (``.op``, ``.dc``, ``.tf`` and the operating point of
``.ac``) give each source its DC value: ``DC v`` when the line has one,
else its transient function at ``t = 0`` (:func:`dc_inputs`).  The point is
the structure's DC solution (:func:`phsym.simulation.initial.dc_solution`:
limited Newton, gmin and source stepping), with ``.ic`` values not held.

Every signal label (``v(node)``, ``v(a,b)``, ``i(V1)``, ``i(R1)``) is a
combination ``c . e`` of the effort vector (:func:`phsym.simulation.probes.probe_vector`);
:func:`efforts` gives ``e`` at a point and the small-signal model
(:func:`phsym.structure.smallsignal.small_signal`) its deviations.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np
import sympy as sp

from ...common.piecewise import ite_free
from ...errors import SimulationError, SimulationInputError
from ..probes import probe_vector

__all__ = ["DCPoint", "dc_inputs", "dc_point", "efforts", "default_signals", "signal_vectors", "use_numeric",
           "numeric_small_signal"]


@dataclass
class DCPoint:
    """A DC solution: states ``x``, dissipative port variables ``w``, multipliers ``lam``, inputs ``u``."""

    x: np.ndarray
    w: np.ndarray
    lam: np.ndarray
    u: np.ndarray


def dc_inputs(model, values: Mapping[sp.Symbol, float]) -> np.ndarray:
    """Each input's DC value (SPICE's): its ``DC`` value, else its waveform at ``t = 0``, else 0.

    Parameters
    ----------
    model : Model
        A model built from a netlist.
    values : mapping of sympy.Symbol to float
        Parameter values.
    """
    from ...netlist.waveforms import evaluate_waveform
    out = []
    for name in model.inputs:
        el = model.netlist.element(str(name))
        if el.dc is not None:
            out.append(float(sp.sympify(el.dc).xreplace({s: values[s] for s in sp.sympify(el.dc).free_symbols})))
        else:
            out.append(0.0 if el.waveform is None else float(evaluate_waveform(el.waveform, np.array([0.0]),
                                                                                values)[0]))
    return np.array(out)


def dc_point(model, values: Mapping[sp.Symbol, float], u: np.ndarray, guess: Optional[DCPoint] = None) -> DCPoint:
    """The DC solution at the inputs ``u``, Newton from ``guess`` (a sweep's last point) when given.

    Parameters
    ----------
    model : Model
        The model.
    values : mapping of sympy.Symbol to float
        Parameter values.
    u : ndarray
        Inputs.
    guess : DCPoint, optional
        Where Newton starts.

    Raises
    ------
    SimulationError
        When no DC solution is found.
    """
    from ..initial import dc_solution, initial_from_ic
    S = model.structure
    x0 = initial_from_ic(S, values)[0] if guess is None else guess.x
    z0 = None if guess is None else np.concatenate([guess.w, guess.lam])
    x, w, lam = dc_solution(S, values, np.asarray(u, float), x0, (), guess=z0)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(w))):
        raise SimulationError("no DC solution found", step=0, time=0.0)
    return DCPoint(x, np.asarray(w, float), np.asarray(lam, float), np.asarray(u, float))


def efforts(model, values: Mapping[sp.Symbol, float], point: DCPoint) -> np.ndarray:
    """The effort vector ``(dH/dx, effort(w), lambda, u)`` at a point (what probe vectors read).

    Parameters
    ----------
    model : Model
        The model.
    values : mapping of sympy.Symbol to float
        Parameter values.
    point : DCPoint
        The point.
    """
    S = model.structure
    if "_dc_efforts" not in model.__dict__:     # once per model: the parameters are arguments
        symbols = [p.symbol for p in model.netlist.parameters.values()]
        grad = sp.lambdify([S.states, symbols], list(S.gradients) + [0], "math")
        ew = sp.lambdify([[d.w for d in S.dissipative], S.states, symbols],
                         ite_free([d.effort for d in S.dissipative]) + [0], "math")
        model.__dict__["_dc_efforts"] = (symbols, grad, ew)
    symbols, grad, ew = model.__dict__["_dc_efforts"]
    p = [values[s] for s in symbols]
    with np.errstate(all="ignore"):
        gx = np.array(grad(list(point.x), p), float)[:S.n_x]
        gw = np.array(ew(list(point.w), list(point.x), p), float)[:S.n_w]
    return np.concatenate([gx, gw, point.lam, point.u])


def default_signals(model) -> List[str]:
    """What SPICE saves: the deck's ``.save``/``.print`` selection, else every node's voltage
    ``v(node)`` and every voltage source's current ``i(V1)`` (:meth:`phsym.netlist.spec.Netlist.outputs`)."""
    return model.netlist.outputs()


def signal_vectors(model, values: Mapping[sp.Symbol, float], labels: Sequence[str]) -> Dict[str, np.ndarray]:
    """``{label: c}`` with ``signal = c . e`` (:func:`phsym.simulation.probes.probe_vector`).

    Parameters
    ----------
    model : Model
        The model.
    values : mapping of sympy.Symbol to float
        Parameter values.
    labels : sequence of str
        Signal labels.

    Raises
    ------
    SignalError
        For a label that names nothing in the model.
    """
    S = model.structure
    Jn = S.J_numeric(values)
    return {k: probe_vector(S, k, values, Jn) for k in labels}


def use_numeric(model, engine: str) -> bool:
    """Whether a small-signal analysis runs on the numeric engine.

    Parameters
    ----------
    model : Model
        The model.
    engine : str
        ``"symbolic"``, ``"numeric"`` or ``"auto"`` (numeric when the model does not build its
        symbolic structure at load: above :data:`~phsym.model.SYMBOLIC_LIMIT` branches).
    """
    if engine not in ("auto", "symbolic", "numeric"):
        raise SimulationInputError(f"unknown engine {engine!r}: auto, symbolic or numeric")
    return engine == "numeric" or (engine == "auto" and not model.symbolic_ready)


def numeric_small_signal(model, values: Mapping[sp.Symbol, float]):
    """``(equations, probe)``: the numeric engine's small-signal equations at SPICE's DC point
    (:class:`~phsym.simulation.engines.numeric.smallsignal.SmallSignal`) and ``probe(label)``, the
    vector that reads a signal off their step vectors.

    Parameters
    ----------
    model : Model
        A model built from a netlist.
    values : mapping of sympy.Symbol to float
        Parameter values.

    Raises
    ------
    SimulationInputError
        For a model the numeric engine cannot take.
    """
    from ..engines.numeric.planner import NumericPlanner
    from ..engines.numeric.smallsignal import SmallSignal
    planner = NumericPlanner(model, 1.0, "backward_euler", "scheme", 1e-12, 200, False, False)
    obstacles = planner.circuit.numeric_obstacles()
    if obstacles:
        raise SimulationInputError("the numeric engine's small-signal analysis cannot take this model: "
                                   + "; ".join(obstacles[:3]) + " (use engine='symbolic')")
    u0 = dc_inputs(model, values)
    point = planner.dc_point(u0, values, hold_ic=False)
    ss = SmallSignal(planner.circuit, values, point, u0, planner.parts.scales(values))
    return ss, lambda label: planner.parts.probe(label, ss.n_nodes)
