"""Maximising the log marginal likelihood: bounds, starts, L-BFGS-B with restarts."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
from scipy.optimize import minimize

from ...common.parallel import in_process, map_tasks, single_blas_thread
from ...errors import IdentificationError
from .icm import IcmLayout

__all__ = ["maximize_evidence", "fit_hyperparameters"]

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


# Stop when the log likelihood gained less than _FLAT_GAIN nats over the last `window` iterations:
# a likelihood ratio that close to 1 does not distinguish the hyperparameters, and noisy targets
# otherwise creep along a flat valley up to max_iter (scipy's relative criterion scales with
# |log likelihood|, thousands of nats for nearly exact data).
_FLAT_GAIN = 0.1


def _flat_stop(window: int = 5) -> Callable:
    """An L-BFGS-B callback raising StopIteration once the likelihood is flat (see _FLAT_GAIN)."""
    seen: List[float] = []

    def callback(intermediate_result):
        seen.append(float(intermediate_result.fun))
        if len(seen) > window and seen[-window - 1] - seen[-1] < _FLAT_GAIN:
            raise StopIteration

    return callback


# A later start is abandoned when, after _PRUNE_AFTER iterations, its negative log likelihood is
# still _PRUNE_GAP nats above the best finished start's.  Recorded on the seed's systems (direct
# variant, two starts run to the end, 72 fits on the Euler data of the benchmark and 36 on the
# tests' accurate data, N_T = 32-128): a random start that ended best trailed by at most 256 nats at
# iteration 20 (pendulum, N_T = 64; it won by 93 nats); with a gap of 150 two such winners were
# abandoned.  The pendulum's losing starts at N_T = 128 trailed by 280-1900 nats there.
_PRUNE_AFTER = 20
_PRUNE_GAP = 500.0


def _prune_stop(best: float) -> Callable:
    """An L-BFGS-B callback raising StopIteration once a start is hopelessly behind ``best``."""
    seen = [0]

    def callback(intermediate_result):
        seen[0] += 1
        if seen[0] == _PRUNE_AFTER and float(intermediate_result.fun) > best + _PRUNE_GAP:
            raise StopIteration

    return callback


def _chain(*callbacks: Optional[Callable]) -> Optional[Callable]:
    active = [c for c in callbacks if c is not None]
    if not active:
        return None

    def callback(intermediate_result):
        for c in active:
            c(intermediate_result)

    return callback


def _guarded(objective: Callable, layout: Any, args: tuple, counter: List[int]) -> Callable:
    """``objective`` as L-BFGS-B's function: a failed or non-finite evaluation is a wall (1e30)."""

    def fun(theta):
        counter[0] += 1
        try:
            f, g = objective(theta, layout, *args)
        except np.linalg.LinAlgError:
            return 1e30, np.zeros_like(theta)
        if not (np.isfinite(f) and np.all(np.isfinite(g))):
            return 1e30, np.zeros_like(theta)
        return f, g

    return fun


def _lbfgsb(fun: Callable, x0: np.ndarray, bounds: List[tuple], max_iter: int, callback: Optional[Callable]):
    return minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, callback=callback,
                    options={"maxiter": int(max_iter), "maxfun": 3 * int(max_iter)})


def _one_start(x0: np.ndarray, layout: Any, objective: Callable, args: tuple, bounds: List[tuple],
               max_iter: int, flat_window: Optional[int], limit_blas: bool) -> Tuple[np.ndarray, float, int, int]:
    """One start run to its end: ``(theta, value, iterations, evaluations)`` (a task of an executor).

    ``limit_blas``: limit BLAS to one thread here (a worker process); in this
    process the caller limits it once around all the threads (threadpoolctl's
    limit is process-wide: nested enters and exits from several threads would
    not restore it in order).
    """
    counter = [0]
    with single_blas_thread() if limit_blas else contextlib.nullcontext():
        res = _lbfgsb(_guarded(objective, layout, args, counter), x0, bounds, max_iter,
                      None if flat_window is None else _flat_stop(flat_window))
    return res.x, float(res.fun), int(res.nit), counter[0]


