"""Sparse LU with a fixed pattern, as circuit simulators factor their Jacobians.

A circuit's Newton Jacobian keeps its nonzero pattern from iteration to
iteration and from step to step; only the values change.  So, as KLU does
(Davis and Palamadai Natarajan 2010), the work is split:

* the column order is chosen once per circuit, on the pattern
  (:func:`.ordering.column_order`: a minimum degree on ``A^T + A``, the
  ordering KLU's AMD stands for);
* :func:`lu_factor` is a left-looking LU with threshold partial pivoting
  (Gilbert and Peierls; the algorithm of CSparse's ``cs_lu``), which
  finds the pivots and the patterns of ``L`` and ``U``;
* :func:`lu_refactor` recomputes the values in those patterns with the same
  pivots (no search, no graph traversal) and reports a pivot that became too
  small relative to its column, after which the caller factors again with
  pivoting;
* :func:`lu_solve` solves with the factors.

The three factor and solve functions run compiled (numba, cached); :func:`lu_factor` writes into
preallocated arrays and returns ``-2`` when they are too small, so the
caller grows them and calls again.

The factors satisfy ``P A Q = L U`` with ``L`` unit lower triangular (its
diagonal stored first in each column), ``U`` upper triangular (its diagonal
stored last), ``pinv[i]`` the position of row ``i`` in the pivot order and
``q[k]`` the column of ``A`` in position ``k``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .ordering import PIVOT_TOL, column_order

__all__ = ["column_order", "lu_factor", "lu_refactor", "lu_solve", "PIVOT_TOL"]

@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)  # only compiled code calls it
def _reach(Ap, Ai, col, Lp, Li, pinv, xi, stack, mark, stamp, n):
    """Rows reached from column ``col`` of ``A`` through the graph of ``L`` (topological order in
    ``xi[top:n]``); returns ``top``."""
    top = n
    for p in range(Ap[col], Ap[col + 1]):
        r = Ai[p]
        if mark[r] == stamp:
            continue
        head = 0
        xi[0] = r
        while head >= 0:
            j = xi[head]
            jnew = pinv[j]
            if mark[j] != stamp:
                mark[j] = stamp
                stack[head] = 0 if jnew < 0 else Lp[jnew] + 1
            done = True
            p2 = 0 if jnew < 0 else Lp[jnew + 1]
            for pp in range(stack[head], p2):
                i = Li[pp]
                if mark[i] == stamp:
                    continue
                stack[head] = pp + 1
                head += 1
                xi[head] = i
                done = False
                break
            if done:
                head -= 1
                top -= 1
                xi[top] = j
    return top


@njit(cache=True, error_model="numpy")
def lu_factor(n, Ap, Ai, Ax, q, tol, Lp, Li, Lx, Up, Ui, Ux, pinv, x, xi, mark):
    """Left-looking LU with threshold partial pivoting (see the module docstring).

    Parameters
    ----------
    n : int
        Order.
    Ap, Ai, Ax : ndarray
        ``A`` in CSC.
    q : ndarray of int64
        Column order.
    tol : float
        Pivot threshold (the diagonal is preferred above ``tol`` times the largest candidate).
    Lp, Li, Lx, Up, Ui, Ux : ndarray
        Output: the factors (``Lp``, ``Up`` of length ``n + 1``; the others of the capacity).
    pinv : ndarray of int64
        Output: the row permutation.
    x, xi, mark : ndarray
        Work arrays of lengths ``n``, ``2 n`` and ``n``.

    Returns
    -------
    int
        0 on success, ``-1 - k`` for a singular column ``k`` (no nonzero candidate), or
        ``-(n + 2)`` when ``Li``/``Ui`` are too small.
    """
    lcap, ucap = Li.shape[0], Ui.shape[0]
    for i in range(n):
        pinv[i] = -1
        x[i] = 0.0
        mark[i] = -1
    lnz = 0
    unz = 0
    stack = xi[n:]
    for k in range(n):
        Lp[k] = lnz
        Up[k] = unz
        if lnz + n > lcap or unz + n > ucap:
            return -(n + 2)
        col = q[k]
        top = _reach(Ap, Ai, col, Lp, Li, pinv, xi, stack, mark, k, n)
        for p in range(top, n):
            x[xi[p]] = 0.0
        for p in range(Ap[col], Ap[col + 1]):
            x[Ai[p]] = Ax[p]
        for px in range(top, n):
            j = xi[px]
            J = pinv[j]
            if J < 0:
                continue
            xj = x[j]
            for p in range(Lp[J] + 1, Lp[J + 1]):
                x[Li[p]] -= Lx[p] * xj
        ipiv = -1
        a = -1.0
        for p in range(top, n):
            i = xi[p]
            if pinv[i] < 0:
                t = abs(x[i])
                if t > a:
                    a = t
                    ipiv = i
            else:
                Ui[unz] = pinv[i]
                Ux[unz] = x[i]
                unz += 1
        if ipiv == -1 or not (a > 0.0):
            return -1 - k
        if pinv[col] < 0 and abs(x[col]) >= a * tol:
            ipiv = col
        pivot = x[ipiv]
        Ui[unz] = k
        Ux[unz] = pivot
        unz += 1
        pinv[ipiv] = k
        Li[lnz] = ipiv
        Lx[lnz] = 1.0
        lnz += 1
        for p in range(top, n):
            i = xi[p]
            if pinv[i] < 0:
                Li[lnz] = i
                Lx[lnz] = x[i] / pivot
                lnz += 1
            x[i] = 0.0
    Lp[n] = lnz
    Up[n] = unz
    for p in range(lnz):
        Li[p] = pinv[Li[p]]
    return 0


@njit(cache=True, error_model="numpy")
def lu_refactor(n, Ap, Ai, Ax, q, tol, Lp, Li, Lx, Up, Ui, Ux, pinv, x):
    """New values in the patterns and pivots of :func:`lu_factor` (same arguments, same ``A`` pattern).

    Returns
    -------
    int
        0, or ``-1 - k`` when the pivot of column ``k`` is zero, not finite, or below ``tol``
        times the largest entry of its ``L`` column (then factor again with pivoting).
    """
    for k in range(n):
        col = q[k]
        for p in range(Ap[col], Ap[col + 1]):
            x[pinv[Ai[p]]] = Ax[p]
        for p in range(Up[k], Up[k + 1] - 1):
            r = Ui[p]
            ur = x[r]
            Ux[p] = ur
            x[r] = 0.0
            for pp in range(Lp[r] + 1, Lp[r + 1]):
                x[Li[pp]] -= Lx[pp] * ur
        pivot = x[k]
        x[k] = 0.0
        Ux[Up[k + 1] - 1] = pivot
        # one pass over the column: |pivot| < tol max|x_i| is max|l_i| > 1 / tol
        big = 0.0
        for p in range(Lp[k] + 1, Lp[k + 1]):
            i = Li[p]
            li = x[i] / pivot
            Lx[p] = li
            x[i] = 0.0
            if abs(li) > big:
                big = abs(li)
        if not (abs(pivot) > 0.0) or not math.isfinite(pivot) or big * tol > 1.0:
            for i in range(n):
                x[i] = 0.0
            return -1 - k
    return 0


@njit(cache=True, error_model="numpy")
def lu_solve(n, q, Lp, Li, Lx, Up, Ui, Ux, pinv, b, y):
    """Solve ``A z = b`` with the factors; ``b`` is overwritten with ``z`` (``y``: work, length ``n``)."""
    for i in range(n):
        y[pinv[i]] = b[i]
    for j in range(n):
        yj = y[j]
        if yj != 0.0:
            for p in range(Lp[j] + 1, Lp[j + 1]):
                y[Li[p]] -= Lx[p] * yj
    for j in range(n - 1, -1, -1):
        y[j] /= Ux[Up[j + 1] - 1]
        yj = y[j]
        if yj != 0.0:
            for p in range(Up[j], Up[j + 1] - 1):
                y[Ui[p]] -= Ux[p] * yj
    for k in range(n):
        b[q[k]] = y[k]
