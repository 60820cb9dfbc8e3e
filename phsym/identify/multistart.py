"""The starts of a multi-start grey-box fit on an executor.

:meth:`phsym.identify.output_error.OutputError.minimise` draws the start
points (always in this process, from ``random_state``, so they do not
depend on the executor) and hands them here:

* in this process (``executor=None`` one after the other, ``"threads"`` or a
  thread pool side by side): each start is a trust-region least-squares run
  on its own copy of the problem (the memo of the last point is per start);
  the sensitivity loop releases the GIL;
* another process (a process pool, dask): a task fits a fresh estimator with
  the same settings from the start's parameter values, on the same data,
  and returns the optimum; the best one is polished by one more least-squares
  run here, so the fitted attributes come from this process.
"""
from __future__ import annotations

import copy
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import scipy.optimize as so

from ..common.parallel import in_process, map_tasks
from ..errors import IdentificationError

__all__ = ["run_starts", "fit_from", "compressed", "COMPRESS_ROWS"]


#: Rows per column above which a fit's residuals are compressed (:func:`compressed`).
COMPRESS_ROWS = 400


def compressed(r: np.ndarray, J: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Residuals and Jacobian of ``n + 1`` rows with the same cost, gradient and Gauss-Newton matrix.

    With ``J = Q R`` (thin QR), ``[Q^T r; rho]`` and ``[R; 0]`` (``rho**2 = |r|**2 - |Q^T r|**2``)
    give ``|r|**2``, ``J^T r`` and ``J^T J`` unchanged, so every trust-region step is the one of
    the full problem, while the optimiser's SVD works on ``n + 1`` rows instead of the record's
    length (on a loaded 2-core machine the threaded SVD or QR of a 48000-row Jacobian took
    seconds per iteration; numpy's unthreaded ``einsum`` products take a tenth of one).  The QR is shifted Cholesky QR
    repeated until ``Q`` is orthonormal (Fukaya et al. 2020: CholeskyQR2, shifted for
    ill-conditioned ``J``), on the column-scaled ``J``; LAPACK's QR when that fails.

    Parameters
    ----------
    r : ndarray (m,)
        Residuals.
    J : ndarray (m, n)
        Their Jacobian.
    """
    m, n = J.shape
    d = np.sqrt(np.einsum("ij,ij->j", J, J))
    d = np.where(d > 0, d, 1.0)
    Q, R = J / d, np.eye(n)
    eps = np.finfo(float).eps
    try:
        for _ in range(4):
            G = np.einsum("ij,ik->jk", Q, Q)      # numpy's own loops: no BLAS threads fighting for cores
            if np.max(np.abs(G - np.eye(n))) < 1e-12:
                break
            try:
                L = np.linalg.cholesky(G)
            except np.linalg.LinAlgError:       # shifted: conditions up to 1/eps
                L = np.linalg.cholesky(G + 11 * (m * n + n * (n + 1)) * eps * np.trace(G) * np.eye(n))
            Rk = L.T
            Q = np.einsum("ij,kj->ik", Q, np.linalg.inv(L))       # Q Rk^-1
            R = Rk @ R
        else:
            raise np.linalg.LinAlgError("not orthonormal")
        qtr = np.einsum("ij,i->j", Q, r)
        rho = np.sqrt(max(float(r @ r) - float(qtr @ qtr), 0.0))
        R = R * d[None, :]
    except np.linalg.LinAlgError:
        Ra = np.linalg.qr(np.column_stack([J, r]), mode="r")
        qtr, rho, R = Ra[:n, n], abs(Ra[n, n]) if Ra.shape[0] > n else 0.0, Ra[:n, :n]
    return np.concatenate([qtr, [rho]]), np.vstack([R, np.zeros((1, n))])


def _solve(problem, x0: np.ndarray, bnd) -> so.OptimizeResult:
    est = problem.est
    fun, jac = (lambda xv: problem.evaluate(xv)[0]), (lambda xv: problem.evaluate(xv)[1])
    m = problem.target.size
    if m > COMPRESS_ROWS * (len(x0) + 1):       # long records: the optimiser sees n + 1 rows
        memo = {}

        def both(xv):
            key = xv.tobytes()
            if key not in memo:
                memo.clear()
                memo[key] = compressed(*problem.evaluate(xv))
            return memo[key]
        fun, jac = (lambda xv: both(xv)[0]), (lambda xv: both(xv)[1])
    return so.least_squares(fun, x0, jac=jac, method="trf", bounds=bnd, x_scale=1.0, ftol=est.ftol,
                            xtol=est.xtol, gtol=est.gtol, max_nfev=est.max_nfev)


def fit_from(task: Tuple[type, Dict[str, Any], Tuple, Dict[str, float], Optional[np.ndarray]]):
    """Task of an out-of-process start: ``(params, x0 or None, cost)`` of a fit from one start.

    Parameters
    ----------
    task : tuple
        ``(estimator class, its settings, (t, U, Y), start values, initial-state guess or None)``.
    """
    cls, settings, data, start, x0_guess = task
    settings = {**settings, "initial": start, "n_starts": 1, "executor": None, "callback": None, "verbose": 0}
    if x0_guess is not None:
        settings["x0_guess"] = x0_guess
    est = cls(**settings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # reported by the fit in the calling process
        est.fit(*data)
    x0 = est.x0_ if x0_guess is not None else None
    return est.params_, x0, float(est.result_.cost)


def run_starts(problem, starts: Sequence[np.ndarray], bnd) -> List[so.OptimizeResult]:
    """One least-squares result per start (see the module docstring).

    Parameters
    ----------
    problem : OutputError
        The problem of the calling fit.
    starts : sequence of ndarray
        Start points in optimisation variables.
    bnd : tuple
        Bounds in optimisation variables.
    """
    est = problem.est
    executor = getattr(est, "executor", None)
    if executor is None or executor == "serial":
        return [_solve(problem, x0, bnd) for x0 in starts]
    if in_process(executor):
        return map_tasks(lambda x0: _solve(copy.copy(problem), x0, bnd), starts, executor,
                         error=IdentificationError)
    rp, nf, xs = problem.rp, len(problem.rp.free), problem.xs
    # the executor and a callback stay here (a pool holds locks; a lambda does not pickle)
    settings = {k: v for k, v in est.get_params(deep=False).items() if k not in ("executor", "callback")}
    settings.update(method=est.method_, stiff=est.stiff_)     # "auto" as this fit resolved it
    data = (problem.data.t, problem.data.U, problem.data.Y)
    tasks = [(type(est), settings, data, dict(zip(rp.free, map(float, rp.physical(x0[:nf])))),
              (x0[nf:] * xs) if problem.nz else None) for x0 in starts]
    remote = map_tasks(fit_from, tasks, executor, error=IdentificationError)
    costs = [c for _, _, c in remote]
    params, x0_fit, _ = remote[int(np.argmin(costs))]
    theta = rp.theta(params)
    if problem.nz:
        theta = np.concatenate([theta, np.asarray(x0_fit, float) / xs])
    lo, hi = bnd
    best = _solve(problem, np.clip(theta, lo, hi), bnd)      # the attributes come from this process
    out = []
    for c in costs:      # the other starts as reports of their final cost
        out.append(so.OptimizeResult(cost=c, x=None))
    out[int(np.argmin(costs))] = best
    return out
