"""Objective and optimisers for linear port-Hamiltonian identification.

* :class:`Objective` - output-error cost + seed-style regularisation, with
  Euclidean block gradients from the exact discrete adjoint.
* :func:`riemannian_cg` - Riemannian conjugate gradients with Armijo
  backtracking on the product manifold  skew(n) x R^{n x r} (R = L L^T) x
  SPD(n) (affine-invariant metric) x R^{n x m} x R^n.
* :func:`lbfgs` - scipy L-BFGS on the flat parametrisation of
  :class:`~phsym.identify.linear_param.FlatMap`.

Both only ever evaluate port-Hamiltonian points.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import scipy.linalg as sla
import scipy.optimize as sopt

from .linear_kernels import mm, solve_factored
from .linear_param import FlatMap, Point, R_of, skew, sym
from ..errors import IdentificationError
from .linear_simulation import cost_and_gradient

__all__ = ["Objective", "riemannian_cg", "lbfgs", "IterCallback"]

IterCallback = Callable[[int, Point, float, float, float], Optional[bool]]


class Objective:
    """``Phi(w) = 1/2 sum_k w_k |y_k(w) - d_k|^2 + lambda/2 |w - w_ref|^2``.

    Parameters
    ----------
    u : numpy.ndarray, shape (N, m)
        Inputs on a uniform grid of step ``h``.
    d : numpy.ndarray, shape (N, m) or (N - 1, m)
        Output data: grid samples or step values (``on_steps``).
    h : float
        Time step.
    scheme : Scheme
        Time-stepping scheme (the gradient is its exact discrete adjoint).
    free : sequence of str
        Free blocks.
    regularization : float
        Weight ``lambda >= 0``.
    regularize : sequence of str, optional
        Blocks the penalty acts on (intersected with ``free``); default
        ``("Q",)`` as in the seed paper.
    reference : mapping, optional
        Reference blocks ``w_ref`` (missing ones: zero; for Q the seed's
        ``1/2 ||log Q||_F^2`` penalty towards the identity is used unless a
        reference Q is given, then ``1/2 ||Q - Q_ref||_F^2``).
    on_steps : bool
        ``d`` holds step values.
    """

    def __init__(self, u: np.ndarray, d: np.ndarray, h: float, scheme,
                 free: Sequence[str], regularization: float = 0.0,
                 reference: Optional[Mapping[str, Any]] = None,
                 regularize: Optional[Sequence[str]] = None, on_steps: bool = False):
        self.u = np.ascontiguousarray(u, dtype=float)
        self.d = np.ascontiguousarray(d, dtype=float)
        self.h = float(h)
        self.scheme = scheme
        self.on_steps = bool(on_steps)
        self.free = tuple(free)
        self.lam = float(regularization)
        self.regularize = tuple(b for b in (("Q",) if regularize is None else regularize)
                                if b in self.free)
        self.reference = {k: np.asarray(v, dtype=float) for k, v in (reference or {}).items()}
        self.n_evals = 0

    def __call__(self, p: Point, grad: bool = True) -> Tuple[float, Optional[Dict[str, np.ndarray]]]:
        """Cost and Euclidean gradients w.r.t. J, R, Q, B, x0 at point ``p``."""
        self.n_evals += 1
        R = R_of(p["L"])
        f, g = cost_and_gradient(p["J"], R, p["Q"], p["B"], p["x0"], self.u, self.d,
                                 self.h, self.scheme, grad, self.on_steps)
        if self.lam > 0 and np.isfinite(f):
            cur = {"J": p["J"], "R": R, "B": p["B"], "x0": p["x0"]}
            for b in ("J", "R", "B", "x0"):
                if b in self.regularize:
                    diff = cur[b] - self.reference.get(b, 0.0)
                    f += 0.5 * self.lam * float(np.sum(diff * diff))
                    if g is not None:
                        g[b] = g[b] + self.lam * diff
            if "Q" in self.regularize:
                if "Q" in self.reference:
                    diff = p["Q"] - self.reference["Q"]
                    f += 0.5 * self.lam * float(np.sum(diff * diff))
                    if g is not None:
                        g["Q"] = g["Q"] + self.lam * diff
                else:
                    ev, V = np.linalg.eigh(sym(p["Q"]))
                    lg = np.log(ev)
                    f += 0.5 * self.lam * float(np.sum(lg * lg))
                    if g is not None:
                        g["Q"] = g["Q"] + self.lam * mm(V * (lg / ev), V.T)
        return f, g


# ----------------------------------------------------------------- manifold
class _Manifold:
    """Product manifold of the free blocks (metric, gradient, retraction)."""

    def __init__(self, free: Sequence[str]):
        self.free = tuple(free)

    @staticmethod
    def _key(b: str) -> str:
        return "L" if b == "R" else b

    def rgrad(self, p: Point, eg: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        out = {}
        for b in self.free:
            if b == "J":
                out["J"] = skew(eg["J"])
            elif b == "R":
                out["L"] = mm(eg["R"] + eg["R"].T, p["L"])
            elif b == "Q":
                out["Q"] = sym(mm(mm(p["Q"], sym(eg["Q"])), p["Q"]))
            else:
                out[b] = eg[b].copy()
        return out

    def inner(self, p: Point, qinv: Optional[np.ndarray], a: Dict[str, np.ndarray],
              c: Dict[str, np.ndarray]) -> float:
        s = 0.0
        for k in a:
            if k == "Q":
                s += float(np.sum(mm(qinv, a["Q"]) * mm(qinv, c["Q"]).T))
            else:
                s += float(np.sum(a[k] * c[k]))
        return s

    def retract(self, p: Point, qinv: Optional[np.ndarray], xi: Dict[str, np.ndarray],
                t: float) -> Optional[Point]:
        new = dict(p)
        for k, v in xi.items():
            if k == "Q":
                tv = t * v
                Qn = sym(p["Q"] + tv + 0.5 * mm(mm(tv, qinv), tv))
                try:
                    np.linalg.cholesky(Qn)
                except np.linalg.LinAlgError:
                    return None
                new["Q"] = Qn
            elif k == "J":
                new["J"] = skew(p["J"] + t * v)
            else:
                new[k] = p[k] + t * v
        return new


def _qinv(p: Point, free: Sequence[str]) -> Optional[np.ndarray]:
    if "Q" not in free:
        return None
    n = p["Q"].shape[0]
    return sym(solve_factored(sla.lu_factor(p["Q"]), np.eye(n)))


def riemannian_cg(obj: Objective, p0: Point, free: Sequence[str], max_iter: int = 100,
                  gtol: float = 1e-8, ftol: float = 0.0, beta_rule: str = "PR",
                  restart: int = 5, step0: Optional[float] = None, adaptive: bool = True,
                  c1: float = 1e-4, max_backtrack: int = 40,
                  on_iter: Optional[IterCallback] = None) -> Tuple[Point, Dict[str, List[float]]]:
    """Riemannian conjugate gradients with Armijo backtracking.

    Search directions ``eta_{k+1} = -grad f(w_{k+1}) + beta s_k T(eta_k)``
    with Polak-Ribiere+ (``max(0, <g_{k+1}, g_{k+1} - T g_k> / <g_k, g_k>)``)
    or Fletcher-Reeves (``<g_{k+1}, g_{k+1}> / <g_k, g_k>``) coefficient,
    Sato's scaling ``s_k = min(1, |eta_k| / |T eta_k|)``, a restart every
    ``restart`` iterations and whenever ``eta`` is not a descent direction.
    The vector transport ``T`` is the identity map, valid because every
    factor's tangent spaces coincide as linear spaces (skew matrices,
    R^{n x r}, symmetric matrices, R^{n x m}, R^n).  Q moves with the
    second-order SPD retraction ``Q + xi + xi Q^{-1} xi / 2`` (always SPD).

    Parameters
    ----------
    obj : Objective
        Cost and gradient.
    p0 : dict
        Start point.
    free : sequence of str
        Free blocks.
    max_iter : int
        Iteration limit.
    gtol : float
        Stop when ``|grad| <= gtol * |grad_0|``.
    ftol : float
        Stop when the relative cost decrease of an iteration is below ``ftol``.
    beta_rule : {"PR", "FR"}
        Conjugacy coefficient.
    restart : int
        Restart period (``0``: never periodic).
    step0 : float, optional
        First trial step of the Armijo search (seed: 1000 every iteration with
        ``adaptive=False``); default ``1 / |grad_0|``.
    adaptive : bool
        Start each line search from the previous accepted step times 2
        (and expand while the cost keeps decreasing); otherwise always from
        ``step0``.
    c1 : float
        Armijo constant.
    max_backtrack : int
        Maximal halvings per line search.
    on_iter : callable, optional
        ``on_iter(k, point, cost, grad_norm, step)``; return ``True`` to stop.

    Returns
    -------
    point : dict
        Final point.
    history : dict of lists
        ``cost``, ``grad_norm``, ``step`` per iteration (entry 0 = start).
    """
    if beta_rule not in ("PR", "FR"):
        raise IdentificationError("beta_rule must be 'PR' or 'FR'")
    man = _Manifold(free)
    p = p0
    f, eg = obj(p)
    if not np.isfinite(f):
        raise IdentificationError("the output-error cost is not finite at the initial point (unstable start?)")
    qinv = _qinv(p, free)
    g = man.rgrad(p, eg)
    gg = man.inner(p, qinv, g, g)
    g0 = np.sqrt(gg)
    hist: Dict[str, List[float]] = {"cost": [f], "grad_norm": [g0], "step": [0.0]}
    if on_iter is not None and on_iter(0, p, f, g0, 0.0):
        return p, hist
    eta = {k: -v for k, v in g.items()}
    sigma = step0 if step0 is not None else 1.0 / max(g0, 1e-300)
    for k in range(1, max_iter + 1):
        if np.sqrt(gg) <= gtol * g0 or gg == 0.0:
            break
        slope = man.inner(p, qinv, g, eta)
        if slope >= 0:
            eta = {kk: -v for kk, v in g.items()}
            slope = -gg
        t = sigma if adaptive else (step0 if step0 is not None else sigma)
        accepted = None
        for _ in range(max_backtrack):
            trial = man.retract(p, qinv, eta, t)
            ft = obj(trial, grad=False)[0] if trial is not None else np.inf
            if np.isfinite(ft) and ft <= f + c1 * t * slope:
                accepted = (t, trial, ft)
                break
            t *= 0.5
        if accepted is None:
            break
        t, trial, ft = accepted
        if adaptive and t == sigma:          # first trial accepted: try expanding
            for _ in range(8):
                t2 = 2.0 * t
                tr2 = man.retract(p, qinv, eta, t2)
                f2 = obj(tr2, grad=False)[0] if tr2 is not None else np.inf
                if np.isfinite(f2) and f2 < ft:
                    t, trial, ft = t2, tr2, f2
                else:
                    break
        sigma = 2.0 * t if adaptive else sigma
        step_norm = t * np.sqrt(man.inner(p, qinv, eta, eta))
        p_new = trial
        f_new, eg_new = obj(p_new)
        qinv_new = _qinv(p_new, free)
        g_new = man.rgrad(p_new, eg_new)
        gg_new = man.inner(p_new, qinv_new, g_new, g_new)
        # transport (identity) and Sato's scaling
        eta_norm_old = np.sqrt(man.inner(p, qinv, eta, eta))
        eta_norm_new = np.sqrt(man.inner(p_new, qinv_new, eta, eta))
        s = min(1.0, eta_norm_old / eta_norm_new) if eta_norm_new > 0 else 1.0
        if restart and k % restart == 0:
            beta = 0.0
        elif beta_rule == "FR":
            beta = gg_new / gg
        else:
            diff = {kk: g_new[kk] - g[kk] for kk in g_new}
            beta = max(0.0, man.inner(p_new, qinv_new, g_new, diff) / gg)
        eta = {kk: -g_new[kk] + beta * s * eta[kk] for kk in g_new}
        rel_dec = (f - f_new) / max(abs(f), 1e-300)
        p, f, g, gg, qinv = p_new, f_new, g_new, gg_new, qinv_new
        hist["cost"].append(f)
        hist["grad_norm"].append(float(np.sqrt(gg)))
        hist["step"].append(float(step_norm))
        if on_iter is not None and on_iter(k, p, f, float(np.sqrt(gg)), float(step_norm)):
            break
        if ftol > 0 and rel_dec < ftol:
            break
    return p, hist


def lbfgs(obj: Objective, p0: Point, fmap: FlatMap, max_iter: int = 100, gtol: float = 1e-8,
          ftol: float = 0.0, memory: int = 20,
          on_iter: Optional[IterCallback] = None) -> Tuple[Point, Dict[str, List[float]]]:
    """L-BFGS (scipy ``L-BFGS-B`` without bounds) on the flat parametrisation.

    Parameters
    ----------
    obj : Objective
        Cost and gradient.
    p0 : dict
        Start point.
    fmap : FlatMap
        Flat coordinates of the free blocks.
    max_iter : int
        Iteration limit.
    gtol : float
        Stop when ``|grad| <= gtol * |grad_0|`` (Euclidean norm in flat
        coordinates).
    ftol : float
        Passed to scipy (relative reduction ``(f_k - f_{k+1}) / max(|f_k|,
        |f_{k+1}|, 1) <= ftol`` stops).
    memory : int
        Number of stored correction pairs.
    on_iter : callable, optional
        ``on_iter(k, point, cost, grad_norm, step)``; return ``True`` to stop.

    Returns
    -------
    point : dict
        Final point.
    history : dict of lists
        ``cost``, ``grad_norm``, ``step`` per iteration (entry 0 = start).
    """
    cache: Dict[str, Any] = {}

    def fun(v: np.ndarray):
        p, aux = fmap.to_point(v, p0)
        f, g = obj(p)
        if not np.isfinite(f) or g is None:
            return np.inf, np.zeros_like(v)
        gv = fmap.pull_back(g, p, aux)
        cache["last"] = (v.copy(), f, gv, p)
        return f, gv

    v0 = fmap.to_vector(p0)
    f0, gv0 = fun(v0)
    if not np.isfinite(f0):
        raise IdentificationError("the output-error cost is not finite at the initial point (unstable start?)")
    g0 = float(np.linalg.norm(gv0))
    hist: Dict[str, List[float]] = {"cost": [f0], "grad_norm": [g0], "step": [0.0]}
    state = {"k": 0, "v": v0, "p": p0}
    if on_iter is not None and on_iter(0, p0, f0, g0, 0.0):
        return p0, hist

    def callback(intermediate_result):
        v = intermediate_result.x
        last = cache.get("last")
        if last is not None and np.array_equal(last[0], v):
            _, f, gv, p = last
        else:
            p, aux = fmap.to_point(v, p0)
            f, g = obj(p)
            gv = fmap.pull_back(g, p, aux)
        state["k"] += 1
        gn = float(np.linalg.norm(gv))
        step = float(np.linalg.norm(v - state["v"]))
        state["v"] = v.copy()
        state["p"] = p
        hist["cost"].append(float(f))
        hist["grad_norm"].append(gn)
        hist["step"].append(step)
        stop = on_iter is not None and on_iter(state["k"], p, float(f), gn, step)
        if stop or gn <= gtol * g0:
            raise StopIteration

    if max_iter > 0 and g0 > 0:
        sopt.minimize(fun, v0, jac=True, method="L-BFGS-B", callback=callback,
                      options={"maxiter": max_iter, "maxcor": memory, "ftol": ftol,
                               "gtol": 0.0, "maxfun": 20 * max_iter + 100})
    return state["p"], hist
