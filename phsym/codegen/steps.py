"""Generate the per-step equations of a structure-preserving scheme as numba code.

For a :class:`~phsym.structure.dirac.Structure` and a scheme, the step
``k -> k+1`` has the unknowns ``v = (dx, w_implicit, lambda)`` and the
residual

    F_x = dx - h (J e)_x,   F_w = f_w - (J e)_w,   F_lambda = -(J e)_lambda

with the efforts ``e = (gbar(x, dx), e_w(w), lambda, ubar)``.  Effort-out
dissipative ports whose row of ``J`` involves only states, inputs and other
explicit ports are eliminated (``w_j = (J e)_j``), so e.g. a diode clipper has
only ``dx`` as Newton unknown.  The module contains

* ``resjac(x, v, ub, p, xs, h, F, Jm)`` -- residual and Jacobian (after
  common-subexpression elimination), compiled as a callee of ``run`` only;
* ``run(...)`` -- the whole compiled time loop (damped Newton, LU with partial
  pivoting from :mod:`phsym.codegen.kernels`) with H(x), the full effort
  vector, the outputs and the dissipated power written into it.

Parameters enter as the float64 array ``p`` (order of :attr:`GeneratedStep.parameters`),
so changing them never regenerates or recompiles.  Sensitivities for
grey-box fitting fit the same layout: ``dF/dp`` and ``dF/dx`` are further
sympy derivatives of the same residual expressions (see ``docs/simulation.md``).
"""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from ..errors import SimulationError
from ..structure.dirac import Structure
from .cache import cache_key, load_module

__all__ = ["SCHEMES", "GeneratedStep", "StepEquations", "generate", "step_equations", "DD_THRESHOLD"]

SCHEMES = ("discrete_gradient", "midpoint", "backward_euler")

#: Relative step below which divided differences switch to their Taylor form
#: (about cbrt(machine epsilon)).
DD_THRESHOLD = 6.0e-6


class _Printer(PythonCodePrinter):
    """Plain Python printer (``math.`` functions, conditional expressions)."""

    def _print_Float(self, expr):
        return repr(float(expr))


def _pr(expr) -> str:
    return _Printer({"fully_qualified_modules": True, "standard": "python3"}).doprint(expr)


@dataclass
class GeneratedStep:
    """Result of :func:`generate`: the compiled module and its layout.

    Attributes
    ----------
    module : module
        The generated module (functions ``resjac`` and ``run``).
    key : str
        Cache key.
    parameters : list of sympy.Symbol
        Order of the parameter array ``p``.
    unknowns : list of str
        Names of the Newton unknowns (``d<state>``, ``w_...``, ``lam_...``).
    n_x, n_v, n_e, n_u : int
    explicit_w : list of str
        Dissipative ports eliminated explicitly.
    scheme : str
    """

    module: object
    key: str
    parameters: List[sp.Symbol]
    unknowns: List[str]
    n_x: int
    n_v: int
    n_e: int
    n_u: int
    explicit_w: List[str] = field(default_factory=list)
    scheme: str = ""
    source: str = ""



def _divided_difference(H: sp.Expr, x: sp.Symbol, X: sp.Symbol, V: sp.Symbol, XS: sp.Symbol) -> sp.Expr:
    """(H(X+V) - H(X)) / V without cancellation problems."""
    Hx = H.subs(x, X)
    Hxd = H.subs(x, X + V)
    if H.is_polynomial(x):
        num = sp.Poly(sp.expand(Hxd - Hx), V)
        q, r = num.div(sp.Poly(V, V))
        if r.is_zero:
            return sp.expand(q.as_expr())
    d1 = sp.diff(H, x)
    d3 = sp.diff(H, x, 3)
    taylor = (d1 + d3 * V ** 2 / 24).subs(x, X + V / 2)
    return sp.Piecewise(((Hxd - Hx) / V, sp.Abs(V) > DD_THRESHOLD * (sp.Abs(X) + XS)),
                        (taylor, True))


