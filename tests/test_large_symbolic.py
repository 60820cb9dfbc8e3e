"""Symbolic only where it is wanted: a model above SYMBOLIC_LIMIT loads, shows and simulates without
its symbolic structure, and the symbolic views say how to ask for it."""
import numpy as np
import pytest

import phsym
from phsym.errors import StructureError
from phsym.model import SYMBOLIC_LIMIT
from phsym.report import checks_pass, describe_text

N = 500          # series capacitors: 502 branches


def _series(n: int = N) -> str:
    lines = ["* series capacitors", "V1 a 0 SIN(0 1 1k)", "R1 a n0 1k"]
    lines += [f"C{k} n{k} {f'n{k + 1}' if k + 1 < n else '0'} {n}u" for k in range(n)]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def model():
    return phsym.parse(_series())


def test_loading_builds_no_symbolic_structure(model):
    assert model.size["branches"] > SYMBOLIC_LIMIT
    assert "structure" not in vars(model)
    assert "502 branches" in repr(model)
    assert "structure" not in vars(model)
    assert not model.symbolic_ready


@pytest.mark.parametrize("call", [lambda m: m.linearize(), lambda m: m.to_latex(), lambda m: m.descriptor()])
def test_symbolic_views_say_how_to_ask(model, call):
    with pytest.raises(StructureError, match="symbolic=True") as err:
        call(model)
    assert "502 branches" in str(err.value) and "SYMBOLIC_LIMIT" in str(err.value)
    assert "structure" not in vars(model)


def test_check_runs_numerically_without_the_symbolic_structure(model):
    checks = model.check()
    assert checks and all(checks.values()), checks
    assert "structure" not in vars(model)


def test_show_reads_counts_and_kinds(model):
    text = describe_text(model)
    assert "500 elements" not in text and "502 elements" in text
    assert "capacitor 500" in text and "resistor 1" in text and "phsym show --symbolic" in text
    assert checks_pass(model)
    H = model.hamiltonian           # the sum of the storages' energies
    assert len(H.args) == N
    assert "structure" not in vars(model)


def test_series_chain_steps_as_its_equivalent_rc():
    # N capacitors of N uF in series carry one charge: the RC circuit of 1 uF, stepped by the
    # trapezoidal rule (midpoint: the scheme of linear models), which is a closed-form recurrence
    model = phsym.parse(_series())
    fs, steps = 48000.0, 200
    sim = phsym.Simulator(model, fs)
    assert sim.engine == "numeric"
    res = sim.run(duration=steps / fs)
    assert "structure" not in vars(model)
    q = res.x                                   # every capacitor's charge
    np.testing.assert_allclose(q, q[:, :1].repeat(q.shape[1], axis=1), rtol=0, atol=1e-15)
    h, R, C = 1 / fs, 1e3, 1e-6
    t = np.arange(steps + 1) * h
    u = np.sin(2 * np.pi * 1e3 * t)
    ref = np.zeros(steps + 1)
    for k in range(steps):      # (q1 - q0)/h = ((u0 + u1)/2 - (q0 + q1)/(2C)) / R
        a = h / (2 * R * C)
        ref[k + 1] = (ref[k] * (1 - a) + h * (u[k] + u[k + 1]) / (2 * R)) / (1 + a)
    np.testing.assert_allclose(q[:, 0], ref, rtol=1e-9, atol=1e-15)
    assert res.max_balance_error < 1e-9


def test_operating_point_of_a_large_circuit_on_the_numeric_engine():
    """phsym op above the symbolic limit: the numeric DC system's point, which equals the symbolic
    solver's on circuits both can take (a TTL gate, a source-driven diode network)."""
    import warnings
    from phsym.benchmarks.decks import ttl_nand_chain
    from phsym.simulation.analyses.op import numeric_operating_point, operating_point
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = [phsym.parse(ttl_nand_chain(1)),
                 phsym.parse("I1 0 a DC 1m\nR1 a b 1k\nD1 b 0 IS=1e-14\nV2 c 0 DC 2\nR2 c b 2k\n")]
        large = phsym.parse(ttl_nand_chain(9))
    for m in small:
        a, b = operating_point(m), numeric_operating_point(m)
        for n, v in b.nodes.items():
            assert abs(v - a.nodes[n]) < 1e-6 * (1 + abs(a.nodes[n])), n
        for k, i in b.currents.items():
            assert abs(i - a.currents[k]) < 1e-9 + 1e-6 * abs(a.currents[k]), k
            assert b.power[k] == pytest.approx(a.power[k], rel=1e-6, abs=1e-12)
    op = operating_point(large)
    assert "structure" not in vars(large) and "numeric engine" in op.to_text()
    assert op.nodes["vcc"] == pytest.approx(5.0)
    assert op.currents["VCC"] < 0          # the supply delivers power (receiver convention)
    # every element listed, and their powers balance (Tellegen: the currents obey Kirchhoff's law)
    two = {el.name for el in large.netlist.elements if len(el.nodes) == 2}
    assert two <= set(op.currents) and any(k.endswith(".be") for k in op.currents)
    assert abs(sum(op.power.values())) < 1e-9 * sum(abs(p) for p in op.power.values())
