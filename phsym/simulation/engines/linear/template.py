"""The numbers of a small linear model at a parameter set, without sympy or scipy.sparse.

A sweep or a fit of a linear model builds a plan per parameter set.  The
general path (:func:`~phsym.structure.linearize.descriptor_matrices` and
:class:`~phsym.simulation.engines.linear.engine.LinearEngine` on ``scipy.sparse`` matrices,
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
:data:`~phsym.simulation.engines.linear.engine.DENSE_LIMIT` unknowns); models it does not
cover (state-dependent or multiport laws, non-quadratic storages) keep the
general path.
"""
from __future__ import annotations

import weakref
from typing import Callable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import sympy as sp

from ....codegen.linear_gen import MAX_UNROLLED
from ....common.schemes import Scheme
from ....errors import SimulationError, StructureError
from ....structure.dirac import Structure
from ....structure.discrete import ThetaStep, singular_step
from .loops import DenseLinearLoop, sparser_rows, state_point_rows

__all__ = ["LinearTemplate", "linear_template"]

_TEMPLATES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

#: From this many parameter sets on, their slopes, Hessians and singularity checks are computed together
#: (numpy's fixed cost per call makes that slower for a few sets; either way the same floats and errors).
MANY = 16


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
        self._layouts: dict = {}

    @staticmethod
    def _at(fn: Tuple[Callable, List[sp.Symbol]], values: Mapping[sp.Symbol, float]) -> float:
        f, params = fn
        try:
            return float(f(*(float(values[p]) for p in params)))
        except (ArithmeticError, ValueError) as exc:     # exp(exp(a)) at a parameter set: math range error
            names = ", ".join(f"{p} = {float(values[p]):.6g}" for p in params)
            raise StructureError(f"a coefficient of the model has no finite real value at {names or 'the defaults'}"
                                 f" ({exc})", hint="check the parameter values and the laws that use them") from None

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
            block = [[self._at(fn, values) for fn in row] for row in fns]
            if not all(np.isfinite(v) for row in block for v in row):
                raise StructureError(f"energy of {', '.join(elements)} has no finite Hessian", elements)
            if len(idx) == 1:
                Q[idx[0], idx[0]] = block[0][0]
            else:
                Q[np.ix_(idx, idx)] = block
        E, Jk, B, N, k = self._layout(keep, Jn, None if J_constant else Jn.toarray())
        return E, Jk, np.diag(Rdiag[k]), Q[np.ix_(k, k)], B, N, k

    def _layout(self, keep: np.ndarray, Jn, Jd: Optional[np.ndarray] = None) -> tuple:
        """``(E, J, B, N, kept)``: what depends on the kept variables only (and on ``J``; kept per pattern
        when ``J`` is constant, i.e. ``Jd`` is not given)."""
        lay = self._layouts.get(keep.tobytes()) if Jd is None else None
        if lay is None:
            if Jd is None:
                if self._Jd is None:
                    self._Jd = Jn.toarray()
                J = self._Jd
            else:
                J = Jd
            k = np.flatnonzero(keep)
            kk = np.ix_(k, k)
            lay = (np.diag((np.arange(self.n) < self.S.n_x).astype(float))[kk], J[kk], J[np.ix_(k, self.u_idx)],
                   J[np.ix_(self.u_idx, self.u_idx)], k)
            if Jd is None:
                self._layouts[keep.tobytes()] = lay
        return lay

    def stacks(self, values_list: Sequence[Mapping[sp.Symbol, float]], J_of: Callable, J_constant: bool,
               h: float, scheme: Scheme, inputs: int) -> list:
        """The loop matrices of many parameter sets at once, stacked: per set the exception it raises or
        ``(arrays, j, ext)``, its matrices row ``j`` of ``arrays`` (stacks in the order of
        :attr:`DenseLinearLoop.ARRAYS`, shared by the sets of one kept pattern) and ``ext`` its
        state-point dissipation rows (``None`` but for loops too large to unroll).

        The fused matrices of
        :meth:`~phsym.simulation.engines.linear.engine.LinearEngine._dense_loop`, written
        for this special case (``E`` selects the states, ``R`` is diagonal,
        no input feedthrough but ``N``, efforts recorded) and computed on
        stacks of matrices (numpy's stacked ``matmul`` and ``solve`` treat
        every matrix of a stack as on its own, so a set gives the same
        floats alone or in a stack: a single run is a stack of one).
        :meth:`loops` makes loops of them; a sweep's batch indexes them.

        Parameters
        ----------
        values_list : sequence of mapping of sympy.Symbol to float
            Parameter values per set.
        J_of : callable(values) -> scipy.sparse matrix
            ``J`` at a parameter set.
        J_constant : bool
            Whether ``J`` has no parameter (sets then share one stack).
        h : float
            Step size.
        scheme : Scheme
            Time-stepping scheme.
        inputs : int
            Input rule code of the compiled loop.
        """
        out: List[object] = [None] * len(values_list)
        if J_constant and len(values_list) >= MANY:
            groups = self._matrices_many(values_list, J_of(values_list[0]), out)
        else:
            sets = []
            for r, values in enumerate(values_list):
                try:
                    E, J, R, Q, B, N, kept = self.matrices(values, J_of(values), J_constant)
                except StructureError as exc:
                    out[r] = exc
                else:
                    sets.append((r, E, J, np.diag(R), Q, B, N, kept))
            groups = _grouped(sets, J_constant)
        for E, J, B, N, kept, idx, Rk, Q in groups:
            got = self._stack(E, J, B, N, kept, idx, Rk, Q, h, scheme, inputs, out)
            if got is None:
                continue
            rows, arrays, ext = got[0], got[1:7], got[7]
            for j, r in enumerate(rows):
                out[r] = (arrays, j, ext[j])
        return out

    @staticmethod
    def loop_of(entry: tuple, inputs: int) -> DenseLinearLoop:
        """The loop of one entry ``(arrays, j, ext)`` of :meth:`stacks`.

        Parameters
        ----------
        entry : tuple
            An entry of :meth:`stacks` that is not an exception.
        inputs : int
            Input rule code of the compiled loop.
        """
        arrays, j, ext = entry
        G, Yc, Wc, pw, Qh, Ec = (a[j] for a in arrays)
        return DenseLinearLoop(G, Yc, sparser_rows(Wc, ext, G), pw, Qh, Ec, inputs,
                               stacked=None if ext is not None else (arrays, j))

    def loops(self, values_list: Sequence[Mapping[sp.Symbol, float]], J_of: Callable, J_constant: bool,
              h: float, scheme: Scheme, inputs: int) -> List[object]:
        """The dense loops of many parameter sets at once: per set a
        :class:`DenseLinearLoop` or the exception that set raises (see :meth:`stacks`, same parameters).
        """
        return [e if isinstance(e, Exception) else self.loop_of(e, inputs)
                for e in self.stacks(values_list, J_of, J_constant, h, scheme, inputs)]

    def _matrices_many(self, values_list: Sequence[Mapping[sp.Symbol, float]], Jn, out: list) -> list:
        """The matrices of :meth:`matrices` of every set whose matrices exist (the others' errors into
        ``out``), the slopes and Hessians of all sets evaluated first (a constant ``J``), in groups
        ``(E, J, B, N, kept, sets, diag(R) stack, Q stack)`` of one kept pattern and one pattern of
        nonzero dissipation."""
        m = len(values_list)
        cols: dict = {}

        def column(fn) -> np.ndarray:       # _at of every set: the same floats
            f, params = fn
            for p in params:
                if p not in cols:
                    cols[p] = [float(v[p]) for v in values_list]
            return np.fromiter(map(float, map(f, *(cols[p] for p in params))) if params
                               else (float(f()),) * m, float, m)
        D = np.array([column(fn) for (_, _, *fn) in self.slopes]).T.reshape(m, -1)
        H = [np.stack([np.stack([column(fn) for fn in row], axis=1) for row in fns], axis=1)
             for _, _, fns in self.hessians]
        bad = ~np.isfinite(D).all(axis=1) | (D < 0).any(axis=1)
        for Hb in H:
            bad |= ~np.isfinite(Hb).all(axis=(1, 2))
        out_sets = []
        for r in np.flatnonzero(bad):     # the error of the single path, named as it names it
            try:
                E, J, R, Q, B, N, kept = self.matrices(values_list[r], Jn, True)
            except StructureError as exc:
                out[r] = exc
            else:
                out_sets.append((int(r), E, J, np.diag(R), Q, B, N, kept))
        groups = _grouped(out_sets, True)
        good = np.flatnonzero(~bad)
        if not good.size:
            return groups
        S, n = self.S, self.n
        keep = np.ones((good.size, n), dtype=bool)
        Rdiag = np.zeros((good.size, n))
        for j, (element, effort_out, *fn) in enumerate(self.slopes):
            d = D[good, j]
            if effort_out:          # an open port (slope 0) drops its effort; else R = 1 / slope
                keep[:, S.n_x + j] = d > 1e-300
                Rdiag[:, S.n_x + j] = np.where(d > 1e-300, 1.0 / np.where(d > 1e-300, d, 1.0), 0.0)
            else:
                Rdiag[:, S.n_x + j] = d
        Q = np.broadcast_to(np.eye(n), (good.size, n, n)).copy()
        for (idx, _, _), Hb in zip(self.hessians, H):
            Q[:, idx[:, None], idx[None, :]] = Hb[good]
        # one group per kept pattern and pattern of nonzero dissipation (a few per sweep)
        codes = np.concatenate([keep, Rdiag != 0], axis=1)
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
        for c in np.argsort(first):
            members = np.flatnonzero(inverse.ravel() == c)
            E, Jk, B, N, k = self._layout(keep[members[0]], Jn)
            groups.append((E, Jk, B, N, k, good[members].tolist(), Rdiag[np.ix_(members, k)],
                           Q[members][:, k[:, None], k[None, :]]))
        return groups

    def _stack(self, E, J, B, N, kept, idx, Rk, Q, h, scheme, inputs, out) -> Optional[tuple]:
        """The loop matrices of the sets ``idx`` (one kept pattern; ``Rk``, ``Q`` their stacks of
        ``diag(R)`` and ``Q``): ``(sets, G, Yc, Wc, pw, Qh, Ec, ext)`` stacked over the sets whose step is
        regular (the others' errors into ``out``), or ``None``."""
        nk, nd, m = kept.size, self.S.n_x, self.u_idx.size
        th = float(scheme.theta)
        A = (J - Rk[:, :, None] * np.eye(nk)) @ Q
        Sx = np.eye(nk, nd)                       # the states come first and are always kept
        Sv = np.hstack([th * Sx, np.eye(nk)[:, nd:]])
        M = np.concatenate([np.eye(nk, nd) / h - th * A[:, :, :nd], -A[:, :, nd:]], axis=2)
        K = np.concatenate([A[:, :, :nd], np.broadcast_to(B, (len(idx),) + B.shape)], axis=2)
        # rows scaled to unit maximum, singular steps refused: structure.discrete.solve_step, per set
        scale = np.max(np.abs(M), axis=2) if nk else np.ones((len(idx), 0))
        regular = _regular(M, scale) if len(idx) >= MANY else set()
        good = []
        for g, r in enumerate(idx):
            if g in regular:
                good.append(g)
                continue
            st = ThetaStep(M[g], K[g, :, :nd], B, Sx, Sv, np.arange(nd), np.arange(nd, nk), float(h), scheme)
            try:
                singular_step(st, scale[g])
            except StructureError as exc:
                out[r] = SimulationError(exc.message)
                continue
            good.append(g)
        if not good:
            return None
        g = np.array(good)
        V = np.linalg.solve(M[g] / scale[g][:, :, None], K[g] / scale[g][:, :, None])
        Q, Rk = Q[g], Rk[g]
        Xi = np.hstack([Sx, np.zeros((nk, m))]) + Sv @ V
        G = V[:, :nd].copy()
        G[:, :, :nd] += np.eye(nd)
        Yc = (B.T @ Q) @ Xi
        Yc[:, :, nd:] -= N                        # y = B^T Q xi_theta + (S - N) ubar, S = 0
        nz = np.flatnonzero(Rk[0])
        Wc = Q[:, nz] @ Xi
        ext = [None] * len(good)
        if nd * (nd + m) > MAX_UNROLLED:          # the compressed-row loop: the sparser dissipation rows
            Wq, Ag = Q[:, nz], A[g]
            rows = state_point_rows(Wq[:, :, :nd], Wq[:, :, nd:], Ag[:, nd:, :nd], Ag[:, nd:, nd:],
                                    np.broadcast_to(B[nd:], (len(good),) + B[nd:].shape), th)
            if rows is not None:
                ext = list(rows)
        QE = np.swapaxes(Q, 1, 2) @ E
        Qh = 0.5 * (QE[:, :nd, :nd] + np.swapaxes(QE[:, :nd, :nd], 1, 2))
        Ec = np.zeros((len(good), self.S.size, nd + m))
        Ec[:, kept] = Q @ Xi
        Ec[:, self.u_idx, nd + np.arange(m)] += 1.0
        return [idx[gi] for gi in good], G, Yc, Wc, Rk[:, nz], Qh, Ec, ext


