"""The one Newton step loop: generated numba modules for any model and scheme.

:func:`module_source` writes a module with

* ``resjac(x, v, ub, p, xs, h, F, Jm[, kc, S])``: residual and Jacobian of the
  step (:func:`phsym.codegen.steps.step_equations`, after common-subexpression
  elimination; ``kc``: step constants, :mod:`phsym.codegen.newton.hoist`; ``S``: the junction variables out);
* ``run(...)``: the whole compiled time loop: predictor (extrapolation of
  the last two steps, :mod:`phsym.codegen.newton.predictor`), damped Newton with a
  contraction test, LU with partial pivoting (:mod:`phsym.codegen.kernels.generic`), then H(x), the effort
  vector, the port outputs and the dissipated power of every step;
* ``junc(...)`` when a law has exponential terms: their junction voltages,
  which the predictor and every Newton step limit as SPICE does
  (:mod:`phsym.codegen.newton.junctions`).  A step that still fails returns to
  the caller, which subdivides it (:mod:`phsym.simulation.engines.substeps`).

With sensitivities (:mod:`phsym.codegen.newton.sensitivity`) the same loop also
differentiates each converged step with respect to parameters and initial
states (extra functions ``sens`` and ``outs``, extra arguments of ``run``):
the grey-box fit sees the steps the simulator takes (junction charges: to
Newton's tolerance, since it solves them through the charge).

Parameters enter as the float64 array ``p``, so changing them never
regenerates or recompiles.  Every module starts with a header naming the
netlist, phsym's version, the scheme and a legend of ``p[i]``, ``v[i]`` and
``e[i]``.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import sympy as sp

from ...common.schemes import get_scheme
from ...structure.dirac import Structure
from ...version import __version__
from ..batch_driver import driver_source
from .. import interpret
from ..cache import cache_key, load_module
from ..printing import block, unroll
from ..steps import DD_THRESHOLD, StepEquations, step_equations
from .hoist import (carried_constants, carries, carry_lines, end_energy, hoisted_lines, law_check, next_constants,
                    start_lines, step_constants)
from .iteration import iteration_lines
from .junctions import junction_code, junction_exprs, junction_terms, known_variables, linear_slopes
from .predictor import predictor_lines, record_lines, slots
from .schur import IMPORT as SCHUR_IMPORT, globals_lines, prologue_lines, split

__all__ = ["GeneratedStep", "SensitivityCode", "generate", "module_source", "input_expression", "parameter_array"]

#: Functions only ``run`` calls: no CPython entry point (saves its compile).
CALLEE = '@njit(cache=True, error_model="numpy", no_cpython_wrapper=True)'
#: Functions Python calls too (sensitivity modules).
PUBLIC = '@njit(cache=True, error_model="numpy")'

#: The time loop releases the GIL: sweeps run parameter sets on threads (part of the cache key).
RUN_DECORATOR = '@njit(cache=True, error_model="numpy", nogil=True)'

#: Arguments of every generated ``run`` (the sensitivity variant appends more).
RUN_ARGS = ("x, v, U, p, xs, h, k0, k1, tol, maxit, flag, X, Y, Hh, Pd, Ps, Pc, Pn, IT, FL, E, rec_e, info, "
            "F, Jm, piv, d, vp, wt, ub, e, y, vold, ve")
SENS_ARGS = "Sx, Yo, DY, want, Fx, Fp, Sv, Gv, Gx, Gp, yo"


@dataclass
class GeneratedStep:
    """A generated step module and its layout.

    Attributes
    ----------
    module : module
        The imported module (``resjac``, ``run``; ``run_many`` for sweeps: :mod:`.batch_driver`).
    key : str
        Cache key.
    parameters : list of sympy.Symbol
        Order of the parameter array ``p``.
    unknowns : list of str
        Names of the Newton unknowns (``q_C1`` for the increment of that state, ``w_...``, ``lam_...``).
    n_x, n_v, n_e, n_u : int
        States, unknowns, effort-vector size, ports.
    explicit_w : list of str
        Dissipative ports eliminated explicitly.
    scheme : str
        Canonical scheme name.
    source : str
        The module's Python source.
    controls : list of str
        Parameters driven by signals (columns ``n_u + j`` of ``U``).
    numerical : bool
        Whether the loop books a numerical dissipation (``Pn``: stiff storages stepped to the end).
    stiff : str or None
        How the model's stiff storages step (``"backward_euler"`` or ``"scheme"``), ``None`` without any.
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
    controls: List[str] = field(default_factory=list)
    numerical: bool = False
    stiff: Optional[str] = None


