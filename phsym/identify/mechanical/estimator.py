"""Identification of ``M q'' + D q' + K q = L u`` from sampled forces and positions."""
from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

import numpy as np

from ...common.parallel import single_blas_thread
from ...errors import IdentificationError
from ...structure.linear import LinearPHS
from ..base import Estimator
from ..data import as_2d, uniform_step
from ..metrics import r2_score
from ..warnings import UnidentifiableParameterWarning
from .network import network_netlist
from .lm import levenberg_marquardt
from .maps import DISCRETISATIONS, discretise, midpoint_c2d
from .starts import converted, initial_estimates, race
from .oe import OutputError, simulate_positions
from .param import Parametrisation

__all__ = ["MechanicalEstimator", "mechanical_phs"]

#: The second refinement of discretisation="auto" stops once its cost is this many times the first
#: model's optimum while an iteration lowers it by less than STALL_DECREASE (relative): it cannot
#: become the model kept (LM only crawls there), and at coarse h it would take most of the fit time.
STALL_RATIO, STALL_DECREASE = 1.05, 1e-3


def mechanical_phs(M: np.ndarray, D: np.ndarray, K: np.ndarray, L: np.ndarray) -> LinearPHS:
    """The port-Hamiltonian form of ``M q'' + D q' + K q = L u`` with ``x = (q, p)``, ``p = M q'``.

    ``J = [[0, I], [-I, 0]]``, ``R = diag(0, D)``, ``Q = diag(K, M^-1)``,
    ``B = [[0], [L]]``; the port output ``y = B^T Q x = L^T q'``.

    Parameters
    ----------
    M, D, K : numpy.ndarray
        Mass (positive definite), damping (positive semidefinite) and stiffness (positive definite) matrices.
    L : numpy.ndarray
        Input matrix (n, m).

    Returns
    -------
    LinearPHS
    """
    n, m = L.shape
    Z = np.zeros((n, n))
    J = np.block([[Z, np.eye(n)], [-np.eye(n), Z]])
    R = np.block([[Z, Z], [Z, D]])
    Q = np.block([[K, Z], [Z, np.linalg.inv(M)]])
    B = np.vstack([np.zeros((n, m)), L])
    return LinearPHS(J, R, 0.5 * (Q + Q.T), B, states=[f"q{i}" for i in range(n)] + [f"p{i}" for i in range(n)],
                     inputs=[f"u{j}" for j in range(m)], outputs=[f"v{j}" for j in range(m)], tol=1e-8)


