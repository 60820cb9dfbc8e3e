"""The one source of step equations: the residual of a structure-preserving step.

For a :class:`~phsym.structure.dirac.Structure` and a scheme (see
:mod:`phsym.common.schemes`), the step ``k -> k+1`` has the unknowns
``v = (dx, w_implicit, lambda)`` and the residual

    F_x = dx - h (J e)_x,   F_w = f_w - (J e)_w,   F_lambda = -(J e)_lambda

with the efforts ``e = (gbar(x, dx), e_w(w), lambda, ubar)``: ``gbar`` is the
discrete gradient (divided differences, Gonzalez for coupled storages), the
gradient at the midpoint, or at the end of the step (backward Euler).
Effort-out dissipative ports whose row of ``J`` involves only states,
inputs and other explicit ports are eliminated (``w_j = (J e)_j``), so e.g.
a diode clipper has only ``dx`` as Newton unknown.  The ports of a
multiport (a transistor's junctions, whose laws read each other's
variables) stay unknowns, unless every row of the multiport is one storage
solved through its effort (in the simulator's loops: a transistor's
junctions across their own junction charges, whose variables are those
charges' voltages): then they are eliminated together.

A storage that also gives its law through its effort
(:class:`~phsym.components.base.EffortLaw`: a junction charge ``Q(v)``
with transit time, whose inverse ``v(Q)`` needs an inner iteration) is
solved for the effort's increment in the simulator's loops (discrete
gradient and backward Euler, and the midpoint rule for stiff storages
stepped to the end): ``dx = x(s0 + V) - x(s0)`` and the divided
difference ``(H(X + dx, s1) - H(X, s0)) / dx`` are closed forms, and
the start voltage is a symbol ``se_i`` the loop carries from the end of
the step before (``v(Q)`` is inverted only where the carry does not belong
to the state: a run's start, a restored state).  It is the same step (the same
``x_{k+1}``, the same power balance); only Newton's coordinates differ.

The simulator's loop (:mod:`phsym.codegen.newton.module`) and the sensitivities of
the grey-box identification (:mod:`phsym.codegen.newton.sensitivity`) are both
generated from :func:`step_equations`, so a fitted model steps like a
simulated one (exactly, but for junction charges, which the sensitivities
solve through the charge, and the transistor ports across them, which stay
their unknowns: the same steps to Newton's tolerance).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import AbstractSet, Dict, List, Tuple

import sympy as sp

from ..common.schemes import get_scheme
from ..errors import SimulationError
from ..structure.dirac import Structure
from .gradients import DD_THRESHOLD, effort_step, storage_gradients

__all__ = ["StepEquations", "step_equations", "DD_THRESHOLD"]


def _discrete_gradients(S: Structure, scheme: str, X, V, XS, end: AbstractSet[int] = frozenset()) -> List[sp.Expr]:
    """Discrete gradient of H for ``scheme`` (states ``X``, increments ``V``, scales ``XS``); the
    states ``end`` (of one-state storages) take the gradient at the step's end."""
    out: List[sp.Expr] = [sp.Integer(0)] * S.n_x
    index = {s: i for i, s in enumerate(S.states)}
    for st in S.storages:
        idx = [index[s] for s in st.states]
        grads = storage_gradients(st, scheme, [X[i] for i in idx], [V[i] for i in idx], [XS[i] for i in idx],
                                  len(idx) == 1 and idx[0] in end)
        for i, g in zip(idx, grads):
            out[i] = g
    return out


