"""Forward sensitivities of a structure-preserving scheme, generated as numba code.

For a model and a scheme (backward Euler, implicit midpoint or discrete
gradient) the step ``k -> k+1`` solves the residual ``F(v; x_k, ubar, p) = 0``
for the unknowns ``v = (dx, w_implicit, lambda)`` (the layout of
:func:`phsym.codegen.steps.generate`) and sets ``x_{k+1} = x_k + dx``.
The outputs of the step are ``y_k = g(v, x_k, ubar, p)`` (collocated port
outputs ``y(NAME)`` and probes ``v(node)``, ``i(R1)``, ...).

Differentiating the discrete equations (not the continuous ones) with respect
to a parameter vector ``theta`` gives, with ``S_x = dx_k/dtheta``,

    F_v S_v = -(F_p + F_x S_x),     S_x <- S_x + S_v[:n_x],
    dy_k/dtheta = g_v S_v + g_x S_x + g_p,

so the sensitivities are exact derivatives of the simulated outputs (up to the
Newton tolerance).  ``F_v`` is the Newton Jacobian at the converged step; the
other matrices are sympy derivatives of the same residual expressions.  They
are written to a real module of the :mod:`phsym.codegen.cache` (functions
``resjac``, ``sens``, ``outs`` and the whole time loop ``run_sens``), all
compiled with ``njit(cache=True)``; parameter values enter as the array ``p``
so changing them never regenerates or recompiles.

Columns of the sensitivity beyond the free parameters (``n_s > n_free``) are
initial-state unknowns: their ``F_p``/``g_p`` part is zero and the caller
seeds ``S_x`` (identity rows for estimated initial states, or the DC-point
derivative for ``x0="dc"``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import sympy as sp

from ..codegen.cache import cache_key, load_module
from ..codegen.steps import SCHEMES, _assign, step_equations
from ..errors import IdentificationError
from ..structure.dirac import Structure

__all__ = ["SensitivityStep", "build_sensitivity", "resolve_scheme", "output_expressions"]

_LABEL = re.compile(r"^\s*([vi])\s*\(\s*([^,()]+?)\s*(?:,\s*([^,()]+?)\s*)?\)\s*$", re.I)
_Y = re.compile(r"^\s*y\s*\(\s*([^()]+?)\s*\)\s*$", re.I)

_ALIASES = {"be": "backward_euler", "euler": "backward_euler", "dg": "discrete_gradient",
            "trapezoidal": "midpoint", "tustin": "midpoint", "bilinear": "midpoint"}


def resolve_scheme(method: str) -> str:
    """Canonical scheme name of ``method`` (aliases ``be``, ``dg``, ``tustin``...)."""
    m = str(method).lower().replace("-", "_")
    m = _ALIASES.get(m, m)
    if m not in SCHEMES:
        raise IdentificationError(f"unknown method {method!r}; choose one of {', '.join(SCHEMES)}")
    return m


@dataclass
class SensitivityStep:
    """A generated sensitivity module and its layout.

    Attributes
    ----------
    module : module
        Generated module with ``resjac``, ``sens``, ``outs`` and ``run_sens``.
    key : str
        Cache key of the module.
    parameters : list of sympy.Symbol
        Order of the runtime parameter array ``p`` (every netlist parameter).
    free : list of str
        Names of the free parameters (columns of ``F_p`` and ``g_p``).
    outputs : list of str
        Output labels (rows of ``g``).
    unknowns : list of str
        Newton unknowns of a step.
    scheme : str
    n_x, n_v, n_u : int
    """

    module: object
    key: str
    parameters: List[sp.Symbol]
    free: List[str]
    outputs: List[str]
    unknowns: List[str]
    scheme: str
    n_x: int
    n_v: int
    n_u: int


def _expand_derived(model, free: Sequence[str]) -> Dict[sp.Symbol, sp.Expr]:
    """Derived parameters that are not free, as expressions of the others.

    Substituting them makes ``d/dp`` of a free base parameter follow the
    netlist's ``.param b={2*a}`` definitions (chain rule).
    """
    freeset = {f.lower() for f in free}
    sub: Dict[sp.Symbol, sp.Expr] = {}
    for name, p in model.netlist.parameters.items():
        if p.expression is not None and name.lower() not in freeset:
            sub[p.symbol] = sp.sympify(p.expression)
    for _ in range(len(sub) + 1):
        new = {s: e.xreplace(sub) for s, e in sub.items()}
        if new == sub:
            break
        sub = new
    return sub


def _equations(S: Structure, scheme: str, psub: Dict[sp.Symbol, sp.Expr]):
    """Symbolic residual, efforts and flows of one step: the simulator's own
    equations (:func:`phsym.codegen.steps.step_equations`)."""
    eq = step_equations(S, scheme, psub)
    return dict(X=eq.X, XS=eq.XS, UB=eq.UB, V=eq.V, h=eq.h, names=eq.names, F=eq.F, e=eq.e, Je=eq.Je)


def output_expressions(model, labels: Sequence[str], eq, psub) -> List[sp.Expr]:
    """Symbolic step output of each label (``y(NAME)`` or a probe label)."""
    S = model.structure
    nx, nw, nl = S.n_x, S.n_w, S.n_lambda
    e, Je = eq["e"], eq["Je"]
    inputs = {n.lower(): i for i, n in enumerate(model.inputs)}
    branch_names = {br.name.lower(): k for k, br in enumerate(S.branches)}
    elements = {br.element.lower(): k for k, br in reversed(list(enumerate(S.branches)))}
    out: List[sp.Expr] = []

    def combo(c, sign):
        total = sp.Integer(0)
        for (kind, idx), coef in c.items():
            val = e[idx] if kind == "e" else Je(idx)
            total += sign * sp.sympify(coef).xreplace(psub) * val
        return total

    for label in labels:
        m = _Y.match(label)
        if m and m.group(1).lower() in inputs:
            out.append(-Je(nx + nw + nl + inputs[m.group(1).lower()]))
            continue
        m = _LABEL.match(label)
        if not m:
            raise IdentificationError(f"cannot read output label {label!r}: use y(SOURCE), v(NODE), "
                                      f"v(N1,N2), i(ELEMENT) or v(ELEMENT); ports: {model.outputs}")
        q, a, b = m.group(1).lower(), m.group(2), m.group(3)
        if b is None and (a.lower() in branch_names or a.lower() in elements):
            k = branch_names.get(a.lower(), elements.get(a.lower()))
            across, through = S.branch_map(k)
            out.append(combo(across if q == "v" else through, 1))
            continue
        if q != "v":
            raise IdentificationError(f"output {label!r}: no element {a!r}")
        try:
            val = combo(S.node_potential(a), 1)
            if b is not None:
                val = val + combo(S.node_potential(b), -1)
        except Exception as exc:
            raise IdentificationError(f"output {label!r}: {exc}") from None
        out.append(val)
    return out


_RUN = '''

@njit(cache=True, error_model="numpy")
def run_sens(x, Sx, U, p, xs, h, tol, maxit, want, Y, DY, info):
    nv = NV
    nx = NX
    ny = NY
    nf = NF
    ns = Sx.shape[1]
    nu = U.shape[1]
    N = U.shape[0] - 1
    m = max(nv, 1)
    F = np.zeros(m)
    Jm = np.zeros((m, m))
    piv = np.zeros(m, np.int64)
    d = np.zeros(m)
    v = np.zeros(m)
    vp = np.zeros(m)
    wt = np.ones(m)
    ub = np.zeros(max(nu, 1))
    y = np.zeros(max(ny, 1))
    Gv = np.zeros((max(ny, 1), m))
    Gx = np.zeros((max(ny, 1), max(nx, 1)))
    Gp = np.zeros((max(ny, 1), max(nf, 1)))
    Fx = np.zeros((m, max(nx, 1)))
    Fp = np.zeros((m, max(nf, 1)))
    Sv = np.zeros((m, max(ns, 1)))
    for k in range(N):
        for i in range(nu):
            ub[i] = UBAR
        for i in range(nx):
            wt[i] = 1.0 / (abs(x[i]) + xs[i])
        it = 0
        ok = False
        resjac(x, v, ub, p, xs, h, F, Jm)
        nrm = 0.0
        for i in range(nv):
            nrm += (F[i] * wt[i]) ** 2
        while it < maxit:
            if not np.isfinite(nrm):
                break
            if not lu_factor(Jm, piv):
                break
            for i in range(nv):
                d[i] = -F[i]
            lu_solve(Jm, piv, d)
            worst = 0.0
            for i in range(nv):
                sc = abs(v[i]) + 1.0
                if i < nx:
                    sc = abs(v[i]) + abs(x[i]) + xs[i]
                r = abs(d[i]) / sc
                if not (r <= worst):
                    worst = r
            for i in range(nv):
                vp[i] = v[i]
                v[i] += d[i]
            it += 1
            resjac(x, v, ub, p, xs, h, F, Jm)
            nn = 0.0
            for i in range(nv):
                nn += (F[i] * wt[i]) ** 2
            if worst <= tol:
                ok = np.isfinite(nn)
                break
            lam = 1.0
            while not (nn <= nrm) and lam > 1e-3:
                lam *= 0.5
                for i in range(nv):
                    v[i] = vp[i] + lam * d[i]
                resjac(x, v, ub, p, xs, h, F, Jm)
                nn = 0.0
                for i in range(nv):
                    nn += (F[i] * wt[i]) ** 2
            nrm = nn
        if not ok:
            info[0] = k
            info[1] = it
            return k
        outs(x, v, ub, p, xs, h, y, Gv, Gx, Gp)
        for r in range(ny):
            Y[k, r] = y[r]
        if want:
            # Jm holds the Newton Jacobian at the converged v
            if not lu_factor(Jm, piv):
                info[0] = k
                info[1] = -1
                return k
            sens(x, v, ub, p, xs, h, Fx, Fp)
            for c in range(ns):
                for i in range(nv):
                    s = 0.0
                    if c < nf:
                        s = Fp[i, c]
                    for j in range(nx):
                        s += Fx[i, j] * Sx[j, c]
                    d[i] = -s
                lu_solve(Jm, piv, d)
                for i in range(nv):
                    Sv[i, c] = d[i]
            for r in range(ny):
                for c in range(ns):
                    s = 0.0
                    if c < nf:
                        s = Gp[r, c]
                    for i in range(nv):
                        s += Gv[r, i] * Sv[i, c]
                    for j in range(nx):
                        s += Gx[r, j] * Sx[j, c]
                    DY[k, r, c] = s
            for j in range(nx):
                for c in range(ns):
                    Sx[j, c] += Sv[j, c]
        for i in range(nx):
            x[i] += v[i]
    return -1
'''


def build_sensitivity(model, free: Sequence[str], outputs: Sequence[str], scheme: str) -> SensitivityStep:
    """Generate (or load from the cache) the sensitivity module.

    Parameters
    ----------
    model : phsym.Model
        The model.
    free : sequence of str
        Names of the parameters to differentiate with respect to.
    outputs : sequence of str
        Output labels: ``y(SOURCE)`` port outputs or probe labels.
    scheme : str
        ``"backward_euler"``, ``"midpoint"`` or ``"discrete_gradient"``
        (aliases accepted, see :func:`resolve_scheme`).

    Returns
    -------
    SensitivityStep
    """
    scheme = resolve_scheme(scheme)
    S = model.structure
    params = [p.symbol for p in model.netlist.parameters.values()]
    lookup = {n.lower(): p.symbol for n, p in model.netlist.parameters.items()}
    free_syms = []
    for f in free:
        if f.lower() not in lookup:
            raise IdentificationError(f"unknown parameter {f!r}; the netlist has {', '.join(model.parameters)}")
        free_syms.append(lookup[f.lower()])
    P = [sp.Symbol(f"p_{i}", real=True) for i in range(len(params))]
    derived = _expand_derived(model, free)
    psub = {s: (derived[s] if s in derived else s) for s in params}
    psub = {s: e.xreplace(dict(zip(params, P))) if hasattr(e, "xreplace") else e for s, e in psub.items()}
    eq = _equations(S, scheme, psub)
    ys = output_expressions(model, outputs, eq, psub)
    F, V, X = eq["F"], eq["V"], eq["X"]
    Pf = [P[params.index(s)] for s in free_syms]
    nv, nx, ny, nf = len(V), S.n_x, len(ys), len(Pf)
    jac = [(f"Jm[{r}, {c}]", dv) for r in range(nv) for c in range(nv) if (dv := sp.diff(F[r], V[c])) != 0]
    fx = [(f"Fx[{r}, {c}]", dv) for r in range(nv) for c in range(nx) if (dv := sp.diff(F[r], X[c])) != 0]
    fp = [(f"Fp[{r}, {c}]", dv) for r in range(nv) for c in range(nf) if (dv := sp.diff(F[r], Pf[c])) != 0]
    gv = [(f"Gv[{r}, {c}]", dv) for r in range(ny) for c in range(nv) if (dv := sp.diff(ys[r], V[c])) != 0]
    gx = [(f"Gx[{r}, {c}]", dv) for r in range(ny) for c in range(nx) if (dv := sp.diff(ys[r], X[c])) != 0]
    gp = [(f"Gp[{r}, {c}]", dv) for r in range(ny) for c in range(nf) if (dv := sp.diff(ys[r], Pf[c])) != 0]

    def unpack(L):
        L += [f"    x_{i} = x[{i}]" for i in range(nx)]
        L += [f"    xs_{i} = xs[{i}]" for i in range(nx)]
        L += [f"    v_{i} = v[{i}]" for i in range(nv)]
        L += [f"    ub_{i} = ub[{i}]" for i in range(S.n_u)]
        L += [f"    p_{i} = p[{i}]" for i in range(len(P))]

    def zero(L, *arrays):
        for a in arrays:
            L += [f"    for i in range({a}.shape[0]):", f"        for j in range({a}.shape[1]):",
                  f"            {a}[i, j] = 0.0"]

    L: List[str] = [
        f'"""Generated by phsym.identify: forward sensitivities, scheme {scheme}, free {list(free)}, '
        f'outputs {list(outputs)}. Do not edit."""',
        "import math", "import numpy as np", "from numba import njit",
        "from phsym.codegen.kernels import lu_factor, lu_solve", "",
        f"UNKNOWNS = {eq['names']!r}", "",
        '@njit(cache=True, error_model="numpy")', "def resjac(x, v, ub, p, xs, h, F, Jm):"]
    unpack(L)
    zero(L, "Jm")
    _assign(L, [(f"F[{i}]", f) for i, f in enumerate(F)] + jac)
    L += ["", '@njit(cache=True, error_model="numpy")', "def sens(x, v, ub, p, xs, h, Fx, Fp):"]
    unpack(L)
    zero(L, "Fx", "Fp")
    if fx or fp:
        _assign(L, fx + fp)
    L += ["", '@njit(cache=True, error_model="numpy")', "def outs(x, v, ub, p, xs, h, y, Gv, Gx, Gp):"]
    unpack(L)
    zero(L, "Gv", "Gx", "Gp")
    _assign(L, [(f"y[{i}]", e) for i, e in enumerate(ys)] + gv + gx + gp)
    ubar = "U[k + 1, i]" if scheme == "backward_euler" else "0.5 * (U[k, i] + U[k + 1, i])"
    run = (_RUN.replace("NV", str(nv)).replace("NX", str(nx)).replace("NY", str(ny))
           .replace("NF", str(nf)).replace("UBAR", ubar))
    body = "\n".join(L) + run
    key = cache_key(body, "identify-sens", scheme)
    mod = load_module(body, key)
    return SensitivityStep(mod, key, params, list(free), list(outputs), eq["names"], scheme, nx, nv, S.n_u)