def _grouped(sets: list, J_constant: bool) -> list:
    """Sets ``(r, E, J, diag(R), Q, B, N, kept)`` in the groups of :meth:`LinearTemplate._matrices_many`
    (with a ``J`` that has parameters, a group per set)."""
    groups: dict = {}
    for r, E, J, Rk, Q, B, N, kept in sets:
        key = (kept.tobytes(), np.flatnonzero(Rk).tobytes(), r if not J_constant else -1)
        groups.setdefault(key, (E, J, B, N, kept, []))[5].append((r, Rk, Q))
    return [(E, J, B, N, kept, [r for r, _, _ in mem], np.stack([rk for _, rk, _ in mem]),
             np.stack([q for _, _, q in mem])) for E, J, B, N, kept, mem in groups.values()]


def _regular(M: np.ndarray, scale: np.ndarray) -> set:
    """Indices of the step matrices ``M[g]`` that :func:`~phsym.structure.discrete.singular_step` accepts,
    checked together (its test on the LU factors of all row-scaled matrices at once; the others are
    checked alone, which names their error)."""
    if not M.shape[1]:
        return set(range(M.shape[0]))
    ok = np.isfinite(scale).all(axis=1) & (scale != 0).all(axis=1)
    ok[ok] = np.isfinite(M[ok]).all(axis=(1, 2))
    if not ok.any():
        return set()
    g = np.flatnonzero(ok)
    import scipy.linalg as sla      # here: importing the simulator does not import scipy.linalg
    U = sla.lu(M[g] / scale[g][:, :, None], check_finite=False)[2]      # LAPACK getrf, as lu_factor
    small = np.min(np.abs(np.diagonal(U, axis1=1, axis2=2)), axis=1) <= 1e-14 * M.shape[1]
    return set(g[~small].tolist())


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