def maximize_evidence(layout: Any, objective: Callable, args: tuple, noise_bounds: Sequence[float],
                      restarts: int, max_iter: int, random_state: Optional[int],
                      start: Optional[np.ndarray] = None,
                      flat_window: Optional[int] = 5, prune: bool = False,
                      executor: Any = None) -> Tuple[np.ndarray, float, int, int]:
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
    start : ndarray, optional
        A single start (clipped to the bounds) replacing the default ones.
    flat_window : int or None, default 5
        A start stops once this many iterations gained less than 0.1 nats
        (None: only scipy's criteria and ``max_iter``).
    prune : bool, default False
        Abandon a later start that, after 20 iterations, is still 500 nats
        below the best finished one (in log likelihood).  Only when the
        starts run one after the other.
    executor : None, "serial", "threads", "dask", concurrent.futures.Executor or dask Client
        Where the starts run (:func:`~phsym.common.parallel.map_tasks`).
        ``None``/``"serial"``: one after the other, with ``prune``; any
        other: at the same time, each to its own end (no start is abandoned,
        since none has finished when the others are judged).  Each start
        computes the same floats on every executor (one BLAS thread), so
        the result is that of the serial fit unless a start it abandons
        would have won.

    Returns
    -------
    theta : ndarray
    value : float
        The minimum.
    n_iter : int
        Iterations of the best start.
    n_evals : int
        Likelihood evaluations of all starts.

    Raises
    ------
    IdentificationError
        If no start gives a finite likelihood.
    """
    bounds, starts = _bounds_and_starts(layout, noise_bounds, restarts, random_state)
    if start is not None:
        starts = [np.clip(start, [b[0] for b in bounds], [b[1] for b in bounds])]
    if executor is None or executor == "serial" or len(starts) == 1:
        counter = [0]
        fun = _guarded(objective, layout, args, counter)
        best = None
        with single_blas_thread():
            for x0 in starts:
                stop = None if flat_window is None else _flat_stop(flat_window)
                if prune and best is not None and best[1] < 1e30:
                    stop = _chain(stop, _prune_stop(best[1]))
                res = _lbfgsb(fun, x0, bounds, max_iter, stop)
                if best is None or res.fun < best[1]:
                    best = (res.x, float(res.fun), int(res.nit))
        n_evals = counter[0]
    else:
        task = functools.partial(_one_start, layout=layout, objective=objective, args=args, bounds=bounds,
                                 max_iter=max_iter, flat_window=flat_window, limit_blas=not in_process(executor))
        with single_blas_thread() if in_process(executor) else contextlib.nullcontext():
            results = map_tasks(task, starts, executor, error=IdentificationError)
        best = min(results, key=lambda r: r[1])        # the first of equal minima, as the serial loop
        n_evals = sum(r[3] for r in results)
    if best is None or not np.isfinite(best[1]) or best[1] >= 1e30:
        raise IdentificationError("the marginal likelihood could not be evaluated at any start "
                                  "(covariance not positive definite); raise noise_bounds[0]")
    return best[0], best[1], best[2], n_evals


def fit_hyperparameters(layout: Any, objective: Callable, kernel: str, X: np.ndarray, Y: np.ndarray,
                        A: np.ndarray, noise_bounds: Sequence[float], restarts: int, max_iter: int,
                        random_state: Optional[int], subset: Optional[int],
                        flat_window: Optional[int] = 5, prune: bool = False,
                        executor: Any = None) -> Tuple[np.ndarray, float, int, int]:
    """:func:`maximize_evidence` on a random subset of ``subset`` samples when there are more.

    The hyperparameters of the subset are used as they are: on the seed's
    systems a further search on all samples (measured: 3 to 28 evaluations
    of the full likelihood, the most expensive part of a fit) did not change
    the test errors; the posterior is then conditioned on all samples.

    Parameters
    ----------
    layout : IcmLayout or EnergyLayout
        Hyperparameter layout.
    objective : callable
        ``(theta, layout, kernel, X, Y, A) -> (value, grad)``.
    kernel : str
        Kernel name.
    X, Y : ndarray
        Standardised inputs and scaled targets.
    A : ndarray
        Structure matrix.
    noise_bounds : sequence of float
        Bounds of the (relative) noise variances.
    restarts, max_iter : int
        Starts and iterations per start.
    random_state : int or None
        Seed of the random starts and of the subset.
    subset : int or None
        Samples of the search (None: all).
    flat_window : int or None, default 5
        See :func:`maximize_evidence`.
    prune : bool, default False
        See :func:`maximize_evidence`.
    executor : object, optional
        See :func:`maximize_evidence`.

    Returns
    -------
    theta : ndarray
    value : float
        The negative log marginal likelihood at ``theta`` on all samples.
    n_iter : int
        Iterations of the best start.
    n_evals : int
        Likelihood evaluations (on the subset, plus one on all samples).
    """
    N = X.shape[0]
    if subset is None or N <= int(subset):
        return maximize_evidence(layout, objective, (kernel, X, Y, A), noise_bounds, restarts, max_iter,
                                 random_state, flat_window=flat_window, prune=prune, executor=executor)
    rows = np.sort(np.random.default_rng(random_state).choice(N, int(subset), replace=False))
    theta, _, nit, nev = maximize_evidence(layout, objective, (kernel, X[rows], Y[rows], A), noise_bounds, restarts,
                                      max_iter, random_state, flat_window=flat_window, prune=prune, executor=executor)
    return theta, float(objective(theta, layout, kernel, X, Y, A)[0]), nit, nev + 1