def run_sensitivity(step: SensitivityStep, x0: np.ndarray, S0: np.ndarray, U: np.ndarray, p: np.ndarray,
                    xs: np.ndarray, h: float, tol: float = 1e-12, maxit: int = 200,
                    want: bool = True) -> Tuple[np.ndarray, Optional[np.ndarray], int]:
    """Run the compiled loop.

    Returns
    -------
    Y : ndarray (N, n_y)
        Step outputs.
    DY : ndarray (N, n_y, n_s) or None
        Their derivatives with respect to the sensitivity columns.
    failed : int
        Index of the step whose Newton iteration failed, or -1.
    """
    N = U.shape[0] - 1
    ny = len(step.outputs)
    ns = S0.shape[1]
    Y = np.zeros((N, ny))
    DY = np.zeros((N, ny, ns)) if want else np.zeros((1, 1, 1))
    info = np.zeros(2, dtype=np.int64)
    x = np.array(x0, dtype=float)
    Sx = np.ascontiguousarray(S0, dtype=float).copy()
    bad = step.module.run_sens(x, Sx, np.ascontiguousarray(U, dtype=float), np.asarray(p, float),
                               np.asarray(xs, float), float(h), float(tol), int(maxit), bool(want), Y, DY, info)
    return Y, (DY if want else None), int(bad)
