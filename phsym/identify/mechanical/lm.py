"""Levenberg-Marquardt on the normal equations.

The residual vector is long (samples x outputs) and the parameter vector
short, so ``J^T J`` (one BLAS product) replaces MINPACK's QR of J, which
dominates the cost for eight or more degrees of freedom.  Marquardt's
scaling by ``diag(J^T J)`` makes the damping invariant to parameter units.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

__all__ = ["levenberg_marquardt"]
import os
NIELSEN = os.environ.get("NIELSEN") == "1"


def levenberg_marquardt(fun: Callable[[np.ndarray], np.ndarray], jac: Optional[Callable[[np.ndarray], np.ndarray]],
                        x0: np.ndarray, *, max_iter: int = 100, ftol: float = 1e-12,
                        xtol: float = 1e-12,
                        normal: Optional[Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]] = None
                        ) -> Dict[str, object]:
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

    Returns
    -------
    dict
        ``x``, ``cost``, ``n_iter``, ``n_fev``, ``converged``, ``cost_history``.
    """
    x = np.array(x0, dtype=float)
    r = fun(x)
    cost = 0.5 * float(r @ r)
    hist: List[float] = [cost]
    lam, nu = 1e-3, 2.0
    n_fev, it, converged = 1, 0, False
    while it < max_iter and not converged:
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
                s = -np.linalg.solve(As + lam * np.eye(x.size), gs)
            except np.linalg.LinAlgError:
                lam *= nu
                nu *= 2.0
                continue
            step = s / d
            x_new = x + step
            r_new = fun(x_new)
            n_fev += 1
            c_new = 0.5 * float(r_new @ r_new) if np.all(np.isfinite(r_new)) else np.inf
            pred = 0.5 * float(s @ (lam * s - gs))          # decrease the damped linear model promises
            if c_new < cost:
                converged = (cost - c_new <= ftol * cost or
                             np.linalg.norm(step * d) <= xtol * (np.linalg.norm(x * d) + xtol))
                rho = (cost - c_new) / pred if pred > 0 else 1.0
                x, r, cost = x_new, r_new, c_new
                hist.append(cost)
                if NIELSEN:
                    lam = max(lam * max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3), 1e-12)
                    nu = 2.0
                else:
                    lam = max(lam / 5.0, 1e-12)
                break
            if NIELSEN:
                lam *= nu
                nu *= 2.0
            else:
                lam *= 10.0
            if lam > 1e12:          # no descent left: at a minimum to round-off
                converged = True
                break
    return {"x": x, "cost": cost, "n_iter": it, "n_fev": n_fev, "converged": converged, "cost_history": hist}
