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


@pytest.mark.parametrize("call", [lambda m: m.check(), lambda m: m.linearize(), lambda m: m.to_latex(),
                                  lambda m: m.descriptor()])
def test_symbolic_views_say_how_to_ask(model, call):
    with pytest.raises(StructureError, match="symbolic=True") as err:
        call(model)
    assert "502 branches" in str(err.value) and "SYMBOLIC_LIMIT" in str(err.value)
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
