"""The output-error least-squares problem of :class:`~phsym.identify.ParameterEstimator`.

* :class:`Reparam` maps free parameters to optimisation variables
  (``log p`` keeps a parameter positive, ``p / scale`` otherwise) and bounds;
* :class:`OutputError` evaluates the weighted residuals and their exact
  Jacobian (sensitivities of the simulated steps) and runs the multi-start
  trust-region least squares;
* :func:`dc_sensitivity` differentiates a DC operating point;
* :class:`FitHooks` are what an estimator may change in the problem (free
  parameters, starts, log rule, scales, regularisation rows): the learned
  laws of :mod:`phsym.identify.learned` use them.
"""
from __future__ import annotations

import math
import sys
from typing import List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..codegen.newton.sensitivity import SensitivityStep
from ..common.names import NameTable
from ..errors import IdentificationError, SimulationError
from .data import Measurements
from .multistart import run_starts

__all__ = ["FitHooks", "Reparam", "OutputError", "dc_sensitivity", "FAILED", "output_weights"]

#: Residual of a parameter set the model cannot be simulated at.
FAILED = 1e6


def dc_sensitivity(step: SensitivityStep, x, U0, p, xs, h, nf: int) -> np.ndarray:
    """d x_dc / d p from the stationary step ``F(0, w, lambda; x, u0, p) = 0``.

    Parameters
    ----------
    step : SensitivityStep
        The sensitivity module (its ``resjac`` and ``sens`` are callable from Python).
    x : ndarray
        DC state.
    U0 : ndarray
        Inputs.
    p, xs : ndarray
        Parameter array and state scales.
    h : float
        Step.
    nf : int
        Number of free parameters.
    """
    nx, nv = step.n_x, step.n_v
    m = max(nv, 1)
    v, F, Jm = np.zeros(m), np.zeros(m), np.zeros((m, m))
    ub = np.asarray(U0, float).copy() if len(U0) else np.zeros(1)
    for _ in range(60):
        step.module.resjac(x, v, ub, p, xs, h, F, Jm)
        d = np.linalg.solve(Jm[:nv, :nv], -F[:nv])
        v[:nv] += d
        if np.max(np.abs(d) / (np.abs(v[:nv]) + 1.0), initial=0.0) < 1e-14:
            break
    step.module.resjac(x, v, ub, p, xs, h, F, Jm)
    Fx, Fp = np.zeros((m, max(nx, 1))), np.zeros((m, max(nf, 1)))
    step.module.sens(x, v, ub, p, xs, h, Fx, Fp)
    A = np.hstack([Fx[:nv, :nx], Jm[:nv, nx:nv]])
    try:
        dz = np.linalg.solve(A, -Fp[:nv, :nf])
    except np.linalg.LinAlgError:
        raise IdentificationError("singular DC operating point: use another x0") from None
    return dz[:nx]


class FitHooks:
    """The parts of the output-error problem an estimator subclass may change (defaults: none changed)."""

    def _free_names(self, model) -> List[str]:
        """The free parameters as given (subclasses add their own)."""
        return [self.free] if isinstance(self.free, str) else list(self.free)

    def _start_values(self) -> Mapping[str, float]:
        """Start values of free parameters given by the user (subclasses add their own)."""
        return self.initial or {}

    def _log_param_rule(self) -> Union[str, bool, Sequence[str]]:
        """Which parameters are optimised as logarithms (``log_params``; subclasses narrow it)."""
        return self.log_params

    def _scales(self, free: List[str], scale: np.ndarray, islog: np.ndarray, start: Mapping[str, float]) -> np.ndarray:
        """Scales of the optimisation variables: ``p / scale`` (default ``|start|``), or ``log(p / scale)``
        for log parameters (default 1)."""
        return scale

    def _penalty(self, params: Mapping[str, float], n_res: int) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """Regularisation residuals and their Jacobian in physical units (rows, n_free), or None.

        Parameters
        ----------
        params : mapping of str to float
            Free parameters.
        n_res : int
            Number of output residuals (penalties scale with it).
        """
        return None


class Reparam:
    """Free parameters <-> optimisation variables ``theta`` (``log p`` or ``p / scale``) and bounds."""

    def __init__(self, est, model, free: List[str]):
        base = est._values(model, {})
        table = NameTable(model.netlist.parameters, what="parameter")
        initial = est._start_values()
        init = NameTable(initial, what="initial value")
        for key in initial:
            if table.spelling(key) not in free:
                raise IdentificationError(f"initial value for {key!r}, which is not free")
        self.start = {f: float(init[f]) if f in init else float(base[table[f].symbol]) for f in free}
        bounds = {f: (None, None) for f in free}
        for key, b in (est.bounds or {}).items():
            name = table.spelling(key)
            if name not in free:
                raise IdentificationError(f"bounds for {key!r}, which is not free")
            bounds[name] = (None if b[0] is None else float(b[0]), None if b[1] is None else float(b[1]))
        lp = est._log_param_rule()
        want = {f: (lp if isinstance(lp, bool) else (lp == "auto") if isinstance(lp, str)
                    else f.lower() in {str(n).lower() for n in lp}) for f in free}
        self.islog = np.array([bool(want[f] and self.start[f] > 0 and (bounds[f][0] is None or bounds[f][0] >= 0))
                               for f in free])
        self.scale = est._scales(free, np.array([1.0 if lg else (abs(self.start[f]) or 1.0)
                                                 for f, lg in zip(free, self.islog)]), self.islog, self.start)
        self.free = free
        # a log parameter is log(p / scale) (scale 1 unless a subclass centres it on its start)
        self.lo = np.array([-np.inf if a is None else ((math.log(a / s) if a > 0 else -np.inf) if lg else a / s)
                            for (a, _), lg, s in zip(bounds.values(), self.islog, self.scale)])
        self.hi = np.array([np.inf if b is None else (math.log(b / s) if lg else b / s)
                            for (_, b), lg, s in zip(bounds.values(), self.islog, self.scale)])

    def theta(self, values: Mapping[str, float]) -> np.ndarray:
        p = np.array([values[f] for f in self.free])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.islog, np.log(np.abs(p) / self.scale), p / self.scale)

    def physical(self, theta: np.ndarray) -> np.ndarray:
        return np.where(self.islog, np.exp(theta) * self.scale, theta * self.scale)


