"""Sources that meet directly: y = B^T Q x + (S - N) u against hand derivations.

Conventions (see the sources' docstrings): ``V n+ n-`` has ``y`` = current
delivered out of ``n+``; ``I n+ n-`` pushes ``u`` into ``n-`` and has
``y = e(n-) - e(n+)``.
"""
import json

import numpy as np
import pytest
import sympy as sp

import phsym
from phsym import StructureError
from phsym.simulation.analyses.ac import ac_analysis
from phsym.simulation.analyses.op import operating_point
from phsym.structure.linear import LinearPHS

R, C = 2.0, 0.5
# I1 pushes into node a, which V1 holds; R1-C1 load the source
RC_NODE = f"V1 a 0\nI1 0 a\nR1 a b {R}\nC1 b 0 {C}\n"


def _structure_ok(lin: LinearPHS):
    checks = lin.check()
    assert all(checks.values()), checks
    assert np.array_equal(lin.J, -lin.J.T) and np.array_equal(lin.N, -lin.N.T)
    assert np.min(np.linalg.eigvalsh(lin.R), initial=0) >= 0
    assert np.min(np.linalg.eigvalsh(lin.S), initial=0) >= 0 and np.array_equal(lin.S, lin.S.T)


def test_current_source_into_a_voltage_source_node_static():
    # KCL at a: y_V + u_I = u_V / R  ->  y_V = u_V / R - u_I;  y_I = e(a) = u_V
    m = phsym.parse(".param R=2\nV1 a 0\nR1 a 0 R\nI1 0 a\n")
    lin = m.linearize()
    _structure_ok(lin)
    assert lin.inputs == ["V1", "I1"]
    assert np.array_equal(lin.N, [[0.0, 1.0], [-1.0, 0.0]]) and not np.any(lin.S)
    for s in (0.0, 1j, 3.0 + 2.0j):
        assert np.allclose(lin.transfer(s), [[0.5, -1.0], [1.0, 0.0]], rtol=0, atol=1e-15)
    # explicit form: the resistor eliminated, its conductance is S
    ex = m.explicit
    Rs = m.parameter_symbols["R"]
    assert ex.S == sp.Matrix([[1 / Rs, 0], [0, 0]]) and ex.N == sp.Matrix([[0, 1], [-1, 0]])
    d = m.descriptor()          # the resistor stays a variable: S = 0, N as linearised
    assert d.S == sp.zeros(2, 2) and d.N == sp.Matrix([[0, 1], [-1, 0]])
    assert all(m.check().values())


def test_current_source_in_series_with_a_voltage_source():
    # I1 drives R1 into V1's + terminal: y_V = -u_I, y_I = e(a) = u_V + R u_I
    m = phsym.parse("I1 0 a\nR1 a b 3\nV1 b 0\n")
    lin = m.linearize()
    _structure_ok(lin)
    assert lin.inputs == ["I1", "V1"]
    assert np.allclose(lin.transfer(0.7j), [[3.0, 1.0], [-1.0, 0.0]], rtol=0, atol=1e-15)
    ex = m.explicit
    assert ex.S == sp.Matrix([[m.parameter_symbols["R1"], 0], [0, 0]])
    assert ex.N == sp.Matrix([[0, -1], [1, 0]])


def test_resistor_across_a_voltage_source():
    m = phsym.parse("V1 a 0\nR1 a 0 4\n")
    assert complex(m.linearize().transfer(2j)[0, 0]) == pytest.approx(0.25, abs=1e-15)
    assert m.explicit.S == sp.Matrix([[1 / m.parameter_symbols["R1"]]])


def _rc_node_closed_form(s):
    # y_V = -u_I + u_V s C / (1 + s R C);  y_I = u_V
    return np.array([[s * C / (1 + s * R * C), -1.0], [1.0, 0.0]])