def _discrete_gradients(S: Structure, scheme: str, X, V, XS) -> List[sp.Expr]:
    sub_mid = {s: X[i] + V[i] / 2 for i, s in enumerate(S.states)}
    sub_end = {s: X[i] + V[i] for i, s in enumerate(S.states)}
    if scheme == "midpoint":
        return [g.xreplace(sub_mid) for g in S.gradients]
    if scheme == "backward_euler":
        return [g.xreplace(sub_end) for g in S.gradients]
    out: List[sp.Expr] = [sp.Integer(0)] * S.n_x
    index = {s: i for i, s in enumerate(S.states)}
    for st in S.storages:
        idx = [index[s] for s in st.states]
        if len(idx) == 1:
            i = idx[0]
            out[i] = _divided_difference(st.hamiltonian, st.states[0], X[i], V[i], XS[i])
            continue
        grads = [sp.diff(st.hamiltonian, s).xreplace(sub_mid) for s in st.states]
        if st.is_quadratic:
            for i, g in zip(idx, grads):
                out[i] = g
            continue
        # Gonzalez discrete gradient
        d2 = sum(V[i] ** 2 for i in idx)
        dH = st.hamiltonian.xreplace(sub_end) - st.hamiltonian.xreplace({s: X[i] for s, i in zip(st.states, idx)})
        corr = (dH - sum(g * V[i] for g, i in zip(grads, idx))) / d2
        scale = sum((sp.Abs(X[i]) + XS[i]) ** 2 for i in idx)
        for i, g in zip(idx, grads):
            out[i] = sp.Piecewise((g + corr * V[i], d2 > DD_THRESHOLD ** 2 * scale), (g, True))
    return out


def _row(S: Structure) -> Dict[int, Dict[int, sp.Expr]]:
    rows: Dict[int, Dict[int, sp.Expr]] = {}
    for (r, c), val in S.J.items():
        rows.setdefault(r, {})[c] = val
    return rows


def _assign(lines: List[str], exprs: Sequence[Tuple[str, sp.Expr]], indent: str = "    ") -> None:
    targets = [t for t, _ in exprs]
    vals = [e for _, e in exprs]
    reps, red = sp.cse(vals, symbols=sp.numbered_symbols("_c"), optimizations=None)
    for s, e in reps:
        lines.append(f"{indent}{s} = {_pr(e)}")
    for t, e in zip(targets, red):
        lines.append(f"{indent}{t} = {_pr(e)}")


