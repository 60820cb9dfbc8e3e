"""Discrete gradients of one storage: the per-storage formulas of every scheme.

:func:`storage_gradients` is the gradient a step uses for one storage
(divided differences without cancellation, Gonzalez for coupled states, the
midpoint, the step's end), :func:`effort_step` the same step written in the
effort of a law solved through its effort.  The generated loop's step
equations (:mod:`phsym.codegen.steps`) and the numeric engine's law kernels
(:mod:`phsym.codegen.laws`) are both built from them, so the two engines
step every storage by the same formulas.
"""
from __future__ import annotations

from typing import Dict, List

import sympy as sp
from sympy.codegen.cfunctions import expm1

__all__ = ["storage_gradients", "effort_step", "DD_THRESHOLD"]

#: Relative step below which divided differences switch to their Taylor form
#: (about cbrt(machine epsilon)).
DD_THRESHOLD = 6.0e-6


def _exp_difference(H: sp.Expr, x: sp.Symbol, X: sp.Symbol, V: sp.Symbol):
    """``H(X+V) - H(X)`` with every term ``c exp(b x + a)`` written ``c exp(b X + a) expm1(b V)``, or None.

    Subtracting the two exponentials loses ``log10(|c exp| / |difference|)``
    digits, with ``C T0 exp(s / C)`` of a heat capacity about 3000 J against
    increments of microjoules near equilibrium: Newton then cannot reach its
    tolerance (measured: up to 200 iterations per step).  ``expm1`` keeps the
    difference to rounding.  Other terms are subtracted as they are.
    """
    terms = sp.Add.make_args(sp.expand(H, power_exp=False, power_base=False, log=False))
    out, found = [], False
    for t in terms:
        coeff, factors = sp.S.One, []
        for f in sp.Mul.make_args(t):
            if f.has(x):
                factors.append(f)
            else:
                coeff *= f
        arg = factors[0].args[0] if len(factors) == 1 and isinstance(factors[0], sp.exp) else None
        if arg is not None and sp.diff(arg, x, 2) == 0:
            b = sp.diff(arg, x)
            out.append(coeff * sp.exp(arg.subs(x, X)) * expm1(b * V))
            found = True
        else:
            out.append(t.subs(x, X + V) - t.subs(x, X))
    return sp.Add(*out) if found else None


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
    diff = _exp_difference(H, x, X, V)
    return sp.Piecewise(((Hxd - Hx if diff is None else diff) / V, sp.Abs(V) > DD_THRESHOLD * (sp.Abs(X) + XS)),
                        (taylor, True))


def storage_gradients(st, scheme: str, X, V, XS, end: bool = False) -> List[sp.Expr]:
    """Discrete gradient of one storage's ``H`` for ``scheme``: its states at the step's start
    ``X``, increments ``V`` and scales ``XS`` (one entry per state); ``end``: a one-state storage
    takes the gradient at the step's end whatever the scheme (a stiff storage, see ``stiff``).

    Parameters
    ----------
    st : Storage
        The storage (``hamiltonian``, ``states``, ``is_quadratic``).
    scheme : str
        Canonical scheme name.
    X, V, XS : sequence of sympy.Expr
        Per state of the storage.
    end : bool
        Gradient at the step's end (one-state storages).
    """
    H, states = st.hamiltonian, list(st.states)
    if scheme == "backward_euler" or (end and len(states) == 1):
        sub = {s: X[i] + V[i] for i, s in enumerate(states)}
        return [sp.diff(H, s).xreplace(sub) for s in states]
    sub_mid = {s: X[i] + V[i] / 2 for i, s in enumerate(states)}
    if scheme == "midpoint":
        return [sp.diff(H, s).xreplace(sub_mid) for s in states]
    if len(states) == 1:
        return [_divided_difference(H, states[0], X[0], V[0], XS[0])]
    grads = [sp.diff(H, s).xreplace(sub_mid) for s in states]
    if st.is_quadratic:
        return grads
    # Gonzalez discrete gradient in the metric of the states' own scales
    # s_i = |x_i| + xs_i, so that states of very different units (a flux
    # in uWb next to a displacement in mm) all keep it exact:
    # sum_i out_i V_i = dH for any increment above the threshold
    sc = [(sp.Abs(X[i]) + XS[i]) ** 2 for i in range(len(states))]
    d2 = sum(V[i] ** 2 / sc[i] for i in range(len(states)))
    dH = H.xreplace({s: X[i] + V[i] for i, s in enumerate(states)}) - H.xreplace(dict(zip(states, X)))
    corr = (dH - sum(g * V[i] for i, g in enumerate(grads))) / d2
    return [sp.Piecewise((g + corr * V[i] / sc[i], d2 > DD_THRESHOLD ** 2), (g, True)) for i, g in enumerate(grads)]


def effort_step(st, X: sp.Symbol, V: sp.Symbol, XS: sp.Symbol, s0: sp.Expr, scheme: str,
                 psub: Dict[sp.Symbol, sp.Expr], end: bool = False):
    """``(gbar, dx)`` of a storage solved through its effort (:class:`~phsym.components.base.EffortLaw`):
    ``V`` is the effort's increment from ``s0`` (the effort at the step's start).

    The discrete gradient is the same divided difference of ``H`` in the
    state, written in the effort: ``(H(X + dx, s1) - H(X, s0)) / dx`` with
    ``dx = x(s1) - x(s0)`` and ``H(x, e)`` the energy through state and effort
    (stationary in ``e``: the same floats as the energies of the states the
    loop records, so the power balance holds to rounding); near ``dx = 0`` its
    Taylor form ``m + x''(m) V**2 / (12 x'(m))`` at ``m = s0 + V/2``.
    Backward Euler, and a stiff storage stepped to the end (``end``): ``s1``.
    """
    law = st.by_effort
    e, s1 = law.effort, s0 + V
    xe = law.state.xreplace(psub)
    dx = xe.xreplace({e: s1}) - xe.xreplace({e: s0})
    if scheme == "backward_euler" or end:
        return s1, dx
    He = law.energy.xreplace(psub)
    q = st.states[0]
    m = s0 + V / 2
    taylor = m + sp.diff(xe, e, 2).xreplace({e: m}) * V ** 2 / (12 * sp.diff(xe, e).xreplace({e: m}))
    dd = (He.xreplace({q: X + dx, e: s1}) - He.xreplace({q: X, e: s0})) / dx
    return sp.Piecewise((dd, sp.Abs(dx) > DD_THRESHOLD * (sp.Abs(X) + XS)), (taylor, True)), dx
