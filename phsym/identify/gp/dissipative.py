"""Learned dissipative laws: a scalar GP ``z = f(w)`` of one resistive port.

A dissipative element written ``I=learn`` or ``V=learn`` has an unknown law
``z = f(w)`` (current of voltage, voltage of current, force of velocity,
...).  When the other laws of the netlist are known, the port's two variables
follow from descriptor data ``xi = (x, e_w, lambda)`` and the inputs: the
port's row of ``E xi' = (J - R) z + B u`` reads ``(J z + B u)_r = w`` for an
effort-out port (``z = xi_r``) and ``= z`` for a flow-out port (``w =
xi_r``), with the storage efforts from the known laws
(:func:`port_samples`; for a resistor ``xi_r`` is its current and ``(J z +
B u)_r`` its voltage, so ``I=learn`` gives ``(w, z) = (v, i)`` and
``V=learn`` ``(i, v)``).  :class:`DissipativeLawGP` then regresses ``f`` with
the kernel ``s^2 exp(-(w - w')^2 / 2 l^2) + c w w'`` (no constant: a passive
law passes through the origin, which is added as a noise-free sample),
hyperparameters by maximising the log marginal likelihood (analytic
gradient, L-BFGS-B with restarts).

**Passivity.**  A GP is not monotone by construction.  After the fit, ``w
f(w) >= 0`` is checked on a grid over the data range widened by a fifth on
both sides (and containing 0); beyond the data the bumps vanish and ``f``
tends to the linear term ``c' w``, passive iff ``c' >= 0``.  A violation
issues :class:`NonPassiveLawWarning` (attributes ``passive_``,
``min_power_``, ``far_slope_``).
"""
from __future__ import annotations

import warnings
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
from scipy.optimize import minimize

from ...errors import IdentificationError, PhsymWarning
from ..base import Estimator
from ..metrics import r2_score

__all__ = ["DissipativeLawGP", "NonPassiveLawWarning", "port_samples", "descriptor_names"]

_BOUNDS = [(np.log(1e-2), np.log(1e2)), (np.log(1e-8), np.log(1e4)), (np.log(1e-10), np.log(1e4))]


class NonPassiveLawWarning(PhsymWarning):
    """A learned dissipative law has ``w f(w) < 0`` somewhere (it would create energy there)."""


def _kernel(a: np.ndarray, b: np.ndarray, ell: float) -> np.ndarray:
    return np.exp(-0.5 * ((a[:, None] - b[None, :]) / ell) ** 2)


def _objective(theta: np.ndarray, w: np.ndarray, z: np.ndarray, origin: bool):
    """Negative log marginal likelihood and its gradient (theta: log l, log s^2, log c, log noise)."""
    ell, s2, c, noise = np.exp(theta)
    Rk = _kernel(w, w, ell)
    lin = np.outer(w, w)
    mask = np.ones(len(w))
    if origin:
        mask[-1] = 0.0        # the origin: a noise-free sample (jitter only)
    nvec = noise * mask + 1e-10 * (1.0 - mask)
    K = s2 * Rk + c * lin + np.diag(nvec)
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        return 1e25, np.zeros_like(theta)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, z))
    value = 0.5 * z @ alpha + np.log(np.diag(L)).sum() + 0.5 * len(w) * np.log(2 * np.pi)
    Kinv = np.linalg.solve(L.T, np.linalg.solve(L, np.eye(len(w))))
    M = np.outer(alpha, alpha) - Kinv
    dnoise = np.diag(noise * mask)
    dK = [s2 * Rk * ((w[:, None] - w[None, :]) / ell) ** 2, s2 * Rk, c * lin, dnoise]
    grad = np.array([-0.5 * np.sum(M * d) for d in dK])
    return value, grad


