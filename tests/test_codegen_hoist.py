"""Step constants (phsym.codegen.newton.hoist), shared charge inversions (codegen.printing) and the
junction variables resjac hands to the limiter (codegen.junctions).

Newton solves a diode's charge with a transit time through its voltage; the
voltage at the state the step starts from (an inversion of the charge law)
is the same in every Newton iteration (a step constant); the junction
limiter's start point is the iterate resjac was just evaluated at.  (The
shared inversions of codegen.printing serve the modules that still solve
through the charge: the midpoint scheme and the sensitivities.)
Independent check: the same deck generated without any of the three takes
the same steps (to Newton's tolerance since Newton solves for the junction
voltage, whose start value enters the residual's arithmetic).
"""
from pathlib import Path

import numpy as np
import sympy as sp
from sympy.codegen.cfunctions import expm1

import phsym
from phsym.codegen import printing
from phsym.codegen.newton import hoist, module as newton
from phsym.codegen.newton.hoist import step_constants

DECK = Path(__file__).resolve().parent / "decks" / "diode_recovery_tt.cir"


def test_step_constants_are_maximal_expensive_and_free_of_unknowns():
    x0, v0, p0, h = sp.symbols("x_0 v_0 p_0 h", real=True)
    F = [sp.exp(x0 / p0) * expm1(v0 / p0) / v0 + sp.sqrt(p0) * v0 + sp.Abs(x0) + x0 ** 2,
         sp.exp(x0 + v0) + sp.log(h * sp.exp(x0 / p0))]
    found = step_constants(F)
    assert set(found) == {sp.exp(x0 / p0), sp.sqrt(p0), sp.log(h * sp.exp(x0 / p0))}
    assert [str(s) for s in found.values()] == ["kc_0", "kc_1", "kc_2"]


def test_hoisted_module_runs_the_same_steps(monkeypatch, tmp_path):
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    model = phsym.load(DECK)
    sim = phsym.Simulator(model, 1e10, engine="generated")
    source = sim._gen.source
    assert "kc = (" in source
    resjac = source[source.index("def resjac("):source.index("def junc(")]
    # Newton solves for the junction voltage: its start-of-step value v(Q) comes from kc, and the
    # residual inverts nothing (the energy through the voltage)
    assert "junction_energy(" not in resjac and "junction_voltage(" not in resjac
    assert "junction_energy_v(" in resjac
    hoisted = sim.run(duration=250e-9)
    monkeypatch.setattr(newton, "step_constants", lambda exprs: {})
    monkeypatch.setattr(printing, "_share_inversions", lambda e: e)
    monkeypatch.setattr(newton, "known_variables", lambda terms, n_e: "")
    monkeypatch.setattr(newton, "_MEMO", None)
    plain = phsym.Simulator(phsym.load(DECK), 1e10, engine="generated")
    # unhoisted: kc holds only the junction's start voltage, carried from the step before
    assert "kc = (kc_0, )" in plain._gen.source and "kc_0 = se_" in plain._gen.source
    plain_resjac = plain._gen.source[plain._gen.source.index("def resjac("):plain._gen.source.index("def junc(")]
    assert "junction_voltage(" not in plain_resjac and "math.exp(" in plain_resjac
    assert "so = junc(x, v," in plain._gen.source and "so = junc(x, v," not in source   # the limiter reads e
    ref = plain.run(duration=250e-9)
    # the same steps to Newton's tolerance; not bit-identical since the start voltage enters the
    # residual's arithmetic (s0 + v), which common-subexpression elimination groups differently
    # with and without kc (measured: up to 2.7e-9 relative in the charge over 2500 steps)
    for name in ("x", "y", "H", "P_diss"):
        a, b = getattr(hoisted, name), getattr(ref, name)
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-9 * np.max(np.abs(b)), err_msg=name)
    assert hoist.__doc__ and hoisted.max_balance_error < 1e-9


