"""Monte Carlo studies of an estimator: many noisy data sets, one fresh fit each.

:func:`monte_carlo` draws data set ``i`` from ``data_generator`` with its own
random generator (spawned from ``seed``, so the study does not depend on the
executor or on the order the fits finish), fits a clone of the estimator
(scikit-learn's ``clone`` rules: the constructor settings, nothing fitted)
and gathers the estimates in a :class:`MonteCarloResult`.  A fit that fails
is kept as its error; the others go on.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import numpy as np

from ..common.parallel import in_process, map_tasks, single_blas_thread
from ..errors import IdentificationError, MissingDependencyError, PhsymError

__all__ = ["monte_carlo", "MonteCarloResult"]


def _clone(est):
    """A new estimator with the same settings (``sklearn.base.clone`` when installed)."""
    try:
        from sklearn.base import clone
    except ImportError:
        return type(est)(**est.get_params(deep=False))
    return clone(est)


def _fit_one(task):
    est, generator, seed, keep = task
    if keep:        # this process: map_tasks limits BLAS once for all threads
        return _fit(est, generator, seed, keep)
    with single_blas_thread():        # a worker process: the workers are the parallelism
        return _fit(est, generator, seed, keep)


def _fit(est, generator, seed, keep):
    rng = np.random.default_rng(seed)
    rec: Dict[str, Any] = {"params": None, "std": None, "error": None, "time": float("nan"), "estimator": None}
    t0 = time.perf_counter()
    try:
        data = generator(rng)
        fitted = _clone(est)
        if isinstance(data, Mapping):
            fitted.fit(**data)
        else:
            fitted.fit(*data)
        params = getattr(fitted, "params_", None)
        if not isinstance(params, Mapping):
            raise IdentificationError(f"{type(est).__name__} has no params_ dict to collect")
        rec["params"] = {k: float(v) for k, v in params.items()}
        std = getattr(fitted, "std_", None)
        rec["std"] = {k: float(v) for k, v in std.items()} if isinstance(std, Mapping) else None
        if keep:
            rec["estimator"] = fitted
    except (PhsymError, ValueError, RuntimeError, ArithmeticError, np.linalg.LinAlgError) as exc:
        rec["error"] = exc
    rec["time"] = time.perf_counter() - t0
    return rec


class MonteCarloResult:
    """Estimates of :func:`monte_carlo`, one row per data set.

    Attributes
    ----------
    names : list of str
        Estimated parameters.
    estimates : ndarray (n, len(names))
        Estimates of each run (NaN for a failed fit).
    std : ndarray (n, len(names)) or None
        Standard deviations the estimator predicted (``std_``), when it has them.
    errors : list
        ``None`` or the exception of each run.
    estimators : list or None
        The fitted estimators (in-process executors only).
    fit_time : ndarray (n,)
        Wall time of each data set and fit in seconds.
    truth : dict of str to float or None
        True values, when given.

    Parameters
    ----------
    records : sequence of dict
        One per run (see :func:`monte_carlo`).
    truth : mapping of str to float, optional
        True parameter values.
    """

    def __init__(self, records: Sequence[Dict[str, Any]], truth: Optional[Mapping[str, float]] = None):
        good = [r for r in records if r["error"] is None]
        self.names: List[str] = list(good[0]["params"]) if good else []
        n, m = len(records), len(self.names)
        self.estimates = np.full((n, m), np.nan)
        has_std = bool(good) and all(r["std"] is not None for r in good)
        self.std = np.full((n, m), np.nan) if has_std else None
        for i, r in enumerate(records):
            if r["error"] is None:
                self.estimates[i] = [r["params"][k] for k in self.names]
                if self.std is not None:
                    self.std[i] = [r["std"][k] for k in self.names]
        self.errors = [r["error"] for r in records]
        kept = [r["estimator"] for r in records]
        self.estimators = kept if any(e is not None for e in kept) else None
        self.fit_time = np.array([r["time"] for r in records], dtype=float)
        self.truth = dict(truth) if truth is not None else None

    def __len__(self) -> int:
        return self.estimates.shape[0]

    @property
    def ok(self) -> np.ndarray:
        """Boolean mask of the fits that finished."""
        return np.array([e is None for e in self.errors], dtype=bool)

    def mean(self) -> Dict[str, float]:
        """Mean estimate of each parameter over the finished fits."""
        return dict(zip(self.names, np.nanmean(self.estimates, axis=0).tolist()))

    def spread(self) -> Dict[str, float]:
        """Empirical standard deviation of each estimate (``ddof=1``)."""
        return dict(zip(self.names, np.nanstd(self.estimates, axis=0, ddof=1).tolist()))

    def bias(self) -> Dict[str, float]:
        """Mean estimate minus the truth (needs ``truth``)."""
        if self.truth is None:
            raise IdentificationError("bias needs the true values: monte_carlo(..., truth={...})")
        return {k: v - float(self.truth[k]) for k, v in self.mean().items()}

    def summary(self) -> str:
        """Table: mean, empirical and predicted standard deviation (and bias) per parameter."""
        mean, spread = self.mean(), self.spread()
        pred = dict(zip(self.names, np.nanmean(self.std, axis=0))) if self.std is not None else {}
        lines = [f"{len(self)} fits ({int((~self.ok).sum())} failed), {np.nansum(self.fit_time):.3g} s of fitting",
                 f"{'parameter':<12} {'mean':>13} {'std (runs)':>11} {'std (pred.)':>11}"
                 + (f" {'bias':>11}" if self.truth else "")]
        for k in self.names:
            row = f"{k:<12} {mean[k]:>13.7g} {spread[k]:>11.3g} {pred.get(k, float('nan')):>11.3g}"
            if self.truth:
                row += f" {mean[k] - self.truth[k]:>11.3g}"
            lines.append(row)
        return "\n".join(lines)

    def to_pandas(self):
        """:class:`pandas.DataFrame`: estimates (and ``std_NAME``) of each run, with its error."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise MissingDependencyError("to_pandas needs pandas (pip install pandas)") from exc
        cols = {k: self.estimates[:, j] for j, k in enumerate(self.names)}
        if self.std is not None:
            cols.update({f"std_{k}": self.std[:, j] for j, k in enumerate(self.names)})
        cols["fit_time"] = self.fit_time
        cols["error"] = ["" if e is None else f"{type(e).__name__}: {e}" for e in self.errors]
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        return f"<MonteCarloResult {len(self)} fits of {', '.join(self.names) or 'nothing'}>"