class DissipativeLawGP(Estimator):
    """Gaussian-process regression of a scalar dissipative law ``z = f(w)``.

    Parameters
    ----------
    through_origin : bool
        Add the noise-free sample ``f(0) = 0`` (a passive resistive law
        passes through the origin).
    noise_bounds : tuple of float
        Bounds of the noise variance relative to the mean square of ``z``.
    restarts : int
        Optimiser starts (the first deterministic).
    random_state : int or None
        Seed of the random starts.

    Attributes
    ----------
    w_, alpha_ : ndarray
        Training inputs (with the origin) and weights of the posterior mean.
    length_scale_, signal_variance_, linear_variance_, noise_ : float
        Hyperparameters in the data's units.
    log_marginal_likelihood_ : float
    passive_ : bool
        ``w f(w) >= 0`` on the checked grid and a non-negative far slope.
    min_power_ : float
        Smallest ``w f(w)`` on the grid.
    far_slope_ : float
        Slope of the linear term ``f`` tends to beyond the data.
    """

    def __init__(self, *, through_origin: bool = True, noise_bounds: Tuple[float, float] = (1e-10, 1e-2),
                 restarts: int = 3, random_state: Optional[int] = 0):
        self.through_origin = through_origin
        self.noise_bounds = noise_bounds
        self.restarts = restarts
        self.random_state = random_state

    def fit(self, w: Any, z: Any) -> "DissipativeLawGP":
        """Fit ``z = f(w)``.

        Parameters
        ----------
        w, z : array_like, shape (N,)
            Samples of the law's variable and value.

        Returns
        -------
        DissipativeLawGP
            ``self``.

        Raises
        ------
        IdentificationError
            Shapes differ, fewer than 3 samples or non-finite data.
        """
        w = np.asarray(w, float).ravel()
        z = np.asarray(z, float).ravel()
        if w.shape != z.shape or len(w) < 3:
            raise IdentificationError(f"w and z need the same length >= 3, got {w.shape} and {z.shape}")
        if not (np.isfinite(w).all() and np.isfinite(z).all()):
            raise IdentificationError("w and z must be finite (NaN or inf in the data)")
        sw = float(np.sqrt(np.mean(w ** 2))) or 1.0
        sz = float(np.sqrt(np.mean(z ** 2))) or 1.0
        ws, zs = w / sw, z / sz
        if self.through_origin:
            ws, zs = np.r_[ws, 0.0], np.r_[zs, 0.0]
        lo, hi = np.log([float(v) for v in self.noise_bounds])
        bounds = _BOUNDS + [(lo, hi)]
        rng = np.random.default_rng(self.random_state)
        starts = [np.array([0.0, -2.0, 0.0, max(lo, np.log(1e-6))])]
        starts += [np.array([rng.uniform(-2, 1.5), rng.uniform(-6, 1), rng.uniform(-4, 1), rng.uniform(lo, hi)])
                   for _ in range(int(self.restarts) - 1)]
        best = None
        for s in starts:
            r = minimize(_objective, s, args=(ws, zs, self.through_origin), jac=True, method="L-BFGS-B",
                         bounds=bounds, options={"maxiter": 300})
            if best is None or r.fun < best.fun:
                best = r
        ell, s2, c, noise = np.exp(best.x)
        nvec = np.full(len(ws), noise)
        if self.through_origin:
            nvec[-1] = 1e-10
        K = s2 * _kernel(ws, ws, ell) + c * np.outer(ws, ws) + np.diag(nvec)
        self.alpha_ = np.linalg.solve(K, zs)
        self.w_ = ws * sw
        self.length_scale_, self.signal_variance_ = ell * sw, s2 * sz ** 2
        self.linear_variance_, self.noise_ = c * sz ** 2 / sw ** 2, noise * sz ** 2
        self.log_marginal_likelihood_ = -float(best.fun)
        self._scales = (sw, sz, ell, s2, c)
        self._check_passivity(w)
        return self

    def _check_passivity(self, w: np.ndarray) -> None:
        lo, hi = min(w.min(), 0.0), max(w.max(), 0.0)
        pad = 0.2 * (hi - lo)
        grid = np.linspace(lo - pad, hi + pad, 2001)
        power = grid * self.predict(grid)
        sw, sz, ell, s2, c = self._scales
        self.far_slope_ = float(sz * c * np.sum(self.alpha_ * self.w_ / sw) / sw)
        self.min_power_ = float(power.min())
        tol = 1e-9 * float(np.abs(power).max() or 1.0)
        self.passive_ = bool(self.min_power_ >= -tol and self.far_slope_ >= 0.0)
        if not self.passive_:
            bad = grid[power < -tol]
            where = f"w in [{bad.min():.4g}, {bad.max():.4g}]" if len(bad) else "beyond the data"
            warnings.warn(NonPassiveLawWarning(
                f"the learned law is not passive: w f(w) < 0 for {where} (min {self.min_power_:.3g}), "
                f"slope beyond the data {self.far_slope_:.3g}; more or less noisy data near w = 0 help"),
                stacklevel=3)

    def predict(self, w: Any) -> np.ndarray:
        """Posterior mean ``f(w)``.

        Parameters
        ----------
        w : array_like, shape (M,)
            Law variables.
        """
        self._check_fitted("alpha_")
        sw, sz, ell, s2, c = self._scales
        ws = np.asarray(w, float).ravel() / sw
        K = s2 * _kernel(ws, self.w_ / sw, ell) + c * np.outer(ws, self.w_ / sw)
        return sz * (K @ self.alpha_)

    def score(self, w: Any, z: Any) -> float:
        """R^2 of :meth:`predict` against ``z``.

        Parameters
        ----------
        w, z : array_like, shape (M,)
            Samples.
        """
        return r2_score(self.predict(w), np.asarray(z, float).ravel())

    def numeric_law(self, meta: Optional[Dict[str, str]] = None):
        """The posterior mean as a :class:`~phsym.common.learned.LearnedLaw` (``kind="z"``).

        Parameters
        ----------
        meta : dict of str to str, optional
            Extra text kept in the file.
        """
        from ...common.learned import LearnedLaw
        self._check_fitted("alpha_")
        sw, sz, ell, s2, c = self._scales
        info = {"source": "phsym.identify.gp.DissipativeLawGP", "samples": str(len(self.w_)),
                "passive": str(self.passive_)}
        info.update(meta or {})
        return LearnedLaw(self.w_[:, None], sz * s2 * self.alpha_, np.zeros((len(self.w_), 1)), [ell * sw],
                          scale=[sw], linear=[sz * c * float(self.alpha_ @ (self.w_ / sw))], kind="z", meta=info)

    def save_law(self, path: Any, meta: Optional[Dict[str, str]] = None):
        """Write :meth:`numeric_law` to ``path`` (``.npz``); use it as ``.table NAME FILE.npz`` and
        ``I={NAME(v)}`` (or ``V={NAME(i)}``).

        Parameters
        ----------
        path : str or pathlib.Path
            Target file.
        meta : dict of str to str, optional
            Extra text kept in the file.
        """
        return self.numeric_law(meta).save(path)


