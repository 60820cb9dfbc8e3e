"""Law kernels whose step-constant parts are computed once per step (phsym.codegen.laws.hoist)."""
import numpy as np
import pytest
import sympy as sp

import phsym
from phsym.codegen.laws import build
from phsym.codegen.laws.hoist import hoist
from phsym.simulation.engines.numeric.kernels_py import call
from phsym.structure.circuit.canonical import placeholder_values


def test_hoist_gives_back_the_expressions_and_leaves_only_moving_parts():
    v, d, a, b, c = sp.symbols("_v0 _d0 _x0 _p0 _p1", real=True)
    exprs = [b * sp.exp(c * a) * v + (1 + a / b) ** c + sp.exp(c * (a + d)),
             sp.Piecewise((sp.sqrt(a ** 2 + b) * v, v > a), (c * a * b * v ** 2, True)),
             sp.diff(b * sp.exp(c * a) * v * d, v)]
    moved, pre = hoist(exprs, {a, b, c})
    assert pre and all(w.free_symbols <= {a, b, c} for w in pre)
    back = {sp.Symbol(f"_w{k}", real=True): e for k, e in enumerate(pre)}
    for e, m in zip(exprs, moved):
        assert sp.simplify(m.xreplace(back) - e) == 0
        # nothing costly in the step's constants alone is left to an iteration
        assert not any(isinstance(s, (sp.exp, sp.Pow)) and s.free_symbols <= {a, b, c} and not s.is_Atom
                       for s in sp.preorder_traversal(m))


def _spied_spec(monkeypatch, tmp_path, netlist):
    """The KernelSpec behind the discrete-gradient step kernel of the netlist's first nonlinear storage,
    and the kernel built from it in a fresh cache."""
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "_SPECS", {})
    seen = []
    real = build.kernel_source
    monkeypatch.setattr(build, "kernel_source", lambda spec, source="": seen.append(spec) or real(spec, source))
    m = phsym.parse(netlist)
    st = next(s for s in m.circuit.storages if not s.linear)
    k = build.step_kernel(st.form, 1, "discrete_gradient")
    P = placeholder_values([st.placeholders], m.parameter_values(), [st.element])[0]
    return seen[-1], k, P


@pytest.mark.parametrize("card", ["D(IS=1e-14 CJO=2p TT=1n)", "D(IS=1e-14 CJO=2p VJ=0.8 M=0.4 FC=0.5 TT=5n N=1.5)"])
def test_a_junction_step_kernel_matches_its_unhoisted_expressions(monkeypatch, tmp_path, card):
    """Values and derivatives of the compiled kernel (its constants prepared once) against sympy's
    lambdify of the expressions it was made from, at random points of both branches of the discrete
    gradient (the divided difference, and its Taylor form for small increments)."""
    spec, k, P = _spied_spec(monkeypatch, tmp_path, f".model DX {card}\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DX\n")
    assert k.n_pre > 0 and k.prepare != 0
    args = list(spec.var) + list(spec.const) + list(spec.params)
    targets = list(spec.outputs) + [sp.diff(e, v) for e in spec.outputs for v in spec.var]
    ref = sp.lambdify(args, targets, modules="math")
    rng = np.random.default_rng(7)
    rows, want = [], []
    for _ in range(40):
        se0 = rng.uniform(-3.0, 0.75)                       # reverse to forward bias (past FC VJ)
        d0 = rng.choice([1e-9, 1e-5, 1e-3, 0.05]) * rng.choice([-1.0, 1.0])
        x0 = rng.uniform(-1e-11, 1e-10)
        xs0 = rng.uniform(1e-13, 1e-11)
        row = [d0, x0, xs0, se0]
        rows.append(row)
        want.append(ref(*row, *P))
    got = call(k, np.tile(P, (len(rows), 1)), np.array(rows))
    want = np.array(want, dtype=float)
    assert np.all(np.isfinite(want))
    # the state increment x(e0 + d) - x(e0) of a tiny d cancels digits of charges ~1e-12 either way
    atol = np.array([0.0, 1e-25, 0.0, 0.0])
    assert np.all(np.abs(got - want) <= 1e-8 * np.abs(want) + atol), np.max(np.abs(got - want) / (np.abs(want) + 1e-300))


def test_a_law_without_step_constants_has_no_preparation(monkeypatch, tmp_path):
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "_SPECS", {})
    m = phsym.parse(".model DX D(IS=1e-14)\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DX\n")
    law = next(d for d in m.circuit.dissipations if not d.linear)
    k = build.law_kernel(law.form)
    assert k.n_pre == 0 and k.prepare == 0
