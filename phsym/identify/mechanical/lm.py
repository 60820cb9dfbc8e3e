"""Levenberg-Marquardt on the normal equations.

The residual vector is long (samples x outputs) and the parameter vector
short, so ``J^T J`` replaces MINPACK's QR of J, which dominates the cost for
eight or more degrees of freedom; it may even come without J (``normal``,
see :mod:`.gram`).  Marquardt's scaling by ``diag(J^T J)`` makes the
damping invariant to parameter units.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

__all__ = ["levenberg_marquardt"]


def levenberg_marquardt(fun: Callable[[np.ndarray], np.ndarray], jac: Optional[Callable[[np.ndarray], np.ndarray]],
                        x0: np.ndarray, *, max_iter: int = 100, ftol: float = 1e-12,
                        xtol: float = 1e-12,
                        normal: Optional[Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]] = None,
                        stop: Optional[Callable[[List[float]], bool]] = None) -> Dict[str, object]:
    """Minimise ``|fun(x)|^2 / 2``.

    Parameters
    ----------
    fun : callable
        Residual vector of x.
    jac : callable or None
        Its Jacobian (not needed when ``normal`` is given).
    x0 : numpy.ndarray
        Start.
    max_iter : int
        Maximal number of Jacobian evaluations (iterations).
    ftol : float
        Stop when an accepted step lowers the cost by less than ``ftol`` relatively.
    xtol : float
        Stop when the scaled step is below ``xtol`` relatively.
    normal : callable, optional
        ``x -> (J^T J, J^T r)`` computed without forming J (used instead of ``jac``).
    stop : callable, optional
        ``stop(cost_history) -> bool``, asked after each accepted step: end the search early.

    Returns
    -------
    dict
        ``x``, ``cost``, ``n_iter``, ``n_fev``, ``converged``, ``stopped`` (by ``stop``), ``cost_history``.
    """
    if normal is None and jac is None:
        raise ValueError("levenberg_marquardt needs jac or normal")
    x = np.array(x0, dtype=float)
    r = fun(x)
    cost = 0.5 * float(r @ r)
    hist: List[float] = [cost]
    lam = 1e-3
    n_fev, it, converged, stopped = 1, 0, False, False
    while it < max_iter and not converged and not stopped:
        it += 1
        if normal is not None:
            A, g = normal(x)
        else:
            J = jac(x)
            A, g = J.T @ J, J.T @ r
        d = np.sqrt(np.maximum(np.diag(A), 1e-300))
        As = A / np.outer(d, d)
        gs = g / d
        while True:
            try:
                step = -np.linalg.solve(As + lam * np.eye(x.size), gs) / d
            except np.linalg.LinAlgError:
                lam *= 10.0
                continue
            x_new = x + step
            r_new = fun(x_new)
            n_fev += 1
            c_new = 0.5 * float(r_new @ r_new) if np.all(np.isfinite(r_new)) else np.inf
            if c_new < cost:
                converged = (cost - c_new <= ftol * cost or
                             np.linalg.norm(step * d) <= xtol * (np.linalg.norm(x * d) + xtol))
                x, r, cost = x_new, r_new, c_new
                hist.append(cost)
                lam = max(lam / 5.0, 1e-12)
                stopped = stop is not None and not converged and bool(stop(hist))
                break
            lam *= 10.0
            if lam > 1e12:          # no descent left: at a minimum to round-off
                converged = True
                break
    return {"x": x, "cost": cost, "n_iter": it, "n_fev": n_fev, "converged": converged, "stopped": stopped,
            "cost_history": hist}
