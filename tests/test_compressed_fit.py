"""Long records: the optimiser sees the residuals compressed to n + 1 rows, with the same steps."""
from __future__ import annotations

import numpy as np
import pytest

import phsym
from phsym.identify import ParameterEstimator, multistart
from phsym.identify.multistart import compressed


@pytest.mark.parametrize("cond", [1.0, 1e6, 1e12])
def test_compression_keeps_cost_gradient_and_gauss_newton_matrix(cond):
    rng = np.random.default_rng(3)
    J = rng.standard_normal((3000, 6)) * np.logspace(0, np.log10(cond), 6)
    J[:, 5] = J[:, 4] + J[:, 4] / cond * rng.standard_normal(3000)         # nearly dependent columns
    r = rng.standard_normal(3000)
    rc, Jc = compressed(r, J)
    assert rc.shape == (7,) and Jc.shape == (7, 6)
    assert rc @ rc == pytest.approx(r @ r, rel=1e-12)
    np.testing.assert_allclose(Jc.T @ rc, J.T @ r, rtol=0, atol=1e-10 * np.max(np.abs(J.T @ r)))
    np.testing.assert_allclose(Jc.T @ Jc, J.T @ J, rtol=0, atol=1e-12 * np.max(np.abs(J.T @ J)))
    # a failed simulation's residuals (zero Jacobian) keep their cost
    rz, Jz = compressed(r, 0 * J)
    assert rz @ rz == pytest.approx(r @ r) and not np.any(Jz)


def test_a_long_record_fits_as_without_compression(monkeypatch):
    net = "V1 in 0\nR1 in out 1k\nC1 out 0 1u\n"
    fs = 20000.0
    t = np.arange(2001) / fs
    u = np.sin(2 * np.pi * 150 * t) + 0.5 * np.sin(2 * np.pi * 700 * t)
    res = phsym.Simulator(phsym.parse(net.replace("1u", "1.3u").replace("1k", "1.2k")), fs, "midpoint").run(
        u={"V1": u})
    rng = np.random.default_rng(0)
    y = {k: np.asarray(res[k]) * (1 + 1e-3 * rng.standard_normal(len(res[k]))) for k in ("v(out)", "i(R1)")}
    shapes = []
    fits = {}
    real = multistart.compressed
    monkeypatch.setattr(multistart, "compressed", lambda r, J: shapes.append(J.shape) or real(r, J))
    for rows in (multistart.COMPRESS_ROWS, 10 ** 9):
        monkeypatch.setattr(multistart, "COMPRESS_ROWS", rows)
        est = ParameterEstimator(phsym.parse(net), ["C1", "R1"], outputs=list(y), method="midpoint")
        fits[rows] = est.fit(t, {"V1": u}, y)
    assert shapes and all(s == (4000, 2) for s in shapes)         # only the first fit was compressed
    a, b = fits.values()
    assert a.params_["C1"] == pytest.approx(1.3e-6, rel=1e-3) and a.params_["R1"] == pytest.approx(1200, rel=1e-3)
    for k in ("C1", "R1"):
        assert a.params_[k] == pytest.approx(b.params_[k], rel=1e-9)
    assert a.std_["C1"] == pytest.approx(b.std_["C1"], rel=1e-9)
