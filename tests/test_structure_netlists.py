"""Bundled netlists: structure checks and transfer functions against hand derivations."""
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import phsym
from phsym.errors import StructureError
from phsym.benchmarks import msd_chain

NET = Path(__file__).resolve().parent.parent / "netlists"
S_POINTS = np.array([0.3j, 1.0 + 2.0j, 17j, 250.0 + 40j, 3e3j, 1e4 + 2e4j])


def rel_err(a, b):
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))


@pytest.mark.parametrize("path", sorted(NET.glob("*.cir")), ids=lambda p: p.stem)
def test_every_netlist_passes_checks(path):
    model = phsym.load(path)
    checks = model.check()
    assert all(checks.values()), checks
    J = model.structure.J_matrix()
    assert (J + J.T).applyfunc(sp.simplify) == sp.zeros(*J.shape)
    if any(d.coupled for d in model.structure.dissipative):
        # transistors and tubes: their small-signal model has power gain
        with pytest.raises(StructureError, match="multiport"):
            model.linearize(x0=_x0(model))
        return
    lin = model.linearize(x0=_x0(model))
    assert all(lin.check().values())


def _x0(model):
    # operate the nonlinear capacitor at its initial charge (q = 2)
    return [2.0] if model.name.startswith("RC with nonlinear") else None


def test_series_rlc():
    m = phsym.load(NET / "rlc.cir")
    R, L, C = 10.0, 1e-3, 1e-6
    s = S_POINTS
    Y = 1 / (R + s * L + 1 / (s * C))
    assert rel_err(m.linearize().transfer(s)[:, 0, 0], Y) < 1e-10
    # explicit PHS: no algebraic variable, R = diag(R1, 0, 0)
    ex = m.explicit
    assert ex is not None and m.structure.n_lambda == 0
    assert sp.simplify(ex.R[0, 0] - sp.Symbol("R", real=True)) == 0


def test_dc_network_equivalent_to_seed_001():
    m = phsym.load(NET / "dc_network.cir")
    L, C1, C2, RL, RG, RR = 2.0, 0.01, 0.02, 1.0, 6.0, 3.0
    E = np.diag([L, C1, C2, 0, 0])
    J = np.array([[0, -1, 1, 0, 0], [1, 0, 0, -1, 0], [-1, 0, 0, 0, -1],
                  [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]], float)
    R = np.diag([RL, 0, 0, RG, RR])
    B = np.eye(5)[:, [3]]
    seed = phsym.LinearPHS(J, R, None, B, E)
    lin = m.linearize()
    assert lin.is_descriptor
    assert rel_err(lin.transfer(S_POINTS), seed.transfer(S_POINTS)) < 1e-10
    # same poles as the seed's pencil
    key = lambda z: (round(z.real, 6), round(z.imag, 6))
    p1 = np.array(sorted(lin.poles(), key=key))
    p2 = np.array(sorted(seed.poles(), key=key))
    assert np.allclose(p1, p2, rtol=1e-9)


def test_two_mass_chain_against_impedance_matrix_and_benchmark_definition():
    m = phsym.load(NET / "two_mass.cir")
    mm, k, c = 4.0, 4.0, 1.0
    got = m.linearize().transfer(S_POINTS)[:, 0, 0]
    Z = lambda s: np.array([[mm * s + c + k / s, -k / s], [-k / s, mm * s + c + 2 * k / s]])
    want = np.array([np.linalg.inv(Z(s))[0, 0] for s in S_POINTS])
    assert rel_err(got, want) < 1e-10
    ref = msd_chain(n_cells=2, io_dim=1, c=c, m=mm, k=k)
    assert rel_err(got, ref.transfer(S_POINTS)[:, 0, 0]) < 1e-10


@pytest.mark.parametrize("name", ["loudspeaker.cir", "loudspeaker_gyrator.cir"])
def test_loudspeaker(name):
    m = phsym.load(NET / name)
    Re, Le, Bl, mm, k, c = 6.0, 0.5e-3, 5.0, 20e-3, 2e3, 1.5
    s = S_POINTS
    Z = Re + s * Le + Bl ** 2 / (s * mm + c + k / s)
    assert rel_err(m.linearize().transfer(s)[:, 0, 0], 1 / Z) < 1e-10
    assert m.explicit is not None   # two-port variables eliminate


def test_index2_capacitor_parallel_voltage_source():
    m = phsym.load(NET / "c_parallel_v.cir")
    S = m.structure
    assert S.n_lambda == 1 and m.explicit is None     # constrained capacitor
    lin = m.linearize()
    s = S_POINTS
    assert rel_err(lin.transfer(s)[:, 0, 0], s * 1e-6 + 1 / 100) < 1e-10
    with pytest.raises(phsym.StructureError):
        lin.to_state_space()      # index 2: no explicit state space


