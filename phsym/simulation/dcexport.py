"""The DC problem of a deck as numbers and sympy expressions, for the C export's ``NAME_reset``.

:func:`dc_spec` gathers what :class:`phsym.simulation.dcsolve.DCProblem`
evaluates (the interconnection matrix, the gradients and their Hessian
entries, the dissipative laws and their derivatives, the junction limiting
terms, the conserved combinations) for the parameter values of the export,
keeping the control parameters as symbols: the C library solves the DC
point again for the values ``NAME_set_param`` gave
(:mod:`phsym.codegen.c.dc`).  The state scales, the junction terms and the
invariants are those of the export's values.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence

import numpy as np
import sympy as sp

from ..codegen.c.dc import DCSpec
from ..common.piecewise import ite_free
from ..errors import ExportError
from ..structure.forms import _fill
from .dcsolve import DCProblem
from .initial import initial_from_ic, state_scales

__all__ = ["dc_spec"]


def dc_spec(sim, u0: np.ndarray, controls: Sequence[str], unknowns: Sequence[str],
            start: Optional[Mapping[str, float]], x_dc: np.ndarray) -> DCSpec:
    """The DC problem of a simulator's model for the C library.

    Parameters
    ----------
    sim : Simulator
        The exported simulator (symbolic structure, generated loop).
    u0 : ndarray
        Inputs of the export's DC point.
    controls : sequence of str
        Control parameter names, in the library's order.
    unknowns : sequence of str
        The generated loop's Newton unknowns (``NAME_v`` order).
    start, x_dc : the export's DC point: port variables and multipliers by name, states.
    """
    model = sim.model
    S = model.structure
    values = model.parameter_values(None)
    x_ic, _ = initial_from_ic(S, values)
    deck = getattr(model.netlist, "deck", None)
    held_names = set(deck.held) if deck is not None else set()
    index = {s: i for i, s in enumerate(S.states)}
    held = {index[s] for st in S.storages if held_names & set(st.elements) for s in st.states}
    free = np.array([i for i in range(S.n_x) if i not in held], dtype=int)
    sc = state_scales(S, values)
    x_fix = np.asarray(x_ic, dtype=float).copy()
    ctl = {sym: j for sym in values for j, c in enumerate(controls) if sym.name == c}
    if any(s in ctl for v in S.J.values() for s in sp.sympify(v).free_symbols):
        raise ExportError("C export: a control parameter enters the interconnection matrix; the C DC solve "
                          "needs it constant")
    P = DCProblem(S, values, np.asarray(u0, float), x_fix, free, sc)
    subs = {k: v for k, v in values.items() if k not in ctl}
    X, W = list(S.states), [d.w for d in S.dissipative]
    names: Dict[sp.Symbol, sp.Symbol] = {s: sp.Symbol(f"x_{i}") for i, s in enumerate(X)}
    names.update({w: sp.Symbol(f"w_{k}") for k, w in enumerate(W)})
    names.update({s: sp.Symbol(f"c_{j}") for s, j in ctl.items()})

    def c(e):
        e = ite_free(_fill(e, subs)).xreplace(names)
        left = {s for s in e.free_symbols if s not in set(names.values())}
        if left:
            raise ExportError(f"C export: the DC equations use {sorted(map(str, left))} without a value")
        return e
    grads = [_fill(g, subs) for g in S.gradients]
    laws = [_fill(d.z, subs) for d in S.dissipative]
    nf, nw = free.size, S.n_w
    zmap = {v.name: nf + j for j, v in enumerate(S.variables[S.n_x:S.n_x + S.n_w + S.n_lambda])}
    z0 = np.zeros(nf + nw + S.n_lambda)
    z0[:nf] = np.asarray(x_dc, float)[free] / sc[free]
    for name, k in zmap.items():
        z0[k] = float((start or {}).get(name, 0.0))
    q = P.inv.shape[1]
    return DCSpec(
        nx=S.n_x, nw=nw, nl=S.n_lambda, nu=len(u0), free=free.tolist(), x_fix=x_fix.tolist(), sc=sc.tolist(),
        Jn=P.Jn.tolist(), grads=[c(g) for g in grads],
        hess_at=[tuple(p) for p in P.hess_at], hess=[c(sp.diff(grads[i], X[j])) for i, j in P.hess_at],
        laws=[c(e) for e in laws], dpairs=[tuple(map(int, p)) for p in P.dpairs],
        dlaw=[c(sp.diff(laws[j], W[k])) for j, k in P.dpairs], xpairs=[tuple(map(int, p)) for p in P.xpairs],
        dlaw_x=[c(sp.diff(laws[j], X[i])) for j, i in P.xpairs],
        effort_out=P.effort_out.tolist(), null=P.null.tolist(), nonlinear=P.nonlinear.tolist(),
        rows=(P.rows.T.tolist() if q else []), inv=(P.inv.T.tolist() if q else []),
        inv_x=(P.inv_x.T.tolist() if q else []),
        jport=P.jport.tolist(), jc=P.jc.tolist(), jarg0=P.jarg0.tolist(), jvt=P.jvt.tolist(), jvc=P.jvc.tolist(),
        vmap=[zmap.get(n, -1) for n in unknowns] if start is not None else [-1] * len(unknowns),
        z0=z0.tolist(), n_ctl=len(controls), u0=[float(v) for v in u0],
        c0=[float(values[s]) for s in sorted(ctl, key=ctl.get)])