def _descriptor(model: Any, params: Optional[Dict[str, float]] = None):
    from ...structure.linearize import descriptor_matrices
    S = model.structure
    return descriptor_matrices(S, model.parameter_values(params), x_op=np.ones(S.n_x))


def descriptor_names(model: Any) -> list:
    """Names of the descriptor variables ``xi`` of ``model`` (the data columns of :func:`port_samples`).

    Parameters
    ----------
    model : phsym.Model
        The netlist.
    """
    return list(_descriptor(model).names)


def port_samples(model: Any, element: str, X: Any, U: Any, names: Optional[Sequence[str]] = None,
                 params: Optional[Dict[str, float]] = None) -> Tuple[np.ndarray, np.ndarray]:
    """The law variable ``w`` and value ``z`` of one dissipative port along descriptor data.

    Parameters
    ----------
    model : phsym.Model
        The netlist (all laws but ``element``'s known).
    element : str
        The dissipative element (one port).
    X : array_like, shape (N, n)
        Descriptor variables ``xi`` in the order of ``names``.
    U : array_like, shape (N, m)
        Inputs (the model's order).
    names : sequence of str, optional
        Column order of ``X`` (default: the descriptor order, as
        :meth:`phsym.identify.EffortGP.from_model` names it).
    params : mapping of str to float, optional
        Parameter overrides.

    Returns
    -------
    w, z : ndarray, shape (N,)

    Raises
    ------
    IdentificationError
        Unknown element or column, or a storage law that is itself to be learned.
    """
    import sympy as sp

    S = model.structure
    values = model.parameter_values(params)
    ports = [j for j, d in enumerate(S.dissipative) if d.element.upper() == element.upper()]
    if len(ports) != 1:
        raise IdentificationError(f"{element!r} is not a one-port dissipative element of the model; dissipative: "
                                  f"{', '.join(sorted({d.element for d in S.dissipative}))}")
    pending = [el.name for el in model.netlist.elements
               if el.law is not None and el.law.learn and el.name.upper() != element.upper()]
    if pending:
        raise IdentificationError(f"the laws of {', '.join(pending)} are to be learned too: port samples need "
                                  "every other law known")
    port = S.dissipative[ports[0]]
    dm = _descriptor(model, params)
    order = list(dm.names)
    cols = list(names) if names is not None else order
    X = np.atleast_2d(np.asarray(X, float))
    U = np.atleast_2d(np.asarray(U, float)).reshape(len(X), -1)
    try:
        Xi = X[:, [cols.index(v) for v in order]]
    except ValueError:
        raise IdentificationError(f"X needs the columns {order}, got {cols}") from None
    grads = sp.lambdify([S.states], [g.subs(values) for g in S.gradients] or [0], "numpy")
    Z = Xi.copy()
    for i, g in enumerate(grads(Xi[:, :S.n_x].T)):
        Z[:, i] = np.broadcast_to(g, len(Xi))
    r = order.index("e_" + port.element)
    conj = Z @ dm.J[r] + U @ dm.B[r]
    effort_out = port.effort_out
    law = next((el.law for el in model.netlist.elements if el.name.upper() == element.upper()), None)
    if law is not None and law.learn:
        # the linear placeholder loses the orientation: I=learn is voltage-controlled (w = conj, the
        # voltage; xi_r the current), V=learn current-controlled
        effort_out = law.key == "I"
    return (conj, Xi[:, r]) if effort_out else (Xi[:, r], conj)
