"""Named laws a learned law may be pulled towards (and started from).

A prior is given as a name (``"shockley_pair"``), a name with parameters
(``("shockley", {"Is": 1e-9, "N": 1.8})``) or any vectorised callable
``f(v)``.  :func:`prior_law` turns each into a callable.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

import numpy as np

from ...common.physics import thermal_voltage
from ...errors import IdentificationError

__all__ = ["NAMED_LAWS", "prior_law"]

_VT = float(thermal_voltage(27.0))


def _shockley(v, Is=1e-12, N=1.0, Vt=_VT):
    return Is * np.expm1(np.asarray(v, float) / (N * Vt))


def _shockley_pair(v, Is=1e-12, N=1.0, Vt=_VT):
    x = np.asarray(v, float) / (N * Vt)
    return Is * (np.expm1(x) - np.expm1(-x))


def _linear(v, g=1.0):
    return g * np.asarray(v, float)


def _cubic(v, k=1.0, k3=0.0):
    x = np.asarray(v, float)
    return k * x + k3 * x ** 3


def _saturating(v, Imax=1.0, V0=1.0):
    return Imax * np.tanh(np.asarray(v, float) / V0)


#: name -> (law, its parameters with defaults, description).
NAMED_LAWS: Dict[str, tuple] = {
    "shockley": (_shockley, {"Is": 1e-12, "N": 1.0, "Vt": _VT}, "Is (exp(v / (N Vt)) - 1)"),
    "shockley_pair": (_shockley_pair, {"Is": 1e-12, "N": 1.0, "Vt": _VT},
                      "antiparallel pair: Is (exp(v / (N Vt)) - exp(-v / (N Vt)))"),
    "linear": (_linear, {"g": 1.0}, "g v"),
    "cubic": (_cubic, {"k": 1.0, "k3": 0.0}, "k x + k3 x**3 (a hardening spring)"),
    "saturating": (_saturating, {"Imax": 1.0, "V0": 1.0}, "Imax tanh(v / V0)"),
}


def prior_law(spec: Any) -> Callable[[np.ndarray], np.ndarray]:
    """A prior law as a vectorised callable.

    Parameters
    ----------
    spec : str, (str, dict) or callable
        A name of :data:`NAMED_LAWS`, a name with parameter values, or a callable.

    Returns
    -------
    callable
        ``f(v)`` on numpy arrays.

    Examples
    --------
    >>> f = prior_law(("cubic", {"k": 2.0, "k3": 1.0}))
    >>> float(f(np.array([2.0]))[0])
    12.0
    """
    if callable(spec):
        return lambda v: np.asarray(spec(np.asarray(v, float)), float) * np.ones(np.shape(v))
    name, params = (spec, {}) if isinstance(spec, str) else (spec[0], dict(spec[1])) \
        if isinstance(spec, (tuple, list)) and len(spec) == 2 else (None, None)
    entry = NAMED_LAWS.get(str(name).lower()) if name is not None else None
    if entry is None:
        raise IdentificationError(f"unknown prior law {spec!r}: give a callable, a name or "
                                  f"(name, {{parameters}}); names: {', '.join(NAMED_LAWS)}")
    law, defaults, _ = entry
    unknown = set(params) - set(defaults)
    if unknown:
        raise IdentificationError(f"prior {name!r} has no parameters {sorted(unknown)} "
                                  f"({name}: {entry[2]}; parameters {', '.join(defaults)})")
    values = {**defaults, **params}
    return lambda v: law(v, **values)