_RUN_TEMPLATE = '''

@njit(cache=True, error_model="numpy")
def run(x, v, U, p, xs, h, k0, k1, tol, maxit, flag, X, Y, Hh, Pd, Ps, IT, FL, E, rec_e, info,
        F, Jm, piv, d, vp, wt, ub, e, y, vold):
    # work arrays come from the caller: np.zeros/np.ones inside the loop
    # would compile their numpy overloads, about 0.7 s of cold start
    @ENERGY:Hh[k0]@
    # v and vold (the predictor's history) persist across calls, so a run in
    # chunks (progress bars) steps exactly like one call
    for k in range(k0, k1):
        for i in range(@NU@):
            ub[i] = @UBAR@
        # predictor: linear extrapolation of the previous two steps' unknowns
        for i in range(@NV@):
            tmp = v[i]
            v[i] = 2.0 * v[i] - vold[i]
            vold[i] = tmp
        for i in range(@NX@):
            wt[i] = 1.0 / (abs(x[i]) + xs[i])
        it = 0
        status = 0
        qi = -1
        rprev = 1e300
        if @NV@ > 0:
            resjac(x, v, ub, p, xs, h, F, Jm)
            nrm = 0.0
            for i in range(@NV@):
                nrm += (F[i] * wt[i]) * (F[i] * wt[i])
            while True:
                if not math.isfinite(nrm):
                    status = 2
                    qi = -1
                    for i in range(@NV@):
                        if qi < 0 and not math.isfinite(F[i]):
                            qi = i
                    break
@SOLVE@                worst = 0.0
                for i in range(@NX@):
                    r = abs(d[i]) / (abs(v[i]) + abs(x[i]) + xs[i])
                    if not (r <= worst):
                        worst = r
                        qi = i
                for i in range(@NX@, @NV@):
                    r = abs(d[i]) / (abs(v[i]) + 1.0)
                    if not (r <= worst):
                        worst = r
                        qi = i
                # converged: step below tol, or (contracting iteration) the
                # estimated remaining error theta/(1-theta)*|d| below tol
                conv = worst <= tol
                if not conv and it > 0 and worst < rprev:
                    theta = worst / rprev
                    conv = theta / (1.0 - theta) * worst <= tol
                rprev = worst
                for i in range(@NV@):
                    vp[i] = v[i]
                    v[i] += d[i]
                it += 1
                if conv:
                    break
                if it >= maxit:
                    status = 1
                    break
                resjac(x, v, ub, p, xs, h, F, Jm)
                nn = 0.0
                for i in range(@NV@):
                    nn += (F[i] * wt[i]) * (F[i] * wt[i])
                lam = 1.0
                while not (nn <= nrm) and lam > 1e-3:
                    lam *= 0.5
                    for i in range(@NV@):
                        v[i] = vp[i] + lam * d[i]
                    resjac(x, v, ub, p, xs, h, F, Jm)
                    nn = 0.0
                    for i in range(@NV@):
                        nn += (F[i] * wt[i]) * (F[i] * wt[i])
                nrm = nn
        IT[k] = it
        if status != 0:
            FL[k] = status
            if not flag:
                info[0] = k
                info[1] = status
                info[2] = qi
                return k
            for i in range(@NV@):
                if not math.isfinite(v[i]):
                    v[i] = 0.0
        @POST:pdis@
        Pd[k] = pdis
        ps = 0.0
        for i in range(@NU@):
            Y[k, i] = y[i]
            ps += y[i] * ub[i]
        Ps[k] = ps
        if rec_e:
            for i in range(@NE@):
                E[k, i] = e[i]
        for i in range(@NX@):
            x[i] += v[i]
            X[k + 1, i] = x[i]
        @ENERGY:hk@
        Hh[k + 1] = hk
        if not math.isfinite(hk):
            info[0] = k
            info[1] = 4
            info[2] = 0
            for i in range(@NX@):
                if not math.isfinite(x[i]):
                    info[2] = i
            if not flag:
                return k
            FL[k] = 4
    return -1
'''

#: Loops over at most this many entries are written out (unrolled): a numba
#: loop costs type inference and lowering far beyond its statements, and
#: unrolling cut the clipper's cold compile by about a fifth.
UNROLL = 4
_FOR = re.compile(r"^(\s*)for i in range\((\d+)(?:, (\d+))?\):$")
_I = re.compile(r"\bi\b")


def _inline(src: str, name: str, block: List[str], result: str) -> str:
    """Replace each line ``@NAME:target@`` by ``block`` (indented to it) and ``target = result``."""
    out: List[str] = []
    pat = re.compile(rf"^(\s*)@{name}:(.+)@$")
    for line in src.split("\n"):
        m = pat.match(line)
        if not m:
            out.append(line)
            continue
        out.extend(m.group(1) + b[4:] for b in block)
        out.append(f"{m.group(1)}{m.group(2)} = {result}")
    return "\n".join(out)


