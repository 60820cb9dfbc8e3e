"""Structure checks and LaTeX output of a model."""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import mpmath
import numpy as np
import sympy as sp

from ..common.piecewise import ite_free
from .dirac import Structure
from .forms import ExplicitForm, _fill

__all__ = ["check_structure", "branch_powers", "latex_model", "received_power_ok"]


def _lin(expr_map, e, f):
    return sum((coef * (e[i] if kind == "e" else f[i]) for (kind, i), coef in expr_map.items()),
               sp.Integer(0))


def branch_powers(S: Structure, e, f) -> Dict[str, sp.Expr]:
    """Received power ``v * i`` of every branch given effort/flow vectors.

    Parameters
    ----------
    S : Structure
        The structure.
    e, f : sequence of sympy.Expr
        Effort and flow vectors.
    """
    out = {}
    for k, b in enumerate(S.branches):
        across, through = S.branch_map(k)
        out[b.name] = _lin(across, e, f) * _lin(through, e, f)
    return out


def check_structure(S: Structure, values: Mapping[sp.Symbol, float],
                    ex: Optional[ExplicitForm] = None) -> Dict[str, bool]:
    """Run the structure checks.

    Parameters
    ----------
    S : Structure
        The structure.
    values : mapping of sympy.Symbol to float
        Parameter values for the numeric checks.
    ex : ExplicitForm, optional
        Its explicit form, when one exists.

    Returns
    -------
    dict of str to bool
        * ``J skew``: ``J + J^T = 0`` symbolically.
        * ``dissipation passive``: ``w z(w) >= 0`` for every dissipative port
          at the default parameters (sampled).
        * ``R PSD``: the dissipation of the explicit form (or the descriptor
          form when no explicit form exists) is PSD at the defaults.
        * ``Q^T E PSD``: the (constant) Hessian of every quadratic storage
          component is PSD at the defaults (nonlinear storage is not checked).
        * ``Tellegen``: the received powers of all branches sum to zero
          symbolically (checks Kirchhoff's laws and the two-port relations).
        * ``power balance``: ``dH/dt = -P_diss + y^T u`` symbolically, with
          ``dH/dt = grad H . dx/dt``, ``P_diss`` summed over the dissipative
          branches and ``y`` from the port rows.
    """
    vals = dict(values)
    out: Dict[str, bool] = {}
    out["J skew"] = all(sp.simplify(v + S.J.get((c, r), 0)) == 0 for (r, c), v in S.J.items())
    out["dissipation passive"] = all(received_power_ok(S, g, vals) for g in S.port_groups())
    if ex is not None:
        Rn = np.array(ex.R.applyfunc(lambda v: _fill(v, vals)).evalf(), dtype=float) if ex.R.shape[0] else np.zeros((0, 0))
        out["R PSD"] = bool(np.min(np.linalg.eigvalsh(Rn), initial=0.0) >= -1e-9 * max(1.0, np.abs(Rn).max(initial=0)))
    else:
        out["R PSD"] = all(float(sp.diff(d.z, d.w).subs(vals).subs(d.w, 0)) >= 0 for d in S.dissipative if d.linear)
    # Q^T E >= 0 is a statement about linear storage: check quadratic components
    quad = [st for st in S.storages if st.is_quadratic]
    ok = True
    for st in quad:
        Hs = sp.hessian(st.hamiltonian, st.states).applyfunc(lambda v: _fill(v, vals))
        Hn = np.array(Hs.evalf(), dtype=float)
        ok &= bool(np.min(np.linalg.eigvalsh(0.5 * (Hn + Hn.T))) >= -1e-9 * max(1.0, np.abs(Hn).max()))
    out["Q^T E PSD"] = ok
    # Symbolic Tellegen and power balance.  They are statements about the
    # interconnection, so every independent effort is a placeholder symbol
    # (the laws are checked above); sums are then rational functions of the
    # parameters that cancel() decides exactly.
    exact = _balances_exact(S, ex)
    if exact is not None and all(exact):
        out["Tellegen"], out["power balance"] = exact
        return out
    E = [sp.Symbol(f"_e{i}") for i in range(S.size)]
    e = list(E)
    if ex is not None:
        ek = sp.Matrix([E[i] for i in ex.kept])
        for a, i in enumerate(ex.eliminated_index):
            e[i] = (ex.coefficients[a, :] * ek)[0, 0] if ex.kept else sp.Integer(0)
    em = sp.Matrix(e)
    f = [sp.Integer(0)] * S.size
    for (r, c), v in S.J.items():
        f[r] += v * em[c]
    powers = branch_powers(S, e, f)
    # On a DAE the algebraic rows f_lambda vanish only on solutions.  Branch
    # variables carried by lambda (constrained storage, two-port ports) see
    # their relation instead of Kirchhoff's law: Tellegen holds up to
    # lambda . f_lambda over those; the power balance needs every lambda row
    # (two-port multipliers included).
    lam = range(S.block("lambda").start, S.block("lambda").stop)
    mult = {mu for _, _, mu, _ in S.twoport_vars if mu is not None}
    branch_lam = sum((em[i] * f[i] for i in lam if i not in mult), sp.Integer(0))
    lam_terms = sum((em[i] * f[i] for i in lam), sp.Integer(0))
    out["Tellegen"] = _is_zero(sum(powers.values()) + branch_lam, E, vals)
    dH = sum((em[i] * f[i] for i in range(S.n_x)), sp.Integer(0))       # grad H . dx/dt
    pd = sum((powers[S.branches[d.branch].name] for d in S.dissipative), sp.Integer(0))
    u0 = S.block("u").start
    yu = sum((-f[u0 + k] * em[u0 + k] for k in range(S.n_u)), sp.Integer(0))
    out["power balance"] = _is_zero(dH + pd - yu + lam_terms, E, vals)
    return out


