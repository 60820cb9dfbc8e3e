"""Time derivatives of sampled states, as the seed compares them: central
differences, a smoothing spline, or the derivative of a GP fitted to the
series.  The identification needs ``E x'`` only, so only the differential
columns are differentiated.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import minimize

from ...errors import IdentificationError
from ..data import as_2d

__all__ = ["DERIVATIVES", "estimate_derivative", "training_targets"]

DERIVATIVES = ("central", "spline", "gp")
_JITTER = 1e-9     # relative diagonal jitter of the GP in time
_WINDOW = 60       # GP derivative: points per local fit (keeps the cost linear in N)


def estimate_derivative(t: np.ndarray, X: np.ndarray, method: str = "central",
                        columns: Optional[Sequence[int]] = None) -> np.ndarray:
    """Estimate ``dX/dt`` from samples.

    Parameters
    ----------
    t : ndarray, shape (N,)
        Strictly increasing sample times (need not be uniform).
    X : ndarray, shape (N, n)
        Samples.
    method : {"central", "spline", "gp"}
        ``"central"``: second-order differences (one-sided at the ends);
        ``"spline"``: a quintic smoothing spline (scipy's
        ``UnivariateSpline``, cubic below 6 samples) whose residual budget is
        set from a noise level estimated by third differences (interpolating
        when the samples are too sparse for that estimate), differentiated; ``"gp"``: the derivative of the posterior mean of an
        RBF Gaussian process in ``t`` (hyperparameters by marginal likelihood,
        fitted on windows of 60 samples so that long series stay cheap).
    columns : sequence of int, optional
        Columns to differentiate (default all); the others are returned as 0.

    Returns
    -------
    ndarray, shape (N, n)

    Raises
    ------
    IdentificationError
        For fewer than 3 samples, non-increasing or non-finite times, or an
        unknown method.

    Examples
    --------
    >>> t = np.linspace(0.0, 1.0, 11)
    >>> d = estimate_derivative(t, t[:, None] ** 2)
    >>> bool(np.allclose(d[:, 0], 2 * t))
    True
    """
    t = np.asarray(t, dtype=float).ravel()
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.shape[0] != t.size:
        raise IdentificationError(f"t has {t.size} samples but X has {X.shape[0]} rows")
    if t.size < 3:
        raise IdentificationError("estimating derivatives needs at least 3 samples")
    if not (np.all(np.isfinite(t)) and np.all(np.diff(t) > 0)):
        raise IdentificationError("sample times must be finite and strictly increasing")
    name = str(method).lower()
    if name not in DERIVATIVES:
        raise IdentificationError(f"unknown derivative method {method!r}; choose one of {', '.join(DERIVATIVES)}")
    cols = range(X.shape[1]) if columns is None else list(columns)
    out = np.zeros_like(X)
    for j in cols:
        x = X[:, j]
        if name == "central":
            out[:, j] = np.gradient(x, t, edge_order=2)
        elif name == "spline":
            out[:, j] = _spline_derivative(t, x)
        else:
            from ...common.parallel import single_blas_thread     # 60 x 60 solves: threads cost 10x
            with single_blas_thread():
                out[:, j] = _gp_derivative(t, x)
    return out


def _spline_derivative(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    from scipy.interpolate import UnivariateSpline
    # third differences of white noise have variance 20 sigma^2; of a smooth signal, O(h^3)
    sigma2 = np.median(np.diff(x, 3) ** 2) / 20.0 if x.size > 3 else 0.0
    if sigma2 > 1e-4 * np.var(x):     # too sparse to tell noise from signal: interpolate
        sigma2 = 0.0
    k = 5 if x.size > 5 else 3
    return UnivariateSpline(t, x, k=k, s=x.size * sigma2).derivative()(t)


def _gp_nll(theta: np.ndarray, t: np.ndarray, y: np.ndarray):
    """Negative LML of ``y(t)`` under ``s2 exp(-(t-t')^2 / 2 l^2) + sn2 I`` and its gradient."""
    ell, s2, sn2 = np.exp(theta)
    D2 = (t[:, None] - t[None, :]) ** 2
    E = np.exp(-0.5 * D2 / ell ** 2)
    K = s2 * E + (sn2 + _JITTER * s2) * np.eye(t.size)
    cf = cho_factor(K, lower=True)
    a = cho_solve(cf, y)
    G = np.outer(a, a) - cho_solve(cf, np.eye(t.size), check_finite=False)
    nll = 0.5 * y @ a + np.sum(np.log(np.diag(cf[0])))
    grads = [s2 * E * D2 / ell ** 2, s2 * E, sn2 * np.eye(t.size)]
    return nll, -0.5 * np.array([np.sum(G * g) for g in grads])


def _gp_fit(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    span = t[-1] - t[0]
    best = None
    for ell0 in (0.1 * span, 0.5 * span):
        x0 = np.log([ell0, max(np.var(y), 1e-12), 1e-6 * max(np.var(y), 1e-12)])
        bounds = [(np.log(np.min(np.diff(t))), np.log(10 * span)), (-30.0, 10.0), (-30.0, 5.0)]
        r = minimize(_gp_nll, x0, args=(t, y), jac=True, method="L-BFGS-B", bounds=bounds)
        if best is None or r.fun < best.fun:
            best = r
    return best.x


def _gp_derivative(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Derivative of the GP posterior mean; windows of ``_WINDOW`` samples, centred where possible."""
    N = t.size
    scale = np.std(x) or 1.0
    mu = np.mean(x)
    y = (x - mu) / scale
    mid = max(0, N // 2 - _WINDOW // 2)
    theta = _gp_fit(t[mid:mid + _WINDOW], y[mid:mid + _WINDOW])
    ell, s2, sn2 = np.exp(theta)
    out = np.empty(N)
    step = max(1, _WINDOW // 3)
    for start in range(0, N, step):
        lo = min(max(0, start - (_WINDOW - step) // 2), max(0, N - _WINDOW))
        tw, yw = t[lo:lo + _WINDOW], y[lo:lo + _WINDOW]
        D = tw[:, None] - tw[None, :]
        cf = cho_factor(s2 * np.exp(-0.5 * D ** 2 / ell ** 2) + (sn2 + _JITTER * s2) * np.eye(tw.size), lower=True)
        a = cho_solve(cf, yw)
        ts = t[start:start + step]
        Ds = ts[:, None] - tw[None, :]
        out[start:start + step] = (-s2 * Ds / ell ** 2 * np.exp(-0.5 * Ds ** 2 / ell ** 2)) @ a
    return out * scale


def training_targets(S: Any, X: Any, U: Any, Xdot: Any, t: Any, train_index: Any, derivative: str):
    """Validated ``X, U, Xdot`` (derivatives estimated when not given, then the training rows) and the
    targets ``E x' - B u``.

    Parameters
    ----------
    S : StructureMatrices
        The checked structure.
    X, U : array_like
        States and inputs.
    Xdot : array_like or None
        Derivatives (estimated from ``t`` with ``derivative`` when None).
    t : array_like or None
        Sample times.
    train_index : array_like of int or None
        Training rows, picked after the derivatives are estimated.
    derivative : str
        Method of :func:`estimate_derivative`.
    """
    X = as_2d(X, "X")
    n = S.A.shape[0]
    if X.shape[1] != n:
        raise IdentificationError(f"X has {X.shape[1]} columns but the structure has {n} states")
    U = as_2d(U, "U", n_samples=X.shape[0], ref="X")
    if U.shape[1] != S.B.shape[1]:
        raise IdentificationError(f"U has {U.shape[1]} columns but B has {S.B.shape[1]}")
    if Xdot is None:
        if t is None:
            raise IdentificationError("give either Xdot or the sample times t to estimate it")
        Xdot = estimate_derivative(t, X, derivative, columns=S.differential)
    Xdot = as_2d(Xdot, "Xdot", n_samples=X.shape[0], ref="X")
    if Xdot.shape[1] != n:
        raise IdentificationError(f"Xdot has {Xdot.shape[1]} columns, expected {n}")
    if train_index is not None:
        idx = np.asarray(train_index)
        try:
            X, U, Xdot = X[idx], U[idx], Xdot[idx]
        except IndexError as exc:
            raise IdentificationError(f"train_index out of range: {exc}") from None
    if X.shape[0] < 2:
        raise IdentificationError("fitting needs at least 2 samples")
    return X, U, Xdot, Xdot @ S.E.T - U @ S.B.T
