"""The numbers of a small linear model at a parameter set, without sympy or scipy.sparse.

A sweep or a fit of a linear model builds a plan per parameter set.  The
general path (:func:`~phsym.structure.linearize.descriptor_matrices` and
:class:`~phsym.simulation.linear.LinearEngine` on ``scipy.sparse`` matrices,
slopes and Hessians evaluated by sympy) costs milliseconds of Python per
set for a 3-state circuit, almost all of it fixed cost of sparse matrices
and symbolic evaluation.  :class:`LinearTemplate` does the symbolic work
once per structure: each dissipative slope and each storage Hessian becomes
a lambdified function of its parameters, and the index sets of the
descriptor form are kept; a parameter set then costs a few small dense
numpy operations.  The matrices are those of ``descriptor_matrices`` (same
formulas; values agree to round-off), and every run of a simulator, single
or in a sweep, goes through the same path, so sweeps stay bit-identical to
single runs.

Used for the dense linear solver (up to
:data:`~phsym.simulation.linear.DENSE_LIMIT` unknowns); models it does not
cover (state-dependent or multiport laws, non-quadratic storages) keep the
general path.
"""
from __future__ import annotations

import weakref
from typing import Callable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import sympy as sp

from ..common.schemes import Scheme
from ..errors import SimulationError, StructureError
from ..structure.dirac import Structure
from ..structure.discrete import ThetaStep, solve_step
from .linear_loops import DenseLinearLoop

__all__ = ["LinearTemplate", "linear_template"]

_TEMPLATES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _function(expr, symbols: frozenset) -> Tuple[Callable, List[sp.Symbol]]:
    """``(f, params)``: ``expr`` as a function of the parameter symbols it contains."""
    expr = sp.sympify(expr)
    params = sorted((s for s in expr.free_symbols if s in symbols), key=str)
    return sp.lambdify(params, expr, "math"), params


