"""The DC operating point as SPICE finds it: Newton with junction limiting,
then gmin stepping, then source stepping.

The DC equations of a structure are ``(J e)_x = 0`` (no state moves) with
the dissipative and algebraic rows, in the unknowns ``z = (x / scale, w,
lambda)`` (:func:`phsym.simulation.initial.dc_operating_point`).
:class:`DCProblem` evaluates their residual and exact Jacobian with two
homotopy parameters:

* ``g``: every nonlinear dissipative law ``z(w)`` becomes ``z(w) + g w`` (a
  conductance across each nonlinear voltage-controlled element, a
  resistance in series with each current-controlled one).  Large ``g``
  makes the problem nearly linear; *gmin stepping* solves it for ``g =
  1e-2, 1e-3, ...`` down to 0, each from the previous solution.
* ``s``: the inputs are ``s u0``; *source stepping* ramps ``s`` from 0
  (where zero is the solution of a passive circuit) to 1, shortening the
  ramp step when Newton fails.

:meth:`DCProblem.newton` limits each junction voltage between iterations
as SPICE does (:mod:`phsym.codegen.newton.junctions`).
"""
from __future__ import annotations

from typing import Mapping, Optional, Tuple

import numpy as np
import sympy as sp

from ..codegen.newton.junctions import junction_terms
from ..common.piecewise import ite_free
from ..structure.dirac import Structure
from ..structure.forms import _fill

__all__ = ["DCProblem", "solve_dc", "gmin_stepping", "source_stepping"]

#: gmin stepping starts here and divides by 10 per stage (SPICE starts near 1e-2 S too)
GMIN_START = 1e-2


def _real(values) -> np.ndarray:
    """Real float array of lambdified values (a Piecewise evaluates every branch,
    and a branch outside its domain may be complex where it is not selected)."""
    return np.asarray(np.asarray(values, dtype=complex).real, dtype=float)


_num = _fill    # parameter values into an expression (one helper, in structure.forms)


def _lambdify(args, exprs):
    return sp.lambdify(args, ite_free(list(exprs)) + [0], "numpy")


