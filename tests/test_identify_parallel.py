"""Multi-start fits and Monte Carlo studies on executors: threads give the
serial numbers exactly, a process pool the same optimum; runs stay seeded."""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.errors import IdentificationError
from phsym.identify import ParameterEstimator, monte_carlo

NET = Path(__file__).resolve().parent.parent / "netlists"
TRUE = {"L": 2.0, "C1": 0.01, "C2": 0.02, "R_L": 1.0, "R_G": 6.0, "R_R": 3.0}
OUT = ["y(VG)", "v(n1)", "v(n2)"]
FREE = ["L", "R_L", "R_R"]
X0 = np.array([0.01, 0.2, -0.01])


class NoisyData:
    """Clean simulated outputs plus seeded white noise (picklable, for process pools)."""

    def __init__(self, t, u, y, level=0.01, fail_below=-1.0):
        self.t, self.u, self.y, self.level, self.fail_below = t, u, y, level, fail_below

    def __call__(self, rng):
        if rng.random() < self.fail_below:        # a data set the fit must reject (NaN)
            return self.t, {"VG": self.u}, {k: np.full_like(v, np.nan) for k, v in self.y.items()}
        return self.t, {"VG": self.u}, {k: v + rng.standard_normal(v.size) * self.level * np.std(v)
                                         for k, v in self.y.items()}


@pytest.fixture(scope="module")
def pool():
    # fork: workers start with the parent's imported modules (the spawn start is
    # tested in test_sweep_executors.py); one pool for the module keeps them warm
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as ex:
        yield ex


@pytest.fixture(scope="module")
def dc():
    m = phsym.load(NET / "dc_network.cir")
    Ts = 0.005
    t = np.arange(301) * Ts
    rng = np.random.default_rng(1)
    ph = rng.uniform(0, 2 * np.pi, 40)
    u = sum(np.sin(2 * np.pi * (i + 1) * 0.1 * t + ph[i]) for i in range(40))
    res = phsym.Simulator(m, 1 / Ts, "backward_euler").run(u={"VG": u}, x0=X0)
    return m, NoisyData(t, u, {lab: np.asarray(res[lab]) for lab in OUT})


def _est(m, **kw):
    return ParameterEstimator(m, FREE, OUT, x0=X0, initial={"L": 3.0, "R_L": 0.5, "R_R": 5.0},
                              n_starts=3, random_state=2, **kw)


def test_multistart_on_threads_and_processes(dc, pool):
    m, gen = dc
    t, u, y = gen(np.random.default_rng(5))
    serial = _est(m).fit(t, u, y)
    threads = _est(m, executor="threads").fit(t, u, y)
    assert threads.starts_ == serial.starts_ and threads.params_ == serial.params_
    assert len(serial.starts_) == 3 and serial.result_.cost == min(serial.starts_)
    remote = _est(m, executor=pool).fit(t, u, y)
    for k in FREE:
        assert remote.params_[k] == pytest.approx(serial.params_[k], rel=1e-6)
        assert remote.params_[k] == pytest.approx(TRUE[k], rel=0.05)
    assert len(remote.starts_) == 3 and remote.result_.cost <= min(remote.starts_) * (1 + 1e-9)
    assert remote.std_["L"] == pytest.approx(serial.std_["L"], rel=1e-4)


def test_monte_carlo_is_seeded_and_equals_a_loop(dc):
    m, gen = dc
    est = ParameterEstimator(m, FREE, OUT, x0=X0)
    mc = monte_carlo(est, gen, 4, seed=11, truth=TRUE)
    serial = monte_carlo(est, gen, 4, seed=11, executor="serial")
    assert np.array_equal(mc.estimates, serial.estimates) and mc.names == FREE
    # the same fits by hand, from the documented per-run generators
    for i, s in enumerate(np.random.default_rng(s) for s in np.random.SeedSequence(11).spawn(4)):
        one = ParameterEstimator(m, FREE, OUT, x0=X0).fit(*gen(s))
        assert mc.estimates[i].tolist() == [one.params_[k] for k in FREE]
        assert mc.std[i].tolist() == [one.std_[k] for k in FREE]
    assert not hasattr(est, "params_") and len(mc.estimators) == 4
    assert abs(mc.bias()["L"]) < 4 * np.mean(mc.std[:, 0]) and "bias" in mc.summary()
    other = monte_carlo(est, gen, 4, seed=12)
    assert not np.array_equal(other.estimates, mc.estimates)
    assert list(mc.to_pandas().columns[:3]) == FREE


def test_monte_carlo_isolates_failures_and_runs_on_processes(dc, pool):
    m, gen = dc
    flaky = NoisyData(gen.t, gen.u, gen.y, fail_below=0.5)
    seeds = np.random.SeedSequence(3).spawn(4)
    fails = [np.random.default_rng(s).random() < 0.5 for s in seeds]
    assert any(fails) and not all(fails)
    est = ParameterEstimator(m, FREE, OUT, x0=X0)
    local = monte_carlo(est, flaky, 4, seed=3)
    assert (~local.ok).tolist() == fails
    assert all(isinstance(e, IdentificationError) for e, f in zip(local.errors, fails) if f)
    assert np.isnan(local.estimates[np.array(fails)]).all()
    remote = monte_carlo(est, flaky, 4, seed=3, executor=pool)
    assert remote.ok.tolist() == local.ok.tolist() and remote.estimators is None
    np.testing.assert_allclose(remote.estimates, local.estimates, rtol=1e-10)
    with pytest.raises(IdentificationError, match="executor"):
        monte_carlo(est, flaky, 2, executor="gpu")
    with pytest.raises(IdentificationError, match="positive integer"):
        monte_carlo(est, flaky, 0)