class LinearTemplate:
    """Parameter-free layout and compiled parameter maps of a linear structure.

    Parameters
    ----------
    S : Structure
        A linear structure (quadratic storages, linear one-port laws).
    symbols : frozenset of sympy.Symbol
        The parameter symbols (those of ``model.parameter_values``).

    Raises
    ------
    NotImplementedError
        A structure the template does not cover (use the general path).
    """

    def __init__(self, S: Structure, symbols: frozenset):
        if any(d.coupled or d.reads for d in S.dissipative) or not all(st.is_quadratic for st in S.storages):
            raise NotImplementedError("multiport, state-dependent law or non-quadratic storage")
        self.S = S
        self.n = S.n_x + S.n_w + S.n_lambda
        self.u_idx = np.arange(S.block("u").start, S.block("u").stop)
        at0 = {x: 0 for x in S.states}
        self.slopes = []
        for d in S.dissipative:
            D = sp.diff(d.z, d.w).xreplace(at0).xreplace({d.w: 0})
            if D.free_symbols - symbols:
                raise NotImplementedError(f"slope of {d.element} depends on {D.free_symbols - symbols}")
            self.slopes.append((d.element, d.effort_out) + _function(D, symbols))
        pos = {x: i for i, x in enumerate(S.states)}
        self.hessians = []
        for st in S.storages:
            idx = np.array([pos[x] for x in st.states], dtype=np.int64)
            Hm = sp.hessian(st.hamiltonian, st.states)
            if Hm.free_symbols - symbols:
                raise NotImplementedError(f"energy of {st.elements} is not quadratic in its states")
            fns = [[_function(Hm[a, b], symbols) for b in range(len(idx))] for a in range(len(idx))]
            self.hessians.append((idx, list(st.elements), fns))
        self._Jd: Optional[np.ndarray] = None

    @staticmethod
    def _at(fn: Tuple[Callable, List[sp.Symbol]], values: Mapping[sp.Symbol, float]) -> float:
        f, params = fn
        return float(f(*(float(values[p]) for p in params)))

    def matrices(self, values: Mapping[sp.Symbol, float], Jn, J_constant: bool):
        """Dense ``(E, J, R, Q, B, N, kept)`` of the descriptor form at ``values``
        (see :func:`~phsym.structure.linearize.descriptor_matrices`).

        Parameters
        ----------
        values : mapping of sympy.Symbol to float
            Parameter values.
        Jn : scipy.sparse matrix
            ``J`` at ``values``.
        J_constant : bool
            Whether ``J`` is the same for every parameter set (its dense
            form is then kept).
        """
        S, n = self.S, self.n
        if self._Jd is None or not J_constant:
            Jd = Jn.toarray()
            if J_constant:
                self._Jd = Jd
        Jd = self._Jd if J_constant else Jd
        keep = np.ones(n, dtype=bool)
        Rdiag = np.zeros(n)
        for j, (element, effort_out, *fn) in enumerate(self.slopes):
            D = self._at(fn, values)
            if not np.isfinite(D) or D < 0:
                raise StructureError(f"dissipative law of {element} has slope {D} at the operating point",
                                     [element])
            if effort_out:
                if D <= 1e-300:          # open port: its effort is frozen, drop it
                    keep[S.n_x + j] = False
                else:
                    Rdiag[S.n_x + j] = 1.0 / D
            else:
                Rdiag[S.n_x + j] = D
        Q = np.eye(n)
        for idx, elements, fns in self.hessians:
            block = np.array([[self._at(fn, values) for fn in row] for row in fns])
            if not np.all(np.isfinite(block)):
                raise StructureError(f"energy of {', '.join(elements)} has no finite Hessian", elements)
            Q[np.ix_(idx, idx)] = block
        k = np.flatnonzero(keep)
        kk = np.ix_(k, k)
        E = np.diag((np.arange(n) < S.n_x).astype(float))[kk]
        return (E, Jd[kk], np.diag(Rdiag[k]), Q[kk], Jd[np.ix_(k, self.u_idx)],
                Jd[np.ix_(self.u_idx, self.u_idx)], k)

    def loop(self, values: Mapping[sp.Symbol, float], Jn, J_constant: bool, h: float, scheme: Scheme,
             inputs: int) -> DenseLinearLoop:
        """The dense loop at ``values``: the fused matrices of
        :meth:`~phsym.simulation.linear.LinearEngine._dense_loop` from the
        matrices of :meth:`matrices`, written for this special case (``E``
        selects the states, ``R`` is diagonal, no input feedthrough but
        ``N``, efforts recorded), without the general path's generality.

        Parameters
        ----------
        values : mapping of sympy.Symbol to float
            Parameter values.
        Jn : scipy.sparse matrix
            ``J`` at ``values``.
        J_constant : bool
            Whether ``J`` has no parameter.
        h : float
            Step size.
        scheme : Scheme
            Time-stepping scheme.
        inputs : int
            Input rule code of the compiled loop.
        """
        E, J, R, Q, B, N, kept = self.matrices(values, Jn, J_constant)
        nk, nd, m = kept.size, self.S.n_x, self.u_idx.size
        th = float(scheme.theta)
        A = (J - R) @ Q
        Sx = np.eye(nk, nd)                       # the states come first and are always kept
        Sv = np.hstack([th * Sx, np.eye(nk)[:, nd:]])
        M = np.hstack([np.eye(nk, nd) / h - th * A[:, :nd], -A[:, nd:]])
        st = ThetaStep(M, A[:, :nd], B, Sx, Sv, np.arange(nd), np.arange(nd, nk), float(h), scheme)
        try:
            V, _ = solve_step(st)                 # v = V z, z = (x_k, ubar)
        except StructureError as exc:
            raise SimulationError(exc.message) from None
        Xi = np.hstack([Sx, np.zeros((nk, m))]) + Sv @ V
        G = V[:nd].copy()
        G[:, :nd] += np.eye(nd)
        Yc = (B.T @ Q) @ Xi
        Yc[:, nd:] -= N                           # y = B^T Q xi_theta + (S - N) ubar, S = 0
        Rk = np.diag(R)
        nz = np.flatnonzero(Rk)
        Wc = Q[nz] @ Xi
        QE = Q.T @ E
        Qh = 0.5 * (QE[:nd, :nd] + QE[:nd, :nd].T)
        Ec = np.zeros((self.S.size, nd + m))
        Ec[kept] = Q @ Xi
        Ec[self.u_idx, nd + np.arange(m)] += 1.0
        return DenseLinearLoop(G, Yc, Wc, Rk[nz], Qh, Ec, inputs)


def linear_template(S: Structure, symbols: Sequence[sp.Symbol]) -> Optional[LinearTemplate]:
    """The template of ``S`` (built once per structure and symbol set), or ``None`` when it does not apply.

    Parameters
    ----------
    S : Structure
        A linear structure.
    symbols : sequence of sympy.Symbol
        The parameter symbols.
    """
    key = frozenset(symbols)
    memo = _TEMPLATES.setdefault(S, {})
    if key not in memo:
        try:
            memo[key] = LinearTemplate(S, key)
        except NotImplementedError:
            memo[key] = None
    return memo[key]