def _numerical(S: Structure, end: AbstractSet[int], X: List[sp.Symbol], dx: List[sp.Expr], gbar: List[sp.Expr],
               start: Dict[int, Tuple[sp.Symbol, sp.Expr]], s1: Dict[int, sp.Expr],
               psub: Dict[sp.Symbol, sp.Expr]) -> Tuple[sp.Expr, sp.Expr]:
    """``sum_i gbar_i dx_i - (H_i(x + dx) - H_i(x))`` over the storages stepped to the end, and its
    first sum alone (the work of the end-point gradient)."""
    out, work = sp.Integer(0), sp.Integer(0)
    for st in S.storages:
        i = S.states.index(st.states[0])
        if i not in end:
            continue
        q = st.states[0]
        if i in start:      # through the effort: H(x, e) at both ends
            law = st.by_effort
            He = law.energy.xreplace(psub)
            dH = He.xreplace({q: X[i] + dx[i], law.effort: s1[i]}) - He.xreplace({q: X[i], law.effort: start[i][0]})
        else:
            H = st.hamiltonian.xreplace(psub)
            dH = H.xreplace({q: X[i] + dx[i]}) - H.xreplace({q: X[i]})
        out += gbar[i] * dx[i] - dH
        work += gbar[i] * dx[i]
    return out, work


def _pinned_multiports(S: Structure, rows: Dict[int, Dict[int, sp.Expr]], multi: AbstractSet[int],
                       efforts: AbstractSet[int]) -> List[int]:
    """Ports of the multiports whose every row of ``J`` is one storage solved through its effort
    (a transistor's junctions across its own junction charges: each port variable is a junction
    voltage Newton already solves for): their variables are those efforts, not Newton unknowns,
    as for one-port laws, and each keeps its own SPICE limit through that effort's unknown.
    Their laws read each other's variables, which are all known then."""
    nx, out, seen = S.n_x, [], set()
    for j in sorted(multi):
        if j in seen:
            continue
        group, todo = set(), [j]
        while todo:         # the ports the laws read, both ways
            k = todo.pop()
            if k not in group:
                group.add(k)
                todo += list(S.dissipative[k].coupled)
                todo += [m for m in multi if k in S.dissipative[m].coupled]
        seen |= group
        if all(S.dissipative[k].effort_out and not S.dissipative[k].nullator and not S.dissipative[k].active
               and len(rows.get(nx + k, {})) == 1 and set(rows.get(nx + k, {})) <= set(efforts) for k in group):
            out += sorted(group)
    return out


def _row(S: Structure) -> Dict[int, Dict[int, sp.Expr]]:
    rows: Dict[int, Dict[int, sp.Expr]] = {}
    for (r, c), val in S.J.items():
        rows.setdefault(r, {})[c] = val
    return rows


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
    #: each state at the step (midpoint, or end for backward Euler), for state-dependent laws
    xsub: Dict[sp.Symbol, sp.Expr] = field(default_factory=dict)
    #: each state's increment over the step (``V[i]``, or ``x(s0 + V[i]) - x(s0)`` through an effort)
    dx: List[sp.Expr] = field(default_factory=list)
    #: states whose unknown is their effort's increment (:class:`~phsym.components.base.EffortLaw`)
    by_effort: List[int] = field(default_factory=list)
    #: the effort at the step's end of each of those states (``s0 + V[i]``)
    s1: Dict[int, sp.Expr] = field(default_factory=dict)
    #: the effort at the step's start of each of those states: its symbol ``se_i`` (the loop carries
    #: it from step to step) and its value through the state (``v(q)``, an inversion: when the carry
    #: does not belong to the state)
    s0: Dict[int, Tuple[sp.Symbol, sp.Expr]] = field(default_factory=dict)
    #: each of those storages' energy in ``x_i`` -> the same energy through ``x_i`` and ``se_i``
    energy: Dict[sp.Expr, sp.Expr] = field(default_factory=dict)
    #: power the step's end-point gradient of stiff storages dissipates (``P_num``, see ``stiff``):
    #: ``sum (e_end dx - (H(x + dx) - H(x))) / h >= 0`` for convex ``H``; zero without them
    numerical: sp.Expr = sp.Integer(0)
    #: ``sum gbar_i dx_i`` over the storages stepped to the end (``numerical`` is this less their
    #: energy's change, over ``h``), and those storages' states
    work: sp.Expr = sp.Integer(0)
    stiff: List[int] = field(default_factory=list)
    #: those of ``by_effort`` whose gradient is at the step's end (backward Euler, stiff storages stepped
    #: to the end): no mode of theirs rings at the step rate, so their unknowns are predicted smoothly
    settled: List[int] = field(default_factory=list)

    def z_of(self, j: int, w: sp.Expr) -> sp.Expr:
        """Law of dissipative port ``j`` evaluated at ``w`` (the other
        variables of a multiport law at their step values)."""
        dp = self.S.dissipative[j]
        sub = {self.S.dissipative[k].w: self.wsym[k] for k in dp.coupled}
        sub.update({self.S.states[i]: self.xsub[self.S.states[i]] for i in dp.reads})
        sub[dp.w] = w
        return dp.z.xreplace(self.psub).xreplace(sub)

    def Je(self, r: int) -> sp.Expr:
        """Row ``r`` of ``J e``."""
        return sp.Add(*[val.xreplace(self.psub) * self.e[c] for c, val in self.rows.get(r, {}).items()])


