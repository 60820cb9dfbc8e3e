"""The linear engine: numbers of a linear scheme for ``E xi' = (J - R) Q xi + B u``.

The step is the one discretisation of :mod:`phsym.structure.discrete`
(differential variables by the theta rule, algebraic ones as step values).
From the step matrices this module derives, once per parameter set, what
the compiled loops of :mod:`phsym.simulation.engines.linear.loops` need:

* the dense loop works on ``z = (x_k, ubar)`` with fused matrices
  ``x_{k+1} = G z``, ``y = Yc z``, ``w = Wc z`` (``P_diss = sum pw w**2``),
  ``e = Ec z``;
* the sparse loop solves ``M v = Kx x_k + Ku ubar`` with scipy's sparse LU
  factors and evaluates the stacked linear outputs ``o = Ox x + Ov v + Ou ubar``.

Outputs are ``y = B^T Q xi_theta + (S - N) ubar``, the dissipated power
``(Q xi_theta)^T R (Q xi_theta) + ubar^T S ubar``, the energy
``x^T (Q^T E)_xx x / 2``; with ``P_ext = y^T ubar`` the discrete power
balance is exact for the midpoint rule (``ubar^T N ubar = 0``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ....codegen.linear_gen import MAX_UNROLLED
from ....common.lazy import issparse
from ....common.schemes import Scheme
from ....errors import SimulationError, StructureError
from ....structure.discrete import solve_step, theta_step
from .loops import DenseLinearLoop, SparseLinearLoop, sparser_rows, state_point_rows

__all__ = ["LinearEngine", "DENSE_LIMIT", "INPUT_CODE"]

#: Linear models with more unknowns than this use the sparse LU path.
DENSE_LIMIT = 24

#: Input rule of a scheme -> code of the compiled loops (:func:`phsym.codegen.kernels.generic.step_input`).
INPUT_CODE = {"start": 0, "mid": 1, "end": 2}


def _dense(A) -> np.ndarray:
    return np.asarray(A.toarray() if issparse(A) else A, dtype=float)


def _dissipation_rows(R, Q):
    """``(W, pw)`` with ``(Q xi)^T R (Q xi) = sum pw (W xi)**2`` (R symmetric PSD)."""
    if issparse(R):
        import scipy.sparse as sps      # here and below: a small circuit's run needs no scipy
        off = R - sps.diags(R.diagonal())
        if off.count_nonzero() == 0:
            d = R.diagonal()
            nz = np.flatnonzero(d)
            return sps.csr_matrix(Q)[nz], d[nz]
        R = R.toarray()
    R = _dense(R)
    if not np.any(R - np.diag(np.diag(R))):
        nz = np.flatnonzero(np.diag(R))
        return _dense(Q)[nz], np.diag(R)[nz]
    lam, V = np.linalg.eigh(0.5 * (R + R.T))
    keep = lam > 1e-14 * max(1.0, np.abs(lam).max(initial=0.0))
    return V[:, keep].T @ _dense(Q), lam[keep]


class LinearEngine:
    """Numbers of a linear scheme for one parameter set.

    Parameters
    ----------
    E, J, R, Q, B : numpy.ndarray or scipy.sparse matrix
        The descriptor system (``scipy.sparse`` for large models).
    h : float
        Step size.
    scheme : Scheme
        Time-stepping scheme.
    solver : str
        ``"auto"`` (dense up to :data:`DENSE_LIMIT` unknowns), ``"dense"`` or ``"sparse"``.
    efforts : (matrix, matrix), optional
        ``(Ce, Cu)`` with the effort vector ``e = Ce xi_theta + Cu ubar`` to
        record (for probes); ``None`` records nothing.
    feedthrough : (matrix, matrix), optional
        ``(S, N)``: ``y = B^T Q xi + (S - N) u`` (``None``: no feedthrough).
    """

    def __init__(self, E, J, R, Q, B, h: float, scheme: Scheme, solver: str = "auto",
                 efforts: Optional[tuple] = None, feedthrough: Optional[tuple] = None):
        A = (J - R) @ Q
        step = theta_step(E, A, B, h, scheme)
        self.step = step
        self._EAB = (E, A, B)
        self.inputs = INPUT_CODE[scheme.inputs]
        nd = step.differential.size
        self.n_x, self.n_u = nd, B.shape[1]
        self.n_v = step.M.shape[1]
        self.sparse = self.n_v > DENSE_LIMIT if solver == "auto" else solver == "sparse"
        dd = np.ix_(step.differential, step.differential)
        QE = Q.T @ E
        QE = QE.toarray() if issparse(QE) else np.asarray(QE)
        self.Qh = 0.5 * (QE[dd] + QE[dd].T)            # H = x^T Qh x / 2
        self.Cy = B.T @ Q                               # y = Cy xi_theta + D ubar
        self.W, self.pw = _dissipation_rows(R, Q)       # P_diss = sum pw (W xi_theta)**2 + sum pu (Wu ubar)**2
        m = self.n_u
        Sf, Nf = (np.zeros((m, m)), np.zeros((m, m))) if feedthrough is None else map(_dense, feedthrough)
        self.D = Sf - Nf
        self.Wu, pu = _dissipation_rows(Sf, np.eye(m))
        self.pw = np.concatenate([self.pw, pu])
        self.efforts = efforts
        self.n_e = 0 if efforts is None else efforts[0].shape[0]
        self._loop = None

    def loop(self):
        """The compiled loop of this parameter set (:class:`DenseLinearLoop` or :class:`SparseLinearLoop`)."""
        if self._loop is None:
            self._loop = self._sparse_loop() if self.sparse else self._dense_loop()
        return self._loop

    def _dense_loop(self) -> DenseLinearLoop:
        st = self.step
        try:
            V, _ = solve_step(st)                       # v = V z, z = (x_k, ubar)
        except StructureError as exc:
            raise SimulationError(exc.message) from None
        nd, m = self.n_x, self.n_u
        Xi = np.hstack([_dense(st.Sx), np.zeros((st.Sx.shape[0], m))]) + _dense(st.Sv) @ V
        G = V[:nd].copy()
        G[:, :nd] += np.eye(nd)
        Yc = _dense(self.Cy) @ Xi + np.hstack([np.zeros((m, nd)), self.D])
        Wc = np.vstack([_dense(self.W) @ Xi, np.hstack([np.zeros((self.Wu.shape[0], nd)), self.Wu])])
        if nd * (nd + m) > MAX_UNROLLED:           # the compressed-row loop: the sparser dissipation rows
            Wc = sparser_rows(Wc, self._state_point_rows(), G)
        if self.efforts is None:
            Ec = np.zeros((0, nd + m))
        else:
            Ce, Cu = self.efforts
            Ec = _dense(Ce) @ Xi + np.hstack([np.zeros((Ce.shape[0], nd)), _dense(Cu)])
        return DenseLinearLoop(G, Yc, Wc, self.pw, self.Qh, Ec, self.inputs)

    def _state_point_rows(self) -> Optional[np.ndarray]:
        """The dissipation rows on ``(x_k, ubar, x_{k+1})`` (:func:`~.loops.state_point_rows`),
        or ``None`` when the rows of ``E`` that vanish do not fix the algebraic variables."""
        E, A, B = (_dense(a) for a in self._EAB)
        st = self.step
        diff, alg = st.differential, st.algebraic
        rows = np.flatnonzero(~np.any(E != 0, axis=1))
        if rows.size != alg.size:
            return None
        W = _dense(self.W)
        ext = state_point_rows(W[:, diff], W[:, alg], A[np.ix_(rows, diff)], A[np.ix_(rows, alg)], B[rows],
                               float(st.scheme.theta))
        if ext is None:
            return None
        nd, nw = self.n_x, self.Wu.shape[0]
        return np.vstack([ext, np.hstack([np.zeros((nw, nd)), self.Wu, np.zeros((nw, nd))])])

    def _sparse_loop(self) -> SparseLinearLoop:
        import scipy.sparse as sps
        from scipy.sparse.linalg import splu     # here: it imports scipy.linalg, which a dense loop never needs
        st = self.step
        try:
            lu = splu(sps.csc_matrix(st.M), permc_spec="COLAMD")
        except RuntimeError as exc:
            raise SimulationError(f"singular step matrix of the linear scheme: {exc}") from None
        Sx, Sv = sps.csr_matrix(st.Sx), sps.csr_matrix(st.Sv)
        m = self.n_u
        nu_w = self.Wu.shape[0]
        rows_x = [sps.csr_matrix(self.Cy) @ Sx, sps.csr_matrix(self.W) @ Sx, sps.csr_matrix((nu_w, Sx.shape[1]))]
        rows_v = [sps.csr_matrix(self.Cy) @ Sv, sps.csr_matrix(self.W) @ Sv, sps.csr_matrix((nu_w, Sv.shape[1]))]
        rows_u = [sps.csr_matrix(self.D), sps.csr_matrix((self.W.shape[0], m)), sps.csr_matrix(self.Wu)]
        if self.efforts is not None:
            Ce, Cu = (sps.csr_matrix(c) for c in self.efforts)
            rows_x.append(Ce @ Sx)
            rows_v.append(Ce @ Sv)
            rows_u.append(Cu)
        O = [sps.vstack(r, format="csr") for r in (rows_x, rows_v, rows_u)]
        arrays = {"K": sps.csr_matrix(st.Kx), "Ku": sps.csr_matrix(st.Ku), "L": sps.csc_matrix(lu.L),
                  "U": sps.csc_matrix(lu.U), "Ox": O[0], "Ov": O[1], "Ou": O[2], "Q": sps.csr_matrix(self.Qh)}
        return SparseLinearLoop.from_matrices(arrays, lu.perm_r, lu.perm_c, self.pw, self.inputs,
                                              self.n_u, self.W.shape[0] + nu_w, self.n_e)