class DCProblem:
    """Residual and Jacobian of the DC equations (see the module docstring).

    Parameters
    ----------
    S : Structure
        The structure.
    values : mapping of sympy.Symbol to float
        Parameter values.
    u0 : ndarray
        Inputs.
    x_fix : ndarray
        States (the held ones keep this value).
    free : ndarray of int
        Indices of the states that are unknowns.
    scale : ndarray
        State scales (unknown ``x[free] / scale[free]``).
    """

    def __init__(self, S: Structure, values: Mapping[sp.Symbol, float], u0: np.ndarray, x_fix: np.ndarray,
                 free: np.ndarray, scale: np.ndarray):
        self.S, self.u0, self.x_fix, self.free, self.sc = S, np.asarray(u0, float), x_fix, free, scale
        nw = S.n_w
        self.Jn = S.J_numeric(values).toarray()
        subs = dict(values)
        X = list(S.states)
        grads = [_num(g, subs) for g in S.gradients]
        self.grad = _lambdify([X], grads)
        # H is a sum over storages: its Hessian is block diagonal (one small block
        # per storage), never an n_x x n_x symbolic Jacobian
        index = {s: i for i, s in enumerate(X)}
        self.hess_at = [(index[a], index[b]) for st in S.storages for a in st.states for b in st.states]
        self.hess = _lambdify([X], [sp.diff(grads[i], X[j]) for i, j in self.hess_at])
        W = [d.w for d in S.dissipative]
        laws = [_num(d.z, subs) for d in S.dissipative]
        self.law = _lambdify([W, X], laws)
        # dz_j/dw_k: the diagonal, plus the couplings of multiport laws
        self.dpairs = np.array([(j, k) for j, d in enumerate(S.dissipative) for k in (j, *d.coupled)],
                               dtype=int).reshape(-1, 2)
        self.dlaw = _lambdify([W, X], [sp.diff(laws[j], W[k]) for j, k in self.dpairs])
        # state-dependent laws (a felt): dz_j/dx_i
        self.xpairs = np.array([(j, i) for j, d in enumerate(S.dissipative) for i in d.reads],
                               dtype=int).reshape(-1, 2)
        self.dlaw_x = _lambdify([W, X], [sp.diff(laws[j], X[i]) for j, i in self.xpairs])
        self.effort_out = np.array([d.effort_out for d in S.dissipative], dtype=bool)
        # ideal op-amp inputs: effort and flow zero, the row is the constraint (J e)_j = 0
        self.null = np.array([d.nullator for d in S.dissipative], dtype=bool)
        self.nonlinear = np.array([not d.linear for d in S.dissipative], dtype=float)
        self.nf, self.nw, self.nl = free.size, nw, S.n_lambda
        terms = junction_terms(S)
        self.jport = np.array([t.port for t in terms], dtype=int)
        self.jc = np.array([float(_num(t.c, subs)) for t in terms])
        self.jarg0 = np.array([float(_num(t.arg.subs(t.w, 0), subs)) for t in terms])
        self.jvt = np.array([float(_num(t.vt, subs)) for t in terms])
        with np.errstate(all="ignore"):
            self.jvc = np.array([float(_num(t.vcrit, subs)) for t in terms])
        self._invariants()

    def _invariants(self) -> None:
        """Conserved combinations ``c^T x`` of the free states, kept at their values in ``x_fix``.

        A vector ``c`` with ``c^T J[free, :] = 0`` makes ``c^T dx/dt = 0`` for
        every effort: two inductors in parallel (their fluxes move together),
        a spring beside a moving air gap, capacitors in series.  Their DC rows
        are then linearly dependent and the DC point is not unique; the
        transient keeps ``c^T x`` at its initial value, so the DC problem
        replaces the dependent rows by ``c^T (x - x_fix) = 0``.
        """
        nf = self.free.size
        self.rows = self.inv = np.zeros((nf, 0))
        if not nf:
            return
        A = self.Jn[self.free, :].T
        _, sv, vt = np.linalg.svd(A, full_matrices=True)
        rank = int(np.sum(sv > 1e-10 * max(float(sv.max(initial=0.0)), 1e-300)))
        if rank == nf:
            return
        self.rows, inv = vt[:rank].T, vt[rank:].T           # row space and null space (nf x .)
        w = inv * self.sc[self.free][:, None]              # in the unknowns z = x / scale
        self.inv = w / np.linalg.norm(w, axis=0)
        self.inv_x = inv / np.linalg.norm(w, axis=0)

    def split(self, z: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(x, w, lambda)`` of the unknowns ``z``.

        Parameters
        ----------
        z : ndarray
            Unknowns.
        """
        x = self.x_fix.copy()
        x[self.free] = z[:self.nf] * self.sc[self.free]
        return x, z[self.nf:self.nf + self.nw], z[self.nf + self.nw:]

    def evaluate(self, z: np.ndarray, g: float = 0.0, s: float = 1.0) -> Tuple[np.ndarray, np.ndarray]:
        """Residual and Jacobian at ``z`` with homotopy parameters ``g`` and ``s``.

        Parameters
        ----------
        z : ndarray
            Unknowns.
        g : float
            Extra linear term of every nonlinear law.
        s : float
            Input factor.
        """
        nx, nw, nf = self.S.n_x, self.nw, self.nf
        x, w, lam = self.split(z)
        law = _real(self.law(list(w), list(x)))[:nw] + g * self.nonlinear * w
        dz = np.zeros((nw, nw))
        if nw:
            dz[self.dpairs[:, 0], self.dpairs[:, 1]] = _real(self.dlaw(list(w), list(x)))[:len(self.dpairs)]
        dzx = np.zeros((nw, nx))
        if len(self.xpairs):
            dzx[self.xpairs[:, 0], self.xpairs[:, 1]] = _real(self.dlaw_x(list(w), list(x)))[:len(self.xpairs)]
        dz[np.arange(nw), np.arange(nw)] += g * self.nonlinear
        eo = self.effort_out
        nul = self.null
        e = np.concatenate([_real(self.grad(list(x)))[:nx], np.where(nul, 0.0, np.where(eo, law, w)), lam,
                            s * self.u0])
        f = self.Jn @ e
        fw = np.where(nul, 0.0, np.where(eo, w, law))
        fx = f[self.free]
        if self.inv.shape[1]:       # dependent state rows -> the conserved combinations
            fx = np.concatenate([self.rows.T @ fx, self.inv_x.T @ (x[self.free] - self.x_fix[self.free])])
        r = np.concatenate([fx, fw - f[nx:nx + nw], f[nx + nw:nx + nw + self.nl]])
        # de/dz, then the rows of r
        n_e = e.size
        De = np.zeros((n_e, z.size))
        if nf:
            H = np.zeros((nx, nx))
            if self.hess_at:
                rows, cols = np.array(self.hess_at).T
                H[rows, cols] = _real(self.hess(list(x)))[:len(self.hess_at)]
            De[:nx, :nf] = H[:, self.free] * self.sc[self.free]
        De[nx:nx + nw, nf:nf + nw] = np.where(nul[:, None], 0.0, np.where(eo[:, None], dz, np.eye(nw)))
        if nf and len(self.xpairs):
            De[nx:nx + nw, :nf] = np.where(eo[:, None], dzx[:, self.free] * self.sc[self.free], 0.0)
        De[nx + nw + np.arange(self.nl), nf + nw + np.arange(self.nl)] = 1.0
        Jf = self.Jn @ De
        Jx = Jf[self.free]
        if self.inv.shape[1]:
            Jinv = np.zeros((self.inv.shape[1], z.size))
            Jinv[:, :nf] = self.inv.T
            Jx = np.concatenate([self.rows.T @ Jx, Jinv])
        Jr = np.concatenate([Jx, -Jf[nx:nx + nw], Jf[nx + nw:nx + nw + self.nl]])
        Jr[nf:nf + nw, nf:nf + nw] += np.where(nul[:, None], 0.0, np.where(eo[:, None], np.eye(nw), dz))
        if nf and len(self.xpairs):
            Jr[nf:nf + nw, :nf] += np.where(eo[:, None], 0.0, dzx[:, self.free] * self.sc[self.free])
        return r, Jr

    def limit(self, z_old: np.ndarray, z_new: np.ndarray) -> np.ndarray:
        """``z_new`` with every junction voltage limited against ``z_old`` (SPICE's rule).

        Parameters
        ----------
        z_old, z_new : ndarray
            The iterate and the Newton proposal.
        """
        out = z_new.copy()
        for m, j in enumerate(self.jport):
            k = self.nf + j
            vt, vc, c = self.jvt[m], self.jvc[m], self.jc[m]
            so = (c * z_old[k] + self.jarg0[m]) * vt
            sn = (c * out[k] + self.jarg0[m]) * vt
            if sn > vc and abs(sn - so) > 2.0 * vt:
                if so > 0.0:
                    arg = 1.0 + (sn - so) / vt
                    slim = so + vt * np.log(arg) if arg > 0.0 else vc
                else:
                    slim = vt * np.log(sn / vt)
                out[k] = (slim / vt - self.jarg0[m]) / c
        return out

    def newton(self, z0: np.ndarray, g: float = 0.0, s: float = 1.0, maxit: int = 150,
               tol: float = 1e-12) -> Tuple[Optional[np.ndarray], int]:
        """Limited Newton from ``z0``: ``(solution or None, iterations)``.

        Parameters
        ----------
        z0 : ndarray
            Start.
        g, s : float
            Homotopy parameters (see :meth:`evaluate`).
        maxit : int
            Iteration cap.
        tol : float
            Relative step that counts as converged.
        """
        z = z0.copy()
        with np.errstate(all="ignore"):
            for it in range(1, maxit + 1):
                r, J = self.evaluate(z, g, s)
                if not (np.all(np.isfinite(r)) and np.all(np.isfinite(J))):
                    return None, it
                try:
                    d = np.linalg.solve(J, -r)
                except np.linalg.LinAlgError:
                    d = np.linalg.lstsq(J, -r, rcond=None)[0]
                if not np.all(np.isfinite(d)):
                    d = np.linalg.lstsq(J, -r, rcond=None)[0]
                z_new = self.limit(z, z + d)
                limited = not np.array_equal(z_new, z + d)
                step = np.max(np.abs(z_new - z) / (np.abs(z) + 1.0), initial=0.0)
                z = z_new
                if not limited and step <= tol:
                    r, _ = self.evaluate(z, g, s)
                    scale = max(1.0, np.max(np.abs(self.Jn), initial=0.0))
                    ok = np.all(np.isfinite(r)) and np.max(np.abs(r), initial=0.0) < 1e-9 * scale
                    return (z if ok else None), it
        return None, maxit


def gmin_stepping(P: DCProblem, z0: np.ndarray) -> Optional[np.ndarray]:
    """Solve with ``g = 1e-2, 1e-3, ..., 1e-12``, then ``g = 0``, each from the last solution.

    Parameters
    ----------
    P : DCProblem
        The DC equations.
    z0 : ndarray
        Start.
    """
    z = z0.copy()
    for g in [GMIN_START * 10.0 ** -k for k in range(11)] + [0.0]:
        z, _ = P.newton(z, g=g)
        if z is None:
            return None
    return z


def source_stepping(P: DCProblem, z0: np.ndarray) -> Optional[np.ndarray]:
    """Ramp the inputs from 0 (zero state) to ``u0``, shortening the ramp step on failure.

    Parameters
    ----------
    P : DCProblem
        The DC equations.
    z0 : ndarray
        Start (only its size is used: the ramp starts from zero).
    """
    z, s, ds = np.zeros_like(z0), 0.0, 0.1
    while s < 1.0:
        target = min(1.0, s + ds)
        z_s, it = P.newton(z, s=target, maxit=60)
        if z_s is None:
            ds *= 0.25
            if ds < 1e-6:
                return None
            continue
        z, s = z_s, target
        ds = min(0.5, ds * (2.0 if it < 10 else 1.0))
    return z


def solve_dc(P: DCProblem, z0: np.ndarray) -> Tuple[Optional[np.ndarray], str]:
    """Newton, then gmin stepping, then source stepping: ``(z or None, method)``.

    Parameters
    ----------
    P : DCProblem
        The DC equations.
    z0 : ndarray
        Start.
    """
    z, _ = P.newton(z0)
    if z is not None:
        return z, "newton"
    z = gmin_stepping(P, z0)
    if z is not None:
        return z, "gmin stepping"
    return source_stepping(P, z0), "source stepping"
