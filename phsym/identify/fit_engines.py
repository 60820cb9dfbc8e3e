"""The engine a grey-box fit steps and differentiates: the generated loop or the numeric engine.

:class:`~phsym.identify.ParameterEstimator` reaches both engines' sensitivities
through these functions: the generated loop's module
(:mod:`phsym.codegen.newton.sensitivity`, with :func:`~.output_error.dc_sensitivity`
for a DC start) or the numeric engine's
(:mod:`phsym.simulation.engines.numeric.sensitivity`), their state scales,
initial states and runs.
"""
from __future__ import annotations

import os
from typing import Callable, List, Mapping, Tuple, Union

import numpy as np

from ..codegen.newton.sensitivity import SensitivityStep, build_sensitivity
from ..errors import IdentificationError, SimulationError
from ..simulation.engines.choice import ENGINE_ENV, GENERATED_LIMIT, choose
from ..simulation.engines.numeric.dc_sensitivity import dc_point_sensitivity
from ..simulation.engines.numeric.sensitivity import NumericSensitivity
from ..simulation.initial import dc_operating_point, initial_from_ic, state_scales
from ..simulation.signals import initial_state
from .output_error import dc_sensitivity

__all__ = ["ENGINES", "fit_engine", "sensitivity_module", "scales", "initial_with_sensitivity", "run_steps"]

#: Engines whose steps a fit differentiates (``"auto"``: the Simulator's rule).
ENGINES = ("auto", "generated", "numeric")

Step = Union[SensitivityStep, NumericSensitivity]


def fit_engine(setting: str, model, scheme: str, stiff: str) -> str:
    """``"generated"`` or ``"numeric"`` for the estimator's ``engine`` setting.

    ``"auto"`` follows :func:`phsym.simulation.engines.choice.choose` (its linear fast
    path counted as the generated loop), except that a circuit within
    :data:`~phsym.simulation.engines.choice.GENERATED_LIMIT` branches stays on the generated
    loop unless ``PHSYM_ENGINE`` names the engine: a fit runs the model tens to hundreds of
    times, and on a small circuit the generated sensitivity module's speed per step repays
    its build (docs/benchmarks.md), so the Simulator's first-run reason for the numeric engine
    does not hold.

    Parameters
    ----------
    setting : str
        ``"auto"``, ``"generated"`` or ``"numeric"``.
    model : Model
        The model.
    scheme, stiff : str
        Scheme and resolved stiff rule.
    """
    e = str(setting).strip().lower()
    if e not in ENGINES:
        raise IdentificationError(f"unknown engine {setting!r}: use {', '.join(ENGINES)}")
    if e == "auto":
        e = "numeric" if choose(model, "auto", scheme, stiff) == "numeric" else "generated"
        if e == "numeric" and not os.environ.get(ENGINE_ENV, "").strip() \
                and model.size["branches"] <= GENERATED_LIMIT:
            e = "generated"
    return e


def sensitivity_module(engine: str, model, free: List[str], labels: List[str], scheme: str, stiff: str) -> Step:
    """The engine's sensitivity runner (see :func:`fit_engine`).

    Parameters
    ----------
    engine : str
        ``"generated"`` or ``"numeric"``.
    model : Model
        The model.
    free, labels : list of str
        Free parameters and outputs.
    scheme, stiff : str
        Scheme and resolved stiff rule.
    """
    if engine == "numeric":
        return NumericSensitivity(model, free, labels, scheme, stiff)
    return build_sensitivity(model, free, labels, scheme, stiff)


def scales(step: Step, model, values) -> np.ndarray:
    """State scales as the engine of ``step`` takes them."""
    if isinstance(step, NumericSensitivity):
        return step.scales(values)
    return state_scales(model.structure, values)


def initial_with_sensitivity(model, step: Step, values, values_of: Callable, pvals: Mapping[str, float], U0, xs,
                             h: float, spec) -> Tuple[np.ndarray, np.ndarray]:
    """Initial state and its sensitivity to the free parameters (n_x, n_free).

    Parameters
    ----------
    model : Model
        The model.
    step : SensitivityStep or NumericSensitivity
        The engine's sensitivities.
    values : mapping of sympy.Symbol to float
        Parameter values.
    values_of : callable
        ``values_of({name: value})``: parameter values with these free parameters.
    pvals : mapping of str to float
        The free parameters.
    U0 : ndarray
        First inputs.
    xs : ndarray
        State scales.
    h : float
        Step.
    spec : None, array_like, mapping, "dc" or "estimate"
        The estimator's ``x0`` (``"estimate"``: the netlist's state, the unknowns set it later).
    """
    nf = len(step.free)
    if isinstance(spec, str) and spec.lower() == "estimate":
        spec = None
    dc = isinstance(spec, str) and spec.lower() == "dc"
    try:
        if isinstance(step, NumericSensitivity):
            base = step.initial(values)
            if dc:
                return dc_point_sensitivity(model.circuit, values_of, pvals, step.free, np.asarray(U0, float),
                                            base, xs)
        else:
            S = model.structure
            if dc:
                x = dc_operating_point(S, values, U0, initial_from_ic(S, values)[0])
                p = np.array([values[s] for s in step.parameters], float)
                return x, dc_sensitivity(step, x, U0, p, xs, h, nf)
            base, _ = initial_from_ic(S, values)
        x, _ = initial_state(base, "", model.states, spec)
    except SimulationError as exc:
        raise IdentificationError(str(exc)) from None
    return x, np.zeros((len(model.states), nf))


def run_steps(step: Step, values, values_of: Callable, pvals: Mapping[str, float], x, S0, U, xs, h: float,
              tol: float, maxit: int, want: bool):
    """``(Y, DY or None, failed step or -1)`` of the engine's run with sensitivities (arguments as
    :func:`initial_with_sensitivity` and the runners' ``run``)."""
    if isinstance(step, NumericSensitivity):
        return step.run(values_of, pvals, x, S0, U, xs, h, tol, maxit, want)
    p = np.array([values[s] for s in step.parameters], float)
    return step.run(x, S0, U, p, xs, h, tol, maxit, want)
