"""Newton's start for port variables whose laws are singular at zero.

A run from given initial values starts Newton's first step from zero port
variables, which is where an electronic law is best behaved.  A law that
divides by its port variable (heat transfer: the entropy flow ``Q / T``)
is not defined there, so for such structures the first step starts from
the port variables the initial state implies through the interconnection,
``w = J_wx dH/dx(x0) + J_wu u0`` (exact for a port across a storage or a
source, as every thermal port is: it spans a node and the datum).
"""
from __future__ import annotations

import math
import weakref
from typing import Callable, Dict, Mapping, Optional

import numpy as np
import sympy as sp

from ..structure.dirac import Structure

__all__ = ["port_start", "singular_at_zero"]

_FUNCTIONS: "weakref.WeakKeyDictionary[Structure, Optional[Callable]]" = weakref.WeakKeyDictionary()
_ZERO_LAWS: "weakref.WeakKeyDictionary[Structure, list]" = weakref.WeakKeyDictionary()


def _by_name(expr: sp.Basic, values: Mapping[str, float]) -> sp.Basic:
    return expr.xreplace({s: values[s.name] for s in expr.free_symbols if s.name in values})


def singular_at_zero(S: Structure, values: Mapping[str, float]) -> bool:
    """Whether a dissipative law is not finite at zero port variables.

    Parameters
    ----------
    S : Structure
        The structure.
    values : mapping of str to float
        Parameter values by name.
    """
    laws = _ZERO_LAWS.get(S)
    if laws is None:        # the laws at zero port variables, once per structure (a sweep asks per run)
        zero = {d.w: sp.Integer(0) for d in S.dissipative}      # a law that is just w: a sympy zero
        laws = [sp.sympify(d.z).xreplace(zero) for d in S.dissipative]
        fixed = [law for law in laws if not law.free_symbols]
        varying = [law for law in laws if law.free_symbols]
        names = tuple(sorted({s.name for law in varying for s in law.free_symbols}))
        laws = _ZERO_LAWS[S] = (varying, _singular(fixed, {}), names, {})
    varying, fixed_singular, names, memo = laws
    if fixed_singular or not varying:
        return fixed_singular
    key = tuple(values.get(name) for name in names)      # a sweep varies other parameters: one evaluation
    found = memo.get(key)
    if found is None:
        if len(memo) > 256:
            memo.clear()
        found = memo[key] = _singular(varying, values)
    return found


def _singular(laws, values: Mapping[str, float]) -> bool:
    for law in laws:
        z0 = _by_name(law, values)
        try:
            if not math.isfinite(complex(z0).real):
                return True
        except TypeError:          # free symbols left (states a law reads): evaluated per run, not here
            continue
    return False


def port_start(S: Structure, values: Mapping[str, float], x0: np.ndarray,
               u0: np.ndarray) -> Optional[Dict[str, float]]:
    """Port variables implied by ``(x0, u0)`` by name, or None when zero is a fine start.

    Parameters
    ----------
    S : Structure
        The structure.
    values : mapping of str to float
        Parameter values by name.
    x0 : numpy.ndarray
        Initial state.
    u0 : numpy.ndarray
        Inputs of the first grid point.

    Returns
    -------
    dict of str to float, or None
        ``{port variable name: value}``; None when every law is finite at zero.
    """
    if S not in _FUNCTIONS:
        if not S.dissipative or not singular_at_zero(S, values):
            _FUNCTIONS[S] = None
        else:
            blocks = [v.block for v in S.variables]
            rows = [i for i, b in enumerate(blocks) if b == "w"]
            xs = [i for i, b in enumerate(blocks) if b == "x"]
            us = [i for i, b in enumerate(blocks) if b == "u"]
            J = S.J_matrix()
            u = sp.symbols(f"u0:{len(us)}", real=True)
            expr = J.extract(rows, xs) * sp.Matrix(S.gradients) + J.extract(rows, us) * sp.Matrix(len(u), 1, list(u))
            params = sorted({s for s in expr.free_symbols if s not in set(S.states) | set(u)}, key=str)
            f = sp.lambdify([list(S.states), list(u), params], list(expr), "math")
            _FUNCTIONS[S] = (f, [p.name for p in params], [S.variables[i].name for i in rows])
    entry = _FUNCTIONS[S]
    if entry is None:
        return None
    f, pnames, wnames = entry
    w = f(list(np.asarray(x0, dtype=float)), list(np.asarray(u0, dtype=float).ravel()),
          [values[p] for p in pnames])
    return {name: float(val) for name, val in zip(wnames, w) if math.isfinite(val)}