@dataclass
class SensitivityCode:
    """What a sensitivity module adds to the Newton module (see :mod:`phsym.codegen.newton.sensitivity`).

    Attributes
    ----------
    functions : list of str
        Source lines of ``sens`` and ``outs``.
    n_y, n_f : int
        Number of outputs and of free parameters.
    legend : list of str
        Header lines describing outputs and free parameters.
    step : list of str
        Lines inside the time loop after a converged step (8 spaces).
    """

    functions: List[str]
    n_y: int
    n_f: int
    legend: List[str]
    step: List[str] = field(default_factory=list)


def input_expression(scheme: str, i: str = "i") -> str:
    """Source of the input of step ``k -> k+1`` for ``scheme`` (its ``inputs`` rule).

    Parameters
    ----------
    scheme : str
        Scheme name.
    i : str
        Index expression of the input.
    """
    rule = get_scheme(scheme).inputs
    return {"mid": f"0.5 * (U[k, {i}] + U[k + 1, {i}])", "end": f"U[k + 1, {i}]", "start": f"U[k, {i}]"}[rule]


def _legend(eq: StepEquations, parameters: Sequence[sp.Symbol]) -> List[str]:
    S = eq.S
    L = ["Parameters p[i]:"] + [f"    p[{i}] = {s}" for i, s in enumerate(parameters)]
    L += ["Newton unknowns v[i] (a state's name stands for its increment over the step, an effort's",
          "(v_D1.cj) for the increment of the effort through which that storage's law is solved):"]
    L += [f"    v[{i}] = {n}" for i, n in enumerate(eq.names)]
    L += ["Efforts e[i] (Dirac form [dx/dt; f_w; 0; -y] = J e):"]
    what = {"x": "dH/d{}", "w": "effort of dissipative port {}", "lambda": "{} (algebraic)", "u": "input {}"}
    L += [f"    e[{i}] = " + what[v.block].format(v.name) for i, v in enumerate(S.variables)]
    L += ["Outputs y[i]:"] + [f"    y[{i}] = y({u})" for i, u in enumerate(S.inputs)]
    return L


def _control_lines(cols: Sequence[Tuple[int, int]], value: str, indent: str) -> List[str]:
    """``p[c] = value`` for each control ``(c, column of U)``; ``value`` has ``{j}`` for the column.

    A control is held at its step value (the scheme's input rule) while
    Newton solves the step, so the step's own power balance is that of a
    fixed parameter; the energy jumps at the samples, where the value
    changes, are the control's power (``P_control``, in ``P_supplied``).
    """
    return [f"{indent}p[{c}] = {value.format(j=j)}" for c, j in cols]


