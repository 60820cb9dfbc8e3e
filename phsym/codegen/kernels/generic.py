"""Generic numba kernels shared by every generated simulator.

Generated modules call these helpers by their global name (which keeps the
generated functions cacheable, see ``docs/simulation.md``).  Everything here is
model independent: a small dense LU with partial pivoting (compiles in a
fraction of a second, unlike ``np.linalg.solve`` inside ``njit``), CSC
triangular solves for factors computed by :func:`scipy.sparse.linalg.splu`,
and the run loops of the linear fast path (dense and sparse).
"""
from __future__ import annotations

import sys

import numpy as np
from numba import njit

from ...common.guard import check_numba

__all__ = ["lu_factor", "lu_solve", "lu_solve_t", "schur_setup", "schur_direction", "small_solve", "splu_solve",
           "step_input", "run_linear_sparse"]


@njit(cache=True)
def _pivot(A, k, c0, m):
    """Row ``p >= k`` of the largest ``|A[p, c0 + k]|`` among rows ``k..m-1``; -1 when it is 0 or not finite."""
    p = k
    best = abs(A[k, c0 + k])
    for r in range(k + 1, m):
        if abs(A[r, c0 + k]) > best:
            best = abs(A[r, c0 + k])
            p = r
    return -1 if best == 0.0 or not np.isfinite(best) else p


@njit(cache=True)
def _swap(A, k, p, c0, m):
    """Swap ``A[k, c0:c0 + m]`` and ``A[p, c0:c0 + m]``."""
    if p != k:
        for c in range(c0, c0 + m):
            t = A[k, c]
            A[k, c] = A[p, c]
            A[p, c] = t


@njit(cache=True)
def lu_factor(A, piv):
    """In-place LU factorisation with partial pivoting; returns False if singular."""
    n = A.shape[0]
    for k in range(n):
        p = _pivot(A, k, 0, n)
        if p < 0:
            return False
        piv[k] = p
        _swap(A, k, p, 0, n)
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            A[i, k] *= inv
            f = A[i, k]
            if f != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= f * A[k, j]
    return True


@njit(cache=True)
def lu_solve(A, piv, b):
    """Solve in place with the factors of :func:`lu_factor` (``b`` becomes x)."""
    n = A.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            t = b[k]
            b[k] = b[p]
            b[p] = t
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= A[i, j] * b[j]
        b[i] = s
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= A[i, j] * b[j]
        b[i] = s / A[i, i]


@njit(cache=True)
def schur_setup(Jm, n, SL, mark):
    """``W = T^{-1}`` into ``Jm[:, n:2n]`` for the Newton solve of :func:`schur_direction`; False when the
    constant columns ``SL`` of the Jacobian ``Jm[:, :n]`` are rank deficient (the Jacobian is singular).

    ``T = [A_L | unit columns]``: the constant columns, then a unit column
    on each row the constant columns do not pivot on (partial pivoting), so
    ``W Jm = [[I, W_t A_N], [0, W_b A_N]]`` and a Newton step needs only the
    small system ``W_b A_N d_N = -W_b F``.  Rows are scaled to unit maximum
    before pivoting (a step's rows mix units: charges, currents, voltages),
    ``T^{-1} = (D T)^{-1} D``.  ``Jm[:, 2n:3n]`` is work space; ``mark``
    (``n`` integers) too.
    """
    nl = SL.shape[0]
    c2 = 2 * n
    for r in range(n):
        mark[r] = 0
        big = 0.0
        for k in range(nl):
            big = max(big, abs(Jm[r, SL[k]]))
        for k in range(nl):
            Jm[r, c2 + k] = Jm[r, SL[k]] / big if big > 0.0 else 0.0
    for k in range(nl):         # the rows the constant columns pivot on
        p = -1
        best = 0.0
        for r in range(n):
            if mark[r] == 0 and abs(Jm[r, c2 + k]) > best:
                best = abs(Jm[r, c2 + k])
                p = r
        if p < 0 or not np.isfinite(best):
            return False
        mark[p] = 1
        inv = 1.0 / Jm[p, c2 + k]
        for r in range(n):
            if mark[r] == 0:
                f = Jm[r, c2 + k] * inv
                if f != 0.0:
                    for c in range(k + 1, nl):
                        Jm[r, c2 + c] -= f * Jm[p, c2 + c]
    for r in range(n):          # T into Jm[:, 2n:3n]
        for k in range(n):
            Jm[r, c2 + k] = Jm[r, SL[k]] if k < nl else 0.0
    j = nl
    for r in range(n):
        if mark[r] == 0:
            Jm[r, c2 + j] = 1.0
            j += 1
    for r in range(n):          # D T into Jm[:, 2n:3n], D into Jm[:, n:2n]
        big = 0.0
        for k in range(n):
            big = max(big, abs(Jm[r, c2 + k]))
        if big == 0.0 or not np.isfinite(big):
            return False
        inv = 1.0 / big
        for k in range(n):
            Jm[r, c2 + k] *= inv
            Jm[r, n + k] = inv if r == k else 0.0
    for k in range(n):          # Gauss-Jordan with partial pivoting: [T | I] -> [I | T^{-1}]
        p = _pivot(Jm, k, c2, n)
        if p < 0:
            return False
        _swap(Jm, k, p, c2, n)
        _swap(Jm, k, p, n, n)
        inv = 1.0 / Jm[k, c2 + k]
        for c in range(n):
            Jm[k, c2 + c] *= inv
            Jm[k, n + c] *= inv
        for r in range(n):
            f = Jm[r, c2 + k]
            if r != k and f != 0.0:
                for c in range(n):
                    Jm[r, c2 + c] -= f * Jm[k, c2 + c]
                    Jm[r, n + c] -= f * Jm[k, n + c]
    return True


