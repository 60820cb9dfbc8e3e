"""The fast paths of MechanicalEstimator against the plain computations they replace:
J^T J and J^T r from the modal Gram matrix against the formed Jacobian (itself
checked by finite differences in test_identify_mechanical.py) and against
finite differences directly; the QR-compressed equation error against the
full least-squares problem built here; the inverse Cayley map against the
midpoint discretisation; the Levenberg-Marquardt stop hook."""
import numpy as np
import pytest

from phsym.identify.mechanical import discretise
from phsym.identify.mechanical.equation_error import _sym_basis, equation_error
from phsym.identify.mechanical.gram import modal_normal_equations
from phsym.identify.mechanical.lm import levenberg_marquardt
from phsym.identify.mechanical.oe import OutputError
from phsym.identify.mechanical.param import Parametrisation
from phsym.identify.mechanical.zoh_start import tustin_second_order

M3 = np.diag([0.8, 2.0, 1.2])
K3 = np.array([[4.0, -1, -1], [-1, 4, -1], [-1, -1, 4]])
D3 = 0.1 * K3


def _problem(kind, estimate_L, seed=3, N=300, h=0.15):
    rng = np.random.default_rng(seed)
    n, m = 3, 2 if estimate_L else 3
    L = rng.standard_normal((n, m)) if estimate_L else np.eye(n)
    par = Parametrisation(n, m, None if estimate_L else L)
    theta = par.pack(M3, D3, K3, L) + 0.05 * rng.standard_normal(par.size)
    u = rng.standard_normal((N, m))
    y = rng.standard_normal((N, n))
    C = np.eye(n) + 0.2 * rng.standard_normal((n, n))
    return OutputError(par, u, y, h, kind, C), theta


@pytest.mark.parametrize("kind", ["midpoint", "zoh"])
@pytest.mark.parametrize("estimate_L", [False, True])
def test_gram_normal_equations_equal_formed_jacobian(kind, estimate_L):
    oe, theta = _problem(kind, estimate_L)
    J = oe.jacobian(theta)
    r = oe.residuals(theta)
    A, g = oe.normal_equations(theta)
    A0, g0 = J.T @ J, J.T @ r
    assert np.abs(A - A0).max() <= 1e-11 * np.abs(A0).max()
    assert np.abs(g - g0).max() <= 1e-11 * np.abs(g0).max()


def test_gram_gradient_matches_finite_differences():
    oe, theta = _problem("zoh", True, seed=5, N=200)

    def cost(th):
        r = oe.residuals(th)
        return 0.5 * float(r @ r)

    _, g = oe.normal_equations(theta)
    for j in range(0, theta.size, 4):
        e = np.zeros_like(theta)
        e[j] = 1e-6
        fd = (cost(theta + e) - cost(theta - e)) / 2e-6
        assert abs(fd - g[j]) <= 1e-5 * max(np.abs(g).max(), 1.0)


def test_gram_refuses_defective_update_matrix():
    Ad = np.array([[1.0, 1.0], [0.0, 1.0]])       # Jordan block: no eigenbasis
    z2 = np.zeros((2, 1, 1))
    out = modal_normal_equations(Ad, np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 2, 1)), z2, z2,
                                 np.ones((10, 1)), np.ones((2, 10)), np.eye(1), np.ones((10, 1)))
    assert out is None


@pytest.mark.parametrize("known_L", [True, False])
def test_compressed_equation_error_equals_full_least_squares(known_L):
    rng = np.random.default_rng(7)
    N, n, h = 400, 3, 0.1
    q = rng.standard_normal((N, n))
    u = rng.standard_normal((N, n))
    L = np.eye(n) if known_L else None
    M, D, K, Lh = equation_error(u, q, h, L)
    # the full regression (rows (k, i)) written out here
    a = (q[2:] - 2 * q[1:-1] + q[:-2]) / h ** 2
    b = (q[2:] - q[:-2]) / (2 * h)
    c = (q[2:] + 2 * q[1:-1] + q[:-2]) / 4
    g = (u[2:] + 2 * u[1:-1] + u[:-2]) / 4
    T = _sym_basis(n)
    rows = []
    for k in range(N - 2):
        for i in range(n):
            row = []
            for z in (a, b, c):
                full = np.zeros((n, n))
                full[i] = z[k]
                row.append(full.reshape(-1) @ T)
            if not known_L:
                full = np.zeros((n, n))
                full[i] = -g[k]
                row.append(full.reshape(-1))
            rows.append(np.concatenate(row))
    Phi = np.array(rows)
    if known_L:
        sol = np.linalg.lstsq(Phi, g.reshape(-1), rcond=None)[0]
    else:
        sol = np.concatenate([[1.0], np.linalg.lstsq(Phi[:, 1:], -Phi[:, 0], rcond=None)[0]])
        np.testing.assert_allclose(Lh.reshape(-1), sol[18:], rtol=1e-8, atol=1e-10)
    nv = T.shape[1]
    for k, X in enumerate((M, D, K)):
        np.testing.assert_allclose(X, (T @ sol[k * nv:(k + 1) * nv]).reshape(n, n), rtol=1e-8, atol=1e-10)


