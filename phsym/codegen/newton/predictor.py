"""The predictor of the generated step loop: Newton's start at every step (lines of ``run``).

Every unknown is extrapolated linearly from the last two steps' values
(a state's increment, a port variable, a multiplier), and the step from the
last values to the prediction is limited as SPICE limits a Newton step
(:func:`phsym.codegen.newton.junctions.limit_step`).

A *settled* effort (a junction charge solved through its voltage and
stepped to the end, :attr:`phsym.codegen.steps.StepEquations.settled`) has
its voltage's increment from the step's start as unknown.  Two
extrapolations of that increment compete: the last increment plus its full
change (exact while the voltage moves smoothly: a common-emitter stage at
96 kHz takes 2.0 Newton iterations with it, 2.9 with the other) and the
last increment plus half its change (damped: at a clipping knee, where the
increments collapse or alternate, the full change overshoots; the op-amp
clipper takes 3.6 iterations with it, 4.0 with the full change).  Each step
books the error either would have made, smoothed over the last steps
(``E <- |error| + E / 2``), and the next step takes the one with the
smaller record; the full change only while it adds at most ``N Vt`` to
the half change (a knee right after a smooth stretch: the clipper's worst
step took 12 iterations without that bound, 9 with it).  The records live
in the carried array ``ve`` (:mod:`phsym.codegen.newton.carried`), so a run in
chunks or blocks steps exactly like one call.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from ..steps import StepEquations
from .carried import base
from .junctions import limit_step

__all__ = ["predictor_lines", "record_lines", "slots"]


def slots(eq: StepEquations, n_p: int) -> Dict[int, int]:
    """The first entry in ``ve`` of each effort unknown's records (:func:`phsym.codegen.newton.carried.base`)."""
    return {i: base(j, len(eq.s0), n_p) for j, i in enumerate(sorted(eq.by_effort))}


def predictor_lines(eq: StepEquations, nv: int, terms: Sequence, unknown: Dict[Tuple[str, int], int], kc: str,
                    slopes, slot: Dict[int, int], b: str) -> List[str]:
    """The predictor (inside ``for k``, indentation ``b``): ``v`` from the history ``v, vold``.

    Parameters
    ----------
    eq : StepEquations
        The step (its effort unknowns and settled ones).
    nv : int
        Newton unknowns.
    terms : sequence of JunctionTerm
        Exponential terms: the prediction is limited as a Newton step.
    unknown : dict of (str, int) to int
        Junction variables that are unknowns (:func:`~phsym.codegen.newton.junctions.limit_step`).
    kc : str
        ``", kc"`` when ``junc`` reads step constants.
    slopes : sequence, optional
        The limiter's fast path.
    slot : dict of int to int
        :func:`slots`.
    b : str
        Indentation.
    """
    c = b + "    "
    # info[3] counts the solved steps behind v (up to 2): the first step starts from v as given, the
    # second from the first's solution (an extrapolation from a zero history would double the port voltages)
    L = [f"{b}# predictor: linear extrapolation of the previous two steps' unknowns (phsym.codegen.newton.predictor)",
         f"{b}if info[3] >= 2:",
         f"{c}for i in range({nv}):", f"{c}    tmp = v[i]", f"{c}    v[i] = 2.0 * v[i] - vold[i]",
         f"{c}    vold[i] = tmp"]
    if terms:   # limited like a Newton step from the last step's unknowns (as SPICE does)
        L += [f"{c}for i in range({nv}):", f"{c}    d[i] = v[i] - vold[i]"]
        # a settled effort's increment, predicted as a step from no change (the history kept aside):
        # the full or the half change, whichever has the smaller record
        through: Dict[int, List[str]] = {}     # each unknown's N Vt: the least of the junction terms read through it
        for m, t in enumerate(terms):
            if unknown.get(t.key) is not None:
                through.setdefault(unknown[t.key], []).append(f"jvt{m}")
        vt = {i: (f"min({', '.join(b)})" if len(b) > 1 else b[0]) for i, b in through.items()}
        for i in eq.settled:
            s = slot[i]
            L += [f"{c}vh{i} = vold[{i}]", f"{c}vold[{i}] = 0.0", f"{c}pf{i} = v[{i}]",
                  f"{c}ph{i} = 0.5 * (v[{i}] + vh{i})",
                  f"{c}d[{i}] = pf{i} if ve[{s + 1}] < ve[{s}] and abs(pf{i} - ph{i}) <= {vt.get(i, '0.0')} else ph{i}"]
        L += limit_step(terms, unknown, nv, c, "vold", kc, slopes=slopes)
        L += [f"{c}for i in range({nv}):", f"{c}    v[i] = vold[i] + d[i]"]
        L += [f"{c}vold[{i}] = vh{i}" for i in eq.settled]
    # other efforts start from their last value: the junction modes the discrete gradient or the
    # midpoint rule leaves ringing at the step rate would throw an extrapolation off
    L += [f"{c}v[{i}] = 0.0" for i in eq.by_effort if i not in eq.settled]
    # the first two steps: an effort starts from its last value
    L += [f"{b}else:", f"{c}for i in range({nv}):", f"{c}    vold[i] = v[i]"]
    return L + [f"{c}v[{i}] = 0.0" for i in eq.by_effort] + [f"{c}pf{i} = ph{i} = 0.0" for i in eq.settled
                                                               if terms]


def record_lines(eq: StepEquations, terms: Sequence, slot: Dict[int, int], b: str) -> List[str]:
    """After Newton converged: each settled effort's smoothed errors of the two extrapolations (a NaN
    record, as a fresh ``ve`` holds, starts anew; the first two steps predict nothing)."""
    if not (eq.settled and terms):
        return []
    L = [f"{b}if info[3] >= 2 and status == 0:"]     # a failed attempt's iterate is no error of the predictor
    for i in eq.settled:
        for s, p in ((slot[i], f"ph{i}"), (slot[i] + 1, f"pf{i}")):
            L += [f"{b}    er = abs(v[{i}] - {p})", f"{b}    ve[{s}] = er + 0.5 * ve[{s}] if ve[{s}] >= 0.0 else er"]
    return L