def step_equations(S: Structure, scheme: str, psub: Dict[sp.Symbol, sp.Expr], by_effort: bool = False,
                   stiff: str = "scheme") -> StepEquations:
    """Residual, unknowns and efforts of one step of ``scheme``.

    Parameters
    ----------
    S : Structure
        The structure.
    scheme : str
        ``discrete_gradient``, ``midpoint`` or ``backward_euler``.
    psub : dict
        Substitution for the parameter symbols (e.g. ``p_i`` array entries).
    by_effort : bool
        Solve for the effort's increment of the storages that give their law
        through it (``Storage.by_effort``; discrete gradient and backward
        Euler, and any scheme for stiff storages stepped to the end, whose
        gradients need no inversion then): the simulator's
        loops.  The state increments stay the unknowns otherwise (the
        sensitivities differentiate those).
    stiff : str
        ``"backward_euler"``: the stiff storages (``Storage.stiff``: junction
        charges) take the gradient at the step's end whatever the scheme
        (L-stable: their picosecond modes do not ring), and their numerical
        dissipation is :attr:`StepEquations.numerical`; ``"scheme"``
        (default): the scheme's gradient.  Callers resolve ``"auto"`` by the
        step (:func:`phsym.common.schemes.stiff_rule`).

    Returns
    -------
    StepEquations
    """
    scheme = get_scheme(scheme, ("discrete_gradient", "midpoint", "backward_euler")).name
    if stiff not in ("backward_euler", "scheme"):      # "auto" is resolved by the step (stiff_rule)
        raise SimulationError(f"stiff must be backward_euler or scheme here (got {stiff!r})")
    nx, nw, nl, nu = S.n_x, S.n_w, S.n_lambda, S.n_u
    index = {s: i for i, s in enumerate(S.states)}
    # stiff one-state storages stepped to the end (nothing to change for backward Euler)
    end = set() if stiff == "scheme" or scheme == "backward_euler" else \
        {index[st.states[0]] for st in S.storages if st.stiff and len(st.states) == 1}
    X = [sp.Symbol(f"x_{i}", real=True) for i in range(nx)]
    XS = [sp.Symbol(f"xs_{i}", positive=True) for i in range(nx)]
    UB = [sp.Symbol(f"ub_{i}", real=True) for i in range(nu)]
    hs = sp.Symbol("h", positive=True)
    rows = _row(S)
    tmp = [sp.Symbol(f"_V{i}") for i in range(nx)]
    V: List[sp.Symbol] = [sp.Symbol(f"v_{i}", real=True) for i in range(nx)]
    names: List[str] = [str(s) for s in S.states]
    gbar = [g.xreplace(psub).xreplace(dict(zip(tmp, V)))
            for g in _discrete_gradients(S, scheme, X, tmp, XS, end)]
    dx: List[sp.Expr] = list(V)
    efforts: List[int] = []
    s1: Dict[int, sp.Expr] = {}
    start: Dict[int, Tuple[sp.Symbol, sp.Expr]] = {}
    energy: Dict[sp.Expr, sp.Expr] = {}
    if by_effort:
        for st in S.storages:
            # the midpoint's gradient would still invert x(e)
            if st.by_effort is None or len(st.states) != 1 or (scheme == "midpoint" and
                                                               index[st.states[0]] not in end):
                continue
            i = index[st.states[0]]
            s0 = sp.Symbol(f"se_{i}", real=True)
            start[i] = (s0, S.gradients[i].xreplace(psub).xreplace({st.states[0]: X[i]}))
            law = st.by_effort
            energy[st.hamiltonian.xreplace(psub).xreplace({st.states[0]: X[i]})] = \
                law.energy.xreplace(psub).xreplace({st.states[0]: X[i], law.effort: s0})
            gbar[i], dx[i] = effort_step(st, X[i], V[i], XS[i], s0, scheme, psub, i in end)
            names[i] = str(law.effort)
            efforts.append(i)
            s1[i] = s0 + V[i]
    # effort-out ports whose row involves only states, inputs and other
    # explicit ports are eliminated: w_j = (J e)_j
    ublk = set(range(S.block("u").start, S.block("u").stop))
    # the ports of a multiport stay unknowns (their laws read each other), but for those pinned
    # to junction voltages (below)
    multi = {j for j, dp in enumerate(S.dissipative) if dp.coupled}
    multi |= {k for dp in S.dissipative for k in dp.coupled}
    explicit: List[int] = []
    changed = True
    while changed:
        changed = False
        for j, dp in enumerate(S.dissipative):
            if j in explicit or not dp.effort_out or j in multi:
                continue
            cols = rows.get(nx + j, {})
            if all(c < nx or c in ublk or (nx <= c < nx + nw and (c - nx) in explicit) for c in cols):
                explicit.append(j)
                changed = True
    if by_effort:
        explicit += _pinned_multiports(S, rows, multi, set(efforts))
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
    half = sp.Integer(1) if scheme == "backward_euler" else sp.Rational(1, 2)
    xsub = {s: X[i] + half * dx[i] for i, s in enumerate(S.states)}
    num, work = _numerical(S, end, X, dx, gbar, start, s1, psub)
    eq = StepEquations(X, XS, UB, V, hs, names, [], e, explicit, wsym, S, psub, rows, xsub, dx, efforts, s1,
                       start, energy, num / hs, work, sorted(end),
                       [i for i in efforts if scheme == "backward_euler" or i in end])
    for j, s in list(wsym.items()):
        dp = S.dissipative[j]
        e[nx + j] = sp.Integer(0) if dp.nullator else (eq.z_of(j, s) if dp.effort_out else s)
    pending = list(explicit)
    while pending:
        progressed = False
        for j in list(pending):
            cols = rows.get(nx + j, {})
            if j not in wsym and all(not (nx <= c < nx + nw) or (c - nx) not in pending for c in cols):
                wsym[j] = sp.Add(*[val.xreplace(psub) * e[c] for c, val in cols.items()])
                progressed = True
            # a multiport's law reads its other ports: once all of them are known
            if j in wsym and all(k in wsym for k in S.dissipative[j].coupled):
                e[nx + j] = eq.z_of(j, wsym[j])
                pending.remove(j)
                progressed = True
        if not progressed:   # J is skew (J_jj = 0), so a cycle means a bug upstream
            raise SimulationError("internal error: cyclic explicit dissipative ports")
    F: List[sp.Expr] = [dx[i] - hs * eq.Je(i) for i in range(nx)]
    for j, dp in enumerate(S.dissipative):
        if j in explicit:
            continue
        if dp.nullator:     # (J e)_j = 0; its unknown is the norator's (an ideal op-amp's output voltage)
            F.append(-eq.Je(nx + j))
        else:
            F.append((wsym[j] if dp.effort_out else eq.z_of(j, wsym[j])) - eq.Je(nx + j))
    for i in range(nl):
        F.append(-eq.Je(nx + nw + i))
    eq.F = F
    return eq