def monte_carlo(estimator, data_generator: Callable[[np.random.Generator], Any], n: int, *, executor: Any = None,
                seed: Optional[int] = None, truth: Optional[Mapping[str, float]] = None,
                progress: Optional[Callable[[int, int], None]] = None) -> MonteCarloResult:
    """Fit a clone of ``estimator`` to each of ``n`` data sets drawn by ``data_generator``.

    Parameters
    ----------
    estimator : Estimator
        The settings to fit with (never fitted itself).
    data_generator : callable(numpy.random.Generator)
        Returns the arguments of ``fit`` for one data set: a tuple
        ``(t, u, y)`` or a dict.  It gets its own seeded generator per run.
        Out-of-process executors pickle it (a module-level function).
    n : int
        Number of data sets.
    executor : None, "serial", "threads", "dask", concurrent.futures.Executor or dask Client
        Where the fits run (default: threads of this process; the simulation
        loops release the GIL).
    seed : int, optional
        Root of the per-run generators (:class:`numpy.random.SeedSequence`).
    truth : mapping of str to float, optional
        True values (for :meth:`MonteCarloResult.bias`).
    progress : callable(done, total), optional
        Called as fits finish.

    Returns
    -------
    MonteCarloResult
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise IdentificationError(f"n must be a positive integer, got {n!r}")
    if not callable(data_generator):
        raise IdentificationError("data_generator must be a callable(rng) returning the arguments of fit")
    executor = "threads" if executor is None else executor
    keep = in_process(executor)
    seeds = np.random.SeedSequence(seed).spawn(int(n))
    tasks = [(estimator, data_generator, s, keep) for s in seeds]
    return MonteCarloResult(map_tasks(_fit_one, tasks, executor, progress, error=IdentificationError), truth)