class MechanicalEstimator(Estimator):
    """Mass, damping and stiffness matrices from sampled forces and positions.

    Fits ``M q'' + D q' + K q = L u`` (with ``y = C q`` measured, C known and
    square) in three steps: (1) an equation-error least-squares estimate of
    the midpoint (variational, Cayley-Tustin) model on prefiltered data;
    (2) output-error refinement, by Levenberg-Marquardt with the exact
    Jacobian, of the midpoint model and/or of the exact zero-order-hold
    discretisation, both parametrised in ``(M, D, K)`` through Cholesky
    factors so that M, K are symmetric positive definite and D symmetric
    positive semidefinite at every iterate (the midpoint discrete
    parameters are the linear image :func:`~.maps.midpoint_c2d`, so this is
    the seed's refinement of ``(Md, Dd, Kd)`` followed by the inverse
    midpoint map); (3) parameter covariance from the Jacobian at the optimum.
    The system is assumed at rest at the first sample.

    Parameters
    ----------
    n_dof : int
        Degrees of freedom n.
    input_matrix : array_like (n, m), "estimate" or None
        Known L; ``None`` means the identity (needs m == n); ``"estimate"``
        fits L too under the normalisation ``L[0, 0]`` = its value in the
        equation-error start with ``M[0, 0] = 1`` (scale is not identifiable).
    discretisation : {"auto", "midpoint", "zoh"}, default "auto"
        Model of the sampled data: the midpoint model (exact for data from
        a midpoint integrator, good for small h), the exact ZOH model
        (inputs held between samples) or both, keeping the smaller cost.
    init : {"auto", "midpoint", "zoh", "subspace", "ls"} or mapping, default "auto"
        Start: equation-error LS of the midpoint model on low-pass
        prefiltered data (``"midpoint"``), a prefiltered second-order ARX
        model mapped back by the matrix logarithm (``"zoh"``, needs a known
        L), a PO-MOESP subspace model mapped back the same way
        (``"subspace"``, needs a known L; the last two are accurate for
        coarse sampling and ill-conditioned as h -> 0), the one whose output
        error is smallest (``"auto"``), plain unfiltered equation error
        (``"ls"``), or a mapping with ``M, D, K`` (and ``L``).
    max_iter : int, default 100
        Maximal Levenberg-Marquardt iterations per refinement.
    tol : float, default 1e-10
        Stop when an iteration lowers the cost, or moves the scaled
        parameters, by less than this (relative).
    identifiability_threshold : float, default 0.5
        Relative standard deviation ``||std(X)|| / ||X||`` above which a
        matrix is reported as not identified by the data.

    Attributes
    ----------
    M_, D_, K_, L_ : numpy.ndarray
        Identified matrices.
    M_std_, D_std_, K_std_, L_std_ : numpy.ndarray
        Standard deviations of their entries (zero for fixed ones).
    covariance_ : numpy.ndarray
        Covariance of ``(vech M, vech D, vech K, vec L)``.
    model_ : LinearPHS
        The identified system with ``x = (q, p)`` (:func:`mechanical_phs`).
    discretisation_ : str
        The discretisation kept.
    discrete_ : dict of numpy.ndarray
        Midpoint parameters ``Md, Dd, Kd`` of the estimate.
    initial_ : dict of numpy.ndarray
        The start ``M, D, K, L`` kept.
    start_ : str
        Its origin: ``"midpoint"`` (prefiltered equation error of the
        midpoint model), ``"zoh"`` (prefiltered ARX + matrix logarithm +
        second-order extraction), ``"subspace"`` (PO-MOESP + the same), ``"ls"``
        or ``"user"``.
    costs_ : dict of str to float
        Final cost ``|r|^2 / 2`` per refinement (where it stopped: the
        second refinement of ``"auto"`` ends early once it stalls 5 % above
        the first one's optimum, as it cannot be kept then).
    unidentified_ : list of str
        Matrices the data do not determine.
    sigma2_ : float
        Residual variance.
    history_ : dict
        ``cost`` per evaluation and ``stage`` labels.
    n_iter_ : dict of str to int
        Iterations per refinement.
    h_, fit_time_, n_evals_ : float, float, int

    Examples
    --------
    >>> import numpy as np
    >>> from phsym.identify.mechanical.maps import discretise
    >>> from phsym.identify.mechanical.oe import simulate_positions
    >>> M, D, K = np.diag([1.0, 2.0]), np.array([[0.3, -0.1], [-0.1, 0.2]]), np.array([[3.0, -1], [-1, 2]])
    >>> t = np.arange(2000) * 0.05
    >>> u = np.random.default_rng(0).standard_normal((2000, 2))
    >>> q = simulate_positions(*discretise(M, D, K, np.eye(2), 0.05, "midpoint"), u)
    >>> est = MechanicalEstimator(2, discretisation="midpoint").fit(t, u, q)
    >>> bool(np.allclose(est.K_, K, rtol=1e-8))
    True
    """

    def __init__(self, n_dof: int, *, input_matrix: Union[None, str, Any] = None, discretisation: str = "auto",
                 init: Union[str, Mapping[str, Any]] = "auto", max_iter: int = 100, tol: float = 1e-10,
                 identifiability_threshold: float = 0.5):
        self.n_dof = n_dof
        self.input_matrix = input_matrix
        self.discretisation = discretisation
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.identifiability_threshold = identifiability_threshold

    # ------------------------------------------------------------ checks
    def _input_matrix(self, n: int, m: int) -> Optional[np.ndarray]:
        L = self.input_matrix
        if isinstance(L, str):
            if L != "estimate":
                raise IdentificationError(f"input_matrix must be an array, None or 'estimate', got {L!r}")
            return None
        if L is None:
            if m != n:
                raise IdentificationError(f"{m} inputs for {n} degrees of freedom: give input_matrix "
                                          "(n_dof x inputs) or input_matrix='estimate'")
            return np.eye(n)
        return as_2d(np.asarray(L, dtype=float).reshape(n, -1) if np.size(L) == n * m else L,
                     "input_matrix", n, m)

    def _data(self, t: Any, u: Any, q: Any, C: Any):
        n = int(self.n_dof)
        if n < 1:
            raise IdentificationError("n_dof must be positive")
        tt = np.asarray(t, dtype=float).reshape(-1)
        h = uniform_step(tt, min_samples=8)
        U = as_2d(u, "u", tt.size)
        Y = as_2d(q, "q", tt.size, n)
        Cm = np.eye(n) if C is None else as_2d(C, "C", n, n)
        if np.linalg.cond(Cm) > 1e12:
            raise IdentificationError("output matrix C is singular")
        return h, U, Y, Cm

    # ------------------------------------------------------------ API
    def fit(self, t: Any, u: Any, q: Any, C: Any = None) -> "MechanicalEstimator":
        """Identify M, D, K (and L) from sampled forces and positions.

        Parameters
        ----------
        t : array_like, shape (N,)
            Uniform sample times.
        u : array_like, shape (N, m)
            Forces on the grid (held between samples for ZOH data).
        q : array_like, shape (N, n_dof)
            Measured outputs ``y = C q`` at the sample times.
        C : array_like, shape (n_dof, n_dof), optional
            Known invertible output matrix (identity by default).

        Returns
        -------
        MechanicalEstimator
            ``self``, fitted.
        """
        with single_blas_thread():          # many small products: threads only slow them
            return self._fit(t, u, q, C)

    def _fit(self, t: Any, u: Any, q: Any, C: Any) -> "MechanicalEstimator":
        t0 = time.perf_counter()
        h, U, Y, C = self._data(t, u, q, C)
        n, m = int(self.n_dof), U.shape[1]
        if self.discretisation not in ("auto",) + DISCRETISATIONS:
            raise IdentificationError(f"discretisation must be 'auto', 'midpoint' or 'zoh', "
                                      f"got {self.discretisation!r}")
        Lfix = self._input_matrix(n, m)
        qpos = np.linalg.solve(C, Y.T).T
        kinds = DISCRETISATIONS if self.discretisation == "auto" else (self.discretisation,)
        cands = initial_estimates(self.init, n, U, qpos, h, Lfix)
        if not cands:
            raise IdentificationError("no finite initial estimate (data without excitation?)")
        par = Parametrisation(n, m, Lfix)
        start_costs = {}
        for name, cand in cands.items():
            th = par.pack(*cand)
            with np.errstate(all="ignore"):
                cs = {k: float(np.sum(OutputError(par, U, Y, h, k, C).residuals(th) ** 2)) for k in kinds}
            cs = {k: c for k, c in cs.items() if np.isfinite(c)}
            if cs:
                start_costs[name] = (cand, cs)
        if not start_costs:
            raise IdentificationError("no initial estimate gives a finite output error")
        # the start lowest after one step; its model first, the other one then starts from its optimum
        start, first, theta, n_evals = race(start_costs, par, lambda k: OutputError(par, U, Y, h, k, C))
        kinds = sorted(kinds, key=lambda k: k != first)
        M0, D0, K0, L0 = cands[start]
        theta0 = par.pack(M0, D0, K0, L0)
        hist: Dict[str, List] = {"cost": [], "stage": []}
        results = {}
        n_iter: Dict[str, int] = {}
        for kind in kinds:
            oe = OutputError(par, U, Y, h, kind, C)
            if results:          # start from the start, an earlier optimum or its conversion, whichever fits best
                pool = [theta0] + [v[1] for v in results.values()]
                pool += [th for src, v in results.items() if (th := converted(par, v[1], h, src, kind)) is not None]
                with np.errstate(all="ignore"):
                    costs = [float(np.sum(oe.residuals(th) ** 2)) for th in pool]
                theta = pool[int(np.nanargmin(np.where(np.isfinite(costs), costs, np.nan)))]

            def fun(th, oe=oe, kind=kind):
                r = oe.residuals(th)
                hist["cost"].append(0.5 * float(r @ r))
                hist["stage"].append(kind)
                return r

            # give up a second model that stalls clearly above the first one's optimum
            stop = _stall(min(v[0] for v in results.values())) if results else None
            with np.errstate(all="ignore"):
                sol = levenberg_marquardt(fun, None, theta, max_iter=int(self.max_iter),
                                          ftol=self.tol, xtol=self.tol, normal=oe.normal_equations, stop=stop)
            if not np.all(np.isfinite(sol["x"])):
                raise IdentificationError(f"the {kind} refinement diverged")
            if not sol["converged"] and not sol["stopped"]:
                warnings.warn(f"the {kind} refinement stopped after max_iter={self.max_iter} iterations "
                              "before converging", RuntimeWarning, stacklevel=3)
            n_evals += oe.n_evals
            results[kind] = (float(sol["cost"]), sol["x"], oe)
            n_iter[kind] = int(sol["n_iter"])
        best = min(results, key=lambda k: results[k][0])
        cost, theta, oe = results[best]
        M, D, K, L, _ = par.unpack(theta)
        self.M_, self.D_, self.K_, self.L_ = M, D, K, L.copy()
        self.discretisation_ = best
        self.costs_ = {k: v[0] for k, v in results.items()}
        self.initial_ = {"M": M0, "D": D0, "K": K0, "L": L0}
        self.start_ = start
        Md, Dd, Kd = midpoint_c2d(M, D, K, h)
        self.discrete_ = {"Md": Md, "Dd": Dd, "Kd": Kd}
        self._uncertainty(par, theta, oe)
        self.model_ = mechanical_phs(M, D, K, L)
        self.h_ = h
        self.C_ = C
        self.history_ = {"cost": np.asarray(hist["cost"]), "stage": list(hist["stage"])}
        self.n_evals_ = n_evals
        self.n_iter_ = n_iter
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _uncertainty(self, par: Parametrisation, theta: np.ndarray, oe: OutputError) -> None:
        r = oe.residuals(theta)
        A, _ = oe.normal_equations(theta)
        dof = max(r.size - A.shape[0], 1)
        s2 = float(r @ r) / dof
        col = np.sqrt(np.maximum(np.diag(A), 0.0))
        col = np.where(col > 0, col, 1.0)
        ev, V = np.linalg.eigh(A / np.outer(col, col))
        Vt = V.T
        # J^T J squares the singular values of J: 1e-14 here is 1e-7 on them
        tiny = ev < max(ev.max(), 1e-300) * 1e-14
        inv = np.where(tiny, 0.0, 1.0 / np.where(tiny, 1.0, ev))
        cov_t = s2 * ((Vt.T * inv) @ Vt) / np.outer(col, col)
        G = par.matrix_jacobian(theta)
        cov = G @ cov_t @ G.T
        self.covariance_ = cov
        self.sigma2_ = s2
        n, m = par.n, par.m
        t = par.n_tri
        std = np.sqrt(np.maximum(np.diag(cov), 0.0))
        stds = {}
        for k, name in enumerate("MDK"):
            S = np.zeros((n, n))
            S[par.rows, par.cols] = std[k * t:(k + 1) * t]
            stds[name] = S + np.tril(S, -1).T
        stds["L"] = std[3 * t:].reshape(n, m)
        self.M_std_, self.D_std_, self.K_std_, self.L_std_ = stds["M"], stds["D"], stds["K"], stds["L"]
        names = par.names()
        null = set()
        for k in np.flatnonzero(tiny):
            v = np.abs(Vt[k])
            null.update(names[i].split(".")[0].split()[-1][0] for i in np.flatnonzero(v > 0.3 * v.max()))
        mats = {"M": self.M_, "D": self.D_, "K": self.K_, "L": self.L_}
        bad = [k for k in "MDKL" if k in null or
               np.linalg.norm(stds[k]) > self.identifiability_threshold * max(np.linalg.norm(mats[k]), 1e-300)]
        if par.L_fixed is not None and "L" in bad:
            bad.remove("L")
        self.unidentified_ = bad
        if bad:
            msg = (f"the data do not identify {', '.join(bad)} (relative standard deviation above "
                   f"{self.identifiability_threshold} or a null direction of the Jacobian)")
            warnings.warn(UnidentifiableParameterWarning(msg, bad), stacklevel=3)

    def to_netlist(self, path: Union[None, str, Path] = None, tol: float = 1e-3) -> str:
        """The identified system as a phsym netlist of masses, springs, dampers and forces.

        Possible when M is diagonal and K, D are a graph Laplacian plus a
        non-negative diagonal (:func:`~.network.network_netlist`); estimates
        are so only up to noise, hence the threshold ``tol``: entries below
        ``tol`` times the largest of their matrix are dropped.

        Parameters
        ----------
        path : str or pathlib.Path, optional
            File to write as well.
        tol : float
            Relative threshold below which an entry counts as zero.

        Returns
        -------
        str
            Netlist text.

        Raises
        ------
        NotANetworkError
            The estimate has no mass-spring-damper network form; the message
            names the entries that prevent it.
        """
        self._check_fitted("model_")
        text = network_netlist(self.M_, self.D_, self.K_, self.L_, tol=tol,
                               title=f"mass-spring-damper network identified by phsym ({self.discretisation_})")
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def predict(self, t: Any, u: Any) -> np.ndarray:
        """Outputs ``C q`` of the fitted model from rest, with the discretisation kept by the fit.

        Positions live on the sample grid (unlike the step values of a
        :class:`~phsym.simulation.SimulationResult`), and the ZOH model is no
        phsym scheme, so this returns an array; ``model_`` simulates with
        :func:`phsym.simulate` like any model.

        Parameters
        ----------
        t : array_like, shape (N,)
            Uniform sample times (the step may differ from the fit's).
        u : array_like, shape (N, m)
            Forces.

        Returns
        -------
        numpy.ndarray, shape (N, n_dof)
        """
        self._check_fitted("model_")
        tt = np.asarray(t, dtype=float).reshape(-1)
        h = uniform_step(tt)
        U = as_2d(u, "u", tt.size, self.L_.shape[1])
        Ad, B0, B1 = discretise(self.M_, self.D_, self.K_, self.L_, h, self.discretisation_)
        return simulate_positions(Ad, B0, B1, U) @ self.C_.T

    def score(self, t: Any, u: Any, q: Any) -> float:
        """Coefficient of determination R² of :meth:`predict` (1 is perfect).

        Parameters
        ----------
        t : array_like, shape (N,)
            Uniform sample times.
        u : array_like, shape (N, m)
            Forces.
        q : array_like, shape (N, n_dof)
            Measured outputs.
        """
        pred = self.predict(t, u)
        return r2_score(pred, as_2d(q, "q", pred.shape[0], pred.shape[1]))


def _stall(c1: float):
    """Stop rule of a second refinement: after five steps, above ``STALL_RATIO * c1`` and crawling."""
    def stop(hc: List[float]) -> bool:
        return len(hc) > 5 and hc[-1] > STALL_RATIO * c1 and hc[-2] - hc[-1] < STALL_DECREASE * hc[-1]
    return stop