def _unroll(src: str) -> str:
    """Write out ``for i in range(a[, b])`` loops with literal bounds and at most
    :data:`UNROLL` iterations (bodies must not ``break``)."""
    lines = src.split("\n")
    out: List[str] = []
    j = 0
    while j < len(lines):
        m = _FOR.match(lines[j])
        if not m:
            out.append(lines[j])
            j += 1
            continue
        ind = m.group(1)
        lo, hi = (int(m.group(2)), int(m.group(3))) if m.group(3) else (0, int(m.group(2)))
        body = []
        j += 1
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > len(ind)):
            body.append(lines[j])
            j += 1
        if hi - lo > UNROLL or any("break" in b for b in body):
            out.append(lines[j - len(body) - 1])
            out.extend(body)
            continue
        step = len(body[0]) - len(body[0].lstrip()) - len(ind) if body else 4
        for k in range(lo, hi):
            out.extend(_I.sub(str(k), b[step:]) if b.strip() else b for b in body)
    return "\n".join(out)


#: Functions only ``run`` calls: no CPython entry point (saves its compile).
_CALLEE = '@njit(cache=True, error_model="numpy", no_cpython_wrapper=True)'

_SOLVE_SCALAR = """                if Jm[0, 0] == 0.0:
                    status = 3
                    qi = 0
                    break
                d[0] = -F[0] / Jm[0, 0]
"""
_SOLVE_LU = """                if not lu_factor(Jm, piv):
                    status = 3
                    qi = 0
                    break
                for i in range(@NV@):
                    d[i] = -F[i]
                lu_solve(Jm, piv, d)
"""

_MEMO: "weakref.WeakKeyDictionary" = None


