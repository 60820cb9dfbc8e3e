"""Printing sympy expressions as numba-ready Python (one printer for all generated code).

* :func:`assign` writes CSE'd assignments ``target = expr``;
* :func:`block` adds the loads of the array entries the assignments use
  (``x_0 = x[0]``), so generated functions read only what they need;
* :func:`unroll` writes out short loops with literal bounds (a numba loop
  costs type inference and lowering far beyond its statements).
"""
from __future__ import annotations

import heapq
import re
from typing import Dict, List, Sequence, Tuple

import sympy as sp
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pycode import PythonCodePrinter

__all__ = ["pr", "assign", "block", "unroll", "UNROLL"]

#: Loops over at most this many entries are written out (unrolling cut the
#: clipper's cold compile by about a fifth).
UNROLL = 4
_FOR = re.compile(r"^(\s*)for i in range\((\d+)(?:, (\d+))?\):$")
_I = re.compile(r"\bi\b")


class _Printer(PythonCodePrinter):
    """Plain Python printer (``math.`` functions, conditional expressions: numba
    rejects the NumPy printer's ``numpy.select`` for scalars)."""

    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Integer(self, expr):
        # numba types integer literals as int64: a larger coefficient (a high power's binomials) as a float
        return str(expr.p) if abs(expr.p) < 2 ** 62 else repr(float(expr.p))

    def _print_Rational(self, expr):
        if max(abs(expr.p), expr.q) < 2 ** 62:
            return super()._print_Rational(expr)
        return repr(expr.p / expr.q)

    def _print_Pow(self, expr, rational=False):
        # a negative power as a division: numba raises ZeroDivisionError for
        # 0.0 ** -n even with error_model="numpy", where 1.0 / 0.0 gives inf;
        # common subexpressions are hoisted out of Piecewise branches, so the
        # untaken branch of a one-sided law (a contact at its gap) is evaluated too
        base, exp = expr.as_base_exp()
        if exp.is_number and exp.is_negative and not base.is_number:
            return f"(1.0 / {self.parenthesize(sp.Pow(base, -exp), PRECEDENCE['Mul'])})"
        return super()._print_Pow(expr, rational=rational)

    # junction charge with transit time: compiled kernels (phsym.codegen.kernels.junction)
    def _print_JunctionVoltage(self, expr):
        return "junction_voltage(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_JunctionEnergy(self, expr):
        return "junction_energy(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_JunctionEnergyAt(self, expr):
        return "junction_energy_v(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_JunctionEnergyFrom(self, expr):
        return "junction_energy_q(" + ", ".join(self._print(a) for a in expr.args) + ")"


def _share_inversions(expr: sp.Expr) -> sp.Expr:
    """``JunctionEnergy(Q)`` written ``JunctionEnergyAt(Q, JunctionVoltage(Q))``: an energy and a
    voltage at the same charge (a divided difference and its Jacobian) then share one inversion
    after common-subexpression elimination, with the same floats."""
    from ..components.junction import JunctionEnergy, JunctionEnergyAt, JunctionVoltage
    if not expr.has(JunctionEnergy):
        return expr
    return expr.replace(lambda e: isinstance(e, JunctionEnergy),
                        lambda e: JunctionEnergyAt(e.args[0], JunctionVoltage(*e.args), *e.args[1:]))


def pr(expr: sp.Expr) -> str:
    """Python source of ``expr``.

    Parameters
    ----------
    expr : sympy.Expr
        Expression in plain symbols.
    """
    return _Printer({"fully_qualified_modules": True, "standard": "python3"}).doprint(expr)


def assign(lines: List[str], exprs: Sequence[Tuple[str, sp.Expr]], indent: str = "    ") -> None:
    """Append CSE'd assignments ``target = expr`` to ``lines``.

    Parameters
    ----------
    lines : list of str
        Output lines.
    exprs : sequence of (str, sympy.Expr)
        Targets and expressions.
    indent : str
        Indentation of the lines.
    """
    targets = [t for t, _ in exprs]
    reps, red = sp.cse([_share_inversions(sp.sympify(e)) for _, e in exprs], symbols=sp.numbered_symbols("_c"),
                       optimizations=None)
    for s, e in _guarded(reps, red):
        lines.append(f"{indent}{s} = {e}")
    for t, e in zip(targets, red):
        lines.append(f"{indent}{t} = {pr(e)}")


#: Functions cheap enough to compute whether or not a branch needs them.
_CHEAP = (sp.Abs, sp.sign, sp.Min, sp.Max, sp.Heaviside)


def _costly(e: sp.Expr) -> bool:
    """Whether ``e`` calls a function (``exp``, a junction kernel, ...) or a non-integer power."""
    return any(isinstance(a, sp.Pow) and not a.exp.is_Integer for a in sp.preorder_traversal(e)) or \
        any(not isinstance(f, _CHEAP) for f in e.atoms(sp.Function))