def _balances_exact(S: Structure, ex: Optional[ExplicitForm]) -> Optional[Tuple[bool, bool]]:
    """Tellegen and the power balance in exact arithmetic, when that proves them.

    Every effort and flow is a linear form in the independent efforts, every
    power a quadratic form; the sums vanish when the coefficient of each
    product of efforts does.  The coefficients are computed in the field of
    rational functions of the parameters (sympy's polys domain, floats read as
    the exact rationals they are), far faster than expanding the products as
    expressions (8 s on a 20-state op-amp stage).  Returns ``None`` when the
    coefficients do not fit such a field; a nonzero coefficient here is not
    final (a relation between generators such as ``sqrt(a)**2 = a`` is not
    known to the field), so the caller then decides with expressions.
    """
    from sympy.polys.constructor import construct_domain
    lam = range(S.block("lambda").start, S.block("lambda").stop)
    maps = [S.branch_map(k) for k in range(len(S.branches))]
    exprs = list(S.J.values())
    exprs += [c for m in maps for half in m for c in half.values()]
    if ex is not None:
        exprs += [c for c in ex.coefficients if c != 0]
    exprs = [sp.sympify(c) for c in exprs]
    floats = {a for c in exprs for a in c.atoms(sp.Float)}
    if floats:
        exact = {a: sp.Rational(a) for a in floats}
        exprs = [c.xreplace(exact) for c in exprs]
    try:
        K, elems = construct_domain(exprs, field=True)
    except Exception:   # an expression the polys domains do not take
        return None
    if not K.is_Exact:
        return None
    it = iter(elems)
    J = {key: next(it) for key in S.J}
    maps = [tuple({key: next(it) for key in half} for half in m) for m in maps]

    def add(out, form, scale):
        for k, c in form.items():
            out[k] = out.get(k, K.zero) + scale * c

    e = [{i: K.one} for i in range(S.size)]
    if ex is not None:
        for a, i in enumerate(ex.eliminated_index):
            e[i] = {k: next(it) for b, k in enumerate(ex.kept) if ex.coefficients[a, b] != 0}
    f: List[Dict[int, object]] = [{} for _ in range(S.size)]
    for (r, c), v in J.items():
        add(f[r], e[c], v)

    def combine(m):
        out: Dict[int, object] = {}
        for (kind, i), coef in m.items():
            add(out, e[i] if kind == "e" else f[i], coef)
        return out

    def product(out, a, b):
        for i, ca in a.items():
            for j, cb in b.items():
                key = (min(i, j), max(i, j))
                out[key] = out.get(key, K.zero) + ca * cb

    powers = [(combine(a), combine(t)) for a, t in maps]
    mult = {mu for _, _, mu, _ in S.twoport_vars if mu is not None}
    tellegen: Dict[Tuple[int, int], object] = {}
    for a, b in powers:
        product(tellegen, a, b)
    for i in lam:
        if i not in mult:
            product(tellegen, e[i], f[i])
    balance: Dict[Tuple[int, int], object] = {}
    u0 = S.block("u").start
    # grad H . dx/dt + lambda . f_lambda + P_diss - y^T u, with y_k u_k = -e_u f_u
    for i in [*range(S.n_x), *lam, *range(u0, u0 + S.n_u)]:
        product(balance, e[i], f[i])
    for d in S.dissipative:
        product(balance, *powers[d.branch])
    return (all(not v for v in tellegen.values()), all(not v for v in balance.values()))