def module_source(eq: StepEquations, parameters: Sequence[sp.Symbol], scheme: str, source: str,
                  sens: Optional[SensitivityCode] = None, controls: Sequence[int] = ()) -> str:
    """Python source of a step module (see the module docstring).

    Parameters
    ----------
    eq : StepEquations
        The step, in parameter symbols ``p_i`` (see :func:`generate`).
    parameters : sequence of sympy.Symbol
        The model's parameters in the order of ``p`` (for the legend).
    scheme : str
        Scheme name.
    source : str
        What the module was generated from (netlist file or model name).
    sens : SensitivityCode, optional
        Sensitivity functions and sizes; ``None`` for a simulation module.
    controls : sequence of int
        Indices in ``p`` of the parameters driven by signals: column
        ``n_u + j`` of ``U`` sets ``p[controls[j]]`` at every step (see
        :func:`_control_lines`).
    """
    S = eq.S
    nx, nu, ne, nv = S.n_x, S.n_u, S.size, len(eq.V)
    P, terms = len(parameters), (junction_terms(S, eq.by_effort) if nv else [])
    sizes = {"x": nx, "xs": nx, "v": nv, "ub": nu, "p": P}
    unknown = {("w", j): eq.V.index(w) for j, w in eq.wsym.items() if w in eq.V}
    unknown.update({("x", i): i for i in eq.by_effort})
    # a port whose variable is the effort of a storage solved through its effort (a junction's current
    # beside its charge) is limited with that effort's unknown, not by a common factor of the whole step
    unknown.update({("w", j): i for i in eq.by_effort for j, w in eq.wsym.items() if w in (eq.e[i], -eq.e[i])})
    jexprs = junction_exprs(terms, eq.wsym, eq.psub, eq.s1)
    slopes = None if sens else linear_slopes(jexprs, eq.V)     # the limiter's fast path
    jac_idx = [((r, c), dv) for r in range(nv) for c in range(nv) if (dv := sp.diff(eq.F[r], eq.V[c])) != 0]
    # constant Jacobian entries once per run, the direction through the constant columns (not sensitivities)
    cut = None if sens else split(jac_idx, nv, parameter_array(parameters)[0], eq.h, controls)
    # step constants (not for sensitivity modules: Python calls their resjac with the plain arguments)
    consts = {} if sens else step_constants(list(eq.F) + [dv for _, dv in jac_idx] + jexprs)
    carry = carries(eq, controls)
    slot = slots(eq, P)     # the predictor's records in ve
    for i, (se, inv) in eq.s0.items():     # the start efforts themselves (their symbols in the residual)
        consts[se] = sp.Symbol(f"kc_{len(consts)}", real=True)
    kc, sizes["kc"] = (", kc" if consts else ""), len(consts)
    # step constants of one junction's start voltage: computed at the step before's end, beside its efforts
    chosen = carried_constants(eq, consts, P) if carry and not sens else {}
    kc_once, kc_step, rc = hoisted_lines(consts, sizes, " " * 8, [f"p_{i}" for i in range(P) if i not in controls]
                                         + ["h"], kept=chosen) if consts else ([], [], {})
    # resjac also writes the junction variables into run's e (unused until convergence): the limiter reads them
    known = "" if sens else known_variables(terms, ne)
    once = {rc for rc, _ in cut.entries} if cut else set()
    jac = [(f"Jm[{r}, {c}]", dv.xreplace(consts)) for (r, c), dv in jac_idx if (r, c) not in once] + [  # and junctions
        (f"S[{m}]", s.xreplace(consts)) for m, s in enumerate(jexprs if known else [])]
    nw, nl = S.n_w, S.n_lambda
    ys = [-eq.Je(nx + nw + nl + i) for i in range(nu)]
    # controlled sources' ports inject power: P_supplied, not P_diss
    pdiss = sp.Add(*[eq.wsym[j] * eq.z_of(j, eq.wsym[j]) for j in range(nw) if not S.dissipative[j].active])
    pact = sp.Add(*[eq.wsym[j] * eq.z_of(j, eq.wsym[j]) for j in range(nw) if S.dissipative[j].active])
    Hexpr = S.hamiltonian.xreplace(eq.psub).xreplace(dict(zip(S.states, eq.X)))
    if carry:       # energies through the carried efforts: no inversion after a step
        Hexpr = Hexpr.xreplace(eq.energy)
    # a control in H: its change between samples is work done on the storages (P_control)
    c_in_H = bool({sp.Symbol(f"p_{c}", real=True) for c in controls} & Hexpr.free_symbols)
    what = "forward sensitivities of " if sens else ""
    doc = [f'"""Generated by phsym {__version__} (phsym.codegen.newton.module) from {source}: {what}the '
           f'{scheme} step, {nx} states, {nv} Newton unknowns, divided-difference threshold {DD_THRESHOLD:g}.',
           "Do not edit: phsym rewrites it from the netlist.", ""] + _legend(eq, parameters)
    if controls:
        doc += ["Controls (set from U[:, n_u + j] at every step):"] + \
               [f"    p[{c}] <- U[:, {nu + j}]" for j, c in enumerate(controls)]
    if sens:
        doc += sens.legend
    L = doc + ['"""', "import math", "from numba import njit"]
    if cut:
        L += ["import numpy as np", SCHUR_IMPORT, ""] + globals_lines(cut)
    elif nv > 1:   # a single unknown is a division: do not compile the LU kernels
        L += ["from phsym.codegen.kernels.generic import lu_factor, lu_solve"]
    L += ["", f'KIND = "{"sensitivity" if sens else "newton"}"', f"UNKNOWNS = {eq.names!r}", "",
          PUBLIC if sens else CALLEE, f"def resjac(x, v, ub, p, xs, h, F, Jm{kc}{', S' if known else ''}):"]
    if nv:
        # the caller owns Jm: clear its structural zeros (constant bounds: a
        # loop over Jm.shape cost the clipper 25 % of its speed)
        filled = {rc for rc, _ in jac_idx}
        zeros = [] if cut else [(r, c) for r in range(nv) for c in range(nv) if (r, c) not in filled]
        L += ([f"    Jm[{r}, {c}] = 0.0" for r, c in zeros] if len(zeros) <= 64 else
              [f"    for i in range({nv}):", f"        for j in range({nv}):", "            Jm[i, j] = 0.0"])
        L += block([(f"F[{i}]", f.xreplace(consts)) for i, f in enumerate(eq.F)] + jac, sizes)
    else:
        L += ["    return"]
    jconsts: List[str] = []
    if terms:
        jfunc, jconsts = junction_code(terms, eq.wsym, eq.psub, sizes, P, consts, eq.s1, slopes)
        L += [""] + jfunc
    if sens:
        L += [""] + sens.functions
    # energy and the post-step quantities are written into run itself: each
    # separately compiled function costs a fixed 0.1-0.15 s of cold start
    # with the efforts carried, the stiff storages' energies at a step's end are its P_num's and the
    # next step's start energies: computed once (hs), not four more times per step
    Hs = sp.Add(*[st.hamiltonian.xreplace(eq.psub).xreplace({st.states[0]: eq.X[S.states.index(st.states[0])]})
                  for st in S.storages if S.states.index(st.states[0]) in eq.stiff]).xreplace(eq.energy)
    shared = carry and not sens and eq.numerical != 0 and not c_in_H and Hs != 0 and \
        not (Hexpr - Hs).has(*Hs.atoms(sp.Function))
    energy = block([("hs", Hs), ("hh", sp.Symbol("hs") + Hexpr - Hs)] if shared else [("hh", Hexpr)],
                   {"x": nx, "p": P}, " " * 8)
    # in the loop, hs is the step's end energy from the efforts' block (end_energy), the rest after x moves
    moved = block([("hh", sp.Symbol("hs") + Hexpr - Hs)], {"x": nx, "p": P}, " " * 8) if shared else energy
    # a storage solved through its effort moves by x(s1) - x(s0), not by its unknown: vp holds the increments
    incr = [(f"vp[{i}]", dx) for i, dx in enumerate(eq.dx)] if eq.by_effort else []
    post = block([(t, ex.xreplace(consts).xreplace(rc)) for t, ex in  # before x moves: kc still holds
                  [(f"e[{i}]", ex) for i, ex in enumerate(eq.e)] + [(f"y[{i}]", ex) for i, ex in enumerate(ys)]
                  + [("pdis", pdiss), ("pact", pact)]
                  + ([("pw", eq.work), ("hs", end_energy(eq, Hs))] if shared else
                     [("pnum", sp.Integer(0) if sens else eq.numerical)])
                  + incr] + [(t, ex.xreplace(rc)) for t, ex in next_constants(eq, consts, chosen)], sizes, " " * 8)
    args = RUN_ARGS + (", " + SENS_ARGS if sens else "")
    a, b = " " * 4, " " * 8
    R = ["", "", RUN_DECORATOR, f"def run({args}):",
         f"{a}# work arrays come from the caller: np.zeros/np.ones inside the loop",
         f"{a}# would compile their numpy overloads, about 0.7 s of cold start"]
    cols = [(c, nu + j) for j, c in enumerate(controls)]
    start = start_lines(eq, carry, sizes, b)
    R += jconsts + (prologue_lines(cut, nv, sizes, a) if cut else []) + _control_lines(cols, "U[k0, {j}]", a) + kc_once
    R += (law_check(eq, a) if carry else []) + [ln[4:] for ln in start + energy] + (
        [f"{a}hs0 = hs"] if shared else []) + [f"{a}Hh[k0] = hh",
                                      f"{a}# v and vold (the predictor's history) persist across calls, so a run in",
                                      f"{a}# chunks (progress bars) steps exactly like one call",
                                      f"{a}for k in range(k0, k1):",
                                      f"{b}for i in range({nu}):",
                                      f"{b}    ub[i] = {input_expression(scheme)}"]
    R += _control_lines(cols, input_expression(scheme, "{j}"), b) + start
    if c_in_H:
        R += energy + [f"{b}ha = hh"]
    R += kc_step
    if nv:
        R += predictor_lines(eq, nv, terms, unknown, kc, slopes, slot, b)
    R += [f"{b}for i in range({nx}):", f"{b}    wt[i] = 1.0 / (abs(x[i]) + xs[i])",
          f"{b}it = 0", f"{b}status = 0", f"{b}qi = -1", f"{b}rprev = 1e300"]
    if nv:
        R += iteration_lines(nx, nv, terms, unknown, kc, known, cut, eq.by_effort, slopes)
    R += record_lines(eq, terms, slot, b) if nv else []
    R += [f"{b}IT[k] = it",
          f"{b}if status != 0:",
          f"{b}    FL[k] = status",
          f"{b}    if not flag:",
          f"{b}        info[0] = k",
          f"{b}        info[1] = status",
          f"{b}        info[2] = qi",
          f"{b}        return k",
          f"{b}    for i in range({nv}):",
          f"{b}        if not math.isfinite(v[i]):",
          f"{b}            v[i] = 0.0"]
    R += post
    # the numerical dissipation of stiff storages stepped to the end: dissipated, and given apart
    booked = [f"{b}Pd[k] = pdis + pnum", f"{b}Pn[k] = pnum"]
    R += ([] if shared else booked) + [f"{b}ps = 0.0", f"{b}for i in range({nu}):", f"{b}    Y[k, i] = y[i]",
          f"{b}    ps += y[i] * ub[i]", f"{b}Ps[k] = ps - pact", f"{b}if rec_e:", f"{b}    for i in range({ne}):",
          f"{b}        E[k, i] = e[i]"]
    if sens:
        R += sens.step
    R += [f"{b}for i in range({nx}):", f"{b}    x[i] += {'vp' if incr else 'v'}[i]", f"{b}    X[k + 1, i] = x[i]"]
    R += [f"{b}if info[3] < 2:", f"{b}    info[3] += 1"]
    R += (carry_lines(eq, b, chosen) if carry else []) + moved
    if shared:
        R += [f"{b}pnum = (pw - (hs - hs0)) / h", f"{b}hs0 = hs"] + booked
    if c_in_H:
        R += [f"{b}hb = hh"] + _control_lines(cols, "U[k + 1, {j}]", b) + energy
        R += [f"{b}pc = ((hh - hb) + (ha - Hh[k])) / h", f"{b}Pc[k] = pc", f"{b}Ps[k] += pc"]
    R += [f"{b}Hh[k + 1] = hh",
                   f"{b}if not math.isfinite(hh):",
                   f"{b}    info[0], info[1], info[2] = k, 4, 0",
                   f"{b}    for i in range({nx}):",
                   f"{b}        if not math.isfinite(x[i]):",
                   f"{b}            info[2] = i",
                   f"{b}    if not flag:",
                   f"{b}        return k",
                   f"{b}    FL[k] = 4",
                   f"{a}return -1", ""]
    text = "\n".join(L) + unroll("\n".join(R))
    if "junction_" in text:
        text = text.replace("from numba import njit\n", "from numba import njit\nfrom phsym.codegen.kernels.junction "
                            "import junction_energy, junction_energy_q, junction_energy_v, junction_voltage\n", 1)
    if "learned_bumps(" in text:     # learned laws: the compiled bump sum and the laws' arrays
        from ..kernels.learned import declare
        text = declare(text)
    return text if sens else driver_source(text)


