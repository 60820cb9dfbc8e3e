"""Derived forms of a :class:`~phsym.structure.dirac.Structure`.

* :func:`explicit` - eliminate algebraic variables and linear dissipation
  (Schur complement) to get ``[dx/dt; f_w; -y] = (J - R) [grad H; e_w; u]``
  in the fewest unknowns (only nonlinear dissipative ports remain as ``w``).
* :func:`descriptor` - the pH-DAE ``E xi' = (J - R) z(xi) + B u``,
  ``y = B^T z(xi)`` with linear dissipative ports as algebraic variables.
* :func:`linearize` - numeric :class:`~phsym.structure.linear.LinearPHS`
  around an operating point.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np
import sympy as sp

from ..errors import StructureError
from .dirac import Structure
from .linear import LinearPHS

__all__ = ["ExplicitForm", "DescriptorForm", "explicit", "descriptor", "linearize",
           "operating_point", "MAX_SYMBOLIC_ELIMINATION"]

#: Above this many eliminated variables the symbolic explicit form is not built.
MAX_SYMBOLIC_ELIMINATION = 40


@dataclass
class ExplicitForm:
    """``[dx/dt; f_w; -y] = (J - R) [grad H; e_w; u]`` over the kept variables.

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


@dataclass
class DescriptorForm:
    """``E xi' = (J - R) z(xi) + B u``, ``y = B^T z(xi)`` (symbolic).

    Attributes
    ----------
    xi : list of sympy.Symbol
        States then algebraic variables (efforts of linear dissipative ports,
        multipliers).
    z : sympy.Matrix
        ``(grad H(x), algebraic variables)``.
    E, J, R, B : sympy.Matrix
    """

    xi: List[sp.Symbol]
    z: sp.Matrix
    E: sp.Matrix
    J: sp.Matrix
    R: sp.Matrix
    B: sp.Matrix


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
                            sp.zeros(len(elim), 0), elim)
    Gamma = sp.zeros(len(elim), len(elim))
    for a, i in enumerate(elim):
        if S.variables[i].block == "w":
            d = S.dissipative[i - S.n_x]
            Gamma[a, a] = 1 / sp.diff(d.z, d.w)        # f = e / D
    A = Gamma - _dense(S, elim, elim)
    if elim:
        if defaults is not None:
            An = np.array(A.subs(dict(defaults)).evalf(), dtype=float)
            if np.linalg.matrix_rank(An) < len(elim):
                return None
        X = _solve_rational(A, _dense(S, elim, kept))
        if X is None:
            return None
    else:
        X = sp.zeros(0, len(kept))
    # entries are rational functions of the parameters: cancel, don't simplify
    Mk = (_dense(S, kept, kept) + _dense(S, kept, elim) * X).applyfunc(sp.cancel)
    Jr = ((Mk - Mk.T) / 2).applyfunc(sp.cancel)
    Rr = (-(Mk + Mk.T) / 2).applyfunc(sp.cancel)
    efforts = [S.variables[i].effort for i in kept]
    eliminated = {i: sp.Add(*[X[a, j] * efforts[j] for j in range(len(kept)) if X[a, j] != 0])
                  for a, i in enumerate(elim)}
    return ExplicitForm(kept, Jr, Rr, eliminated, efforts, X, elim)


def _solve_rational(A: sp.Matrix, B: sp.Matrix):
    """Solve ``A X = B`` exactly over the field of rational functions of the
    parameters (no expression swell); ``None`` when A is singular."""
    from sympy.polys.matrices import DomainMatrix
    try:
        dA = DomainMatrix.from_Matrix(A)
        dB = DomainMatrix.from_Matrix(B)
        dA, dB = dA.unify(dB)
        K = dA.domain.get_field()
        return dA.convert_to(K).lu_solve(dB.convert_to(K)).to_Matrix()
    except (ValueError, ZeroDivisionError, sp.polys.polyerrors.PolynomialError,
            sp.matrices.exceptions.NonInvertibleMatrixError):
        return None


def descriptor(S: Structure) -> DescriptorForm:
    """Symbolic pH-DAE ``E xi' = (J - R) z(xi) + B u`` (linear dissipation).

    Raises
    ------
    StructureError
        If a dissipative law is nonlinear or sources are directly coupled.
    """
    nonlin = [d.element for d in S.dissipative if not d.linear]
    if nonlin:
        raise StructureError("the descriptor (J - R) form needs linear dissipation; "
                             "use the Dirac form or linearize()", nonlin)
    u = list(range(S.block("u").start, S.block("u").stop))
    if any(v != 0 for v in _dense(S, u, u)):
        raise StructureError("sources are directly coupled (feedthrough between ports)",
                             [S.variables[i].element for i in u],
                             hint="add a series or parallel resistance between the sources")
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
    return DescriptorForm(xi, sp.Matrix(z), E, _dense(S, idx, idx), R, _dense(S, idx, u))


