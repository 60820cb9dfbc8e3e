"""States named as probes: x(K1) (any element's state) and by quantity (q(C1), p(M1)), in results and fits."""
from __future__ import annotations

import numpy as np
import pytest

import phsym
from phsym.errors import IdentificationError, SignalError, StructureError
from phsym.identify import ParameterEstimator
from phsym.structure.probes import state_label

NET = "F1 v 0 force\nM1 v 0 mass m=1\nB1 v 0 damper c=10\nK1 v 0 spring k={k}\nV1 e 0\nR1 e c 1k\nC1 c 0 1u\n"


def test_state_label_reads_the_state_forms():
    states = ["p_M1", "x_K1", "q_C1", "x_B1.0", "x_B1.1"]
    assert [state_label(s, states) for s in ("x(K1)", "X_k1", "q(c1)", "p(M1)", "x(B1.1)", "v(out)", "i(K1)")] == \
        ["x_K1", "x_K1", "q_C1", "p_M1", "x_B1.1", None, None]
    with pytest.raises(StructureError, match="'B1' has 2 states") as err:
        state_label("x(B1)", states)
    assert "x(B1.0), x(B1.1)" in err.value.hint
    with pytest.raises(StructureError, match="'R1' is not an element with a state"):
        state_label("x(R1)", states)
    with pytest.raises(StructureError, match="the state of C1 is q_C1"):
        state_label("phi(C1)", states)


def test_results_give_states_by_probe_form():
    m = phsym.parse(NET.format(k=1000))
    rng = np.random.default_rng(0)
    res = phsym.Simulator(m, 1000.0, "midpoint").run(u={"F1": rng.standard_normal(51), "V1": np.ones(51)})
    np.testing.assert_array_equal(res["x(K1)"], res["x_K1"])
    np.testing.assert_array_equal(res["p(M1)"], res["p_M1"])
    np.testing.assert_array_equal(res["q(C1)"], res["x(C1)"])
    assert res["q(C1)"][-1] == pytest.approx(1e-6, rel=1e-3)      # C1 charged to 1 V through 1k (tau 1 ms)
    with pytest.raises(SignalError, match=r"the state of K1 is a displacement \[m\].*x\(K1\)"):
        res["q(K1)"]
    with pytest.raises(SignalError, match="'B1' is not an element with a state"):
        res["x(B1)"]


def test_a_fit_output_named_x_of_an_element_is_the_state_output():
    # the stiffness of a linear spring from its measured elongation, the output named x(K1): the state at
    # the midpoint of each step
    fs = 1000.0
    t = np.arange(401) / fs
    f = 10 * np.sin(2 * np.pi * 4 * t) + 5 * np.sin(2 * np.pi * 11 * t)
    truth = phsym.parse(NET.format(k=1500))
    x = np.asarray(phsym.Simulator(truth, fs, "midpoint").run(u={"F1": f, "V1": 0 * t})["x_K1"])
    # (x_K1 as an output: tests/test_learned_laws.py; one loop compiled here)
    est = ParameterEstimator(phsym.parse(NET.format(k=1000)), ["K1"], outputs=["x(K1)"], method="midpoint")
    assert est.fit(t, {"F1": f, "V1": 0 * t}, {"x(K1)": x}).params_["K1"] == pytest.approx(1500, rel=1e-8)
    np.testing.assert_allclose(est.y_fit_[:, 0], 0.5 * (x[1:] + x[:-1]), rtol=0, atol=1e-12 * np.ptp(x))
    est = ParameterEstimator(phsym.parse(NET.format(k=1000)), ["K1"], outputs=["q(K1)"], method="midpoint")
    with pytest.raises(IdentificationError, match=r"the state of K1 is a displacement .* \(x\(K1\)\)$"):
        est.fit(t, {"F1": f, "V1": 0 * t}, {"q(K1)": x})


def test_a_probe_card_of_a_state_says_where_to_read_it():
    from phsym.errors import NetlistError
    with pytest.raises(NetlistError, match=r"x\(K1\) is a state") as err:
        phsym.parse(NET.format(k=1000) + ".probe v(v) x(K1)\n")
    assert err.value.line == 8 and err.value.column == 13 and "--signals 'x(K1)'" in err.value.hint
