"""Maximising the log marginal likelihood: bounds, starts, L-BFGS-B with restarts."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
from scipy.optimize import minimize

from ...errors import IdentificationError
from .icm import IcmLayout

__all__ = ["maximize_evidence"]

# Standardised inputs and targets: length scales beyond 100 or task weights beyond 30
# only make the covariance ill-conditioned (nearly linear data drive them there).
_ELL = (np.log(1e-2), np.log(1e2))
_W = (-30.0, 30.0)
_LIN = (np.log(1e-8), np.log(1e4))
_VAR = (np.log(1e-8), np.log(1e4))


def _bounds_and_starts(layout: Any, noise_bounds: Sequence[float], restarts: int,
                       random_state: Optional[int]) -> Tuple[List[tuple], List[np.ndarray]]:
    rng = np.random.default_rng(random_state)
    lo, hi = np.log([float(v) for v in noise_bounds])
    noise0 = np.clip(np.log(1e-4), lo, hi)
    lin = [_LIN] * int(layout.linear)
    if isinstance(layout, IcmLayout):
        d, n, r = layout.d, layout.n, layout.rank
        bounds = [_ELL] * d + lin + [_W] * (n * r) + [_VAR] * n + [(lo, hi)] * n
        first = np.concatenate([np.zeros(d), [-2.0] * len(lin), 0.1 * np.eye(n, r).ravel(), np.zeros(n),
                                np.full(n, noise0)])

        def draw():
            return np.concatenate([rng.uniform(-1.0, 1.5, d), rng.uniform(-6.0, 1.0, len(lin)),
                                   rng.normal(0.0, 0.5, n * r), rng.normal(0.0, 1.0, n),
                                   rng.uniform(lo, np.log(1e-2), n)])
    else:
        d, na, r, h = layout.d, len(layout.algebraic), layout.rank, len(layout.hin)
        bounds = [_ELL] * h + [(np.log(1e-8), np.log(1e6))] + [_ELL] * d + lin + [_W] * (na * r) \
            + [_VAR] * na + [(lo, hi)] * layout.n
        first = np.concatenate([np.zeros(h), [0.0], np.zeros(d), [-2.0] * len(lin), 0.1 * np.eye(na, r).ravel(),
                                np.zeros(na), np.full(layout.n, noise0)])

        def draw():
            return np.concatenate([rng.uniform(-1.0, 1.5, h), rng.normal(0.0, 1.0, 1), rng.uniform(-1.0, 1.5, d),
                                   rng.uniform(-6.0, 1.0, len(lin)), rng.normal(0.0, 0.5, na * r),
                                   rng.normal(0.0, 1.0, na), rng.uniform(lo, np.log(1e-2), layout.n)])
    starts = [first] + [draw() for _ in range(int(restarts) - 1)]
    clip_lo = np.array([b[0] for b in bounds], dtype=float)
    clip_hi = np.array([b[1] for b in bounds], dtype=float)
    return bounds, [np.clip(s, clip_lo, clip_hi) for s in starts]


@contextlib.contextmanager
def _single_threaded_blas():
    """BLAS threads cost far more than they save on the small matrices of one
    likelihood evaluation (tenfold on two cores); limit them when threadpoolctl
    (optional) is installed."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def maximize_evidence(layout: Any, objective: Callable, args: tuple, noise_bounds: Sequence[float],
                      restarts: int, max_iter: int, random_state: Optional[int]) -> Tuple[np.ndarray, float, int]:
    """Minimise ``objective(theta, layout, *args)`` (a negative LML and its gradient).

    Parameters
    ----------
    layout : IcmLayout or EnergyLayout
        Hyperparameter layout (decides bounds and starts).
    objective : callable
        ``(theta, layout, *args) -> (value, grad)``.
    args : tuple
        Further arguments of ``objective``.
    noise_bounds : sequence of float
        Bounds of the (relative) noise variances.
    restarts : int
        Number of starts (the first deterministic).
    max_iter : int
        L-BFGS-B iterations per start (3x as many evaluations at most).
    random_state : int or None
        Seed of the random starts.

    Returns
    -------
    theta : ndarray
    value : float
        The minimum.
    n_iter : int
        Iterations of the best start.

    Raises
    ------
    IdentificationError
        If no start gives a finite likelihood.
    """
    bounds, starts = _bounds_and_starts(layout, noise_bounds, restarts, random_state)

    def fun(theta):
        try:
            f, g = objective(theta, layout, *args)
        except np.linalg.LinAlgError:
            return 1e30, np.zeros_like(theta)
        if not (np.isfinite(f) and np.all(np.isfinite(g))):
            return 1e30, np.zeros_like(theta)
        return f, g

    best = None
    with _single_threaded_blas():
        for x0 in starts:
            res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": int(max_iter), "maxfun": 3 * int(max_iter)})
            if best is None or res.fun < best.fun:
                best = res
    if best is None or not np.isfinite(best.fun) or best.fun >= 1e30:
        raise IdentificationError("the marginal likelihood could not be evaluated at any start "
                                  "(covariance not positive definite); raise noise_bounds[0]")
    return best.x, float(best.fun), int(best.nit)