def operating_point(S: Structure, values: Mapping[sp.Symbol, float],
                    x0: Optional[np.ndarray] = None, u0: Optional[np.ndarray] = None) -> np.ndarray:
    """Solve the algebraic rows for the ``w`` and ``lambda`` block.

    Parameters
    ----------
    S : Structure
    values : mapping of parameter symbol to float
    x0, u0 : array_like, optional
        State and input (zeros by default).

    Returns
    -------
    numpy.ndarray
        The full effort-vector *variables* ``(x0, w, lambda, u0)`` where the
        ``w`` entries are the port variables ``w`` (not efforts).
    """
    import scipy.optimize as so  # lazy: about 0.2 s of import
    x0 = np.zeros(S.n_x) if x0 is None else np.asarray(x0, dtype=float).reshape(-1)
    u0 = np.zeros(S.n_u) if u0 is None else np.asarray(u0, dtype=float).reshape(-1)
    for name, arr, n, labels in (("x0", x0, S.n_x, S.states), ("u0", u0, S.n_u, S.inputs)):
        if arr.shape[0] != n:
            raise StructureError(f"{name} has {arr.shape[0]} entries, the model has {n} "
                                 f"({', '.join(str(v) for v in labels)})")
        if not np.all(np.isfinite(arr)):
            raise StructureError(f"{name} contains non-finite values")
    nz = S.n_w + S.n_lambda
    if nz == 0:
        return np.concatenate([x0, u0])
    Jn = S.J_numeric(values)
    w_syms = [d.w for d in S.dissipative]
    subs = dict(values)
    grad = sp.lambdify([S.states], [_fill(g, subs) for g in S.gradients] or [0], "numpy")
    ew = sp.lambdify([w_syms], [_fill(d.z if d.effort_out else d.w, subs) for d in S.dissipative] or [0], "numpy")
    fw = sp.lambdify([w_syms], [_fill(d.w if d.effort_out else d.z, subs) for d in S.dissipative] or [0], "numpy")
    gx = np.asarray(grad(x0), dtype=float).reshape(-1)[:S.n_x]
    sl = S.block("lambda")

    def resid(v):
        w, lam = v[:S.n_w], v[S.n_w:]
        e = np.concatenate([gx, np.asarray(ew(w), float).reshape(-1)[:S.n_w], lam, u0])
        f = Jn @ e
        r_w = np.asarray(fw(w), float).reshape(-1)[:S.n_w] - f[S.n_x:S.n_x + S.n_w]
        return np.concatenate([r_w, f[sl]])

    if S.is_linear:
        # affine residual: build its matrix column by column (sparse J) and solve
        r0 = resid(np.zeros(nz))
        A = np.empty((nz, nz))
        for j in range(nz):
            ej = np.zeros(nz)
            ej[j] = 1.0
            A[:, j] = resid(ej) - r0
        try:
            v = np.linalg.solve(A, -r0) if np.any(r0) else np.zeros(nz)
        except np.linalg.LinAlgError:
            v = np.linalg.lstsq(A, -r0, rcond=None)[0]
        if np.max(np.abs(resid(v)), initial=0.0) > 1e-8 * (1 + np.max(np.abs(v), initial=0.0)):
            raise StructureError("no consistent operating point for the algebraic variables")
        return np.concatenate([x0, v, u0])
    sol = so.root(resid, np.zeros(nz), method="hybr", options={"xtol": 1e-13})
    if not sol.success or np.max(np.abs(resid(sol.x)), initial=0.0) > 1e-8 * (1 + np.max(np.abs(sol.x), initial=0.0)):
        sol2 = so.least_squares(resid, sol.x, xtol=1e-15, ftol=1e-15, gtol=1e-15)
        if np.max(np.abs(sol2.fun), initial=0.0) > 1e-8:
            raise StructureError("no consistent operating point for the algebraic variables "
                                 "(the constraints cannot be met at this state and input)")
        sol = sol2
    return np.concatenate([x0, sol.x, u0])


