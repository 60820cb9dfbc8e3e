"""The printer's guarded common subexpressions (phsym.codegen.printing._guarded): a costly
subexpression CSE hoisted out of ``Piecewise`` branches is computed only under the conditions every
use of it lies under, with the same values as the plain CSE'd code (checked against sympy's own
evaluation and, for a generated loop, step for step)."""
import math
import re

import numpy as np
import sympy as sp

import phsym
from phsym.codegen import printing
from phsym.codegen.newton import module as newton
from tests.test_codegen_effort import DECK

v, a, m = sp.symbols("v_0 p_0 p_1", real=True)


def _lines(pairs):
    out = []
    printing.assign(out, pairs, "")
    return out


def _run(lines, values):
    env = {"math": math, **values}
    exec("\n".join(lines), env)      # noqa: S102  (the printer's own output, not netlist text)
    return env


def test_a_power_only_branches_use_is_computed_under_their_condition():
    P = (1 - v) ** (1 - m)
    F = sp.Piecewise((P * a, v < 0.5), (v ** 2, True))
    J = sp.Piecewise((P / (1 - v), v < 0.5), (2 * v, True))
    lines = _lines([("F", F), ("J", J)])
    guarded = [ln for ln in lines if "**(1 - p_1)" in ln]
    assert len(guarded) == 1 and " if " in guarded[0] and guarded[0].endswith("else 0.0")
    # the condition is defined before the power that needs it
    cond = re.search(r" if \((_c\d+)\) else 0\.0$", guarded[0]).group(1)
    assert lines.index(guarded[0]) > next(i for i, ln in enumerate(lines) if ln.startswith(cond + " = "))
    for x in (0.3, 0.7, -2.0):
        env = _run(lines, {"v_0": x, "p_0": 2.0, "p_1": 0.4})
        num = {v: x, a: 2.0, m: 0.4}
        assert env["F"] == float(F.subs(num)) and np.isclose(env["J"], float(J.subs(num)), rtol=1e-15)


def test_uses_under_different_conditions_or_none_are_not_guarded():
    E = sp.exp(v)
    # used unconditionally and in a branch: computed always
    lines = _lines([("G", E + sp.Piecewise((E * a, v > 0.2), (0, True)))])
    assert any(ln.endswith("= math.exp(v_0)") for ln in lines)
    # used in both branches of one condition: no common literal, computed always
    lines = _lines([("G", sp.Piecewise((E * a, v > 0.2), (E / a, True))), ("H", sp.Piecewise((E, v > 0.2), (1, True)))])
    assert any(ln.endswith("= math.exp(v_0)") for ln in lines)
    # the later branches of a three-piece law: under the earlier conditions being false
    L = sp.log(2 + v)
    K = sp.Piecewise((1, v < -1), (L * a, v < 1), (L + v, True))
    lines = _lines([("K", K), ("K2", sp.Piecewise((0, v < -1), (L, True)))])
    row = next(ln for ln in lines if "math.log" in ln)
    assert row.endswith("else 0.0") and "not " in row
    for x in (-3.0, 0.0, 5.0):
        env = _run(lines, {"v_0": x, "p_0": 2.0})
        assert env["K"] == float(K.subs({v: x, a: 2.0}))


def test_guarded_loop_steps_exactly_as_the_plain_one(monkeypatch):
    """The diode deck with depletion and diffusion charge: the same floats, so the same steps."""
    mark = re.compile(r"^\s+_c\d+ = \(.*\) if .+ else 0\.0$", re.M)
    guarded = phsym.Simulator(phsym.parse(DECK), 48000.0, engine="generated")
    assert mark.search(guarded._gen.source)
    monkeypatch.setattr(printing, "_guarded", lambda reps, red: [(s, printing.pr(e)) for s, e in reps])
    monkeypatch.setattr(newton, "_MEMO", None)
    plain = phsym.Simulator(phsym.parse(DECK), 48000.0, engine="generated")
    assert not mark.search(plain._gen.source)
    r1, r2 = guarded.run(duration=0.003), plain.run(duration=0.003)
    assert np.array_equal(r1.x, r2.x) and np.array_equal(r1.iterations, r2.iterations)