_MEMO: "Optional[weakref.WeakKeyDictionary]" = None


def generate(S: Structure, parameters: Sequence[sp.Symbol], scheme: str, source: str = "",
             controls: Sequence[sp.Symbol] = (), derived: Optional[Dict[sp.Symbol, sp.Expr]] = None,
             stiff: str = "scheme") -> GeneratedStep:
    """Generate, write to the cache and import the step module of ``scheme`` (memoised per structure).

    Parameters
    ----------
    S : Structure
        The structure.
    parameters : sequence of sympy.Symbol
        Every parameter symbol the expressions may use, in the order of the
        runtime array ``p``.
    scheme : str
        ``discrete_gradient``, ``midpoint`` or ``backward_euler``.
    source : str
        Netlist file or model name, for the module header.
    controls : sequence of sympy.Symbol
        Parameters driven by signals during a run (columns of ``U`` after
        the inputs, in this order).
    derived : dict of sympy.Symbol to sympy.Expr, optional
        Parameters computed from controls (``.param b={2*pos}``) as
        expressions of the independent parameters: the step evaluates them
        from ``p`` at every step instead of reading their own entry.
    stiff : str
        How stiff storages step (:func:`~phsym.codegen.steps.step_equations`):
        ``"backward_euler"`` or ``"scheme"`` (default).
    """
    scheme = get_scheme(scheme, ("discrete_gradient", "midpoint", "backward_euler")).name
    global _MEMO
    if _MEMO is None:
        _MEMO = weakref.WeakKeyDictionary()
    memo = _MEMO.setdefault(S, {})
    derived = dict(derived or {})
    mkey = (scheme, tuple(parameters), source, tuple(controls), tuple(sorted(map(str, derived))), stiff,
            interpret.enabled(), interpret.compiled_kernels())
    if mkey not in memo:
        _, psub = parameter_array(parameters)
        psub.update({d: sp.sympify(e).xreplace(psub) for d, e in derived.items()})
        index = {s: i for i, s in enumerate(parameters)}
        eq = step_equations(S, scheme, psub, by_effort=True, stiff=stiff)
        body = module_source(eq, parameters, scheme, source, controls=[index[c] for c in controls])
        key = cache_key(body, scheme)
        memo[mkey] = GeneratedStep(load_module(body, key, loop=True), key, list(parameters), eq.names, S.n_x, len(eq.V),
                                   S.size, S.n_u, [S.dissipative[j].element for j in eq.explicit], scheme, body,
                                   [str(c) for c in controls], eq.numerical != 0,
                                   stiff if any(st.stiff for st in S.storages) else None)
    return memo[mkey]


def parameter_array(parameters: Sequence[sp.Symbol]) -> Tuple[List[sp.Symbol], Dict[sp.Symbol, sp.Symbol]]:
    """Symbols ``p_i`` of the runtime parameter array and the substitution to them.

    Parameters
    ----------
    parameters : sequence of sympy.Symbol
        Parameter symbols in array order.
    """
    P = [sp.Symbol(f"p_{i}", real=True) for i in range(len(parameters))]
    return P, dict(zip(parameters, P))
