"""The small-signal model of any structure at an operating point, as SPICE's ``.ac`` and ``.tf`` use it.

:func:`~phsym.structure.linearize.linearize` keeps the port-Hamiltonian form
and so refuses transistors and controlled sources, whose incremental
conductances are not symmetric positive semidefinite.  The small-signal
model needs no such form: it is the linear descriptor system

    ``E xi' = A xi + B u``,  ``xi = (x, w, lambda)``

of the deviations of the states, the dissipative port variables and the
multipliers, from the Dirac rows ``[dx/dt; f_w; 0] = J e`` with ``e = (dH/dx,
effort(w), lambda, u)`` differentiated at the point.  Every signal a probe
vector reads is ``c . e``, with ``e = M xi`` plus the inputs.

Examples
--------
An amplifier of gain 10 (a VCVS) behind a 1 kOhm / 1 uF low-pass: at
omega = 1/RC the current into its 1 kOhm load is 10 / (1 + j) V / 1 kOhm.

>>> import numpy as np, phsym
>>> m = phsym.parse("V1 a 0\\nR1 a b 1k\\nC1 b 0 1u\\nE1 c 0 b 0 10\\nR2 c 0 1k\\n")
>>> S, values = m.structure, m.parameter_values()
>>> ss = small_signal(S, values, np.zeros(1), np.zeros(S.n_w), np.zeros(S.n_lambda), np.zeros(1))
>>> xi = np.linalg.solve(1000j * ss.E - ss.A, ss.B[:, 0])      # omega = 1/RC
>>> e = ss.M @ xi
>>> c = next(k for k, d in enumerate(S.dissipative) if d.element == "R2")
>>> complex(np.round(e[S.n_x + c], 12))      # R2's effort: its current (a link of the tree)
(0.005-0.005j)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import sympy as sp

from ..common.piecewise import ite_free
from ..errors import StructureError
from .dirac import Structure
from .forms import _fill
from .linearize import storage_hessian

__all__ = ["SmallSignal", "small_signal"]


@dataclass
class SmallSignal:
    """``E xi' = A xi + B u`` and the effort map ``e[:-n_u] = M xi`` (numeric, dense).

    Attributes
    ----------
    E, A, B, M : ndarray
        See the module docstring; ``xi = (x, w, lambda)``.
    """

    E: np.ndarray
    A: np.ndarray
    B: np.ndarray
    M: np.ndarray


def _number(expr: sp.Expr, at: Mapping[sp.Symbol, float]) -> float:
    val = complex(sp.sympify(expr).xreplace(at).evalf())
    if not np.isfinite(val.real) or abs(val.imag) > 1e-12 * max(1.0, abs(val.real)):
        raise StructureError(f"a law's slope is not a finite real number at the operating point ({expr})")
    return val.real


def small_signal(S: Structure, values: Mapping[sp.Symbol, float], x: np.ndarray, w: np.ndarray,
                 lam: np.ndarray, u: np.ndarray) -> SmallSignal:
    """The small-signal model of ``S`` at the operating point ``(x, w, lambda, u)``.

    Parameters
    ----------
    S : Structure
        The structure (transistors, controlled sources and every law allowed).
    values : mapping of sympy.Symbol to float
        Parameter values.
    x, w, lam, u : ndarray
        States, dissipative port variables, multipliers and inputs of the point
        (a DC solution: :func:`phsym.simulation.initial.dc_solution`).

    Raises
    ------
    StructureError
        A slope that is not finite at the point.
    """
    nx, nw, nl = S.n_x, S.n_w, S.n_lambda
    n = nx + nw + nl
    at = {s: sp.Float(float(v)) for s, v in zip(S.states, x)}
    at.update({d.w: sp.Float(float(v)) for d, v in zip(S.dissipative, w)})
    at.update({s: sp.Float(float(v)) for s, v in values.items()})
    M = np.zeros((n, n))
    M[:nx, :nx] = storage_hessian(S, values, {s: float(v) for s, v in zip(S.states, x)})
    M[nx + nw:, nx + nw:] = np.eye(nl)
    F = np.zeros((nw, n))           # slopes of the ports' flows
    columns = {d.w: nx + j for j, d in enumerate(S.dissipative)}
    columns.update({s: i for i, s in enumerate(S.states)})
    with np.errstate(all="ignore"):
        for j, d in enumerate(S.dissipative):
            for row, expr in ((M[nx + j], d.effort), (F[j], d.flow)):
                expr = ite_free([_fill(expr, values)])[0]
                for sym in expr.free_symbols & set(columns):
                    row[columns[sym]] = _number(sp.diff(expr, sym), at)
    Jn = S.J_numeric(values).toarray()
    J = Jn[:n, :n]
    A = J @ M
    A[nx:nx + nw] -= F
    E = np.zeros((n, n))
    E[:nx, :nx] = np.eye(nx)
    return SmallSignal(E, A, Jn[:n, n:n + S.n_u], M)