def storage_hessian(S: Structure, values: Mapping[sp.Symbol, float],
                    x_op: Mapping[sp.Symbol, float]) -> np.ndarray:
    """Hessian of H at a state, assembled per storage component (block sparse)."""
    Hn = np.zeros((S.n_x, S.n_x))
    pos = {x: i for i, x in enumerate(S.states)}
    cache = S.__dict__.setdefault("_hessians", {})
    for si, st in enumerate(S.storages):
        idx = [pos[x] for x in st.states]
        if si not in cache:
            cache[si] = (sp.Matrix([[st.hamiltonian.diff(st.states[0], 2)]]) if len(st.states) == 1
                         else sp.hessian(st.hamiltonian, st.states))
        Hc = cache[si].applyfunc(lambda e: _fill(e, values))
        Hc = Hc.xreplace({x: sp.Float(x_op[x]) for x in st.states})
        Hn[np.ix_(idx, idx)] = np.array(Hc.evalf(), dtype=complex).real.reshape(len(idx), len(idx))
        if not np.all(np.isfinite(Hn[np.ix_(idx, idx)])):
            raise StructureError(f"energy of {', '.join(st.elements)} has no finite Hessian at "
                                 f"{dict((str(x), x_op[x]) for x in st.states)}",
                                 list(st.elements), hint="linearize at another x0")
    return Hn


def linearize(S: Structure, values: Mapping[sp.Symbol, float],
              x0: Optional[np.ndarray] = None, u0: Optional[np.ndarray] = None) -> LinearPHS:
    """Numeric descriptor :class:`LinearPHS` around an operating point.

    The state is ``xi = (x, e_w, lambda)``: storage states, efforts of the
    dissipative ports and algebraic variables, with
    ``E = diag(I, 0, 0)``, ``Q = diag(Hess H(x0), I, I)``, ``J`` the Dirac
    matrix restricted to ``xi``, ``R`` diagonal with each port's resistance
    (effort-out ports: ``1 / z'(w0)``; flow-out ports: ``z'(w0)``), and
    ``B`` the input columns.  Deviations from the operating point.

    Parameters
    ----------
    S : Structure
        The structure to linearise.
    values : mapping of sympy.Symbol to float
        Parameter values (see :meth:`phsym.Model.parameter_values`).
    x0 : array_like, optional
        Storage state of the operating point (zeros by default).
    u0 : array_like, optional
        Inputs of the operating point (zeros by default).

    Returns
    -------
    LinearPHS
    """
    op = operating_point(S, values, x0, u0)
    subs = dict(values)
    x_op = {s: float(op[i]) for i, s in enumerate(S.states)}
    w_op = {d.w: float(op[S.n_x + j]) for j, d in enumerate(S.dissipative)}
    u_idx = list(range(S.block("u").start, S.block("u").stop))
    Jn = S.J_numeric(values).toarray()
    if np.any(Jn[np.ix_(u_idx, u_idx)] != 0):
        raise StructureError("sources are directly coupled (feedthrough between ports)",
                             [S.variables[i].element for i in u_idx],
                             hint="add a series or parallel resistance between the sources")
    n = S.n_x + S.n_w + S.n_lambda
    keep = list(range(n))
    Rdiag = np.zeros(n)
    for j, d in enumerate(S.dissipative):
        D = float(_fill(sp.diff(d.z, d.w), subs).xreplace({d.w: w_op[d.w]}))
        if not np.isfinite(D) or D < 0:
            raise StructureError(f"dissipative law of {d.element} has slope {D} at the operating point",
                                 [d.element])
        if d.effort_out:
            if D <= 1e-300:          # open port: its effort is frozen, drop it
                keep.remove(S.n_x + j)
            else:
                Rdiag[S.n_x + j] = 1.0 / D
        else:
            Rdiag[S.n_x + j] = D
    Hn = storage_hessian(S, subs, x_op)
    Q = np.eye(n)
    Q[:S.n_x, :S.n_x] = Hn
    E = np.diag([1.0] * S.n_x + [0.0] * (n - S.n_x))
    names = [v.name for v in S.variables[:n]]
    names = [("e_" + S.variables[i].element) if S.variables[i].block == "w" else names[i] for i in range(n)]
    k = np.array(keep, dtype=int)
    return LinearPHS(Jn[np.ix_(k, k)], np.diag(Rdiag[k]), Q[np.ix_(k, k)], Jn[np.ix_(k, u_idx)],
                     E[np.ix_(k, k)], states=[names[i] for i in keep],
                     inputs=[str(u) for u in S.inputs], outputs=[f"y({u})" for u in S.inputs])