@njit(cache=True)
def small_solve(Jm, c0, nn, b):
    """Solve ``Z y = b`` in place for the ``nn x nn`` system ``Z = Jm[:nn, c0:c0 + nn]`` (overwritten),
    partial pivoting; False when a pivot is 0 or not finite.  The Schur direction's small system."""
    for k in range(nn):
        p = _pivot(Jm, k, c0, nn)
        if p < 0:
            return False
        _swap(Jm, k, p, c0, nn)
        t = b[k]
        b[k] = b[p]
        b[p] = t
        for r in range(k + 1, nn):
            f = Jm[r, c0 + k] / Jm[k, c0 + k]
            if f != 0.0:
                for c in range(k + 1, nn):
                    Jm[r, c0 + c] -= f * Jm[k, c0 + c]
                b[r] -= f * b[k]
    for i in range(nn - 1, -1, -1):
        s = b[i]
        for c in range(i + 1, nn):
            s -= Jm[i, c0 + c] * b[c]
        b[i] = s / Jm[i, c0 + i]
    return True


@njit(cache=True)
def schur_direction(Jm, n, SL, SN, F, d, b):
    """Newton direction ``d = -Jm^{-1} F`` from ``W`` of :func:`schur_setup`: the small system on the
    unknowns ``SN`` of the varying columns, then the others; False when it is singular.

    ``F`` is overwritten (``F + A_N d_N``); ``b`` (``n`` floats) and
    ``Jm[:len(SN), 2n:]`` are work space.
    """
    nl, nn = SL.shape[0], SN.shape[0]
    c2 = 2 * n
    for i in range(nn):         # Z = W_b A_N, b = -W_b F
        s = 0.0
        for r in range(n):
            s += Jm[nl + i, n + r] * F[r]
        b[i] = -s
        for j in range(nn):
            z = 0.0
            for r in range(n):
                z += Jm[nl + i, n + r] * Jm[r, SN[j]]
            Jm[i, c2 + j] = z
    if not small_solve(Jm, c2, nn, b):
        return False
    for i in range(nn):
        d[SN[i]] = b[i]
    for r in range(n):          # d_L = -W_t (F + A_N d_N)
        s = F[r]
        for j in range(nn):
            s += Jm[r, SN[j]] * b[j]
        F[r] = s
    for k in range(nl):
        s = 0.0
        for r in range(n):
            s += Jm[k, n + r] * F[r]
        d[SL[k]] = -s
    return True


@njit(cache=True)
def lu_solve_t(A, piv, b):
    """Solve ``A^T x = b`` in place with the factors of :func:`lu_factor`."""
    n = A.shape[0]
    for i in range(n):                  # U^T w = b
        s = b[i]
        for j in range(i):
            s -= A[j, i] * b[j]
        b[i] = s / A[i, i]
    for i in range(n - 1, -1, -1):      # L^T z = w (unit diagonal)
        s = b[i]
        for j in range(i + 1, n):
            s -= A[j, i] * b[j]
        b[i] = s
    for k in range(n - 1, -1, -1):      # undo the row interchanges
        p = piv[k]
        if p != k:
            t = b[k]
            b[k] = b[p]
            b[p] = t