class OutputError:
    """Residuals and Jacobian of the weighted output error (memoised at the last point)."""

    def __init__(self, est, model, step, rp: Reparam, data: Measurements, target, w, xs, nz: int):
        self.est, self.model, self.step, self.rp, self.data = est, model, step, rp, data
        self.target, self.w, self.xs, self.nz = target, w, xs, nz
        self.n, self.last = 0, None

    def evaluate(self, xv: np.ndarray):
        key = xv.tobytes()
        if self.last is not None and self.last[0] == key:
            return self.last[1], self.last[2]
        nf, est = len(self.rp.free), self.est
        phys = self.rp.physical(xv[:nf])
        pv = dict(zip(self.rp.free, phys))
        try:
            Y, DY, bad, _ = est._simulate(self.model, self.step, pv, self.data.U, self.data.h, est.x0, self.xs,
                                          xv[nf:] if self.nz else None)
        except (SimulationError, IdentificationError, np.linalg.LinAlgError):
            bad, Y, DY = 0, None, None
        nres = self.target.size
        D = np.concatenate([np.where(self.rp.islog, phys, self.rp.scale), np.ones(self.nz)])
        if bad >= 0 or not np.all(np.isfinite(Y)) or not np.all(np.isfinite(DY)):
            r, jac = np.full(nres, FAILED), np.zeros((nres, nf + self.nz))
        else:
            r = ((Y - self.target) * self.w).ravel()
            jac = (DY * self.w[None, :, None]).reshape(nres, nf + self.nz) * D[None, :]
        penalty = est._penalty(pv, nres)       # regularisation rows (none for plain parameter fits)
        if penalty is not None:
            rp, jp = penalty
            jp = np.hstack([jp, np.zeros((jp.shape[0], self.nz))]) * D[None, :]
            r, jac = np.concatenate([r, rp]), np.vstack([jac, jp])
        self.n += 1
        cost = 0.5 * float(r @ r)
        if est.verbose:
            print(f"eval {self.n:4d} cost {cost:.6e} " + " ".join(f"{f}={v:.6g}" for f, v in pv.items()),
                  file=sys.stderr)
        if est.callback is not None:
            est.callback(self.n, cost, pv)
        self.last = (key, r, jac)
        return r, jac

    def minimise(self, x_start: np.ndarray):
        """Best of ``n_starts`` trust-region least-squares runs (on ``est.executor``,
        :mod:`phsym.identify.multistart`); also the final cost of each."""
        est, nf = self.est, len(self.rp.free)
        lo = np.concatenate([self.rp.lo, np.full(self.nz, -np.inf)])
        hi = np.concatenate([self.rp.hi, np.full(self.nz, np.inf)])
        x_start = np.clip(x_start, lo, hi)
        rng = np.random.default_rng(est.random_state)
        starts = []
        for s in range(max(1, int(est.n_starts))):      # drawn here: the same starts on any executor
            x0 = x_start.copy()
            if s > 0:
                pert = rng.standard_normal(nf) * est.start_spread
                x0[:nf] = np.where(self.rp.islog, x0[:nf] + pert, x0[:nf] * (1.0 + pert))
                x0 = np.clip(x0, np.where(np.isfinite(lo), lo + 1e-12, -np.inf),
                             np.where(np.isfinite(hi), hi - 1e-12, np.inf))
            starts.append(x0)
        bnd = (lo, hi) if (np.any(np.isfinite(lo)) or np.any(np.isfinite(hi))) else (-np.inf, np.inf)
        results = run_starts(self, starts, bnd)
        best = min((r for r in results if r.x is not None), key=lambda r: r.cost)
        return best, [float(r.cost) for r in results]


def output_weights(weights, target: np.ndarray, labels: List[str]) -> np.ndarray:
    """Weights of the outputs: ``"std"`` one over each target's standard deviation, ``"none"`` ones,
    or one given finite weight per output.

    Parameters
    ----------
    weights : "std", "none" or array_like
        The estimator's ``weights``.
    target : ndarray (N, n_y)
        What the outputs are compared with.
    labels : list of str
        The outputs.
    """
    if isinstance(weights, str):
        if weights == "std":
            sd = target.std(axis=0)
            return np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 1.0)
        if weights == "none":
            return np.ones(len(labels))
        raise IdentificationError("weights must be 'std', 'none' or an array")
    w = np.asarray(weights, float).reshape(-1)
    if w.shape[0] != len(labels) or not np.all(np.isfinite(w)):
        raise IdentificationError(f"weights needs {len(labels)} finite entries")
    return w
