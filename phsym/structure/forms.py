"""Derived forms of a :class:`~phsym.structure.dirac.Structure`.

* :func:`explicit` - eliminate algebraic variables and linear dissipation
  (Schur complement) to get ``[dx/dt; f_w; -y] = (J - R) [grad H; e_w; u]``
  in the fewest unknowns (only nonlinear dissipative ports remain as ``w``).
* :func:`descriptor` - the pH-DAE ``E xi' = (J - R) z(xi) + B u``,
  ``y = B^T z(xi) + (S - N) u`` with linear dissipative ports as algebraic
  variables.

Sources that meet directly (a current source into a node a voltage source
holds, a resistor across a voltage source once eliminated) give a
feedthrough ``y = ... + (S - N) u``: ``S`` symmetric positive semidefinite
(power ``u^T S u`` dissipated between the ports), ``N`` skew (lossless).

Numeric (linearised) forms are in :mod:`phsym.structure.linearize`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np
import sympy as sp

from ..errors import StructureError
from .dirac import Structure

__all__ = ["ExplicitForm", "DescriptorForm", "explicit", "descriptor", "MAX_SYMBOLIC_ELIMINATION"]

#: Above this many eliminated variables the symbolic explicit form is not built.
MAX_SYMBOLIC_ELIMINATION = 40


@dataclass
class ExplicitForm:
    """``[dx/dt; f_w; -y] = (J - R) [grad H; e_w; u]`` over the kept variables.

    The input blocks give the feedthrough: ``S = R_uu``, ``N = J_uu``
    (:attr:`S`, :attr:`N`); ``R`` may also couple ``u`` with the other
    efforts (pyMOR's ``P``) once resistors are eliminated.

    Attributes
    ----------
    kept : list of int
        Indices (into ``Structure.variables``) of the kept variables: all
        states, the nonlinear dissipative ports, the inputs.
    J, R : sympy.Matrix
        Skew and symmetric PSD parts of the reduced structure matrix.
    eliminated : dict of int to sympy.Expr
        Each eliminated effort as an expression of the kept efforts.
    efforts : list of sympy.Expr
        The kept efforts (``dH/dx``, ``e_w``, ``u``).
    coefficients : sympy.Matrix
        ``X`` with ``e_eliminated = X e_kept`` (rational in the parameters).
    eliminated_index : list of int
        Row order of ``coefficients``.
    """

    kept: List[int]
    J: sp.Matrix
    R: sp.Matrix
    eliminated: Dict[int, sp.Expr]
    efforts: List[sp.Expr]
    coefficients: Optional[sp.Matrix] = None
    eliminated_index: Optional[List[int]] = None
    n_u: int = 0

    def _input_block(self, M: sp.Matrix) -> sp.Matrix:
        m = self.n_u
        return M[M.rows - m:, M.cols - m:] if m else sp.zeros(0, 0)

    @property
    def S(self) -> sp.Matrix:
        """Symmetric PSD feedthrough (``R`` on the inputs)."""
        return self._input_block(self.R)

    @property
    def N(self) -> sp.Matrix:
        """Skew feedthrough (``J`` on the inputs)."""
        return self._input_block(self.J)


@dataclass
class DescriptorForm:
    """``E xi' = (J - R) z(xi) + B u``, ``y = B^T z(xi) + (S - N) u`` (symbolic).

    Attributes
    ----------
    xi : list of sympy.Symbol
        States then algebraic variables (efforts of linear dissipative ports,
        multipliers).
    z : sympy.Matrix
        ``(grad H(x), algebraic variables)``.
    E, J, R, B : sympy.Matrix
    S, N : sympy.Matrix
        Feedthrough: ``S`` is zero (dissipative ports stay in ``xi``), ``N``
        the skew input block of the Dirac ``J``.
    """

    xi: List[sp.Symbol]
    z: sp.Matrix
    E: sp.Matrix
    J: sp.Matrix
    R: sp.Matrix
    B: sp.Matrix
    S: Optional[sp.Matrix] = None
    N: Optional[sp.Matrix] = None


def _fill(expr: sp.Expr, values: Mapping[sp.Symbol, float]) -> sp.Expr:
    """Substitute parameter values, touching only the expression's own symbols."""
    expr = sp.sympify(expr)
    return sp.sympify(expr.xreplace({s: sp.Float(values[s]) for s in expr.free_symbols if s in values}))


def _dense(S: Structure, rows: Sequence[int], cols: Sequence[int]) -> sp.Matrix:
    ri = {r: i for i, r in enumerate(rows)}
    ci = {c: j for j, c in enumerate(cols)}
    M = sp.zeros(len(rows), len(cols))
    for (r, c), v in S.J.items():
        if r in ri and c in ci:
            M[ri[r], ci[c]] = v
    return M


def explicit(S: Structure, defaults: Optional[Mapping[sp.Symbol, float]] = None) -> Optional[ExplicitForm]:
    """Eliminate algebraic variables and linear dissipative ports.

    Parameters
    ----------
    S : Structure
    defaults : mapping, optional
        Parameter values used to test invertibility numerically first.

    Returns
    -------
    ExplicitForm or None
        ``None`` when the algebraic part cannot be eliminated (index 2
        constraints) or is too large for a symbolic elimination.
    """
    elim = [S.n_x + j for j, d in enumerate(S.dissipative) if d.linear]
    elim += list(range(S.block("lambda").start, S.block("lambda").stop))
    kept = [i for i in range(S.size) if i not in set(elim)]
    if len(elim) > MAX_SYMBOLIC_ELIMINATION:
        return None
    if not kept:   # nothing stores or drives energy: every variable is zero
        return ExplicitForm([], sp.zeros(0, 0), sp.zeros(0, 0), {i: sp.Integer(0) for i in elim}, [],
                            sp.zeros(len(elim), 0), elim, 0)
    Gamma = sp.zeros(len(elim), len(elim))
    for a, i in enumerate(elim):
        if S.variables[i].block == "w":
            d = S.dissipative[i - S.n_x]
            Gamma[a, a] = 1 / sp.diff(d.z, d.w)        # f = e / D
    A = Gamma - _dense(S, elim, elim)
    if elim and defaults is not None:
        An = np.array(A.subs(dict(defaults)).evalf(), dtype=float)
        if np.linalg.matrix_rank(An) < len(elim):
            return None
    got = _reduce(A, _dense(S, elim, kept), _dense(S, kept, kept), _dense(S, kept, elim))
    if got is None:
        return None
    X, Jr, Rr = got
    efforts = [S.variables[i].effort for i in kept]
    eliminated = {i: sp.Add(*[X[a, j] * efforts[j] for j in range(len(kept)) if X[a, j] != 0])
                  for a, i in enumerate(elim)}
    return ExplicitForm(kept, Jr, Rr, eliminated, efforts, X, elim, S.n_u)


def _reduce(A: sp.Matrix, B: sp.Matrix, KK: sp.Matrix, KE: sp.Matrix):
    """``X = A^-1 B`` and the skew and negated symmetric parts of ``M = KK + KE X``: ``(X, J, R)``, or
    ``None`` when ``A`` is singular.

    The entries are rational functions of the parameters: computed in their field
    (:class:`~sympy.polys.matrices.DomainMatrix`), where every entry stays reduced (no expression
    swell, no ``cancel`` of expressions after); entries outside such a field (a square root of a
    parameter) are sums of expressions, cancelled.
    """
    from sympy.polys.matrices import DomainMatrix
    try:
        dm = DomainMatrix.from_Matrix(A).unify(*[DomainMatrix.from_Matrix(M) for M in (B, KK, KE)], fmt="dense")
        K = dm[0].domain.get_field()
        dA, dB, dKK, dKE = (d.convert_to(K) for d in dm)
        dX = dA.lu_solve(dB) if A.rows else dB
    except (ValueError, ZeroDivisionError, sp.polys.polyerrors.BasePolynomialError,
            sp.matrices.exceptions.NonInvertibleMatrixError):
        return None
    if K.is_EX or K.is_EXRAW:      # sympy's sums of such matrices fail: sums of expressions, cancelled
        X = dX.to_Matrix()
        M = (KK + KE * X).applyfunc(sp.cancel)
        return X, ((M - M.T) / 2).applyfunc(sp.cancel), (-(M + M.T) / 2).applyfunc(sp.cancel)
    M = dKK + dKE * dX if A.rows else dKK
    J = (M - M.transpose()) * K.convert(sp.Rational(1, 2))
    R = (M + M.transpose()) * K.convert(sp.Rational(-1, 2))
    return dX.to_Matrix(), J.to_Matrix(), R.to_Matrix()


def descriptor(S: Structure) -> DescriptorForm:
    """Symbolic pH-DAE ``E xi' = (J - R) z(xi) + B u`` (linear dissipation).

    Raises
    ------
    StructureError
        If a dissipative law is nonlinear.
    """
    nonlin = [d.element for d in S.dissipative if not d.linear]
    if nonlin:
        raise StructureError("the descriptor (J - R) form needs linear dissipation; "
                             "use the Dirac form or linearize()", nonlin)
    u = list(range(S.block("u").start, S.block("u").stop))
    n = S.n_x + S.n_w + S.n_lambda
    idx = list(range(n))
    xi, z = [], []
    for i in idx:
        v = S.variables[i]
        if v.block == "x":
            xi.append(S.states[i])
            z.append(v.effort)
        else:
            s = sp.Symbol(f"e_{v.element}" if v.block == "w" else v.name, real=True)
            xi.append(s)
            z.append(s)
    E = sp.diag(*([1] * S.n_x + [0] * (n - S.n_x))) if n else sp.zeros(0, 0)
    R = sp.zeros(n, n)
    for j, d in enumerate(S.dissipative):
        R[S.n_x + j, S.n_x + j] = 1 / sp.diff(d.z, d.w)
    return DescriptorForm(xi, sp.Matrix(z), E, _dense(S, idx, idx), R, _dense(S, idx, u),
                          sp.zeros(len(u), len(u)), _dense(S, u, u))