def test_inverse_cayley_recovers_midpoint_parameters():
    h, L = 0.3, np.eye(3)
    Ad, B0, B1 = discretise(M3, D3, K3, L, h, "midpoint")
    Cq = np.hstack([np.eye(3), np.zeros((3, 3))])
    for X, Y in zip(tustin_second_order(Ad, B0 + B1, Cq, h, L), (M3, D3, K3)):
        np.testing.assert_allclose(X, Y, rtol=1e-10, atol=1e-12)
    # from a ZOH model: the midpoint model of the result has the same poles
    Az, Bz, _ = discretise(M3, D3, K3, L, h, "zoh")
    Mt, Dt, Kt = tustin_second_order(Az, Bz, Cq, h, L)
    At, *_ = discretise(Mt, Dt, Kt, L, h, "midpoint")
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(At)), np.sort_complex(np.linalg.eigvals(Az)),
                               rtol=1e-10)


def test_levenberg_marquardt_stop_hook_and_arguments():
    target = np.array([1.0, -2.0, 3.0])

    def fun(x):
        return np.concatenate([x - target, 0.1 * (x ** 3 - target ** 3)])

    def jac(x):
        return np.vstack([np.eye(3), np.diag(0.3 * x ** 2)])

    full = levenberg_marquardt(fun, jac, np.zeros(3))
    np.testing.assert_allclose(full["x"], target, rtol=1e-8)
    assert full["converged"] and not full["stopped"]
    early = levenberg_marquardt(fun, jac, np.zeros(3), stop=lambda hist: len(hist) >= 3)
    assert early["stopped"] and early["n_iter"] == 2
    normal = levenberg_marquardt(fun, None, np.zeros(3), normal=lambda x: (jac(x).T @ jac(x), jac(x).T @ fun(x)))
    np.testing.assert_allclose(normal["x"], full["x"], rtol=1e-12)
    with pytest.raises(ValueError):
        levenberg_marquardt(fun, None, np.zeros(3))


def test_subspace_start_recovers_noise_free_zoh_system():
    import scipy.signal as ss
    from phsym.identify.mechanical.subspace import moesp
    from phsym.identify.mechanical.zoh_start import d2c_second_order
    h, n = 0.1, 3
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-np.linalg.solve(M3, K3), -np.linalg.solve(M3, D3)]])
    B = np.vstack([np.zeros((n, n)), np.linalg.inv(M3)])
    Ad, Bd, *_ = ss.cont2discrete((A, B, np.eye(2 * n), np.zeros((2 * n, n))), h, method="zoh")
    u = np.sign(np.random.default_rng(4).standard_normal((1500, n)))
    u[0] = 0.0
    x = np.zeros(2 * n)
    q = np.zeros((1500, n))
    for k in range(1499):                   # exact ZOH samples, written out here
        x = Ad @ x + Bd @ u[k]
        q[k + 1] = x[:n]
    As, Bs, Cs = moesp(u, q, 2 * n)
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(As)), np.sort_complex(np.linalg.eigvals(Ad)),
                               rtol=1e-9)
    for k in range(4):                      # Markov parameters C A^k B
        np.testing.assert_allclose(Cs @ np.linalg.matrix_power(As, k) @ Bs,
                                   np.linalg.matrix_power(Ad, k)[:n] @ Bd, atol=1e-10)
    for X, Y in zip(d2c_second_order(As, Bs, Cs, h, np.eye(n)), (M3, D3, K3)):
        np.testing.assert_allclose(X, Y, rtol=1e-8, atol=1e-10)
    with pytest.raises(Exception, match="too few"):
        moesp(u[:40], q[:40], 2 * n)


def test_subspace_start_and_stalled_second_model_in_the_estimator():
    from phsym.errors import IdentificationError
    from phsym.identify import MechanicalEstimator
    from tests.test_identify_mechanical import exact_zoh, prbs
    h = 0.4                                  # coarse: h * omega_max ~ 0.9, the midpoint model is biased
    u = prbs(1500, 3, 1, 11)
    q = exact_zoh(M3, D3, K3, np.eye(3), u, h, sub=1)
    t = np.arange(1500) * h
    est = MechanicalEstimator(3, init="subspace", discretisation="zoh").fit(t, u, q)
    assert est.start_ == "subspace" and est.n_iter_["zoh"] <= 6
    for X, Y in ((est.M_, M3), (est.D_, D3), (est.K_, K3)):
        np.testing.assert_allclose(X, Y, rtol=1e-7, atol=1e-9)
    y = q + 0.02 * q.std() * np.random.default_rng(2).standard_normal(q.shape)
    auto = MechanicalEstimator(3).fit(t, u, y)
    assert auto.discretisation_ == "zoh" and auto.costs_["midpoint"] > 1.05 * auto.costs_["zoh"]
    assert auto.n_iter_["midpoint"] < 100    # stopped by the stall rule or converged, not by max_iter
    with pytest.raises(IdentificationError, match="known input_matrix"):
        MechanicalEstimator(3, input_matrix="estimate", init="subspace").fit(t, u, y)