def test_dynamic_feedthrough_transfer_and_state_space():
    m = phsym.parse(RC_NODE)
    lin = m.linearize()
    _structure_ok(lin)
    assert np.array_equal(lin.N, [[0.0, 1.0], [-1.0, 0.0]])
    for s in (0.3j, 1.0 + 1.0j, 10.0j):
        assert np.allclose(lin.transfer(s), _rc_node_closed_form(s), rtol=1e-13, atol=1e-15)
    A, B, Cm, D = lin.to_state_space()
    s = 0.8 + 0.4j
    G = Cm @ np.linalg.solve(s * np.eye(A.shape[0]) - A, B) + D
    assert np.allclose(G, _rc_node_closed_form(s), rtol=1e-12, atol=1e-14)
    assert np.allclose(D, [[1 / R, -1.0], [1.0, 0.0]])        # s -> infinity


def _rc_node_steps(u, h, theta):
    """Hand-derived theta rule on C v' = (u_V - v)/R, outputs at the step values (theta 0: explicit Euler)."""
    v, y = 0.0, []
    for k in range(u.shape[0] - 1):
        ub = u[k] + theta * (u[k + 1] - u[k])
        # C (v1 - v)/h = (ub_V - (v + theta (v1 - v)))/R
        v1 = v + h * (ub[0] - v) / (R * C + theta * h)
        vb = v + theta * (v1 - v)
        y.append([-ub[1] + (ub[0] - vb) / R, ub[0]])
        v = v1
    return np.array(y)


SCHEMES = [("midpoint", "linear", 0.5), ("discrete_gradient", "linear", 0.5), ("backward_euler", "linear", 1.0),
           ("explicit_euler", "linear", 0.0), ("midpoint", "newton", 0.5), ("discrete_gradient", "newton", 0.5),
           ("backward_euler", "newton", 1.0)]


@pytest.mark.parametrize("method, engine, theta", SCHEMES)
def test_every_scheme_simulates_feedthrough(method, engine, theta):
    m = phsym.parse(RC_NODE)
    fs, n = 20.0, 80
    rng = np.random.default_rng(3)
    u = np.zeros((n + 1, 2))
    u[1:] = rng.standard_normal((n, 2))
    res = phsym.Simulator(m, fs=fs, method=method, engine=engine).run(u)
    assert np.allclose(res.y, _rc_node_steps(u, 1 / fs, theta), rtol=1e-11, atol=1e-12)
    # power balance: y.ubar includes the lossless feedthrough (ubar^T N ubar = 0)
    if theta == 0.5:
        assert res.max_balance_error < 1e-12
    assert np.allclose(res["i(R1)"], res.y[:, 0] + (u[:-1, 1] + theta * np.diff(u[:, 1])), atol=1e-12)


@pytest.mark.parametrize("solver", ["dense", "sparse"])
def test_linear_phs_with_s_and_n_simulates_with_exact_balance(solver):
    # one storage x (C = 2), R = 0.3 on it, S = 0.7 and N on two ports
    lin = LinearPHS(J=[[0.0]], R=[[0.3]], Q=[[0.5]], B=[[1.0, -1.0]],
                    S=[[0.7, 0.0], [0.0, 0.0]], N=[[0.0, 0.4], [-0.4, 0.0]])
    _structure_ok(lin)
    h, n = 0.1, 60
    u = np.zeros((n + 1, 2))
    u[1:] = np.random.default_rng(5).standard_normal((n, 2))
    res = phsym.Simulator(lin, fs=1 / h, method="midpoint", linear_solver=solver).run(u)
    x, y, pd = 0.0, [], []
    for k in range(n):       # x' = -0.3 x/2 + u0 - u1 by the midpoint rule
        ub = 0.5 * (u[k] + u[k + 1])
        x1 = (x * (1 - 0.075 * h) + h * (ub[0] - ub[1])) / (1 + 0.075 * h)
        e = 0.25 * (x + x1)
        y.append([e + 0.7 * ub[0] - 0.4 * ub[1], -e + 0.4 * ub[0]])
        pd.append(0.3 * e * e + 0.7 * ub[0] ** 2)
        x = x1
    assert np.allclose(res.y, y, rtol=1e-12, atol=1e-13)
    assert np.allclose(res.P_diss, pd, rtol=1e-12, atol=1e-13)
    assert res.max_balance_error < 1e-12


