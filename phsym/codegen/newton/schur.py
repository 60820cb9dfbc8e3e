"""Newton directions through the Jacobian's constant columns (the generated code's side).

Most unknowns of a circuit's step are linear: capacitor charge increments,
resistor and source currents; their columns of the step Jacobian hold only
parameters and the step ``h``, so they are the same at every iteration of
every step of a run.  Only the columns of the nonlinear port variables
(junction voltages, say) change.  :func:`split` finds the constant columns
``L`` and the varying ones ``N``; the generated ``run`` then writes every
constant Jacobian entry once per call and factors the constant columns
there (:func:`phsym.codegen.kernels.generic.schur_setup`), and each Newton iteration
solves only the ``|N| x |N|`` Schur complement and back-substitutes
(:func:`phsym.codegen.kernels.generic.schur_direction`): ``O(n |N|)`` work instead
of an ``n x n`` LU.  The direction is the full Newton direction (to
round-off), so the convergence test, limiting and line search are those of
the LU path.

The common-emitter stage of ``benchmarks/bench_bjt_hand.py`` has 7 unknowns,
2 of them varying.

Columns that vary only with controls (a potentiometer's ports) are *held*:
constant within a step, so the small system's rows are rotated (Givens) once
per step, when their entries changed, until those columns are upper
triangular; each iteration then solves only the rows below on the other
varying columns (Cramer's rule) and back-substitutes the held unknowns
(:func:`step_lines`).  The overdrive stage's pot took its four varying
unknowns through the pivoted kernel at every iteration (4.2e5 steps/s
against 8.3e5 with the pot a plain parameter); held, 4.5e5 -> 6.8e5.  Sensitivity modules keep the LU path (Python calls
their ``resjac`` and reads the whole Jacobian from it).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import sympy as sp

from ..printing import block

__all__ = ["Split", "split", "direction_lines", "prologue_lines", "globals_lines", "written_out", "step_lines"]

#: Import line of the generated modules that use the Schur path.
IMPORT = "from phsym.codegen.kernels.generic import schur_direction, schur_setup, small_solve"


class Split:
    """The constant and the varying columns of a step Jacobian.

    Attributes
    ----------
    constant : list of int
        Columns whose every entry depends on parameters and ``h`` only.
    varying : list of int
        The other columns.
    entries : list of ((int, int), sympy.Expr)
        Every constant entry, in constant and varying columns (written once per ``run`` call).
    zeros : list of (int, int)
        Structural zeros.
    held : list of int
        Varying columns whose entries depend on parameters, controls and ``h`` only (constant
        within a step).
    """

    def __init__(self, constant: List[int], varying: List[int], entries: list, zeros: list,
                 held: Sequence[int] = ()):
        self.constant, self.varying, self.entries, self.zeros = constant, varying, entries, zeros
        self.held = list(held)


def split(jac_idx: Sequence[Tuple[Tuple[int, int], sp.Expr]], nv: int, parameters: Sequence[sp.Symbol],
          h: sp.Symbol, controls: Sequence[int] = ()) -> Optional[Split]:
    """The :class:`Split` of a Jacobian, or ``None`` when no column is constant (or one unknown).

    Parameters
    ----------
    jac_idx : sequence of ((row, column), expression)
        The structurally nonzero entries of the Jacobian, in ``p_i`` symbols.
    nv : int
        Unknowns.
    parameters : sequence of sympy.Symbol
        The symbols ``p_i`` of the parameter array.
    h : sympy.Symbol
        The step.
    controls : sequence of int
        Indices of parameters driven by signals (they change between steps: not constant).
    """
    if nv < 2:
        return None
    fixed = {s for i, s in enumerate(parameters) if i not in set(controls)} | {h}
    const = {rc: dv for rc, dv in jac_idx if dv.free_symbols <= fixed}
    varying = sorted({c for (r, c), _ in jac_idx if (r, c) not in const})
    constant = [c for c in range(nv) if c not in varying]
    if not constant:
        return None
    filled = {rc for rc, _ in jac_idx}
    zeros = [(r, c) for r in range(nv) for c in range(nv) if (r, c) not in filled]
    step = fixed | {parameters[i] for i in controls}
    held = [c for c in varying if all(dv.free_symbols <= step for (r, k), dv in jac_idx if k == c)]
    return Split(constant, varying, sorted(const.items()), zeros, held)


def globals_lines(sp_: Split) -> List[str]:
    """Module-level index arrays of the constant and varying columns (numba constants)."""
    arr = "np.array([{}], dtype=np.int64)"
    return [f"SL = {arr.format(', '.join(map(str, sp_.constant)))}",
            f"SN = {arr.format(', '.join(map(str, sp_.varying)))}"]


def prologue_lines(sp_: Split, nv: int, sizes: Dict[str, int], ind: str) -> List[str]:
    """Lines at the start of ``run``: the constant entries and zeros of ``Jm``, then the factors of its
    constant columns (``schur_ok`` false: a singular Jacobian at every step, as the LU path finds it)."""
    L = [f"{ind}# constant Jacobian entries (parameters and h only): once per call, see phsym.codegen.newton.schur"]
    L += ([f"{ind}Jm[{r}, {c}] = 0.0" for r, c in sp_.zeros] if len(sp_.zeros) <= 64 else
          [f"{ind}for i in range({nv}):", f"{ind}    for j in range({nv}):", f"{ind}        Jm[i, j] = 0.0"])
    L += block([(f"Jm[{r}, {c}]", dv) for (r, c), dv in sp_.entries], sizes, ind)
    L += [f"{ind}schur_ok = schur_setup(Jm, {nv}, SL, piv)"]
    L += factor_lines(sp_, nv, ind) if written_out(sp_, nv) else []
    if holds(sp_, nv):      # the held columns' rotation is due at the first step (Jm[:, 2n:] was work space)
        nn, P = len(sp_.varying), len(sp_.held)
        L += [f"{ind}hq_{m} = math.nan" for m in range(len(_held_entries(sp_, nv)))] + [f"{ind}held_ok = False"]
        L += [f"{ind}zq_{i}_{k} = 0.0" for i in range(nn) for k in range(P)]
    return L


def written_out(sp_: Optional[Split], nv: int) -> bool:
    """Whether the Schur direction is written out in the generated loop (a small system of at most
    :data:`SMALL` varying unknowns and at most :data:`WRITTEN` products) rather than a call of the kernel."""
    return sp_ is not None and len(sp_.varying) <= SMALL and nv * nv <= WRITTEN


#: Products of a written-out direction at most (``nv**2``): beyond, the kernel's loops.
WRITTEN = 256
#: Varying unknowns of a written-out direction at most: two by Cramer's rule, more by
#: :func:`~phsym.codegen.kernels.generic.small_solve` on the products written out (the kernel's loops over
#: whole rows cost the overdrive stage's four varying unknowns 0.55 us per iteration).
SMALL = 4


def holds(sp_: Optional[Split], nv: int) -> bool:
    """Whether the direction rotates the held columns once per step (:func:`step_lines`): written out,
    with held columns and at most two other varying ones."""
    return written_out(sp_, nv) and bool(sp_.held) and len(sp_.varying) - len(sp_.held) <= 2


def _held_entries(sp_: Split, nv: int) -> List[Tuple[int, int]]:
    zeros = set(sp_.zeros)
    return [(r, c) for c in sp_.held for r in range(nv) if (r, c) not in zeros]


def step_lines(sp_: Optional[Split], nv: int, ind: str) -> List[str]:
    """After a step's first residual (the controls set): where a held column's entries changed, the small
    system's rows ``W_b`` into ``Jm[:nn, 2n:3n]``, rotated until the held columns are upper triangular
    (their triangle ``zq``; ``held_ok``: no zero on its diagonal)."""
    if not holds(sp_, nv):
        return []
    nl, nn, H, c2 = len(sp_.constant), len(sp_.varying), sp_.held, 2 * nv
    ent, zeros = _held_entries(sp_, nv), set(sp_.zeros)
    b, c = ind + "    ", ind + "        "
    L = [f"{ind}# held columns (controls only) changed: rotate the small system's rows (phsym.codegen.newton.schur)",
         f"{ind}if " + " or ".join(f"Jm[{r}, {k}] != hq_{m}" for m, (r, k) in enumerate(ent)) + ":"]
    L += [f"{b}hq_{m} = Jm[{r}, {k}]" for m, (r, k) in enumerate(ent)]
    L += [f"{b}for r in range({nv}):"] + [f"{c}Jm[{i}, {c2} + r] = Jm[{nl + i}, {nv} + r]" for i in range(nn)]
    L += [f"{b}zq_{i}_{k} = " + (" + ".join(f"Jm[{i}, {c2 + r}] * Jm[{r}, {col}]" for r in range(nv)
                                             if (r, col) not in zeros) or "0.0")
          for i in range(nn) for k, col in enumerate(H)]
    for k in range(len(H)):
        for i in range(nn - 1, k, -1):
            L += [f"{b}if zq_{i}_{k} != 0.0:",
                  f"{c}gr = math.hypot(zq_{i - 1}_{k}, zq_{i}_{k})",
                  f"{c}gc = zq_{i - 1}_{k} / gr",
                  f"{c}gs = zq_{i}_{k} / gr"]
            for m in range(k + 1, len(H)):
                L += [f"{c}t = gc * zq_{i - 1}_{m} + gs * zq_{i}_{m}",
                      f"{c}zq_{i}_{m} = gc * zq_{i}_{m} - gs * zq_{i - 1}_{m}", f"{c}zq_{i - 1}_{m} = t"]
            L += [f"{c}zq_{i - 1}_{k} = gr", f"{c}zq_{i}_{k} = 0.0", f"{c}for r in range({c2}, {c2 + nv}):",
                  f"{c}    t = gc * Jm[{i - 1}, r] + gs * Jm[{i}, r]",
                  f"{c}    Jm[{i}, r] = gc * Jm[{i}, r] - gs * Jm[{i - 1}, r]", f"{c}    Jm[{i - 1}, r] = t"]
    return L + [f"{b}held_ok = " + " and ".join(f"zq_{k}_{k} != 0.0 and math.isfinite(zq_{k}_{k})"
                                               for k in range(len(H)))]


def factor_lines(sp_: Split, nv: int, ind: str) -> List[str]:
    """After :func:`prologue_lines`, for a written-out direction: the rows of ``W`` as locals."""
    nl, nn = len(sp_.constant), len(sp_.varying)
    return [f"{ind}sw_{i}_{r} = Jm[{i}, {nv + r}]" for i in range(nl + nn) for r in range(nv)]


def _written(sp_: Split, nv: int, ind: str, fail: List[str]) -> List[str]:
    """The direction of :func:`phsym.codegen.kernels.generic.schur_direction` written out: ``W``'s rows are
    locals (:func:`factor_lines`), the varying columns read from ``Jm`` where they are nonzero."""
    N, Lc = sp_.varying, sp_.constant
    rows = {c: [r for r in range(nv) if (r, c) not in set(sp_.zeros)] for c in N}

    def dot(i, vec):
        return " + ".join(f"sw_{i}_{r} * {vec(r)}" for r in range(nv))
    if holds(sp_, nv):
        L = _held(sp_, nv, ind, fail, rows)
    else:
        L = _small(sp_, nv, ind, fail, rows, dot)
    L += [f"{ind}d[{c}] = sd_{j}" for j, c in enumerate(N)]
    L += [f"{ind}sg_{r} = F[{r}]" + "".join(f" + Jm[{r}, {c}] * sd_{j}" for j, c in enumerate(N) if r in rows[c])
          for r in range(nv)]
    return L + [f"{ind}d[{c}] = -({dot(k, lambda r: f'sg_{r}')})" for k, c in enumerate(Lc)]


def _held(sp_: Split, nv: int, ind: str, fail: List[str], rows: Dict[int, List[int]]) -> List[str]:
    """The small system through the rows :func:`step_lines` rotated: the rows below the held columns'
    triangle on the other varying columns (at most two, Cramer's rule), then the held unknowns."""
    N, H, c2 = sp_.varying, sp_.held, 2 * nv
    nn, P, j_of = len(N), len(H), {c: j for j, c in enumerate(N)}
    free = [c for c in N if c not in H]
    L = [f"{ind}if not held_ok:"] + fail
    L += [f"{ind}sf_{i} = -(" + " + ".join(f"Jm[{i}, {c2 + r}] * F[{r}]" for r in range(nv)) + ")" for i in range(nn)]
    L += [f"{ind}sz_{i}_{m} = " + (" + ".join(f"Jm[{i}, {c2 + r}] * Jm[{r}, {c}]" for r in rows[c]) or "0.0")
          for i in range(nn) for m, c in enumerate(free)]
    s = [f"sd_{j_of[c]}" for c in free]
    if len(free) == 1:
        L += [f"{ind}if sz_{P}_0 == 0.0 or not math.isfinite(sz_{P}_0):"] + fail + [f"{ind}{s[0]} = sf_{P} / sz_{P}_0"]
    elif len(free) == 2:
        a, b = P, P + 1
        L += [f"{ind}sdet = sz_{a}_0 * sz_{b}_1 - sz_{a}_1 * sz_{b}_0",
              f"{ind}if sdet == 0.0 or not math.isfinite(sdet):"] + fail + [
              f"{ind}{s[0]} = (sf_{a} * sz_{b}_1 - sz_{a}_1 * sf_{b}) / sdet",
              f"{ind}{s[1]} = (sz_{a}_0 * sf_{b} - sf_{a} * sz_{b}_0) / sdet"]
    for k in range(P - 1, -1, -1):      # the triangle, bottom up
        rest = "".join(f" - sz_{k}_{m} * {s[m]}" for m in range(len(free)))
        rest += "".join(f" - zq_{k}_{m} * sd_{j_of[H[m]]}" for m in range(k + 1, P))
        L += [f"{ind}sd_{j_of[H[k]]} = (sf_{k}{rest}) / zq_{k}_{k}"]
    return L


def _small(sp_: Split, nv: int, ind: str, fail: List[str], rows: Dict[int, List[int]], dot) -> List[str]:
    """The small system ``W_b A_N d_N = -W_b F``: Cramer's rule up to two unknowns, else the kernel."""
    nl, N = len(sp_.constant), sp_.varying
    L = [f"{ind}sf_{i} = -({dot(nl + i, lambda r: f'F[{r}]')})" for i in range(len(N))]
    L += [f"{ind}sz_{i}_{j} = " + (" + ".join(f"sw_{nl + i}_{r} * Jm[{r}, {c}]" for r in rows[c]) or "0.0")
          for i in range(len(N)) for j, c in enumerate(N)]
    if not N:         # every column constant: d = -W F
        pass
    elif len(N) == 1:
        L += [f"{ind}if sz_0_0 == 0.0 or not math.isfinite(sz_0_0):"] + fail + [f"{ind}sd_0 = sf_0 / sz_0_0"]
    elif len(N) == 2:       # Cramer's rule (status 3 on a zero or non-finite determinant, as the LU's pivot test)
        L += [f"{ind}sdet = sz_0_0 * sz_1_1 - sz_0_1 * sz_1_0",
              f"{ind}if sdet == 0.0 or not math.isfinite(sdet):"] + fail + [
              f"{ind}sd_0 = (sf_0 * sz_1_1 - sz_0_1 * sf_1) / sdet",
              f"{ind}sd_1 = (sz_0_0 * sf_1 - sf_0 * sz_1_0) / sdet"]
    else:       # the kernel's pivoted elimination on the small system (vp is free until the step is taken)
        c2 = 2 * nv
        L += [f"{ind}Jm[{i}, {c2 + j}] = sz_{i}_{j}" for i in range(len(N)) for j in range(len(N))]
        L += [f"{ind}vp[{i}] = sf_{i}" for i in range(len(N))]
        L += [f"{ind}if not small_solve(Jm, {c2}, {len(N)}, vp):"] + fail
        L += [f"{ind}sd_{j} = vp[{j}]" for j in range(len(N))]
    return L


def direction_lines(nv: int, ind: str, schur: Optional[Split] = None) -> List[str]:
    """Newton direction ``d = -Jm^{-1} F`` (status 3 on a singular Jacobian): through the Schur
    complement of the columns ``schur`` (written out or the kernel), a division (one unknown) or the
    LU of :mod:`phsym.codegen.kernels.generic`."""
    fail = [f"{ind}    status = 3", f"{ind}    qi = 0", f"{ind}    break"]
    if schur is not None and written_out(schur, nv):
        return [f"{ind}if not schur_ok:"] + fail + _written(schur, nv, ind, fail)
    if schur is not None:       # vp is free until the step is taken: the small system's right-hand side
        return [f"{ind}if not (schur_ok and schur_direction(Jm, {nv}, SL, SN, F, d, vp)):"] + fail
    if nv == 1:
        return [f"{ind}if Jm[0, 0] == 0.0:"] + fail + [f"{ind}d[0] = -F[0] / Jm[0, 0]"]
    return [f"{ind}if not lu_factor(Jm, piv):"] + fail + [
        f"{ind}for i in range({nv}):", f"{ind}    d[i] = -F[i]", f"{ind}lu_solve(Jm, piv, d)"]