@njit(cache=True)
def splu_solve(Lp, Li, Lx, Up, Ui, Ux, perm_r, perm_c, b, work, out):
    """Solve ``A z = b`` with ``Pr A Pc = L U`` (CSC factors of ``splu``)."""
    n = b.shape[0]
    for i in range(n):
        work[perm_r[i]] = b[i]
    # forward: L unit lower triangular, column oriented
    for j in range(n):
        xj = work[j]
        if xj != 0.0:
            for k in range(Lp[j], Lp[j + 1]):
                i = Li[k]
                if i > j:
                    work[i] -= Lx[k] * xj
    # backward: U upper triangular, column oriented
    for j in range(n - 1, -1, -1):
        diag = 0.0
        for k in range(Up[j], Up[j + 1]):
            if Ui[k] == j:
                diag = Ux[k]
        xj = work[j] / diag
        work[j] = xj
        if xj != 0.0:
            for k in range(Up[j], Up[j + 1]):
                i = Ui[k]
                if i < j:
                    work[i] -= Ux[k] * xj
    for i in range(n):
        out[i] = work[perm_c[i]]


@njit(cache=True)
def _spmv_acc(indptr, indices, data, x, out):
    n = indptr.shape[0] - 1
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        out[i] += s


@njit(cache=True)
def step_input(U, k, i, inputs):
    """Input ``i`` of the step ``k -> k+1``: 0 start ``u_k``, 1 midpoint, 2 end ``u_{k+1}``."""
    if inputs == 1:
        return 0.5 * (U[k, i] + U[k + 1, i])
    if inputs == 2:
        return U[k + 1, i]
    return U[k, i]


@njit(cache=True, nogil=True)
def run_linear_sparse(x, U, k0, k1, inputs, n_y, n_w,
                      Kp, Ki, Kx, Kup, Kui, Kux,
                      Lp, Li, Lx, Up, Ui, Ux, perm_r, perm_c,
                      Oxp, Oxi, Oxx, Ovp, Ovi, Ovx, Oup, Oui, Oux, pw,
                      Qp, Qi, Qx, X, Y, Hh, Pd, Ps, E, rec_e):
    """Sparse linear step: ``M v = K x + Ku ub`` solved with splu factors of M.

    The linear outputs ``o = Ox x + Ov v + Ou ub`` are stacked: port outputs
    (``n_y`` rows), dissipative variables (``n_w`` rows, ``P_diss = sum pw o**2``)
    and, when ``rec_e``, the efforts.  Cost per step is proportional to the
    number of nonzeros.  Returns ``-1`` or the first failing step.
    """
    nx = x.shape[0]
    nv = Kp.shape[0] - 1
    nu = U.shape[1]
    no = Oxp.shape[0] - 1
    n_live = no if rec_e else n_y + n_w
    b = np.empty(nv)
    v = np.empty(nv)
    work = np.empty(nv)
    ub = np.empty(nu)
    qx = np.empty(nx)
    o = np.empty(no)
    for k in range(k0, k1):
        for i in range(nu):
            ub[i] = step_input(U, k, i, inputs)
        for i in range(nv):
            b[i] = 0.0
        _spmv_acc(Kp, Ki, Kx, x, b)
        _spmv_acc(Kup, Kui, Kux, ub, b)
        splu_solve(Lp, Li, Lx, Up, Ui, Ux, perm_r, perm_c, b, work, v)
        for i in range(n_live):
            o[i] = 0.0
        _spmv_acc(Oxp[:n_live + 1], Oxi, Oxx, x, o)
        _spmv_acc(Ovp[:n_live + 1], Ovi, Ovx, v, o)
        _spmv_acc(Oup[:n_live + 1], Oui, Oux, ub, o)
        ps = 0.0
        for i in range(n_y):
            Y[k, i] = o[i]
            ps += o[i] * ub[i]
        Ps[k] = ps
        pdis = 0.0
        for j in range(n_w):
            pdis += pw[j] * o[n_y + j] * o[n_y + j]
        Pd[k] = pdis
        if rec_e:
            for i in range(no - n_y - n_w):
                E[k, i] = o[n_y + n_w + i]
        for i in range(nx):
            x[i] += v[i]
            X[k + 1, i] = x[i]
            qx[i] = 0.0
        _spmv_acc(Qp, Qi, Qx, x, qx)
        hh = 0.0
        for i in range(nx):
            hh += 0.5 * x[i] * qx[i]
        Hh[k + 1] = hh
        if not np.isfinite(hh):
            return k
    return -1


# numba reads its cache files at the first call, unguarded: check them now
check_numba(sys.modules[__name__])