def test_modules_through_the_charge_share_its_inversions():
    # the sensitivity modules keep the charge as unknown: the discrete gradient's energy at the
    # step's end and the Jacobian's voltage there invert the same charge once (shared after CSE)
    from phsym.codegen.steps import step_equations
    model = phsym.load(DECK)
    syms = [p.symbol for p in model.netlist.parameters.values()]
    _, psub = newton.parameter_array(syms)
    eq = step_equations(model.structure, "discrete_gradient", psub)
    assert eq.names[0] == "q_D1.cj"
    source = newton.module_source(eq, syms, "discrete_gradient", "test")
    resjac = source[source.index("def resjac("):source.index("def junc(")]
    ends = [ln.split(" = ")[1] for ln in resjac.splitlines() if "junction_energy_v(" in ln]
    assert ends and all("junction_voltage(" not in e for e in ends)


def test_parts_fixed_for_the_call_are_computed_once():
    """A step constant's parts that read only parameters no control drives (a junction's grading
    powers) are computed once per call, before the step loop; a control's are not."""
    p0, p1, se = sp.symbols("p_0 p_1 se_0", real=True)
    consts = step_constants([sp.Piecewise(((1 - se) ** (1 - p0), se < 0.5), (2 ** p0 * se, True)) * p1 ** 0.5])
    once, step, rc = hoist.hoisted_lines(consts, {"p": 2}, " " * 8, ["p_0", "h"])
    assert list(rc.values()) == [sp.Symbol("rc_0", real=True)]
    assert any("rc_0 = 2**p_0" in ln for ln in once) and not any("p_1**" in ln or "se_0" in ln for ln in once)
    assert any("p_1**0.5" in ln or "math.sqrt(p_1)" in ln for ln in step) and step[-1].strip() == "kc = (kc_0, kc_1, )"
    # in a generated loop: the diode's grading powers before `for k`, the pot's control inside it
    src = phsym.Simulator(phsym.load(Path(__file__).resolve().parents[1] / "netlists" / "overdrive.cir"),
                          48000.0, engine="generated")._gen.source
    run = src[src.index("def run("):src.index("def run_many(")]
    loop = run.index("for k in range(k0, k1):")
    assert 0 < run.index("rc_0 = ") < loop and "81.0**p_0" in run[loop:]


def test_carried_constants_read_one_start_voltage_and_its_law_alone():
    """What the step before may compute for the next: constants of one junction's start voltage and
    its law's parameters (not h: a subdivided step's calls change it), at most CARRIED per junction."""
    from phsym.codegen import steps
    from phsym.codegen.newton import carried
    model = phsym.load(DECK)
    P, psub = newton.parameter_array([p.symbol for p in model.netlist.parameters.values()])
    eq = steps.step_equations(model.structure, "discrete_gradient", psub, by_effort=True, stiff="backward_euler")
    consts = step_constants(list(eq.F))
    for i, (se, _) in eq.s0.items():
        consts[se] = sp.Symbol(f"kc_{len(consts)}", real=True)
    chosen = hoist.carried_constants(eq, consts, len(P))
    law = {f"p_{c}" for c in hoist._law_parameters(eq)}
    starts = {v[0] for v in eq.s0.values()}
    qualify = set()
    for e, s in consts.items():
        se = [x for x in e.free_symbols if x in starts]
        if e not in starts and len(se) == 1 and {x.name for x in e.free_symbols} - {se[0].name} <= law:
            qualify.add(s)
    assert chosen and set(chosen) == qualify and len(chosen) <= carried.CARRIED * len(eq.s0)
    assert all(carried.base(0, len(eq.s0), len(P)) + carried.RECORDS <= m < carried.size(len(eq.s0), len(P))
               for m in chosen.values())
    # h changes between a subdivided step's calls: no carried constant reads it
    assert not any(eq.h in e.free_symbols for e, s in consts.items() if s in chosen)
