"""Descriptor/explicit forms, graph attributes and LinearPHS conversions."""
import numpy as np
import pytest
import scipy.signal as ss
import sympy as sp

import phsym
from phsym.structure.linear import LinearPHS

S_POINTS = np.array([0.5j, 2.0 + 1.0j, 40j, 1e3 + 1e3j])


def test_inductor_cut_set_with_current_source_is_index_2():
    # node a carries only I1 and L1: the inductor current is the source current
    m = phsym.parse("I1 0 a\nL1 a b 10m\nR1 b 0 5\n")
    S = m.structure
    assert S.n_lambda == 1 and m.explicit is None
    assert all(m.check().values())
    # y(I1) = v(a): the source sees Z = s L + R
    got = m.linearize().transfer(S_POINTS)[:, 0, 0]
    assert np.allclose(got, S_POINTS * 10e-3 + 5, rtol=1e-12)


def test_descriptor_form_dc_network_matches_seed_layout():
    m = phsym.load("netlists/dc_network.cir")
    d = m.descriptor()
    n = len(d.xi)
    assert d.E == sp.diag(1, 1, 1, 0, 0, 0)[:n, :n]
    assert (d.J + d.J.T) == sp.zeros(n, n)
    R = d.R.subs({s: 1 for s in d.R.free_symbols})
    assert all(R[i, i] >= 0 for i in range(n)) and R.is_diagonal()
    # E^T z = grad H
    H = m.hamiltonian
    gradH = sp.Matrix([sp.diff(H, x) for x in m.structure.states] + [0] * (n - 3))
    assert (d.E.T * d.z - gradH).applyfunc(sp.simplify) == sp.zeros(n, 1)


def test_descriptor_rejects_nonlinear_dissipation():
    with pytest.raises(phsym.StructureError, match="linear dissipation"):
        phsym.load("netlists/diode_clipper.cir").descriptor()


def test_graph_carries_domains_and_orientation():
    m = phsym.load("netlists/loudspeaker.cir")
    g = m.graph
    assert g.nodes["in"]["domain"] == "electrical"
    assert g.nodes["cone"]["domain"] == "translational"
    edges = {k: (u, v, d) for u, v, k, d in g.edges(keys=True, data=True)}
    assert edges["M1"][:2] == ("cone", "0") and edges["M1"][2]["element"] == "M1"
    assert edges["TF1.s"][2]["role"] == "twoport"


def test_to_scipy_matches_transfer_for_regular_and_index1():
    for path in ["netlists/rlc.cir", "netlists/dc_network.cir", "netlists/loudspeaker.cir"]:
        lin = phsym.load(path).linearize()
        A, B, C, D = lin.to_state_space()
        sys_ = lin.to_scipy()
        for s in S_POINTS:
            G = C @ np.linalg.solve(s * np.eye(A.shape[0]) - A, B) + D
            assert np.allclose(G, lin.transfer(s), rtol=1e-10)
            num, den = ss.ss2tf(sys_.A, sys_.B, sys_.C, sys_.D)
            assert np.allclose(np.polyval(num[0], s) / np.polyval(den, s), lin.transfer(s)[0, 0], rtol=1e-8)


def test_to_control_when_installed():
    control = pytest.importorskip("control")
    lin = phsym.load("netlists/rlc.cir").linearize()
    sysc = lin.to_control()
    assert np.allclose(control.evalfr(sysc, 2j), lin.transfer(2j)[0, 0], rtol=1e-10)


def test_linearphs_save_load_and_discretize(tmp_path):
    lin = phsym.load("netlists/two_mass.cir").linearize()
    A, B, C, D = lin.to_state_space()
    reg = LinearPHS.from_matrices(J=np.zeros((1, 1)), R=[[1.0]], Q=[[2.0]], B=[[1.0]])
    path = tmp_path / "m.json"
    lin.save(path)
    back = phsym.load(path)
    assert isinstance(back, LinearPHS)
    assert np.allclose(back.transfer(S_POINTS), lin.transfer(S_POINTS), rtol=1e-14)
    # midpoint discretisation = bilinear map of x' = -2 x + u
    h = 0.1
    Ad, Bd = reg.discretize(h, "midpoint")
    assert np.isclose(Ad[0, 0], (1 - h) / (1 + h)) and np.isclose(Bd[0, 0], h / (1 + h))


def test_hamiltonian_of_linear_model_matches_energy_matrix():
    m = phsym.load("netlists/rlc.cir")
    lin = m.linearize()
    x = np.array([0.3, -2e-6, 0.0])
    H = float(m.hamiltonian.subs(m.parameter_values()).subs(dict(zip(m.structure.states, x[:2]))))
    assert np.isclose(lin.hamiltonian(x), H, rtol=1e-12)


def test_checks_detect_a_corrupted_structure():
    m = phsym.load("netlists/rlc.cir")
    assert all(m.check().values())
    S = m.structure
    (r, c) = next(k for k in S.J if k[0] != k[1])
    S.J[(r, c)] = 2 * S.J[(r, c)]          # break skew symmetry (and Kirchhoff)
    for cached in ("explicit", "_checks"):      # a model caches both
        m.__dict__.pop(cached, None)
    checks = m.check()
    assert not checks["J skew"] and not checks["power balance"]


@pytest.mark.parametrize("name", ["overdrive", "rhodes", "cantilever", "fractional_integrator", "dc_network", "transformer"])
def test_explicit_form_is_the_numeric_schur_complement(name):
    """The explicit form's J and R (computed in the field of rational functions of the parameters, or
    as cancelled sums where an entry is outside it: rhodes, cantilever) at the netlist's values against the same
    elimination in floats with numpy: eliminated rows ``(Gamma - J_ee) X = J_ek``, kept block
    ``M = J_kk + J_ke X``, J its skew and R its negated symmetric part."""
    m = phsym.load(f"netlists/{name}.cir")
    S, ex = m.structure, m.explicit
    assert ex is not None and ex.eliminated_index
    vals = m.parameter_values()
    Jn = S.J_numeric(vals, dense=True)
    elim, kept = ex.eliminated_index, ex.kept
    gamma = np.zeros(len(elim))
    for a, i in enumerate(elim):
        if S.variables[i].block == "w":
            d = S.dissipative[i - S.n_x]
            gamma[a] = 1.0 / float(sp.diff(d.z, d.w).xreplace({s: sp.Float(vals[s]) for s in d.z.free_symbols
                                                               if s in vals}))
    X = np.linalg.solve(np.diag(gamma) - Jn[np.ix_(elim, elim)], Jn[np.ix_(elim, kept)])
    M = Jn[np.ix_(kept, kept)] + Jn[np.ix_(kept, elim)] @ X
    num = lambda A: np.array(A.xreplace({s: sp.Float(vals[s]) for s in A.free_symbols if s in vals}),  # noqa: E731
                             dtype=float)
    scale = np.abs(M).max()
    assert np.allclose(num(ex.J), (M - M.T) / 2, rtol=1e-10, atol=1e-12 * scale)
    assert np.allclose(num(ex.R), -(M + M.T) / 2, rtol=1e-10, atol=1e-12 * scale)
    assert np.allclose(num(ex.coefficients), X, rtol=1e-10, atol=1e-12 * np.abs(X).max())
