"""MechanicalEstimator against truths computed here, independently of phsym:
an exact matrix-exponential simulation of the seed's 3-DOF system on a fine
grid (zero-order hold), the midpoint variational recursion written out, and
the Tustin substitution evaluated pointwise."""
import warnings

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.signal as ss

import phsym
from phsym.errors import IdentificationError
from phsym.identify import MechanicalEstimator, UnidentifiableParameterWarning
from phsym.identify.mechanical import NotANetworkError, discretise, midpoint_c2d, midpoint_d2c, network_netlist
from phsym.identify.mechanical.oe import OutputError
from phsym.identify.mechanical.param import Parametrisation

M3 = np.diag([0.8, 2.0, 1.2])
K3 = np.array([[4.0, -1, -1], [-1, 4, -1], [-1, -1, 4]])
D3 = 0.1 * K3


def prbs(N, m, hold, seed):
    """Random binary forces, each level held for ``hold`` samples, zero at t = 0 (system at rest)."""
    rng = np.random.default_rng(seed)
    levels = np.sign(rng.standard_normal((N // hold + 1, m)))
    u = np.repeat(levels, hold, axis=0)[:N]
    u[0] = 0.0
    return u


def exact_zoh(M, D, K, L, u, h, sub=20):
    """Positions at the samples from rest, u held over each sample interval, by expm on a grid h/sub."""
    n, m = L.shape
    Minv = np.linalg.inv(M)
    Z = np.zeros((2 * n + m, 2 * n + m))
    Z[:n, n:2 * n] = np.eye(n)
    Z[n:2 * n, :n] = -Minv @ K
    Z[n:2 * n, n:2 * n] = -Minv @ D
    Z[n:2 * n, 2 * n:] = Minv @ L
    E = sla.expm(Z * h / sub)
    Ad, Bd = E[:2 * n, :2 * n], E[:2 * n, 2 * n:]
    x = np.zeros(2 * n)
    q = np.zeros((u.shape[0], n))
    for k in range(u.shape[0] - 1):
        for _ in range(sub):
            x = Ad @ x + Bd @ u[k]
        q[k + 1] = x[:n]
    return q


def midpoint_recursion(M, D, K, L, u, h):
    """The variational midpoint integrator: Md q_k + Dd q_{k-1} + Kd q_{k-2} = (h/4) L (u_k + 2u_{k-1} + u_{k-2})."""
    Md = M / h + h * K / 4 + D / 2
    Dd = -(2 * M / h - h * K / 2)
    Kd = M / h + h * K / 4 - D / 2
    N, n = u.shape[0], M.shape[0]
    q = np.zeros((N + 2, n))
    f = np.vstack([np.zeros((2, u.shape[1])), u]) @ L.T
    for k in range(2, N + 2):
        q[k] = np.linalg.solve(Md, h / 4 * (f[k] + 2 * f[k - 1] + f[k - 2]) - Dd @ q[k - 1] - Kd @ q[k - 2])
    return q[2:]


def rel(A, B):
    return np.linalg.norm(A - B) / np.linalg.norm(B)


def assert_structure(est):
    for A in (est.M_, est.D_, est.K_):
        assert np.array_equal(A, A.T)
    assert np.linalg.eigvalsh(est.M_).min() > 0
    assert np.linalg.eigvalsh(est.K_).min() > 0
    assert np.linalg.eigvalsh(est.D_).min() > -1e-12 * np.linalg.norm(est.D_)


def test_midpoint_maps_round_trip_and_tustin():
    rng = np.random.default_rng(0)
    A, B, C = (rng.standard_normal((3, 3)) for _ in range(3))
    h = 0.07
    back = midpoint_d2c(*midpoint_c2d(A, B, C, h), h)
    for x, y in zip(back, (A, B, C)):
        np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-13)
    fwd = midpoint_c2d(*midpoint_d2c(A, B, C, h), h)
    for x, y in zip(fwd, (A, B, C)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)
    Md, Dd, Kd = midpoint_c2d(M3, D3, K3, h)
    for z in (np.exp(0.3j), 1.7 - 0.4j):      # Cayley-Tustin: s = (2/h)(1 - 1/z)/(1 + 1/z)
        s = 2 / h * (1 - 1 / z) / (1 + 1 / z)
        lhs = Md + Dd / z + Kd / z ** 2
        rhs = h / 4 * (1 + 1 / z) ** 2 * (M3 * s ** 2 + D3 * s + K3)
        np.testing.assert_allclose(lhs, rhs, rtol=1e-12, atol=1e-12)


def test_discretisations_match_independent_ones():
    h = 0.2
    L = np.eye(3)
    Ad, B0, B1 = discretise(M3, D3, K3, L, h, "zoh")
    A = np.block([[np.zeros((3, 3)), np.eye(3)], [-np.linalg.solve(M3, K3), -np.linalg.solve(M3, D3)]])
    B = np.vstack([np.zeros((3, 3)), np.linalg.inv(M3)])
    Ads, Bds, *_ = ss.cont2discrete((A, B, np.eye(6), np.zeros((6, 3))), h, method="zoh")
    np.testing.assert_allclose(Ad, Ads, atol=1e-13)
    np.testing.assert_allclose(B0, Bds, atol=1e-13)
    assert not B1.any()
    u = prbs(200, 3, 3, 1)
    from phsym.identify.mechanical.oe import simulate_positions
    np.testing.assert_allclose(simulate_positions(*discretise(M3, D3, K3, L, h, "midpoint"), u),
                               midpoint_recursion(M3, D3, K3, L, u, h), atol=1e-12)
    np.testing.assert_allclose(simulate_positions(Ad, B0, B1, u), exact_zoh(M3, D3, K3, L, u, h, sub=4), atol=1e-12)


@pytest.mark.parametrize("kind", ["midpoint", "zoh"])
def test_jacobian_matches_finite_differences(kind):
    rng = np.random.default_rng(3)
    n, m, h = 3, 2, 0.15
    L = rng.standard_normal((n, m))
    par = Parametrisation(n, m, None)                  # L estimated too
    theta = par.pack(M3, D3, K3, L) + 0.05 * rng.standard_normal(par.size)
    u = rng.standard_normal((150, m))
    y = rng.standard_normal((150, n))
    C = np.eye(n) + 0.2 * rng.standard_normal((n, n))
    oe = OutputError(par, u, y, h, kind, C)
    J = oe.jacobian(theta)
    Jn = np.zeros_like(J)
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = 1e-6
        Jn[:, j] = (oe.residuals(theta + e) - oe.residuals(theta - e)) / 2e-6
    assert np.abs(J - Jn).max() <= 1e-6 * np.abs(Jn).max()


def test_noise_free_midpoint_data_recovered_to_round_off():
    h = 0.1
    u = prbs(1500, 3, 4, 2)
    q = midpoint_recursion(M3, D3, K3, np.eye(3), u, h)
    t = np.arange(u.shape[0]) * h
    est = MechanicalEstimator(3, discretisation="auto").fit(t, u, q)
    assert est.discretisation_ == "midpoint"
    for A, B in ((est.M_, M3), (est.D_, D3), (est.K_, K3)):
        assert rel(A, B) < 1e-8
    assert_structure(est)
    assert est.score(t, u, q) > 1 - 1e-14
    Md, Dd, Kd = midpoint_c2d(M3, D3, K3, h)
    np.testing.assert_allclose(est.discrete_["Md"], Md, rtol=1e-8)
    # the fitted LinearPHS has the mechanical transfer function (velocity outputs)
    for s in (0.5j, 2.0 + 1.0j):
        G = est.model_.transfer(s)
        np.testing.assert_allclose(G, s * np.linalg.inv(M3 * s * s + D3 * s + K3), rtol=1e-7, atol=1e-9)


def test_estimated_input_matrix_and_output_matrix():
    # D must not be proportional (a D in the algebra of M^-1 K lets T M, T D, T K, T L with
    # T = K M^-1 reproduce the data: then only the warning below is right)
    D = np.array([[0.5, -0.1, 0.0], [-0.1, 0.3, -0.05], [0.0, -0.05, 0.4]])
    h = 0.1
    rng = np.random.default_rng(5)
    L = np.eye(3) + 0.3 * rng.standard_normal((3, 3))
    C = np.eye(3) + 0.2 * rng.standard_normal((3, 3))
    u = prbs(1500, 3, 4, 6)
    y = midpoint_recursion(M3, D, K3, L, u, h) @ C.T
    t = np.arange(u.shape[0]) * h
    est = MechanicalEstimator(3, input_matrix="estimate", discretisation="midpoint").fit(t, u, y, C=C)
    c = est.M_[0, 0] / M3[0, 0]                     # scale fixed by the normalisation
    for A, B in ((est.M_, M3), (est.D_, D), (est.K_, K3), (est.L_, L)):
        assert rel(A / c, B) < 1e-7
    est2 = MechanicalEstimator(3, input_matrix=L, discretisation="midpoint").fit(t, u, y, C=C)
    assert rel(est2.K_, K3) < 1e-8
    yp = midpoint_recursion(M3, D3, K3, L, u, h) @ C.T      # proportional damping: L not identifiable
    with pytest.warns(UnidentifiableParameterWarning):
        MechanicalEstimator(3, input_matrix="estimate", discretisation="midpoint", max_iter=20).fit(t, u, yp, C=C)


def test_exact_zoh_data_with_noise_within_statistical_accuracy():
    h = 0.3
    u = prbs(3000, 3, 1, 7)
    q = exact_zoh(M3, D3, K3, np.eye(3), u, h)
    rng = np.random.default_rng(8)
    sigma = np.sqrt(np.mean(q ** 2, axis=0)) * 10 ** (-15 / 20)
    y = q + sigma * rng.standard_normal(q.shape)
    t = np.arange(u.shape[0]) * h
    est = MechanicalEstimator(3).fit(t, u, y)
    assert est.discretisation_ == "zoh"                # the midpoint model is biased at h = 0.3
    assert_structure(est)
    assert abs(est.sigma2_ / np.mean(sigma ** 2) - 1) < 0.2     # residuals at the noise level
    for A, B, S in ((est.M_, M3, est.M_std_), (est.D_, D3, est.D_std_), (est.K_, K3, est.K_std_)):
        z = (A - B)[np.tril_indices(3)] / S[np.tril_indices(3)]
        assert np.mean(z ** 2) < 9.0                   # errors as large as the covariance says, not more
        assert rel(A, B) < 0.05
    assert est.unidentified_ == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mid = MechanicalEstimator(3, discretisation="midpoint").fit(t, u, y)
    assert rel(mid.K_, K3) > 2 * rel(est.K_, K3)      # the approximate model is visibly worse here


def test_plain_equation_error_is_biased_by_noise():
    from phsym.identify.mechanical.equation_error import equation_error
    h = 0.05
    u = prbs(4000, 3, 10, 9)
    q = exact_zoh(M3, D3, K3, np.eye(3), u, h, sub=5)
    y = q + np.sqrt(np.mean(q ** 2, axis=0)) * 10 ** (-15 / 20) * np.random.default_rng(10).standard_normal(q.shape)
    M, D, K, _ = equation_error(u, y, h, np.eye(3))
    est = MechanicalEstimator(3).fit(np.arange(u.shape[0]) * h, u, y)
    assert rel(M, M3) > 0.5                            # second differences of noise swamp the signal
    assert rel(est.M_, M3) < 0.03


def test_unidentified_input_column_is_reported():
    h = 0.1
    u = prbs(800, 2, 4, 11)
    u[:, 1] = 0.0                                      # the second force never acts
    L = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    q = midpoint_recursion(M3, D3, K3, L, u, h)
    with pytest.warns(UnidentifiableParameterWarning, match="L"):
        est = MechanicalEstimator(3, input_matrix="estimate", discretisation="midpoint", max_iter=30).fit(
            np.arange(800) * h, u, q)
    assert "L" in est.unidentified_


def test_clone_params_and_errors():
    sklearn_base = pytest.importorskip("sklearn.base")
    est = MechanicalEstimator(3, discretisation="zoh", tol=1e-8)
    c = sklearn_base.clone(est)
    assert c.get_params() == est.get_params() and c is not est
    t = np.arange(100) * 0.1
    u = np.ones((100, 3))
    with pytest.raises(IdentificationError, match="not fitted"):
        est.predict(t, u)
    with pytest.raises(IdentificationError, match="columns"):
        est.fit(t, u, np.zeros((100, 2)))
    bad = np.zeros((100, 3))
    bad[5, 1] = np.nan
    with pytest.raises(IdentificationError, match="non-finite"):
        est.fit(t, u, bad)
    with pytest.raises(IdentificationError, match="input_matrix"):
        MechanicalEstimator(3).fit(t, np.ones((100, 2)), np.zeros((100, 3)))
    with pytest.raises(IdentificationError, match="discretisation"):
        MechanicalEstimator(3, discretisation="euler").fit(t, u, np.zeros((100, 3)))


def test_netlist_round_trip_through_phsym():
    h = 0.1
    u = prbs(1500, 3, 4, 12)
    q = midpoint_recursion(M3, D3, K3, np.eye(3), u, h)
    est = MechanicalEstimator(3, discretisation="midpoint").fit(np.arange(1500) * h, u, q)
    text = est.to_netlist(tol=1e-6)
    lin = phsym.parse(text).linearize()
    for s in (0.4j, 1.5 + 0.5j):            # force -> velocity of the loaded network
        np.testing.assert_allclose(lin.transfer(s), s * np.linalg.inv(M3 * s * s + D3 * s + K3), rtol=1e-6)
    assert text.count(" spring ") == 6 and text.count(" damper ") == 6 and text.count(" mass ") == 3


def test_netlist_refuses_non_network_matrices():
    K = K3.copy()
    K[0, 1] = K[1, 0] = 0.5                     # a positive coupling: no spring does that
    with pytest.raises(NotANetworkError, match=r"K\[0,1\]"):
        network_netlist(M3, D3, K)
    with pytest.raises(NotANetworkError, match="not diagonal"):
        network_netlist(M3 + 0.1, D3, K3)
    with pytest.raises(NotANetworkError, match="column 0 of L"):
        network_netlist(M3, D3, K3, np.array([[1.0], [1.0], [1.0]]))
    text = network_netlist(M3, D3, K3, np.array([[1.0], [-1.0], [0.0]]))
    assert "F1 v1 v2 force" in text