def test_normal_equations_fall_back_to_the_formed_jacobian(monkeypatch):
    from phsym.identify.mechanical import gram
    oe, theta = _problem("midpoint", False, seed=9, N=200)
    A, g = oe.normal_equations(theta)
    monkeypatch.setattr(gram, "MAX_MODAL_COND", 0.0)      # every eigenbasis counts as ill-conditioned
    assert gram.modal_normal_equations(*oe._model(theta, True), oe.u, np.zeros((6, 200)), oe.C,
                                       np.zeros((200, 3))) is None
    A1, g1 = oe.normal_equations(theta)
    np.testing.assert_allclose(A1, A, rtol=1e-10, atol=1e-12 * np.abs(A).max())
    np.testing.assert_allclose(g1, g, rtol=1e-10, atol=1e-12 * np.abs(g).max())


@pytest.mark.parametrize("kind", ["midpoint", "zoh"])
def test_lyapunov_sums_equal_the_direct_sums(kind, monkeypatch):
    """The basis sums from the filters' Lyapunov identity against the sums formed sample by sample
    (the fallback path), on lightly damped modes at a fine step (|lambda| close to 1)."""
    from phsym.identify.mechanical import gram
    rng = np.random.default_rng(11)
    par = Parametrisation(3, 3, np.eye(3))
    theta = par.pack(M3, 0.01 * K3, K3, np.eye(3))
    u, y = rng.standard_normal((400, 3)), rng.standard_normal((400, 3))
    oe = OutputError(par, u, y, 0.002, kind)
    lam = np.linalg.eigvals(oe._model(theta, False)[0])
    assert 1 - np.abs(lam).max() ** 2 < 1e-4                    # the hard case for the identity
    A, g = oe.normal_equations(theta)
    monkeypatch.setattr(gram, "MIN_LYAPUNOV_GAP", np.inf)        # force the direct sums
    A1, g1 = oe.normal_equations(theta)
    assert np.abs(A - A1).max() <= 1e-10 * np.abs(A1).max()
    np.testing.assert_allclose(g, g1, rtol=1e-12, atol=1e-14 * np.abs(g1).max())


def test_undamped_modes_take_the_direct_sums():
    """D = 0 puts the midpoint poles on the unit circle (1 - |lambda|^2 = 0): the identity would
    divide by zero, so the sums are formed directly, and still equal the formed Jacobian's."""
    rng = np.random.default_rng(12)
    par = Parametrisation(3, 3, np.eye(3))
    theta = par.pack(M3, np.zeros((3, 3)), K3, np.eye(3))
    u, y = rng.standard_normal((200, 3)), rng.standard_normal((200, 3))
    oe = OutputError(par, u, y, 0.05, "midpoint")
    J, r = oe.jacobian(theta), oe.residuals(theta)
    A, g = oe.normal_equations(theta)
    assert np.all(np.isfinite(A))
    assert np.abs(A - J.T @ J).max() <= 1e-10 * np.abs(J.T @ J).max()
    assert np.abs(g - J.T @ r).max() <= 1e-10 * np.abs(J.T @ r).max()


def test_race_refines_the_start_lowest_after_one_step():
    """On Rosenbrock's valley the start with the lower cost lies far along the valley and the
    other one just off it near the minimum: one Gauss-Newton step ranks them the other way round."""
    from phsym.identify.mechanical.starts import race

    class Valley:
        n_evals = 0

        def residuals(self, th):
            Valley.n_evals += 1
            return np.array([10.0 * (th[1] - th[0] ** 2), 1.0 - th[0]])

        def normal_equations(self, th):
            J = np.array([[-20.0 * th[0], 10.0], [-1.0, 0.0]])
            return J.T @ J, J.T @ self.residuals(th)

    class Pack:
        def pack(self, *cand):
            return np.array(cand, dtype=float)

    along, near = (-1.2, 1.44), (1.0, 1.3)
    oe = Valley()
    cost = {s: 0.5 * float(np.sum(oe.residuals(np.array(s)) ** 2)) for s in (along, near)}
    assert cost[along] < cost[near]
    name, kind, theta, evals = race({"along": (along, {"zoh": cost[along]}), "near": (near, {"zoh": cost[near]})},
                                    Pack(), lambda k: oe)
    assert (name, kind) == ("near", "zoh") and evals > 0
    assert 0.5 * np.sum(oe.residuals(theta) ** 2) < 1e-3 * cost[along]