def _guarded(reps: List[Tuple[sp.Symbol, sp.Expr]], red: Sequence[sp.Expr]) -> List[Tuple[sp.Symbol, str]]:
    """The CSE assignments as source, a costly one computed only under the branch conditions every use
    of it lies under (``s = (e) if c else 0.0``), the conditions moved before it.

    CSE hoists the subexpressions of ``Piecewise`` branches out of them: a junction's depletion power
    ``(1 - v/VJ)^(1 - M)`` was computed in forward bias too, a divided difference beside its Taylor form.
    """
    index = {s: i for i, (s, _) in enumerate(reps)}
    uses: Dict[sp.Symbol, frozenset] = {}       # the (condition, value) literals common to every use

    def visit(e: sp.Basic, lits: frozenset) -> None:
        if e in index:
            uses[e] = uses[e] & lits if e in uses else lits
        elif isinstance(e, sp.Piecewise):
            prior = frozenset()
            for expr, cond in e.args:
                visit(cond, lits | prior)      # evaluated when the conditions before it are false
                visit(expr, lits | prior | (frozenset() if cond == sp.true else {(cond, True)}))
                prior = prior | {(cond, False)}
        else:
            for a in e.args:
                visit(a, lits)
    for e in red:
        visit(e, frozenset())
    for s, e in reversed(reps):
        visit(e, uses.get(s, frozenset()))
    deps = {s: [d for d in e.free_symbols if d in index] for s, e in reps}

    def reads(c: sp.Basic, s: sp.Symbol) -> bool:      # whether the condition's value depends on s
        todo, seen = [d for d in c.free_symbols if d in index], set()
        while todo:
            d = todo.pop()
            if d == s:
                return True
            if d not in seen:
                seen.add(d)
                todo += deps[d]
        return False
    source: Dict[sp.Symbol, str] = {}
    for s, e in reps:
        lits = [(c, v) for c, v in uses.get(s, ()) if not reads(c, s)] if _costly(e) else []
        if lits:
            lits.sort(key=str)
            cond = " and ".join(f"({pr(c)})" if v else f"not ({pr(c)})" for c, v in lits)
            source[s] = f"({pr(e)}) if {cond} else 0.0"
            deps[s] = deps[s] + [d for c, _ in lits for d in c.free_symbols if d in index]
        else:
            source[s] = pr(e)
    # the CSE order, except that a guarded assignment waits for its conditions (Kahn's algorithm,
    # the earliest ready assignment first; no recursion: modules have thousands of them)
    after: Dict[sp.Symbol, List[sp.Symbol]] = {s: [] for s, _ in reps}
    waiting = {s: len(set(deps[s])) for s, _ in reps}
    for s, _ in reps:
        for d in set(deps[s]):
            after[d].append(s)
    ready = [(index[s], s) for s, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    out: List[Tuple[sp.Symbol, str]] = []
    while ready:
        _, s = heapq.heappop(ready)
        out.append((s, source[s]))
        for t in after[s]:
            waiting[t] -= 1
            if waiting[t] == 0:
                heapq.heappush(ready, (index[t], t))
    return out


def block(exprs: Sequence[Tuple[str, sp.Expr]], sizes: Dict[str, int], indent: str = "    ") -> List[str]:
    """CSE'd assignments preceded by loads ``a_i = a[i]`` of the entries they use.

    Parameters
    ----------
    exprs : sequence of (str, sympy.Expr)
        Targets and expressions written in symbols ``a_i`` of arrays ``a``.
    sizes : dict of str to int
        Arrays that may be loaded and their lengths.
    indent : str
        Indentation.
    """
    code: List[str] = []
    assign(code, exprs, indent)
    names = "|".join(re.escape(a) for a in sizes)
    used = set(re.findall(rf"\b({names})_(\d+)\b", "\n".join(code))) if sizes else set()
    loads = [f"{indent}{a}_{i} = {a}[{i}]" for a, n in sizes.items() for i in range(n) if (a, str(i)) in used]
    return loads + code


def unroll(src: str) -> str:
    """Write out ``for i in range(a[, b])`` loops with literal bounds and at most
    :data:`UNROLL` iterations (bodies must not ``break``).

    Parameters
    ----------
    src : str
        Python source.
    """
    lines = src.split("\n")
    out: List[str] = []
    j = 0
    while j < len(lines):
        m = _FOR.match(lines[j])
        if not m:
            out.append(lines[j])
            j += 1
            continue
        ind = m.group(1)
        lo, hi = (int(m.group(2)), int(m.group(3))) if m.group(3) else (0, int(m.group(2)))
        body = []
        j += 1
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > len(ind)):
            body.append(lines[j])
            j += 1
        if hi - lo > UNROLL or any("break" in b for b in body):
            out.append(lines[j - len(body) - 1])
            out.extend(body)
            continue
        step = len(body[0]) - len(body[0].lstrip()) - len(ind) if body else 4
        for k in range(lo, hi):
            out.extend(_I.sub(str(k), b[step:]) if b.strip() else b for b in body)
    return "\n".join(out)