def test_nonlinear_capacitor_rc():
    m = phsym.load(NET / "rc_nonlinear_c.cir")
    q = sp.Symbol("q_C1", real=True)
    # u_C = sqrt(2 q) for q >= 0, continued as an odd law (a real energy for either sign)
    for x in (-3.0, -0.5, 0.5, 2.0, 8.0):
        assert float(m.hamiltonian.subs(q, x)) == pytest.approx(2 * np.sqrt(2) / 3 * abs(x) ** 1.5)
        assert float(m.structure.gradients[0].subs(q, x)) == pytest.approx(np.sign(x) * np.sqrt(2 * abs(x)))
    # small signal at q = 2: u_C = sqrt(2q), du/dq = 1/2 -> C_ss = 2 F, R = 1/G = 1
    s = S_POINTS
    Y = 1 / (1 + 1 / (2 * s))
    assert rel_err(m.linearize(x0=[2.0]).transfer(s)[:, 0, 0], Y) < 1e-10


def test_transformer_coupled():
    m = phsym.load(NET / "transformer.cir")
    n, Rs, Lp, RL, C = 2.0, 50.0, 10e-3, 8.0, 100e-6
    s = S_POINTS
    Z = Rs + s * Lp + n ** 2 * (RL + 1 / (s * C))
    assert rel_err(m.linearize().transfer(s)[:, 0, 0], 1 / Z) < 1e-10
    # changing the ratio through params changes the reflected impedance
    Z3 = Rs + s * Lp + 9 * (RL + 1 / (s * C))
    assert rel_err(m.linearize(params={"n": 3}).transfer(s)[:, 0, 0], 1 / Z3) < 1e-10


def test_diode_clipper_structure_and_small_signal():
    m = phsym.load(NET / "diode_clipper.cir")
    S = m.structure
    assert S.n_x == 1 and S.n_lambda == 0
    assert [d.linear for d in S.dissipative] == [True, False, False]
    ex = m.explicit
    # only the two diodes stay as dissipative unknowns of the explicit form
    assert len(ex.kept) == 1 + 2 + 1
    Rs, C, Is, N, Vt = 2.2e3, 10e-9, 2.52e-9, 1.752, 0.02585
    Gd = 2 * (Is / (N * Vt) + 1e-12)       # each diode: Shockley slope at 0 V plus GMIN
    s = S_POINTS
    Y = (1 / Rs) * (1 - (1 / Rs) / (1 / Rs + s * C + Gd))
    assert rel_err(m.linearize().transfer(s)[:, 0, 0], Y) < 1e-10


def test_coupled_inductors():
    m = phsym.parse("""
V1 a 0
R1 a b 1
L1 b 0 1m
L2 c 0 4m
R2 c 0 10
K1 L1 L2 0.9
""")
    assert len(m.structure.storages) == 1 and len(m.structure.storages[0].states) == 2
    L1, L2 = 1e-3, 4e-3
    M = 0.9 * np.sqrt(L1 * L2)
    s = S_POINTS
    Zin = 1 + s * L1 - (s * M) ** 2 / (s * L2 + 10)
    assert rel_err(m.linearize().transfer(s)[:, 0, 0], 1 / Zin) < 1e-10
    assert all(m.check().values())


def test_rotational_domain_with_gyrator_motor():
    # DC motor: electrical R, L; gyrator k between current and torque in the
    # impedance view is a transformer in mobility: torque = k i, emf = k w.
    m = phsym.parse("""
V1 in 0
R1 in a 2
L1 a b 10m
TF1 b 0 w 0 0.1
J1 w 0 inertia J=0.01
B1 w 0 rdamper c=0.001
""")
    R, L, k, J, b = 2.0, 10e-3, 0.1, 0.01, 0.001
    s = S_POINTS
    Z = R + s * L + k ** 2 / (s * J + b)
    assert rel_err(m.linearize().transfer(s)[:, 0, 0], 1 / Z) < 1e-10


def test_subcircuit_chain_matches_flat_netlist():
    flat = phsym.parse("V1 a 0\nR1 a b 1k\nC1 b 0 1u\nR2 b c 1k\nC2 c 0 1u\n")
    sub = phsym.parse("""
.subckt RC in out params: r=1k c=1u
R1 in out r
C1 out 0 c
.ends
V1 a 0
X1 a b RC
X2 b c RC
""")
    s = S_POINTS
    assert rel_err(sub.linearize().transfer(s), flat.linearize().transfer(s)) < 1e-12


def test_zero_test_of_the_symbolic_checks():
    """Coefficient by coefficient: exact for symbolic coefficients; to round-off only where a
    coefficient carries floats (a beam's modal roots), and then a real difference still counts."""
    from phsym.structure.checks import _is_zero
    a, b, e0, e1 = sp.symbols("a b _e0 _e1", positive=True)
    vals = {a: 2.0, b: 3.0}
    assert _is_zero(a / (a + b) * e0 * e1 + b / (a + b) * e0 * e1 - e0 * e1, [e0, e1], vals)
    assert not _is_zero(a * e0 * e1 - b * e0 * e1, [e0, e1], vals)
    c = sp.Float(4.694091132974175)
    trig = c * sp.sin(a) ** 2 * e0 + c * sp.cos(a) ** 2 * e0      # cancel() does not know sin^2 + cos^2 = 1
    assert sp.cancel(trig - c * e0) != 0
    assert _is_zero(trig - c * e0, [e0, e1], vals)
    assert not _is_zero(trig - sp.Float(1.000001) * c * e0, [e0, e1], vals)
    assert not _is_zero(sp.Float(1e-16) * a * e0, [e0, e1], vals)     # nothing to cancel against
