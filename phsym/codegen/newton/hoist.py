"""Step constants: the expensive parts of a step's residual that Newton does not change.

Within one step the residual ``F(v)`` is evaluated once per Newton
iteration (and per line-search trial, and twice more per junction limit),
but many of its subexpressions depend only on the state ``x`` at the start
of the step, the step's inputs ``ub``, the parameters and ``h``: the energy
``H(x)`` of a divided difference, ``exp(x / C)`` of a heat capacity, the
voltage ``v(Q)`` of a junction charge at the step's start (an inner
Newton iteration).  :func:`step_constants` finds the
maximal subexpressions of that kind that are worth computing once per step
(function calls and non-integer powers); the generated ``run`` computes them
after the step's inputs and passes them to ``resjac`` and ``junc`` as the
tuple ``kc`` (the efforts after convergence read them too); their parts
that read only parameters no control drives and ``h`` (a junction's
grading powers) once per call, before the step loop.  Measured on the overdrive stage (two diodes with transit
time): 1.37e4 -> 1.78e4 steps/s, the same arrays (docs/benchmarks.md; when Newton still
solved for the charge).

The start effort of a storage solved through its effort (``se_i``, a
junction's voltage) is carried from the end of the step before instead:
the work array ``ve`` keeps it with the state and the law's parameters it
belongs to, and :func:`start_lines` inverts ``v(Q)`` only where they
differ (a run's start, a state set or restored by the caller, a sweep's
next parameter set).  The inversion cost 0.4-1 us per junction and step,
twice per step (the step's start and the recorded energy): the op-amp
clipper went from 8.2e4 to 1.16e5 steps/s.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

import sympy as sp

from ...components.junction import energies_from
from ..printing import block
from ..steps import StepEquations
from .carried import CARRIED, RECORDS, base

__all__ = ["step_constants", "hoisted_lines", "carries", "start_lines", "carry_lines", "law_check",
           "carried_constants", "next_constants", "end_energy"]

#: Runtime names a step constant may depend on (``x_i``, ``xs_i``, ``p_i``, ``ub_i``, ``h``, and
#: ``se_i``: the effort at the step's start of a storage solved through it).
_CONSTANT = re.compile(r"(x|xs|p|ub|se)_\d+|h")
#: Cheap functions: not worth a slot of ``kc``.
_CHEAP = (sp.Abs, sp.sign)


def _worth(e: sp.Expr) -> bool:
    if isinstance(e, sp.Pow):
        return not e.exp.is_Integer
    return isinstance(e, sp.Function) and not isinstance(e, _CHEAP)


def _maximal(exprs: Sequence[sp.Expr], ok, prefix: str) -> Dict[sp.Expr, sp.Symbol]:
    """Maximal subexpressions of ``exprs`` worth a slot whose every free symbol's name ``ok`` accepts."""
    found: Dict[sp.Expr, sp.Symbol] = {}

    def visit(e: sp.Basic) -> None:
        if e.is_Atom or e in found:
            return
        free = e.free_symbols
        if free and _worth(e) and all(ok(s.name) for s in free):
            found[e] = sp.Symbol(f"{prefix}_{len(found)}", real=True)
            return
        for a in e.args:
            visit(a)

    for ex in exprs:
        visit(sp.sympify(ex))
    return found


def step_constants(exprs: Sequence[sp.Expr]) -> Dict[sp.Expr, sp.Symbol]:
    """Maximal subexpressions of ``exprs`` worth computing once per step -> their symbols ``kc_j``.

    Parameters
    ----------
    exprs : sequence of sympy.Expr
        The residual, its Jacobian and the junction variables, in the
        runtime symbols (``v_i`` are the Newton unknowns).
    """
    return _maximal(exprs, _CONSTANT.fullmatch, "kc")


def hoisted_lines(consts: Dict[sp.Expr, sp.Symbol], sizes: Dict[str, int], indent: str,
                  fixed: Sequence[str] = (), once: str = "    ",
                  kept: Optional[Dict[sp.Symbol, int]] = None) -> Tuple[List[str], List[str], Dict]:
    """Lines of ``run`` computing the step constants and the tuple ``kc``: those once per call, then
    those after each step's inputs.

    The parts of the step constants that read only names fixed for the
    whole call (parameters that no control drives, ``h``: a junction's
    grading powers, ``0.5**(1 - M)``) are computed once per call, as
    ``rc_j``, not at every step.  The constants ``kept`` are read from
    ``ve`` where the step before left them (``hot``: every start effort was
    carried, :func:`start_lines`).

    Parameters
    ----------
    consts : dict of sympy.Expr to sympy.Symbol
        From :func:`step_constants`.
    sizes : dict of str to int
        Runtime arrays and their lengths (for the loads).
    indent : str
        Indentation of the step loop's body.
    fixed : sequence of str
        Names that hold for the whole call.
    once : str
        Indentation of ``run``'s body (the lines before the loop).
    kept : dict of sympy.Symbol to int, optional
        :func:`carried_constants`: step constants and their entries of ``ve``.

    Returns
    -------
    first, step : list of str
        The lines before the step loop and those inside it.
    rc : dict of sympy.Expr to sympy.Symbol
        The parts computed once per call (for other expressions of the step).
    """
    keep, kept = set(fixed), kept or {}
    rc = _maximal(list(consts), keep.__contains__, "rc")
    loads = {k: n for k, n in sizes.items() if k not in ("v", "kc")}
    first = block([(str(s), e) for e, s in rc.items()], loads, once) if rc else []
    lines = []
    if kept:
        lines = [f"{indent}if hot:"] + [f"{indent}    {s} = ve[{m}]" for s, m in kept.items()] + [f"{indent}else:"]
        lines += block([(str(s), e.xreplace(rc)) for e, s in consts.items() if s in kept], loads, indent + "    ")
    lines += block([(str(s), e.xreplace(rc)) for e, s in consts.items() if s not in kept], loads, indent)
    return first, lines + [f"{indent}kc = (" + "".join(f"{s}, " for s in consts.values()) + ")"], rc


