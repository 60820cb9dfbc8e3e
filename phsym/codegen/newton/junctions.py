"""Junction-voltage limiting for exponential dissipative laws (SPICE's idea, Nagel 1975).

Newton on ``i = Is exp(v / Vt)`` overshoots: one linearised step from an
off junction can ask for tens of volts, where ``exp`` overflows or the
next iterate walks back by one ``Vt`` per iteration.  SPICE limits the
change of each junction voltage between iterations: above the critical
voltage ``Vcrit = Vt ln(Vt / (sqrt(2) Is))`` (where the exponential's
curvature takes over), a step of the voltage ``s_old -> s_new`` larger than
``2 Vt`` is replaced by the step that changes the *current* as the
linearised current asked, ``s_old + Vt ln(1 + (s_new - s_old) / Vt)``
(``Vt ln(s_new / Vt)`` from a reverse-biased junction).

Here a junction is any term ``K exp(c w + c0)`` of a dissipative law
``z(w)`` (``c`` and ``K`` free of ``w``): a diode (``c = 1/(N Vt)``), its
reverse breakdown (``c < 0``), a user law ``I={...exp(v/...)...}``; and of
the state law ``x(e)`` of a storage that Newton solves through its effort
(a junction charge with transit time, ``TT Is exp(v / (N Vt))``), whose
critical voltage is SPICE's with the term's factor per step, ``K / h``, in
place of the saturation current.  In a
multiport law (a transistor) ``w`` may be the variable of another port of
the device (the base-collector junction in the collector current); each
junction is limited once, however many laws it appears in.  Its
limited variable is ``s = (c w + c0) / |c|`` (the term is ``K exp(s/Vt)``
with ``Vt = 1/|c|``).  :func:`junction_terms` finds them,
:func:`junction_code` writes the function that evaluates every ``s`` at a
Newton iterate, the constants ``Vt`` and ``Vcrit``, and the lines of the
Newton loop that shorten the step so that no junction moves further than
the limit (one common factor for the whole step, so it also holds for
junctions whose voltage is an eliminated expression of the states).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import sympy as sp

from ...structure.dirac import Structure
from ..printing import block

__all__ = ["JunctionTerm", "exp_terms", "junction_terms", "junction_exprs", "junction_code", "known_variables", "limit_step"]


@dataclass(frozen=True)
class JunctionTerm:
    """One exponential term ``K exp(c w + c0)`` of dissipative port ``port`` or of a storage's state law.

    Attributes
    ----------
    port : int
        Index of the dissipative port in ``Structure.dissipative`` whose
        variable the exponent reads (-1 for a storage's term).
    element : str
        Its element.
    w : sympy.Symbol
        That port's variable.
    arg : sympy.Expr
        The exponent ``c w + c0`` in the port variable ``w``.
    c : sympy.Expr
        ``d arg / d w`` (free of ``w``).
    K : sympy.Expr
        The factor in front of the exponential (free of ``w``).
    state : int, optional
        For a term of a storage's state law ``x(e)``: the state's index
        (``w`` is then the effort).
    """

    port: int
    element: str
    w: sp.Symbol
    arg: sp.Expr
    c: sp.Expr
    K: sp.Expr
    state: Optional[int] = None

    @property
    def key(self) -> Tuple[str, int]:
        """``("w", port)`` or ``("x", state)``: whose variable the exponent reads."""
        return ("w", self.port) if self.state is None else ("x", self.state)

    @property
    def vt(self) -> sp.Expr:
        """``1 / |c|``: the term's thermal voltage."""
        return 1 / sp.Abs(self.c)

    @property
    def vcrit(self) -> sp.Expr:
        """SPICE's critical voltage ``Vt ln(Vt / (sqrt(2) |K|))`` (a storage's term: ``|K| / h``, its
        factor per step, in place of ``|K|``)."""
        K = sp.Abs(self.K) if self.state is None else sp.Abs(self.K) / sp.Symbol("h", positive=True)
        return self.vt * sp.log(self.vt / (sp.sqrt(2) * K))


def exp_terms(law: sp.Expr, w: sp.Symbol, others: Sequence[sp.Symbol]) -> List[Tuple[sp.Expr, sp.Expr, sp.Expr]]:
    """``(arg, c, K)`` of each term ``K exp(arg)`` of ``law`` whose exponent is linear in ``w``,
    with ``K`` and ``arg`` free of ``w`` and of ``others``."""
    out = []
    law = sp.expand(law, power_exp=False, log=False, multinomial=False, basic=False)
    for term in sp.Add.make_args(law):
        exps = [a for a in term.atoms(sp.exp) if a.has(w)]
        if len(exps) != 1:
            continue
        arg = exps[0].args[0]
        c = sp.diff(arg, w)
        factors = sp.Mul.make_args(term)
        if exps[0] not in factors:      # inside another function of w (a knee current's square root)
            continue
        K = sp.Mul(*[f for f in factors if f != exps[0]])
        # a term whose factor reads another junction (a transport
        # current over the base charge) is left to that junction's
        # own pure term, which every transistor law also has
        if c == 0 or c.has(w) or K.has(w) or any(K.has(o) or arg.has(o) for o in others):
            continue
        out.append((arg, c, K))
    return out


def junction_terms(S: Structure, efforts: Sequence[int] = ()) -> List[JunctionTerm]:
    """Exponential terms of the nonlinear dissipative laws of ``S`` and of the
    state laws of the storages solved through their effort.

    Parameters
    ----------
    S : Structure
        The structure.
    efforts : sequence of int
        States whose Newton unknown is their effort's increment
        (:attr:`~phsym.codegen.steps.StepEquations.by_effort`).
    """
    out: List[JunctionTerm] = []
    seen = set()
    for i, dp in enumerate(S.dissipative):
        if dp.linear:
            continue
        ports = [(i, dp.w)] + [(k, S.dissipative[k].w) for k in dp.coupled]
        for j, w in ports:
            for arg, c, K in exp_terms(dp.z, w, [o for _, o in ports if o != w]):
                if (j, arg) not in seen:
                    seen.add((j, arg))
                    out.append(JunctionTerm(j, S.dissipative[j].element, w, arg, c, K))
    index = {s: i for i, s in enumerate(S.states)}
    for st in S.storages:
        if st.by_effort is not None and index[st.states[0]] in efforts:
            law = st.by_effort
            for arg, c, K in exp_terms(law.state, law.effort, ()):
                if not c.could_extract_minus_sign():    # the forward charge, not a breakdown's
                    out.append(JunctionTerm(-1, st.elements[0], law.effort, arg, c, K, index[st.states[0]]))
    return out


def junction_exprs(terms: Sequence[JunctionTerm], wsym: Dict[int, sp.Expr],
                   psub: Dict[sp.Symbol, sp.Expr], esym: Optional[Dict[int, sp.Expr]] = None) -> List[sp.Expr]:
    """The limited variable ``s`` of each junction term at a Newton iterate (runtime symbols).

    Parameters
    ----------
    terms : sequence of JunctionTerm
        The junction terms (:func:`junction_terms`).
    wsym : dict of int to sympy.Expr
        Port variable of each dissipative port at a Newton iterate.
    psub : dict
        Parameter symbols to the ``p_i`` of the runtime array.
    esym : dict of int to sympy.Expr, optional
        Effort at the step's end of each state solved through its effort.
    """
    return [(t.arg / sp.Abs(t.c)).xreplace(psub).xreplace(
        {t.w: wsym[t.port] if t.state is None else (esym or {})[t.state]}) for t in terms]


def linear_slopes(exprs: Sequence[sp.Expr], V: Sequence[sp.Symbol]) -> Optional[List[Tuple[int, sp.Expr]]]:
    """``(k, c)`` for each junction variable ``s = c v_k + ...`` that moves with one Newton unknown
    by a slope of parameters only (``c`` free of the state, the step's constants and the
    unknowns), or None when some variable does not.

    Then a step ``d`` moves each variable by ``c d[k]``: where none moves by more than SPICE's
    ``2 Vt``, nothing is limited and the limiter need not evaluate the trial point.

    Parameters
    ----------
    exprs : sequence of sympy.Expr
        The junction variables (:func:`junction_exprs`), in runtime symbols.
    V : sequence of sympy.Symbol
        The Newton unknowns ``v_i``.
    """
    out: List[Tuple[int, sp.Expr]] = []
    for e in exprs:
        deps = [(k, sp.diff(e, v)) for k, v in enumerate(V) if e.has(v)]
        if len(deps) != 1 or not all(s.name == "h" or s.name.startswith("p_") for s in deps[0][1].free_symbols):
            return None
        out.append(deps[0])
    return out


def junction_code(terms: Sequence[JunctionTerm], wsym: Dict[int, sp.Expr], psub: Dict[sp.Symbol, sp.Expr],
                  sizes: Dict[str, int], n_p: int, consts: Optional[Dict[sp.Expr, sp.Symbol]] = None,
                  esym: Optional[Dict[int, sp.Expr]] = None,
                  slopes: Optional[Sequence[Tuple[int, sp.Expr]]] = None) -> Tuple[List[str], List[str]]:
    """Source of ``junc(x, v, ub, p, xs, h[, kc])`` (the tuple of limited variables
    ``s``) and of the constants ``jvt{m}``, ``jvc{m}`` (and ``jd{m}``, the slopes) inside ``run``,
    4 spaces.

    Parameters
    ----------
    terms : sequence of JunctionTerm
        The junction terms (:func:`junction_terms`).
    wsym : dict of int to sympy.Expr
        Port variable of each dissipative port at a Newton iterate (an
        unknown or an eliminated expression; :class:`~phsym.codegen.steps.StepEquations`).
    psub : dict
        Parameter symbols to the ``p_i`` of the runtime array.
    sizes : dict of str to int
        Array sizes for :func:`~phsym.codegen.printing.block`.
    n_p : int
        Length of ``p``.
    consts : dict of sympy.Expr to sympy.Symbol, optional
        Step constants (:mod:`phsym.codegen.newton.hoist`), read from the tuple ``kc``.
    esym : dict of int to sympy.Expr, optional
        Effort at the step's end of each state solved through its effort.
    slopes : sequence of (int, sympy.Expr), optional
        From :func:`linear_slopes`.
    """
    consts = consts or {}
    exprs = [(f"s{m}", e.xreplace(consts)) for m, e in enumerate(junction_exprs(terms, wsym, psub, esym))]
    func = ["@njit(cache=True, error_model=\"numpy\", no_cpython_wrapper=True)",
            f"def junc(x, v, ub, p, xs, h{', kc' if consts else ''}):"]
    func += block(exprs, sizes)
    func += ["    return (" + "".join(f"s{m}, " for m in range(len(terms))) + ")"]
    consts = block([(f"jvt{m}", t.vt.xreplace(psub)) for m, t in enumerate(terms)]
                   + [(f"jvc{m}", t.vcrit.xreplace(psub)) for m, t in enumerate(terms)]
                   + [(f"jd{m}", c) for m, (_, c) in enumerate(slopes or ())], {"p": n_p})
    return func, consts


def known_variables(terms: Sequence[JunctionTerm], n_e: int) -> str:
    """The array ``resjac`` writes the junction variables into for the limiter: ``"e"`` (the
    efforts, unused until the step converged), or ``""`` (``junc`` computes them).

    Parameters
    ----------
    terms : sequence of JunctionTerm
        The junction terms.
    n_e : int
        Length of the effort vector.
    """
    return "e" if terms and len(terms) <= n_e else ""


def limit_step(terms: Sequence[JunctionTerm], unknown: Dict[Tuple[str, int], int], nv: int, ind: str,
               base: str = "v", kc: str = "", known: str = "",
               slopes: Optional[Sequence[Tuple[int, sp.Expr]]] = None) -> List[str]:
    """Lines that shorten the direction ``d`` from the unknowns ``base`` so that
    no junction variable moves beyond SPICE's limit; ``lim`` ends below 1
    when anything was limited.

    A junction whose port variable is a Newton unknown is limited alone (as
    SPICE limits each junction); one whose variable is an eliminated
    expression scales the whole step by a common factor.

    Parameters
    ----------
    terms : sequence of JunctionTerm
        The junction terms.
    unknown : dict of (str, int) to int
        Index in ``v`` of each junction variable that is a Newton unknown, by
        :attr:`JunctionTerm.key` (a port variable, a state's effort).
    nv : int
        Number of Newton unknowns.
    ind : str
        Indentation.
    base : str
        The array the step starts from (``v`` in Newton, ``vold`` for the predictor).
    kc : str
        ``", kc"`` when ``junc`` reads step constants, else empty.
    known : str
        An array already holding the junction variables at ``base`` (``resjac``
        writes them when it was last called there), instead of calling ``junc``.
    slopes : sequence of (int, sympy.Expr), optional
        From :func:`linear_slopes` (the constants ``jd{m}``): the limiter runs only when a
        variable moves by more than ``2 Vt`` (the same steps, without evaluating ``junc``
        on most iterations).
    """
    own = sorted({unknown[t.key] for t in terms if t.key in unknown})
    so = known or "so"
    head = [f"{ind}lim = 1.0"] + [f"{ind}lim{i} = 1.0" for i in own]
    if slopes:
        head.append(f"{ind}if " + " or ".join(f"abs(jd{m} * d[{k}]) > 2.0 * jvt{m}"
                                               for m, (k, _) in enumerate(slopes)) + ":")
        ind += "    "
    L = ([] if known else [f"{ind}so = junc(x, {base}, ub, p, xs, h{kc})"]) + [
         f"{ind}for i in range({nv}):",
         f"{ind}    vp[i] = {base}[i] + d[i]",
         f"{ind}sn = junc(x, vp, ub, p, xs, h{kc})"]
    for m, t in enumerate(terms):
        target = f"lim{unknown[t.key]}" if t.key in unknown else "lim"
        L += [f"{ind}if sn[{m}] > jvc{m} and abs(sn[{m}] - {so}[{m}]) > 2.0 * jvt{m}:",
              f"{ind}    if {so}[{m}] > 0.0:",
              f"{ind}        arg = 1.0 + (sn[{m}] - {so}[{m}]) / jvt{m}",
              f"{ind}        slim = {so}[{m}] + jvt{m} * math.log(arg) if arg > 0.0 else jvc{m}",
              f"{ind}    else:",
              f"{ind}        slim = jvt{m} * math.log(sn[{m}] / jvt{m})",
              f"{ind}    a = (slim - {so}[{m}]) / (sn[{m}] - {so}[{m}])",
              f"{ind}    if a < {target}:",
              f"{ind}        {target} = max(a, 1e-9)"]
    L += [f"{ind}if lim < 1.0:",
          f"{ind}    for i in range({nv}):",
          f"{ind}        d[i] *= lim"]
    for i in own:
        L += [f"{ind}d[{i}] *= lim{i}", f"{ind}lim = min(lim, lim{i})"]
    return head + L
