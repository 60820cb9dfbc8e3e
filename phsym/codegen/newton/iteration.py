"""The damped Newton iteration of one step, as lines of the generated ``run``
(:mod:`phsym.codegen.newton.module` writes the loop around them).

Direction (:mod:`.schur`), convergence test (each unknown's step against
its own scale), SPICE-style junction limiting (:mod:`.junctions`), and a
backtracking line search on the weighted residual; ``resjac`` evaluates the
residual and Jacobian at every iterate.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from .junctions import limit_step
from .schur import direction_lines, step_lines

__all__ = ["iteration_lines"]


def _norm(target: str, nv: int, ind: str) -> List[str]:
    return [f"{ind}{target} = 0.0", f"{ind}for i in range({nv}):", f"{ind}    {target} += (F[i] * wt[i]) * (F[i] * wt[i])"]


def _ranges(idx: Sequence[int]) -> List[Tuple[int, int]]:
    """Consecutive runs ``[a, b)`` of the sorted indices ``idx``."""
    out: List[Tuple[int, int]] = []
    for i in sorted(idx):
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def _worst(nx: int, nv: int, efforts: Sequence[int], b: str) -> List[str]:
    """Lines finding the largest scaled Newton step ``worst`` and its unknown ``qi``: state
    increments relative to the state (``|v| + |x| + xs``), other unknowns (ports, multipliers,
    efforts' increments) relative to ``|v| + 1``."""
    L = [f"{b}worst = 0.0"]
    rel = [i for i in range(nx) if i not in efforts]
    for scale, idx in (("abs(x[i]) + xs[i]", rel), ("1.0", list(efforts) + list(range(nx, nv)))):
        for lo, hi in _ranges(idx):
            L += [f"{b}for i in range({lo}, {hi}):",
                  f"{b}    r = abs(d[i]) / (abs(v[i]) + {scale})",
                  f"{b}    if not (r <= worst):",
                  f"{b}        worst = r",
                  f"{b}        qi = i"]
    return L


def iteration_lines(nx: int, nv: int, terms: Sequence = (), unknown: Optional[Dict[Tuple[str, int], int]] = None,
                    kc: str = "", known: str = "", schur=None, efforts: Sequence[int] = (),
                    slopes=None) -> List[str]:
    """The damped Newton iteration of one step (inside ``for k``, 8 spaces).

    Parameters
    ----------
    nx, nv : int
        Number of states and of Newton unknowns.
    terms : sequence of JunctionTerm
        Exponential terms of the laws, limited as SPICE does (:mod:`.junctions`).
    unknown : dict of (str, int) to int, optional
        Index in ``v`` of each junction variable that is an unknown, by
        :attr:`~phsym.codegen.newton.junctions.JunctionTerm.key`.
    kc : str
        ``", kc"`` when ``resjac`` and ``junc`` read step constants.
    known : str
        The array ``resjac`` writes the junction variables into (or empty).
    schur : optional
        The direction through the constant columns (:mod:`.schur`).
    efforts : sequence of int
        States whose unknown is their effort's increment.
    slopes : sequence of (int, sympy.Expr), optional
        The junction variables' slopes (:func:`~phsym.codegen.newton.junctions.linear_slopes`): the
        limiter's fast path.
    """
    a, b, c = " " * 8, " " * 12, " " * 16
    call = f"resjac(x, v, ub, p, xs, h, F, Jm{kc}{', ' + known if known else ''})"
    L = ([f"{a}search = True"] if terms and efforts else []) + [f"{a}{call}"] + _norm("nrm", nv, a) + [
        f"{a}if not math.isfinite(nrm):",
        f"{a}    # the predictor overshot into an exponential: restart from the last step",
        f"{a}    for i in range({nv}):",
        f"{a}        v[i] = vold[i]",
        f"{a}    {call}"] + _norm("nrm", nv, b) + step_lines(schur, nv, a) + [
        f"{a}while True:",
        f"{b}if not math.isfinite(nrm):",
        f"{c}status = 2",
        f"{c}qi = -1",
        f"{c}for i in range({nv}):",
        f"{c}    if qi < 0 and not math.isfinite(F[i]):",
        f"{c}        qi = i",
        f"{c}break"]
    L += direction_lines(nv, b, schur)
    L += _worst(nx, nv, efforts, b)
    L += [f"{b}# converged: step below tol, or (contracting iteration) the",
          f"{b}# estimated remaining error theta/(1-theta)*|d| below tol",
          f"{b}conv = worst <= tol",
          f"{b}if not conv and it > 0 and worst < rprev:",
          f"{b}    theta = worst / rprev",
          f"{b}    conv = theta / (1.0 - theta) * worst <= tol"]
    if terms:
        L += [f"{b}if not conv:"] + limit_step(terms, unknown or {}, nv, c, kc=kc, known=known,
                                               slopes=slopes) + [f"{c}if lim < 1.0:",
                                                           f"{c}    worst = -1.0    # no contraction test next"]
        # an effort limited alone turns the step away from Newton's direction, along which the
        # residual's norm decreases: such a step is taken whole (as SPICE takes its limited steps)
        mine = sorted({(unknown or {})[t.key] for t in terms if t.key in (unknown or {})} & set(efforts))
        if mine:
            L += [f"{c}search = " + " and ".join(f"lim{i} == 1.0" for i in mine)]
        # a forward junction's voltage falling by more than half N Vt (after the limits above):
        # Newton on the exponential charge moves it by at most N Vt per iteration; the step the
        # linearised charge asks for, Vt ln(1 + dv / Vt) (SPICE's limiting formula, here
        # lengthening a step towards the solution), is taken instead, at most 12 N Vt
        so = known or "so"
        for m, t in enumerate(terms):
            if t.state is None:
                continue
            i = t.state
            L += [f"{c}if {so}[{m}] > 0.0 and d[{i}] < -0.5 * jvt{m}:",
                  f"{c}    arg = 1.0 + d[{i}] / jvt{m}",
                  f"{c}    if arg > 0.0:",
                  f"{c}        d[{i}] = max(jvt{m} * math.log(arg), -12.0 * jvt{m})",
                  f"{c}        search = False",
                  f"{c}        worst = -1.0"]
    guard = "(search or not math.isfinite(nn)) and " if terms and efforts else ""   # a limited effort: no search
    L += [f"{b}rprev = worst",
          f"{b}for i in range({nv}):",
          f"{b}    vp[i] = v[i]",
          f"{b}    v[i] += d[i]",
          f"{b}it += 1",
          f"{b}if conv:",
          f"{c}break",
          f"{b}if it >= maxit:",
          f"{c}status = 1",
          f"{c}break",
          f"{b}{call}"] + _norm("nn", nv, b) + [
          f"{b}lam = 1.0",
          f"{b}while {guard}not (nn <= nrm) and lam > 1e-3:",
          f"{c}lam *= 0.5",
          f"{c}for i in range({nv}):",
          f"{c}    v[i] = vp[i] + lam * d[i]",
          f"{c}{call}"] + _norm("nn", nv, c) + [
          f"{b}nrm = nn"]
    return L
