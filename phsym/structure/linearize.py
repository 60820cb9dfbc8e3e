"""Numeric linear(ised) forms of a :class:`~phsym.structure.dirac.Structure`.

* :func:`operating_point` - the dissipative and algebraic variables at a
  state and input;
* :func:`descriptor_matrices` - ``E xi' = (J - R) Q xi + B u``,
  ``y = B^T Q xi + (S - N) u`` as numbers
  (dense or sparse): the input of the linear simulator and of
  :func:`linearize`;
* :func:`linearize` - a :class:`~phsym.structure.linear.LinearPHS` around an
  operating point.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional

import numpy as np
import sympy as sp

from ..common.piecewise import ite_free
from ..errors import StructureError
from .dirac import Structure
from .forms import _fill
from .linear import LinearPHS

__all__ = ["operating_point", "storage_hessian", "DescriptorMatrices", "descriptor_matrices", "linearize"]


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
    at_x = {s: float(x0[i]) for i, s in enumerate(S.states)}     # state-dependent laws at the state
    ew = sp.lambdify([w_syms], ite_free([_fill(d.z if d.effort_out else d.w, subs).xreplace(at_x)
                                         for d in S.dissipative]) or [0], "numpy")
    fw = sp.lambdify([w_syms], ite_free([_fill(d.w if d.effort_out else d.z, subs).xreplace(at_x)
                                         for d in S.dissipative]) or [0], "numpy")
    # numpy evaluates both branches of a piecewise law (a contact's untaken branch: a negative
    # base to a fractional power): those values are dropped, their warnings too
    with np.errstate(all="ignore"):
        gx = np.asarray(grad(x0), dtype=float).reshape(-1)[:S.n_x]
    if not np.all(np.isfinite(gx)):
        bad = [str(S.states[i]) for i in np.flatnonzero(~np.isfinite(gx))]
        raise StructureError(f"the energy's gradient is not finite at x0 (states {', '.join(bad)})",
                             hint="linearise at another operating point (x0=...)")
    sl = S.block("lambda")

    def resid(v):
        w, lam = v[:S.n_w], v[S.n_w:]
        with np.errstate(all="ignore"):
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


def _quadratic_hessian(st, values: Mapping[sp.Symbol, float]) -> np.ndarray:
    """Hessian of a quadratic storage energy by polarisation (values of H only:
    xreplace is linear in the size of H, sympy's diff is not)."""
    Hn = st.hamiltonian.xreplace({s: values[s] for s in st.hamiltonian.free_symbols if s in values})
    n = len(st.states)

    def at(ones) -> float:
        return float(Hn.xreplace({s: (1 if s in ones else 0) for s in st.states}))
    diag = [at({s}) for s in st.states]
    out = np.empty((n, n))
    for a, s1 in enumerate(st.states):
        out[a, a] = 2.0 * diag[a]
        for b in range(a + 1, n):
            out[a, b] = out[b, a] = at({s1, st.states[b]}) - diag[a] - diag[b]
    return out


def storage_hessian(S: Structure, values: Mapping[sp.Symbol, float],
                    x_op: Optional[Mapping[sp.Symbol, float]] = None, sparse: bool = False):
    """Hessian of H at a state, assembled per storage component (block diagonal).

    Parameters
    ----------
    S : Structure
        The structure.
    values : mapping of sympy.Symbol to float
        Parameter values.
    x_op : mapping of sympy.Symbol to float, optional
        State (not needed when every storage is quadratic).
    sparse : bool
        Return a ``scipy.sparse`` CSR matrix.
    """
    rows, cols, data = [], [], []
    pos = {x: i for i, x in enumerate(S.states)}
    cache = S.__dict__.setdefault("_hessians", {})
    for si, st in enumerate(S.storages):
        idx = [pos[x] for x in st.states]
        if st.is_quadratic:
            block = _quadratic_hessian(st, values)
        else:
            if si not in cache:
                cache[si] = (sp.Matrix([[st.hamiltonian.diff(st.states[0], 2)]]) if len(st.states) == 1
                             else sp.hessian(st.hamiltonian, st.states))
            Hc = cache[si].applyfunc(lambda e: _fill(e, values))
            Hc = Hc.xreplace({x: sp.Float((x_op or {}).get(x, 0.0)) for x in st.states})
            block = np.array(Hc.evalf(), dtype=complex).real.reshape(len(idx), len(idx))
        if not np.all(np.isfinite(block)):
            raise StructureError(f"energy of {', '.join(st.elements)} has no finite Hessian at "
                                 f"{dict((str(x), (x_op or {}).get(x, 0.0)) for x in st.states)}",
                                 list(st.elements), hint="linearize at another x0")
        for a, i in enumerate(idx):
            for b, j in enumerate(idx):
                if block[a, b] != 0:
                    rows.append(i)
                    cols.append(j)
                    data.append(block[a, b])
    import scipy.sparse as sps      # here and below: loading a netlist needs no scipy
    Hn = sps.csr_matrix((data, (rows, cols)), shape=(S.n_x, S.n_x))
    return Hn if sparse else Hn.toarray()


@dataclass
class DescriptorMatrices:
    """``E xi' = (J - R) Q xi + B u``, ``y = B^T Q xi + (S - N) u`` of a structure (numeric).

    ``xi = (x, e_w, lambda)`` without the effort of open dissipative ports
    (zero slope); ``kept`` lists the indices of ``xi`` in the structure's
    effort vector.  Matrices are dense arrays or ``scipy.sparse`` matrices.
    ``N`` is the input block of the Dirac ``J`` (sources that meet directly,
    e.g. a current source into a node a voltage source holds); ``S`` is zero
    here, since every dissipative port stays a variable of ``xi``.
    """

    E: object
    J: object
    R: object
    Q: object
    B: object
    names: List[str]
    kept: List[int]
    S: object = None
    N: object = None


def descriptor_matrices(S: Structure, values: Mapping[sp.Symbol, float], x_op: Optional[np.ndarray] = None,
                        w_op: Optional[np.ndarray] = None, sparse: bool = False) -> DescriptorMatrices:
    """The linear(ised) descriptor form of ``S`` at an operating point.

    ``E = diag(I, 0, 0)``, ``Q = diag(Hess H(x), I, I)``, ``J`` the Dirac
    matrix restricted to ``xi``, ``R`` diagonal with each port's resistance
    (effort-out ports: ``1 / z'(w)``; flow-out ports: ``z'(w)``), ``B`` the
    input columns, ``N`` the input block of ``J`` (the rows ``-y = ... + N u``).

    Parameters
    ----------
    S : Structure
        The structure.
    values : mapping of sympy.Symbol to float
        Parameter values.
    x_op, w_op : numpy.ndarray, optional
        Storage states and dissipative port variables of the operating point
        (zeros by default; only nonlinear laws depend on them).
    sparse : bool
        Build ``scipy.sparse`` matrices (large models).

    Raises
    ------
    StructureError
        A law with a negative slope at the point.
    """
    u_idx = list(range(S.block("u").start, S.block("u").stop))
    Jn = S.J_numeric(values).tocsr()
    n = S.n_x + S.n_w + S.n_lambda
    keep = list(range(n))
    Rdiag = np.zeros(n)
    subs = dict(values)
    _refuse_multiports(S)
    at_x = {s: (0.0 if x_op is None else float(x_op[i])) for i, s in enumerate(S.states)}
    for j, d in enumerate(S.dissipative):
        w0 = 0.0 if w_op is None else float(w_op[j])
        for i in d.reads:      # a state-dependent law couples to the state unless dz/dx = 0 there
            dzx = float(_fill(sp.diff(d.z, S.states[i]), subs).xreplace(at_x).xreplace({d.w: w0}))
            if dzx != 0.0:
                raise StructureError(f"the law of {d.element} depends on the state {S.states[i]} at the "
                                     "operating point: its linearisation is not port-Hamiltonian", [d.element])
        D = float(_fill(sp.diff(d.z, d.w), subs).xreplace(at_x).xreplace({d.w: w0}))
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
    x_map = None if x_op is None else {s: float(x_op[i]) for i, s in enumerate(S.states)}
    Hn = storage_hessian(S, subs, x_map, sparse=True)
    k = np.array(keep, dtype=int)
    import scipy.sparse as sps
    Q = sps.block_diag([Hn, sps.identity(n - S.n_x)], format="csr") if n > S.n_x else Hn.tocsr()
    E = sps.diags(np.r_[np.ones(S.n_x), np.zeros(n - S.n_x)], format="csr")
    names = [("e_" + v.element) if v.block == "w" else v.name for v in S.variables[:n]]
    mats = [Jn[k][:, k], sps.diags(Rdiag[k], format="csr"), Q[k][:, k], Jn[k][:, u_idx], E[k][:, k],
            sps.csr_matrix((S.n_u, S.n_u)), Jn[u_idx][:, u_idx]]
    if not sparse:
        mats = [m.toarray() for m in mats]
    J, R, Qk, B, Ek, Sf, Nf = mats
    return DescriptorMatrices(Ek, J, R, Qk, B, [names[i] for i in keep], keep, Sf, Nf)


def _refuse_multiports(S: Structure) -> None:
    """Multiport devices have no port-Hamiltonian small-signal model: a clear error naming them."""
    multi = [d.element for d in S.dissipative if d.coupled]
    if multi:
        raise StructureError("no port-Hamiltonian linearisation of multiport devices: the small-signal "
                             "model of a transistor or tube has power gain, its incremental conductance "
                             "matrix is not symmetric positive semidefinite (nor is a heat transfer's)",
                             multi, hint="simulate the circuit (phsym simulate); AC analysis needs linear "
                                         "or one-port nonlinear laws")


def linearize(S: Structure, values: Mapping[sp.Symbol, float],
              x0: Optional[np.ndarray] = None, u0: Optional[np.ndarray] = None) -> LinearPHS:
    """Numeric descriptor :class:`LinearPHS` around an operating point.

    The state is ``xi = (x, e_w, lambda)``: storage states, efforts of the
    dissipative ports and algebraic variables (see :func:`descriptor_matrices`).
    Deviations from the operating point.

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
    _refuse_multiports(S)           # before the operating point evaluates their laws
    op = operating_point(S, values, x0, u0)
    d = descriptor_matrices(S, values, op[:S.n_x], op[S.n_x:S.n_x + S.n_w])
    return LinearPHS(d.J, d.R, d.Q, d.B, d.E, S=d.S, N=d.N, states=d.names,
                     inputs=[str(u) for u in S.inputs], outputs=[f"y({u})" for u in S.inputs])