def received_power_ok(S: Structure, ports: Tuple[int, ...], values: Mapping[sp.Symbol, float]) -> bool:
    """Whether the passive ports ``ports`` of one device receive ``sum_j w_j z_j(w) >= 0``
    on a sampled grid (both signs, 1e-6 to 1e2 for one port; a coarser
    product grid, 1e-3 to 1e1, for a multiport).

    Parameters
    ----------
    S : Structure
        The structure.
    ports : tuple of int
        One device's dissipative ports (:meth:`Structure.port_groups`).
    values : mapping of sympy.Symbol to float
        Parameter values.
    """
    W = [S.dissipative[j].w for j in ports]
    power = sp.Add(*[S.dissipative[j].w * S.dissipative[j].z for j in ports
                     if not S.dissipative[j].active]).subs(dict(values))
    if len(W) == 1:
        grid = [np.concatenate([-np.logspace(-6, 2, 60), np.logspace(-6, 2, 60)])]
    else:
        axis = np.concatenate([-np.logspace(-3, 1, 13), [0.0], np.logspace(-3, 1, 13)])
        grid = [g.ravel() for g in np.meshgrid(*([axis] * len(W)), indexing="ij")]
    # state-dependent laws: passive at every state, sampled at a few values of each
    read = sorted({S.states[i] for j in ports for i in S.dissipative[j].reads}, key=str)
    samples = [0.0, 1e-6, 1e-3, 1.0, -1e-3, -1.0]
    ok = True
    for vals in (np.array(np.meshgrid(*([samples] * len(read)))).reshape(len(read), -1).T if read else [()]):
        f = sp.lambdify(W, ite_free(power.xreplace(dict(zip(read, vals)))), "numpy")
        with np.errstate(all="ignore"):
            p = np.asarray(f(*grid), dtype=float) * np.ones_like(grid[0])
        p = p[np.isfinite(p)]
        ok &= bool(np.all(p >= -1e-12 * max(1.0, np.abs(p).max(initial=0.0))))
    return ok


def _is_zero(expr: sp.Expr, placeholders: Sequence[sp.Symbol] = (),
             values: Optional[Mapping[sp.Symbol, float]] = None) -> bool:
    """Zero test of a polynomial in placeholders with coefficients in the parameters.

    Each coefficient is cancelled on its own: cancelling the whole sum at
    once makes every placeholder a generator of one multivariate
    polynomial, whose depth overflowed Python's recursion limit on a beam,
    contact and gap model (minutes, then a RecursionError).  Coefficients
    that carry floating-point numbers (a beam's modal shapes, the roots of
    ``cos b cosh b = -1``) cancel only to round-off: they count as zero
    when their terms cancel to ``1e-10`` of their size at the parameter
    values and at two points around them.
    """
    expr = sp.expand(expr)
    groups: Dict[sp.Expr, List[sp.Expr]] = {}
    for term in sp.Add.make_args(expr):
        coeff, mono = term.as_independent(*placeholders, as_Add=False) if placeholders else (term, 1)
        groups.setdefault(mono, []).append(coeff)
    for coeffs in groups.values():
        if sp.cancel(sp.together(sp.Add(*coeffs))) == 0:
            continue
        if values is None or not any(c.has(sp.Float) for c in coeffs) or not _zero_to_round_off(coeffs, values):
            return False
    return True


def _zero_to_round_off(terms: Sequence[sp.Expr], values: Mapping[sp.Symbol, float]) -> bool:
    """Whether the terms sum to round-off of their size at ``values`` and two points around them."""
    free = sorted(set().union(*(t.free_symbols for t in terms)), key=str)
    if any(s not in values for s in free):
        return False
    rng = np.random.default_rng(0)
    f = sp.lambdify(free, list(terms), "mpmath")
    with mpmath.workdps(40):
        for scale in (np.ones(len(free)), rng.uniform(0.7, 1.4, len(free)), rng.uniform(0.7, 1.4, len(free))):
            vals = [mpmath.mpf(float(values[s]) * k) for s, k in zip(free, scale)]
            t = [mpmath.mpf(complex(v).real) if isinstance(v, (complex, mpmath.mpc)) else v for v in f(*vals)]
            if abs(mpmath.fsum(t)) > 1e-10 * mpmath.fsum(abs(v) for v in t):
                return False
    return True


def latex_model(S: Structure) -> str:
    """LaTeX description: H and the Dirac form.

    Parameters
    ----------
    S : Structure
        The structure.
    """
    lhs = []
    for v in S.variables:
        if v.block == "x":
            lhs.append(sp.Symbol(r"\dot{" + sp.latex(sp.Symbol(v.name)) + "}"))
        elif v.block == "w":
            lhs.append(v.flow)
        elif v.block == "lambda":
            lhs.append(sp.Integer(0))
        else:
            lhs.append(sp.Symbol(f"-y_{{{v.name}}}"))
    rhs = sp.Matrix([v.effort for v in S.variables])
    J = S.J_matrix()
    lines = [r"H = " + sp.latex(S.hamiltonian), "",
             sp.latex(sp.Matrix(lhs)) + " = " + sp.latex(J) + " " + sp.latex(rhs)]
    return "\n".join(lines)
