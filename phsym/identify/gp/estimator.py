"""EffortGP: identify the effort function of a pH-DAE ``E x' = (J - R) z(x) + B u``
from state and input samples with a structure-transformed Gaussian process."""
from __future__ import annotations

import time
from typing import Any, Dict, Optional, Sequence

import numpy as np

from ...errors import IdentificationError
from ..base import Estimator
from ..data import as_2d
from ..metrics import r2_score
from .derivatives import DERIVATIVES, training_targets
from .energy import EnergyLayout, energy_objective, energy_posterior
from .icm import IcmLayout, icm_objective, icm_posterior
from .kernels import KERNELS
from .optimize import fit_hyperparameters
from .prior_mean import quadratic_energy, quadratic_form
from .structure import StructureMatrices, UnidentifiableEffortWarning, check_structure, warn_if_singular

__all__ = ["EffortGP", "UnidentifiableEffortWarning"]

VARIANTS = ("direct", "energy")


class EffortGP(Estimator):
    """Gaussian-process identification of the effort function ``z(x)`` of
    ``E x' = (J - R) z(x) + B u`` (Zaspel & Günther), with constant E, J, R, B.

    The targets ``y_i = E x'(t_i) - B u(t_i)`` equal ``(J - R) z(x_i)`` up to
    noise.  ``variant="direct"`` (the seed's method) puts a multi-task prior
    ``z ~ GP(0, B_T ⊗ k)`` on the efforts (intrinsic coregionalisation,
    ``B_T = W W^T + diag(v)`` with ``W`` of ``rank`` columns), so the targets
    have the covariance ``(J - R) B_T (J - R)^T ⊗ k + diag(noise) ⊗ I``,
    solved through its Kronecker structure.  ``variant="energy"`` learns a
    scalar Hamiltonian instead: the efforts of the differential variables
    (nonzero columns of E) are ``dH/dx`` of one GP ``H`` (gradient kernel),
    the algebraic efforts an intrinsic-coregionalisation GP; the learned
    storage law is then a gradient by construction.  Hyperparameters (length
    scales per input, task covariance, per-component noise) maximise the log
    marginal likelihood with analytic gradients (L-BFGS-B with restarts).

    Only the part of ``z`` outside the null space of ``J - R`` is informed by data; if ``J - R``
    is singular a :class:`UnidentifiableEffortWarning` names the null directions, along which
    ``predict`` returns the prior (mean 0, its variance in ``return_std``).

    Parameters
    ----------
    E, J, R, B : array_like
        The constant structure: E (n, n), J skew (n, n), R symmetric positive
        semi-definite (n, n), B (n, m).
    kernel : {"rbf", "matern52"}, default "rbf"
        Stationary kernel in the standardised states (the energy variant's
        Hamiltonian always uses ``"rbf"``; this kernel serves its algebraic
        efforts).
    linear : bool, default True
        Add a linear kernel ``c x^T x'`` (``c`` learned) to the stationary one,
        so that efforts linear in the states (linear elements, algebraic
        variables) need neither huge length scales nor huge variances; with
        ``False`` the kernel is the seed's.  (In the energy variant it serves
        the algebraic efforts; the Hamiltonian kernel stays RBF.)
    rank : int, optional
        Columns of ``W`` in the task covariance (default: full, n).
    variant : {"direct", "energy"}, default "direct"
        The seed's multi-task effort GP, or the Hamiltonian GP (see above).
    hamiltonian_inputs : {"differential", "all"}, default "differential"
        States the learned Hamiltonian depends on (energy variant).
        ``"differential"``: the differential variables only, so ``H`` is a
        storage function and the model passive by construction;
        ``"all"``: algebraic variables too, as the augmented Hamiltonian of a
        constrained mechanical system needs (``H = T + U - g(q)^T lambda``;
        passivity then holds on the constraint manifold).
    storage : sequence of int, optional
        Energy variant: the effort components that are gradients of ``H``
        (default: all differential variables; a subset leaves the others to
        the algebraic GP, e.g. storages whose law is not being learned).
        ``hamiltonian_inputs="differential"`` then means these states.
    names : sequence of str, optional
        Names of the states (set by :meth:`from_model`; used by :meth:`law`).
    derivative : {"central", "spline", "gp"}, default "central"
        How ``fit`` estimates ``x'`` when it is not given (see
        :func:`~phsym.identify.gp.estimate_derivative`).
    restarts : int, optional
        Optimiser starts (the first deterministic, the others random).
        Default: 4 for the direct variant with up to 64 samples (more local
        optima; an evaluation costs an eighth of one at 128), else 2.
    max_iter : int, default 200
        L-BFGS-B iterations per start.
    hyper_samples : int or None, default 48
        Energy variant: with more training samples, the hyperparameters
        maximise the marginal likelihood of a random subset of this size (the
        posterior is then conditioned on all samples); None: of all samples.
    noise_bounds : tuple of float, default (1e-10, 1.0)
        Bounds of each component's noise variance, relative to the mean
        square of the targets.
    random_state : int or None, default 0
        Seed of the random restarts.
    executor : None, "serial", "threads", "dask", Executor or dask Client, optional
        Where the optimiser's starts run: ``None`` one after the other (a
        random start far behind a finished one is abandoned), else at the
        same time, each to its end (``"threads"``: this machine's cores).

    Attributes
    ----------
    posterior_ : object
        The conditioned GP (Kronecker or dense form).
    log_marginal_likelihood_ : float
        At the optimum (of the scaled targets).
    length_scales_ : ndarray
        In the units of the states (of the algebraic efforts' kernel in the
        energy variant).
    hamiltonian_length_scales_ : ndarray
        Energy variant: of the Hamiltonian's kernel, over its inputs.
    noise_ : ndarray
        Noise variance of each target component, in its units.
    mean_ : ndarray
        Constant prior mean of the (scaled) efforts: the least-squares
        solution of ``(J - R) z = mean(y)``.
    mean_slope_ : ndarray, shape (n, n)
        Energy variant: the linear part of the prior mean of the storage
        efforts (the gradient of a least-squares quadratic Hamiltonian), in
        standardised units; zero for the direct variant.
    task_covariance_ : ndarray or None
        ``B_T`` of the direct variant (scaled units).
    targets_ : ndarray
        The training targets ``E x' - B u``.
    derivatives_ : ndarray
        ``x'`` used for the training rows.
    fit_time_ : float
        Seconds spent in ``fit``.
    n_iter_ : int
        L-BFGS-B iterations of the best start.
    n_evals_ : int
        Log-marginal-likelihood evaluations of all starts.

    Examples
    --------
    ``x' = -z / 2 + u`` with the effort ``z = 2 x``, sampled along ``x = sin t``:

    >>> t = np.linspace(0.0, 6.0, 40)
    >>> x = np.sin(t)[:, None]; u = np.cos(t)[:, None] + x
    >>> gp = EffortGP([[1.0]], [[0.0]], [[0.5]], [[1.0]]).fit(x, u, Xdot=np.cos(t)[:, None])
    >>> bool(np.allclose(gp.predict(np.array([[0.3]])), 0.6, atol=1e-3))
    True
    """

    def __init__(self, E: Any = None, J: Any = None, R: Any = None, B: Any = None, *,
                 kernel: str = "rbf", linear: bool = True, rank: Optional[int] = None, variant: str = "direct",
                 hamiltonian_inputs: str = "differential", storage: Optional[Sequence[int]] = None,
                 names: Optional[Sequence[str]] = None, derivative: str = "central", restarts: Optional[int] = None,
                 max_iter: int = 200, hyper_samples: Optional[int] = 48,
                 noise_bounds: Sequence[float] = (1e-10, 1.0), random_state: Optional[int] = 0,
                 executor: Any = None):
        self.E = E
        self.J = J
        self.R = R
        self.B = B
        self.kernel = kernel
        self.linear = linear
        self.rank = rank
        self.variant = variant
        self.hamiltonian_inputs = hamiltonian_inputs
        self.storage = storage
        self.names = names
        self.derivative = derivative
        self.restarts = restarts
        self.max_iter = max_iter
        self.hyper_samples = hyper_samples
        self.noise_bounds = noise_bounds
        self.random_state = random_state
        self.executor = executor

    @classmethod
    def from_model(cls, model: Any, learn: Optional[Sequence[str]] = None, x_op: Optional[Dict[str, float]] = None,
                   params: Optional[Dict[str, float]] = None, **kwargs: Any) -> "EffortGP":
        """An energy-variant estimator on a netlist's descriptor structure.

        ``E, J, R, B`` come from the model's descriptor form (variables
        ``xi = (x, w, lambda)``, named in ``names``: the data columns); the
        Hamiltonian learns the laws of the storage elements in ``learn`` (its
        inputs are their states); every other effort is learned by the
        algebraic GP.  :meth:`law` returns the learned law as netlist text.

        Parameters
        ----------
        model : phsym.Model
            The model; the laws of the learned elements are not used.
        learn : sequence of str, optional
            Storage elements whose law is learned (default: those with ``H=learn``).
        x_op : dict of str to float, optional
            Operating point of the descriptor matrices (default 1 for every state).
        params : dict of str to float, optional
            Parameter overrides.
        **kwargs
            Further constructor arguments.

        Returns
        -------
        EffortGP

        Raises
        ------
        IdentificationError
            No storage to learn, or a dissipative law marked ``I=learn`` /
            ``V=learn``: with constant ``R`` it cannot be learned here, jointly
            with storage laws neither; the message gives the two-step route.
        """
        from .netlist_link import structure_from_model
        st = structure_from_model(model, learn, x_op, params)
        kwargs.setdefault("variant", "energy")
        return cls(st["E"], st["J"], st["R"], st["B"], storage=st["storage"], names=st["names"], **kwargs)

    def law(self, state: str, variable: str) -> str:
        """The learned law of one storage state as netlist text ``H={...}``.

        Parameters
        ----------
        state : str
            The state's name in ``names`` (e.g. ``"q_C1"``).
        variable : str
            The law's variable in the netlist (``q`` for a capacitor).
        """
        from .netlist_link import element_law
        self._check_fitted("posterior_")
        return element_law(self, state, variable)

    # ------------------------------------------------------------------ fit
    def _validate(self) -> StructureMatrices:
        if str(self.kernel).lower() not in KERNELS:
            raise IdentificationError(f"unknown kernel {self.kernel!r}; choose one of {', '.join(KERNELS)}")
        if self.variant not in VARIANTS:
            raise IdentificationError(f"unknown variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")
        if str(self.derivative).lower() not in DERIVATIVES:
            raise IdentificationError(f"unknown derivative {self.derivative!r}; "
                                      f"choose one of {', '.join(DERIVATIVES)}")
        if int(1 if self.restarts is None else self.restarts) < 1 or int(self.max_iter) < 1 \
                or int(self.hyper_samples or 2) < 2:
            raise IdentificationError("restarts and max_iter must be at least 1, hyper_samples at least 2")
        lo, hi = (float(v) for v in self.noise_bounds)
        if not 0.0 < lo < hi:
            raise IdentificationError(f"noise_bounds must satisfy 0 < low < high, got {self.noise_bounds!r}")
        return check_structure(self.E, self.J, self.R, self.B)

    def fit(self, X: Any, U: Any, Xdot: Any = None, t: Any = None, train_index: Any = None) -> "EffortGP":
        """Learn ``z`` from states, inputs and (given or estimated) derivatives.

        Parameters
        ----------
        X : array_like, shape (N, n)
            States, algebraic variables included.
        U : array_like, shape (N, m)
            Inputs at the same samples.
        Xdot : array_like, shape (N, n), optional
            Time derivatives of the states (only the differential columns
            matter).  Estimated from ``t`` with ``derivative`` when omitted.
        t : array_like, shape (N,), optional
            Strictly increasing sample times (needed without ``Xdot``).
        train_index : array_like of int, optional
            Train on these rows only.  Derivatives are estimated on the whole
            series first ("full series"); to estimate them from the training
            samples alone, pass only those samples (and their times) instead.

        Returns
        -------
        EffortGP
            ``self``.

        Raises
        ------
        IdentificationError
            For inconsistent shapes, non-finite data, an invalid structure or
            invalid settings.
        """
        start = time.perf_counter()
        S = self._validate()
        X, U, Xdot, Y = training_targets(S, X, U, Xdot, t, train_index, self.derivative)
        warn_if_singular(S)
        mu = X.mean(axis=0)
        sx = X.std(axis=0)
        sx[sx == 0] = 1.0
        sy = float(np.sqrt(np.mean(Y * Y))) or 1.0
        Xs, Ys = (X - mu) / sx, Y / sy
        n = S.A.shape[0]
        rank = n if self.rank is None else int(self.rank)
        if not 1 <= rank <= n:
            raise IdentificationError(f"rank must be between 1 and {n}, got {self.rank!r}")
        kernel = str(self.kernel).lower()
        if self.variant == "direct":
            A = S.A
            layout = IcmLayout(n, n, rank, bool(self.linear))
            objective, conditioner = icm_objective, icm_posterior
        else:
            storage = list(S.differential) if self.storage is None else [int(i) for i in self.storage]
            if not storage or not set(storage) <= set(S.differential):
                raise IdentificationError(f"the energy variant needs storage states among the differential "
                                          f"variables {S.differential}, got {storage}")
            others = [j for j in range(n) if j not in storage]
            zscale = np.ones(n)
            zscale[storage] = 1.0 / sx[storage]
            A = S.A * zscale[None, :]
            if self.hamiltonian_inputs == "differential":
                hin = tuple(storage)
            elif self.hamiltonian_inputs == "all":
                hin = tuple(range(n))
            else:
                raise IdentificationError(f"hamiltonian_inputs must be 'differential' or 'all', "
                                          f"got {self.hamiltonian_inputs!r}")
            layout = EnergyLayout(n, tuple(storage), tuple(others), max(1, min(rank, len(others))), hin,
                                  bool(self.linear))
            objective, conditioner = energy_objective, energy_posterior
            self.effort_scale_ = zscale * sy
        # constant prior mean of z (least squares through J - R): a zero-mean GP would have to
        # build offsets from huge length scales and variances (a linear term of H, for "energy")
        mean = np.linalg.pinv(A) @ Ys.mean(axis=0)
        slope = np.zeros((n, n))
        if self.variant == "energy":
            slope = quadratic_energy(Xs, Ys, A, layout.storage, layout.hin)
        Ys = Ys - (mean + Xs @ slope.T) @ A.T
        # energy variant: hyperparameters on a subset, stop on a flat likelihood; the direct variant's
        # test errors still improved along valleys worth < 0.1 nats per 20 iterations: no early stop,
        # but a random start far behind the first one is abandoned (it never won when recorded)
        energy = self.variant == "energy"
        opts = dict(subset=self.hyper_samples, flat_window=5) if energy else dict(subset=None, flat_window=None,
                                                                                   prune=True)
        restarts = int(self.restarts) if self.restarts is not None else (2 if energy or X.shape[0] > 64 else 4)
        theta, value, nit, nev = fit_hyperparameters(layout, objective, kernel, Xs, Ys, A, self.noise_bounds, restarts,
                                                     self.max_iter, self.random_state, executor=self.executor, **opts)
        self.posterior_ = conditioner(theta, layout, kernel, Xs, Ys, A)
        self.mean_, self.mean_slope_ = mean, slope
        self.theta_, self.log_marginal_likelihood_, self.n_iter_, self.n_evals_ = theta, -value, nit, nev
        self.structure_ = S
        self.x_mean_, self.x_scale_, self.y_scale_ = mu, sx, sy
        if self.variant == "direct":
            self.effort_scale_ = np.full(n, sy)
            ell, _, _, noise = layout.unpack(theta)
            self.task_covariance_ = layout.task_covariance(theta)
        else:
            ellH, _, ell, _, _, noise = layout.unpack(theta)
            self.task_covariance_ = None
            self.hamiltonian_length_scales_ = ellH * sx[layout.hin]
        self.length_scales_ = ell * sx
        self.noise_ = noise * sy ** 2
        self.targets_, self.derivatives_ = Y, Xdot
        self.n_features_in_ = n
        self.fit_time_ = time.perf_counter() - start
        return self

    # -------------------------------------------------------------- predict
    def _scaled(self, X: Any) -> np.ndarray:
        self._check_fitted("posterior_")
        X = as_2d(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise IdentificationError(f"X has {X.shape[1]} columns, the model {self.n_features_in_}")
        return (X - self.x_mean_) / self.x_scale_

    def predict(self, X: Any, return_std: bool = False):
        """Posterior mean of the effort ``z(X)`` (and its standard deviation).

        Parameters
        ----------
        X : array_like, shape (M, n)
            States.
        return_std : bool, default False
            Also return the posterior standard deviation of each component.

        Returns
        -------
        z : ndarray, shape (M, n)
        std : ndarray, shape (M, n)
            Only with ``return_std``.
        """
        Xs = self._scaled(X)
        z = (self.posterior_.mean(Xs) + self.mean_ + Xs @ self.mean_slope_.T) * self.effort_scale_
        if not return_std:
            return z
        return z, np.sqrt(self.posterior_.variance(Xs)) * self.effort_scale_

    def predict_transformed(self, X: Any, return_std: bool = False):
        """Posterior mean of ``(J - R) z(X)`` (what the data observe), and its standard deviation.

        Parameters
        ----------
        X : array_like, shape (M, n)
            States.
        return_std : bool, default False
            Also return the posterior standard deviation.

        Returns
        -------
        ndarray, shape (M, n)
            And the standard deviation with ``return_std``.
        """
        Xs = self._scaled(X)
        z = self.posterior_.mean(Xs) + self.mean_ + Xs @ self.mean_slope_.T
        y = (z * self.effort_scale_) @ self.structure_.A.T
        if not return_std:
            return y
        return y, np.sqrt(self.posterior_.variance(Xs, transformed=True)) * self.y_scale_

    def predict_jacobian(self, X: Any) -> np.ndarray:
        """Jacobian ``dz/dx`` of the posterior mean (for Newton iterations), shape (M, n, n).

        Parameters
        ----------
        X : array_like, shape (M, n)
            States.
        """
        Xs = self._scaled(X)
        jac = self.posterior_.mean_dx(Xs) + self.mean_slope_[None]
        return jac * self.effort_scale_[None, :, None] / self.x_scale_[None, None, :]

    def hamiltonian(self, X: Any) -> np.ndarray:
        """Learned Hamiltonian (energy variant; defined up to an additive constant), shape (M,).

        Parameters
        ----------
        X : array_like, shape (M, n)
            States.

        Raises
        ------
        IdentificationError
            For the direct variant, which learns no Hamiltonian.
        """
        if self.variant != "energy":
            raise IdentificationError("only variant='energy' learns a Hamiltonian")
        Xs = self._scaled(X)
        S = list(self.posterior_.layout.storage)
        Q = quadratic_form(self.mean_slope_, S)
        quad = 0.5 * np.einsum("mi,ij,mj->m", Xs, Q, Xs)
        return (self.posterior_.hamiltonian(Xs) + Xs[:, S] @ self.mean_[S] + quad) * self.y_scale_

    def score(self, X: Any, U: Any, Xdot: Any = None, t: Any = None) -> float:
        """R² of ``(J - R) z(X)`` against the targets ``E x' - B u``.

        Parameters
        ----------
        X : array_like, shape (N, n)
            States.
        U : array_like, shape (N, m)
            Inputs.
        Xdot : array_like, shape (N, n), optional
            Derivatives (estimated from ``t`` when omitted).
        t : array_like, shape (N,), optional
            Sample times.
        """
        self._check_fitted("posterior_")
        X, _, _, Y = training_targets(self.structure_, X, U, Xdot, t, None, self.derivative)
        return r2_score(self.predict_transformed(X), Y)