def generate(S: Structure, parameters: Sequence[sp.Symbol], scheme: str) -> GeneratedStep:
    """Generate, write to the cache and import the step module of ``scheme``.

    Parameters
    ----------
    S : Structure
    parameters : sequence of sympy.Symbol
        Every parameter symbol the expressions may use, in the order of the
        runtime array ``p``.
    scheme : str
        One of :data:`SCHEMES`.
    """
    if scheme not in SCHEMES:
        raise SimulationError(f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
    global _MEMO
    if _MEMO is None:
        _MEMO = weakref.WeakKeyDictionary()
    memo = _MEMO.setdefault(S, {})
    mkey = (scheme, tuple(parameters))
    if mkey not in memo:
        memo[mkey] = _generate(S, parameters, scheme)
    return memo[mkey]


@dataclass
class StepEquations:
    """Symbolic equations of one step ``k -> k+1`` (shared by the simulator
    and the sensitivity generator of :mod:`phsym.identify`).

    Attributes
    ----------
    X, XS, UB, V : list of sympy.Symbol
        State at step start, state scales, scheme input ``ubar``, unknowns
        ``v = (dx, implicit w, lambda)``.
    h : sympy.Symbol
        Step size.
    names : list of str
        Names of the unknowns.
    F : list of sympy.Expr
        Residual ``F(v) = 0``.
    e : list of sympy.Expr
        Effort vector of the step.
    explicit : list of int
        Dissipative ports eliminated explicitly (in dependency order).
    wsym : dict of int to sympy.Expr
        Port variable ``w_j`` of every dissipative port (unknown or expression).
    """

    X: List[sp.Symbol]
    XS: List[sp.Symbol]
    UB: List[sp.Symbol]
    V: List[sp.Symbol]
    h: sp.Symbol
    names: List[str]
    F: List[sp.Expr]
    e: List[sp.Expr]
    explicit: List[int]
    wsym: Dict[int, sp.Expr]
    S: Structure
    psub: Dict[sp.Symbol, sp.Expr]
    rows: Dict[int, Dict[int, sp.Expr]] = field(default_factory=dict)

    def z_of(self, j: int, w: sp.Expr) -> sp.Expr:
        """Law of dissipative port ``j`` evaluated at ``w``."""
        dp = self.S.dissipative[j]
        return dp.z.xreplace(self.psub).xreplace({dp.w: w})

    def Je(self, r: int) -> sp.Expr:
        """Row ``r`` of ``J e``."""
        return sp.Add(*[val.xreplace(self.psub) * self.e[c] for c, val in self.rows.get(r, {}).items()])


def step_equations(S: Structure, scheme: str, psub: Dict[sp.Symbol, sp.Expr]) -> StepEquations:
    """Residual, unknowns and efforts of one step of ``scheme``.

    Parameters
    ----------
    S : Structure
        The structure.
    scheme : str
        One of :data:`SCHEMES`.
    psub : dict
        Substitution for the parameter symbols (e.g. ``p_i`` array entries).

    Returns
    -------
    StepEquations
    """
    nx, nw, nl, nu = S.n_x, S.n_w, S.n_lambda, S.n_u
    X = [sp.Symbol(f"x_{i}", real=True) for i in range(nx)]
    XS = [sp.Symbol(f"xs_{i}", positive=True) for i in range(nx)]
    UB = [sp.Symbol(f"ub_{i}", real=True) for i in range(nu)]
    hs = sp.Symbol("h", positive=True)
    rows = _row(S)
    tmp = [sp.Symbol(f"_V{i}") for i in range(nx)]
    V: List[sp.Symbol] = [sp.Symbol(f"v_{i}", real=True) for i in range(nx)]
    names: List[str] = [str(s) for s in S.states]
    gbar = [g.xreplace(psub).xreplace(dict(zip(tmp, V)))
            for g in _discrete_gradients(S, scheme, X, tmp, XS)]
    # effort-out ports whose row involves only states, inputs and other
    # explicit ports are eliminated: w_j = (J e)_j
    ublk = set(range(S.block("u").start, S.block("u").stop))
    explicit: List[int] = []
    changed = True
    while changed:
        changed = False
        for j, dp in enumerate(S.dissipative):
            if j in explicit or not dp.effort_out:
                continue
            cols = rows.get(nx + j, {})
            if all(c < nx or c in ublk or (nx <= c < nx + nw and (c - nx) in explicit) for c in cols):
                explicit.append(j)
                changed = True
    wsym: Dict[int, sp.Expr] = {}
    for j, dp in enumerate(S.dissipative):
        if j not in explicit:
            s = sp.Symbol(f"v_{len(V)}", real=True)
            V.append(s)
            names.append(str(dp.w))
            wsym[j] = s
    lam0 = len(V)
    for i in range(nl):
        V.append(sp.Symbol(f"v_{len(V)}", real=True))
        names.append(S.variables[S.block("lambda").start + i].name)
    e: List[sp.Expr] = [sp.Integer(0)] * S.size
    for i in range(nx):
        e[i] = gbar[i]
    for i in range(nl):
        e[nx + nw + i] = V[lam0 + i]
    for i in range(nu):
        e[nx + nw + nl + i] = UB[i]
    eq = StepEquations(X, XS, UB, V, hs, names, [], e, explicit, wsym, S, psub, rows)
    for j, s in list(wsym.items()):
        e[nx + j] = eq.z_of(j, s) if S.dissipative[j].effort_out else s
    pending = list(explicit)
    while pending:
        progressed = False
        for j in list(pending):
            cols = rows.get(nx + j, {})
            if all(not (nx <= c < nx + nw) or (c - nx) not in pending for c in cols):
                w = sp.Add(*[val.xreplace(psub) * e[c] for c, val in cols.items()])
                wsym[j] = w
                e[nx + j] = eq.z_of(j, w)
                pending.remove(j)
                progressed = True
        if not progressed:   # J is skew (J_jj = 0), so a cycle means a bug upstream
            raise SimulationError("internal error: cyclic explicit dissipative ports")
    F: List[sp.Expr] = [V[i] - hs * eq.Je(i) for i in range(nx)]
    for j, dp in enumerate(S.dissipative):
        if j in explicit:
            continue
        F.append((wsym[j] if dp.effort_out else eq.z_of(j, wsym[j])) - eq.Je(nx + j))
    for i in range(nl):
        F.append(-eq.Je(nx + nw + i))
    eq.F = F
    return eq


def _generate(S: Structure, parameters: Sequence[sp.Symbol], scheme: str) -> GeneratedStep:
    nx, nw, nl, nu = S.n_x, S.n_w, S.n_lambda, S.n_u
    P = [sp.Symbol(f"p_{i}", real=True) for i in range(len(parameters))]
    psub = dict(zip(parameters, P))
    eq = step_equations(S, scheme, psub)
    X, V, names, F, e = eq.X, eq.V, eq.names, eq.F, eq.e
    order, wsym, z_of, Je = eq.explicit, eq.wsym, eq.z_of, eq.Je
    n_e = S.size
    nv = len(V)
    jac = []
    for r in range(nv):
        for c in range(nv):
            dv = sp.diff(F[r], V[c])
            if dv != 0:
                jac.append((f"Jm[{r}, {c}]", dv))
    ys = [-Je(nx + nw + nl + i) for i in range(nu)]
    pdiss = sp.Add(*[wsym[j] * z_of(j, wsym[j]) for j in range(nw)])
    Hexpr = S.hamiltonian.xreplace(psub).xreplace(dict(zip(S.states, X)))

    def block(targets, what) -> List[str]:
        # CSE'd assignments, preceded by loads of the array entries they use
        code: List[str] = []
        _assign(code, targets)
        used = set(re.findall(r"\b(x|xs|v|ub|p)_(\d+)\b", "\n".join(code)))
        loads = [f"    {a}_{i} = {a}[{i}]" for a in what for i in range(len(P) if a == "p" else
                                                                        {"x": nx, "xs": nx, "v": nv, "ub": nu}[a])
                 if (a, str(i)) in used]
        return loads + code

    L: List[str] = [
        f'"""Generated by phsym for scheme {scheme}: {nx} states, {nv} Newton unknowns. Do not edit."""',
        "import math", "from numba import njit"]
    if nv > 1:   # a single unknown is a division: do not compile the LU kernels
        L += ["from phsym.codegen.kernels import lu_factor, lu_solve"]
    L += ["", 'KIND = "newton"', f"UNKNOWNS = {names!r}", "", _CALLEE, "def resjac(x, v, ub, p, xs, h, F, Jm):"]
    # constant bounds: with Jm.shape (a run-time value, the caller owns Jm)
    # the loop costs the clipper 25 % of its speed
    L += [f"    for i in range({nv}):", f"        for j in range({nv}):",
          "            Jm[i, j] = 0.0"]
    L += block([(f"F[{i}]", f) for i, f in enumerate(F)] + jac, ("x", "xs", "v", "ub", "p"))
    # energy and the post-step quantities are written into run itself: each
    # separately compiled function costs a fixed 0.1-0.15 s of cold start
    energy = block([("hh", Hexpr)], ("x", "p"))
    post = block([(f"e[{i}]", ex) for i, ex in enumerate(e)] + [(f"y[{i}]", ex) for i, ex in enumerate(ys)]
                 + [("pd", pdiss)], ("x", "xs", "v", "ub", "p"))
    ubar = "0.5 * (U[k, i] + U[k + 1, i])" if scheme != "backward_euler" else "U[k + 1, i]"
    run = _RUN_TEMPLATE.replace("@SOLVE@", _SOLVE_SCALAR if nv == 1 else _SOLVE_LU)
    run = _inline(_inline(run, "ENERGY", energy, "hh"), "POST", post, "pd")
    run = _unroll(run.replace("@NV@", str(nv)).replace("@NX@", str(nx)).replace("@NE@", str(n_e))
                  .replace("@NU@", str(nu)).replace("@UBAR@", ubar))
    body = "\n".join(L) + run
    key = cache_key(body, scheme)
    mod = load_module(body, key)
    return GeneratedStep(mod, key, list(parameters), names, nx, nv, n_e, nu,
                         [S.dissipative[j].element for j in order], scheme, body)