def carried_constants(eq: StepEquations, consts: Dict[sp.Expr, sp.Symbol], n_p: int) -> Dict[sp.Symbol, int]:
    """Step constants worth carrying to the next step -> their entries of ``ve``: those that read one
    start effort and the parameters of its law alone (a junction's ``exp(v / (N Vt))`` and grading power
    at the step's start).  The step before computes them at its end, beside the efforts that share their
    exponentials (:func:`carry_lines`); ``h`` excluded, since a subdivided step's calls change it."""
    law = {f"p_{c}" for c in _law_parameters(eq)}
    out: Dict[sp.Symbol, int] = {}
    for j, (i, (se, _)) in enumerate(sorted(eq.s0.items())):
        mine = [s for e, s in consts.items() if se in e.free_symbols and e != se
                and all(f == se or f.name in law for f in e.free_symbols)]
        out.update({s: base(j, len(eq.s0), n_p) + RECORDS + m for m, s in enumerate(mine[:CARRIED])})
    return out


def next_constants(eq: StepEquations, consts: Dict[sp.Expr, sp.Symbol], chosen: Dict[sp.Symbol, int]):
    """The carried constants at the step's end, ``(nk_j, expression)``, in the symbols of the efforts' block
    (the start effort plus its unknown's increment; other step constants as ``kc``)."""
    shift = {se: se + sp.Symbol(f"v_{i}", real=True) for i, (se, _) in eq.s0.items()}
    return [(f"n{s}", e.xreplace(shift).xreplace(consts)) for e, s in consts.items() if s in chosen]


def end_energy(eq: StepEquations, Hs: sp.Expr) -> sp.Expr:
    """The energy ``Hs`` (of storages solved through their effort) at the step's end, in the symbols of
    the efforts' block before the step constants are put in: each junction's energy through the depletion charge and exponential its charge
    law computes there (:func:`~phsym.components.junction.energy_from`), shared after common-subexpression
    elimination.  A separate call of the energy cost the op-amp clipper 36-40 % of its step."""
    H = energies_from(Hs)
    shift = {se: se + eq.V[i] for i, (se, _) in eq.s0.items()}
    shift.update({eq.X[i]: eq.X[i] + eq.dx[i] for i in eq.stiff})
    return H.xreplace(shift)


def _law_parameters(eq: StepEquations) -> List[int]:
    """Indices in ``p`` of the parameters the inversions ``v(Q)`` read."""
    return sorted({int(s.name[2:]) for _, inv in eq.s0.values() for s in inv.free_symbols if s.name.startswith("p_")})


def carries(eq: StepEquations, controls: Sequence[int]) -> bool:
    """Whether the loop carries the start efforts of the storages solved through them from step to
    step: not when a control moves one of their laws (the state's effort changes with it)."""
    return bool(eq.s0) and not set(_law_parameters(eq)) & set(controls)


def start_lines(eq: StepEquations, carry: bool, sizes: Dict[str, int], indent: str) -> List[str]:
    """``se_i``, the effort at the step's start of each storage solved through it: the carried
    value (``ve[j]``) where it belongs to the state (``ve[n + j] == x[i]``), else the inversion;
    ``hot`` tells whether every one was carried.  Only :func:`carry_lines` writes the efforts and
    constants into ``ve``, after a step that converged or was accepted (:func:`law_check` only voids
    them; the predictor's records are entries of their own), so a carried effort comes with its
    :func:`carried_constants` (a failed step that is subdivided restarts from a state whose effort
    was never stored)."""
    n, L = len(eq.s0), ([f"{indent}hot = True"] if carry else [])
    for j, (i, (se, inv)) in enumerate(sorted(eq.s0.items())):
        if not carry:
            L += block([(str(se), inv)], sizes, indent)
            continue
        L += [f"{indent}if x[{i}] == ve[{n + j}]:", f"{indent}    {se} = ve[{j}]", f"{indent}else:"]
        L += block([(str(se), inv)], sizes, indent + "    ") + [f"{indent}    hot = False"]
    return L


def carry_lines(eq: StepEquations, indent: str, chosen: Optional[Dict[sp.Symbol, int]] = None) -> List[str]:
    """After ``x`` moved: the start efforts of the next step, carried with the state they belong to, and
    the ``chosen`` step constants (:func:`carried_constants`) the efforts' block computed as ``nkc_j``."""
    n, L = len(eq.s0), []
    for j, (i, (se, _)) in enumerate(sorted(eq.s0.items())):
        L += [f"{indent}{se} = {se} + v[{i}]", f"{indent}ve[{j}] = {se}", f"{indent}ve[{n + j}] = x[{i}]"]
    return L + [f"{indent}ve[{m}] = n{s}" for s, m in (chosen or {}).items()]


def law_check(eq: StepEquations, indent: str) -> List[str]:
    """Once per call: the carried efforts belong to the parameters of the call that computed them (a
    sweep, a changed parameter): ``ve[2 n + c]`` keeps ``p[c]`` of each parameter of the laws."""
    n, law = len(eq.s0), _law_parameters(eq)
    if not law:
        return []
    L = [f"{indent}if " + " or ".join(f"p[{c}] != ve[{2 * n + c}]" for c in law) + ":"]
    L += [f"{indent}    ve[{n + j}] = math.nan" for j in range(n)]
    return L + [f"{indent}    ve[{2 * n + c}] = p[{c}]" for c in law]