def test_linear_phs_feedthrough_checks_and_round_trip(tmp_path):
    kw = dict(J=[[0.0]], R=[[1.0]], Q=[[1.0]], B=[[1.0]])
    with pytest.raises(StructureError, match="S PSD"):
        LinearPHS(**kw, S=[[-1.0]])
    with pytest.raises(StructureError, match="N skew"):
        LinearPHS(**kw, N=[[1.0]])
    with pytest.raises(StructureError, match="S has shape"):
        LinearPHS(**kw, S=np.eye(2))
    lin = LinearPHS(**kw, S=[[0.25]])
    assert lin.transfer(0.0)[0, 0] == pytest.approx(1.25)
    assert lin.to_state_space()[3][0, 0] == pytest.approx(0.25)
    path = tmp_path / "m.json"
    lin.save(path)
    back = LinearPHS.load(path)
    assert np.array_equal(back.S, lin.S) and np.array_equal(back.N, lin.N)
    old = json.loads(path.read_text())
    del old["S"], old["N"]                  # written before feedthrough existed
    assert not LinearPHS.from_dict(old).has_feedthrough
    assert "(S - N) u" in lin.to_latex() and "(S - N) u" not in LinearPHS(**kw).to_latex()


def test_ac_and_op_with_feedthrough():
    m = phsym.parse(RC_NODE.replace("V1 a 0", "V1 a 0 DC 2").replace("I1 0 a", "I1 0 a DC 0.5"))
    f = np.array([0.1, 1.0])
    s = 2j * np.pi * f
    ac = ac_analysis(m, f, source="V1", signals=["y(V1)", "y(I1)"])
    assert np.allclose(ac.response["y(V1)"], s * C / (1 + s * R * C), rtol=1e-12)
    assert np.allclose(ac.response["y(I1)"], 1.0)
    ac = ac_analysis(m, f, source="I1", signals=["y(V1)"])
    assert np.allclose(ac.response["y(V1)"], -1.0)
    # DC: C1 open, so I1's 0.5 A flows through V1 from a to 0 (V1 absorbs 1 W)
    op = operating_point(m)
    assert op.nodes == pytest.approx({"a": 2.0, "b": 2.0}, abs=1e-12)
    assert op.currents == pytest.approx({"V1": 0.5, "I1": 0.5, "R1": 0.0, "C1": 0.0}, abs=1e-12)
    assert op.power == pytest.approx({"V1": 1.0, "I1": -1.0, "R1": 0.0, "C1": 0.0}, abs=1e-12)


def test_nonlinear_load_on_a_fed_node():
    # V1 holds a, I1 feeds it, R1 and a nonlinear conductance i = v/50 + v^3 load it:
    # y_V = -u_I + i with R1 i + v = u_V, i = v/50 + v^3; y_I = u_V
    import scipy.optimize as so
    m = phsym.parse("V1 a 0\nI1 0 a\nR1 a b 10\nR2 b 0 I={v/50 + v**3}\n")
    uv, ui = 1.5, 0.3
    v = so.brentq(lambda v: 10 * (v / 50 + v ** 3) + v - uv, 0.0, uv, xtol=1e-15)
    res = phsym.Simulator(m, fs=100.0, method="discrete_gradient").run({"V1": uv, "I1": ui}, duration=0.05)
    assert np.allclose(res.y, [[-ui + v / 50 + v ** 3, uv]], rtol=1e-10, atol=1e-12)
    assert np.allclose(res.P_diss, 10 * (v / 50 + v ** 3) ** 2 + v * (v / 50 + v ** 3), rtol=1e-10)
    assert np.max(np.abs(res.balance)) < 1e-10
