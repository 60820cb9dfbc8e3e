"""One Newton solve of a circuit's step equations, compiled once for every circuit.

:func:`evaluate` computes the kernels' inputs, limits the junction inputs
(:mod:`.limits`), calls every kernel group by address (:mod:`.call`), and
assembles the residual and the Jacobian's values in their fixed pattern;
:func:`solve` iterates: sparse LU (:mod:`.sparse`: refactor in the pattern
and pivots of the last factorization, factor again with pivoting when a
pivot has become too small), direction, convergence test on each unknown's
step against its own scale (as the generated loop: ``|d_i| / (|z_i| +
s_i) <= tol``, or the contraction estimate), and no limited input at the
accepted iterate.  Once a step's correction is below :data:`REUSE`, the
next iteration solves with the factors it already has (a chord step, as
SPICE's modified Newton): the Jacobian has moved by about that fraction, so
the iteration still contracts by orders of magnitude, and the acceptance
tests are unchanged.

The tuples the functions take (``net``, ``lim``, ``lu``) are built by
:class:`~.loop.Arrays`; their layout is documented there.

What the engine's compile costs (once per machine; ``benchmarks/engine_compile.py``): a flag
handed to another compiled function is written ``bool(True)``, not ``True``, since numba
compiles a callee once for each literal argument value (three copies of :func:`solve` and of
:func:`evaluate_at` before); arrays are copied by loops (an array assignment compiles numba's
formatted shape-error message); and the helpers that only compiled code calls have no Python
wrapper (``no_cpython_wrapper``: :data:`INNER`; calling one from Python would crash).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .call import call_kernel
from .codes import REUSE, STATUS
from .freshness import ensure_fresh
from .sparse import lu_factor, lu_refactor, lu_solve

__all__ = ["evaluate", "solve", "csr_add", "call_groups", "prepare_groups", "w_size", "STATUS", "FLOOR", "REUSE",
           "INNER"]

#: numba options of the engine's helpers that only compiled code calls: no Python or C wrapper
#: (a fifth of each one's compile), and a crash if called from Python.
INNER = dict(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)

#: Newton steps that stopped shrinking are the rounding floor, not a slow convergence, when every
#: equation holds to this fraction of its own terms (``|F_r| <= FLOOR sum_c |J_rc| (|z_c| + 1)``):
#: the step is accepted (the generated loop, whose unknowns are the state increments, sees the same
#: noise divided by ``R / h`` and reaches its tolerance).
FLOOR = 1e-10
#: Backward error above which small Newton steps are not taken for convergence (a saturated law's
#: Jacobian makes its steps small far from the solution).
ACCEPT = 1e-6
#: Newton steps (scaled as in the convergence test) below this are taken whole: near the solution
#: the residual is rounding, and comparing roundings would halve good steps.
DAMP_ABOVE = 1e-6

@njit(cache=True, error_model="numpy")
def csr_add(out, p, i, x, v, scale):
    """``out += scale * M v`` for ``M`` in CSR ``(p, i, x)`` with ``out.size`` rows."""
    for r in range(out.shape[0]):
        s = 0.0
        for k in range(p[r], p[r + 1]):
            s += x[k] * v[i[k]]
        out[r] += scale * s


@njit(cache=True, error_model="numpy")
def call_groups(G, P, IN, OUT, W):
    """Every kernel group of the table ``G`` (see :data:`~.groups.GROUP_FIELDS`); ``W``: what their
    step preparations (:func:`prepare_groups`) computed."""
    for g in range(G.shape[0]):
        if G[g, 1] > 0:
            call_kernel(G[g, 0], G[g, 1], P, G[g, 2], IN, G[g, 3], OUT, G[g, 4], W, G[g, 9])


@njit(cache=True, error_model="numpy")
def w_size(G):
    """Entries of the step preparations' array ``W`` of the group table ``G`` (at least 1)."""
    n = 1
    for g in range(G.shape[0]):
        n = max(n, G[g, 9] + G[g, 1] * G[g, 10])
    return n


@njit(cache=True, error_model="numpy")
def prepare_groups(G, P, IN, W):
    """The step preparation of every kernel group that has one: ``W``, the values fixed over a step,
    from the constants in ``IN`` (:mod:`phsym.codegen.laws.abi`)."""
    for g in range(G.shape[0]):
        if G[g, 1] > 0 and G[g, 8] != 0:
            call_kernel(G[g, 8], G[g, 1], P, G[g, 2], IN, G[g, 3], W, G[g, 9], W, G[g, 9])


@njit(**INNER)
def _pnjlim(snew, sold, vt, vcrit):
    """SPICE's junction limit of ``snew`` against ``sold`` (thermal voltage ``vt``)."""
    if snew > vcrit and abs(snew - sold) > 2.0 * vt:
        if sold > 0.0:
            arg = 1.0 + (snew - sold) / vt
            if arg > 0.0:
                return sold + vt * math.log(arg)
            return vcrit
        return vt * math.log(snew / vt)
    return snew


@njit(**INNER)
def known_parts(K, net, kin, kf, W):
    """The parts of the kernels' inputs (``kin``) and of the residual (``kf``) that the step's known
    values ``K`` make: fixed over a step's Newton iterations, so :func:`solve` computes them once;
    with them the values ``W`` the kernels precompute from their constants (:func:`prepare_groups`)."""
    Ki, RK = net[1], net[4]
    kin[:] = 0.0
    csr_add(kin, Ki[0], Ki[1], Ki[2], K, 1.0)
    prepare_groups(net[9], net[10], kin, W)
    kf[:] = 0.0
    csr_add(kf, RK[0], RK[1], RK[2], K, 1.0)


@njit(cache=True, error_model="numpy")
def evaluate(z, K, net, lim, wold, limit, IN, INa, OUT, F, Jx):
    """Residual ``F`` and Jacobian values ``Jx`` at ``z``; returns whether an input was limited.

    Parameters
    ----------
    z, K : ndarray
        Unknowns and the step's known values.
    net : tuple
        ``(Zi, Ki, R, RO, RK, jconst, spos, ssrc, scoef, G, P)``, the CSR matrices as ``(p, i, x)``.
    lim : tuple
        ``(terms, c, c0, vt, vcrit, readers, tptr, rptr)`` of the limited junctions
        (:class:`~.limits.Slots`).
    wold : ndarray
        Each junction's value at the last iterate (updated).
    limit : bool
        Limit the junction inputs (not at a converged point's bookkeeping).
    IN, INa, OUT, F, Jx : ndarray
        Work and output arrays.
    """
    kin = np.empty(IN.shape[0])
    kf = np.empty(F.shape[0])
    W = np.empty(w_size(net[9]))
    known_parts(K, net, kin, kf, W)
    return evaluate_at(z, K, net, lim, wold, limit, IN, INa, OUT, F, Jx, kin, kf, W)


@njit(**INNER)
def evaluate_at(z, K, net, lim, wold, limit, IN, INa, OUT, F, Jx, kin, kf, W):
    """:func:`evaluate` with the known values' parts ``kin``, ``kf``, ``W`` of :func:`known_parts` (the
    same sums in the same order, so the same numbers)."""
    Zi, Ki, R, RO, RK, jconst, spos, ssrc, scoef, G, P = net
    tj, lc, lc0, lvt, lvc, readers, tptr, rptr = lim
    # one pass each for IN = Zi z + kin and F = R z + RO OUT + kf (the sums of csr_add, in its order)
    Zp, Zc, Zx = Zi
    for r in range(IN.shape[0]):
        s = 0.0
        for k in range(Zp[r], Zp[r + 1]):
            s += Zx[k] * z[Zc[k]]
        IN[r] = s + kin[r]
    limited = False
    nj = tptr.shape[0] - 1
    for r in range(readers.shape[0]):
        INa[readers[r, 1]] = IN[readers[r, 1]]
    for J in range(nj):
        r0 = rptr[J]
        w = IN[readers[r0, 1]] + (K[readers[r0, 6]] if readers[r0, 6] >= 0 else 0.0)     # the junction's value
        moved = False
        if limit:
            for t in range(tptr[J], tptr[J + 1]):
                c, c0 = lc[t], lc0[t]
                a = abs(c)
                snew = (c * w + c0) / a
                sold = (c * wold[J] + c0) / a
                slim = _pnjlim(snew, sold, lvt[t], lvc[t])
                if slim != snew:
                    w = (slim * a - c0) / c
                    moved = True
        wold[J] = w
        if moved:       # (only then: w - offset need not give the input back to the last bit)
            for r in range(rptr[J], rptr[J + 1]):
                IN[readers[r, 1]] = w - (K[readers[r, 6]] if readers[r, 6] >= 0 else 0.0)
    call_groups(G, P, IN, OUT, W)
    if limit:       # outputs linearised at the limited inputs: out + D (w - w_lim)
        for r in range(readers.shape[0]):
            delta = INa[readers[r, 1]] - IN[readers[r, 1]]
            if delta != 0.0:
                limited = True
                o0, no, nv, j = readers[r, 2], readers[r, 3], readers[r, 4], readers[r, 5]
                for m in range(no):
                    OUT[o0 + m] += OUT[o0 + no + m * nv + j] * delta
    Rp, Rc, Rx = R
    Op, Oc, Ox = RO
    for r in range(F.shape[0]):
        s = 0.0
        for k in range(Rp[r], Rp[r + 1]):
            s += Rx[k] * z[Rc[k]]
        t = 0.0
        for k in range(Op[r], Op[r + 1]):
            t += Ox[k] * OUT[Oc[k]]
        F[r] = s + t + kf[r]
    for k in range(Jx.shape[0]):     # (a loop: an array assignment compiles numba's shape-error message)
        Jx[k] = jconst[k]
    for s in range(spos.shape[0]):
        Jx[spos[s]] += scoef[s] * OUT[ssrc[s]]
    return limited


@njit(cache=True, error_model="numpy")
def factor(lu, Jx, fresh):
    """Factor the Jacobian values ``Jx`` (pattern in ``lu``): refactor unless ``fresh`` or a pivot
    became too small; returns ``(status, column)``: status 0, 3 (singular: ``column`` is the unknown
    with no pivot) or 5 (the factors need more room), column -1 unless singular."""
    Jp, Ji, q, Lp, Li, Lx, Up, Ui, Ux, pinv, xw, xi, mark, yw, tol = lu
    n = Jp.shape[0] - 1
    if not fresh:
        if lu_refactor(n, Jp, Ji, Jx, q, tol, Lp, Li, Lx, Up, Ui, Ux, pinv, xw) == 0:
            return 0, -1
    st = lu_factor(n, Jp, Ji, Jx, q, tol, Lp, Li, Lx, Up, Ui, Ux, pinv, xw, xi, mark)
    if st == -(n + 2):
        return 5, -1
    if st == 0:
        return 0, -1
    return 3, q[-1 - st]


@njit(**INNER)
def _finite(F):
    for i in range(F.shape[0]):
        if not math.isfinite(F[i]):
            return False
    return True


@njit(**INNER)
def _backward_error(F, Jx, Jp, Ji, z, w):
    """``max_r |F_r| / sum_c |J_rc| (|z_c| + 1)``: how far each equation is from holding, relative to
    its own terms (``w``: work)."""
    n = F.shape[0]
    for r in range(n):
        w[r] = 0.0
    for c in range(n):
        a = abs(z[c]) + 1.0
        for k in range(Jp[c], Jp[c + 1]):
            w[Ji[k]] += abs(Jx[k]) * a
    out = 0.0
    for r in range(n):
        e = abs(F[r]) / w[r] if w[r] > 0.0 else (0.0 if F[r] == 0.0 else 1e300)
        if e > out:
            out = e
    return out


@njit(**INNER)
def _weights(Jx, Jp, Ji, z, w, n):
    """``w[n + r] = 1 / sum_c |J_rc| (|z_c| + 1)``: each equation scaled by its own terms at the step's start."""
    for r in range(n):
        w[n + r] = 0.0
    for c in range(n):
        a = abs(z[c]) + 1.0
        for k in range(Jp[c], Jp[c + 1]):
            w[n + Ji[k]] += abs(Jx[k]) * a
    for r in range(n):
        w[n + r] = 1.0 / w[n + r] if w[n + r] > 0.0 else 1.0


@njit(**INNER)
def _merit(F, w, n):
    """The weighted residual norm ``sum_r (F_r w_r)^2`` (weights of :func:`_weights`)."""
    out = 0.0
    for r in range(n):
        e = F[r] * w[n + r]
        out += e * e
    return out


@njit(cache=True, error_model="numpy")
def solve(z, K, sc, net, lim, wold, lu, state, tol, maxit, linear, IN, INa, OUT, F, Jx, d, w, damp, reuse):
    """Newton on the step equations from ``z`` (updated in place).

    A step whose residual is not finite is halved (up to ten times).  Where a
    junction limit acted, the limits alone keep the iterates out of the
    exponentials, as in SPICE (a merit-function line search fights them: each
    limited evaluation moves the point the residual is linearised at).  With
    ``damp`` (the caller's retry of a step that failed without), a large step
    that raises the weighted residual where no limit acted is halved until it
    does not (saturating laws).  A step that does not converge is subdivided
    by the caller.

    Parameters
    ----------
    z, K : ndarray
        Start (overwritten with the solution) and the step's known values.
    sc : ndarray
        Each unknown's scale ``s_i`` in the convergence test.
    net, lim, lu : tuple
        See :func:`evaluate` and :func:`factor`.
    wold : ndarray
        The limited inputs' last values.
    state : ndarray of int64
        ``[factored, unknown of the last failure, iterations, factorizations]`` (``factored``: the LU
        holds a pattern; ``factorizations`` counts up over calls).
    tol : float
        Newton tolerance.
    maxit : int
        Iteration cap.
    linear : bool
        Every equation is linear (one solve is the solution).
    IN, INa, OUT, F, Jx, d, w : ndarray
        Work arrays (``w`` of length ``2 n``).
    damp : bool
        Halve large steps that raise the weighted residual (see above).
    reuse : float
        Solve with the factors of the last iteration after a step below this (:data:`REUSE`; 0: a
        full Newton iteration each time).

    Returns
    -------
    int
        0 (converged) or a :data:`STATUS` code.
    """
    n = z.shape[0]
    it = 0
    rprev = 1e300
    wmin = 1e300
    stall = 0
    refac = True
    kin = np.empty(IN.shape[0])
    kf = np.empty(n)
    W = np.empty(w_size(net[9]))
    known_parts(K, net, kin, kf, W)
    limited = evaluate_at(z, K, net, lim, wold, bool(True), IN, INa, OUT, F, Jx, kin, kf, W)
    while True:
        for i in range(n):
            if not math.isfinite(F[i]):
                state[1] = i
                state[2] = it
                return 2
        if not _finite(Jx):
            state[1] = -1
            state[2] = it
            return 2
        if not (linear and state[0] == 2):
            if refac or state[0] == 0:
                state[3] += 1
                st, col = factor(lu, Jx, state[0] == 0)
                if st != 0:
                    state[0] = 0
                    state[1] = col
                    state[2] = it
                    return st
                state[0] = 2 if linear else 1
        # the merit of the start when no junction limit moved it (see the line search below)
        if it == 0 and damp and not linear:
            _weights(Jx, lu[0], lu[1], z, w, n)
        f0 = -1.0 if (limited or linear or not damp) else _merit(F, w, n)
        for i in range(n):
            d[i] = -F[i]
        lu_solve(n, lu[2], lu[3], lu[4], lu[5], lu[6], lu[7], lu[8], lu[9], d, lu[13])
        worst = 0.0
        qi = -1
        for i in range(n):
            r = abs(d[i]) / (abs(z[i]) + sc[i])
            if not (r <= worst):
                worst = r
                qi = i
            z[i] += d[i]
        it += 1
        if linear:
            evaluate_at(z, K, net, lim, wold, bool(False), IN, INa, OUT, F, Jx, kin, kf, W)
            state[2] = it
            return 0
        # converged: a step below tol, or (contracting) the estimated remaining error
        # theta / (1 - theta) |d| below it; never from a linearisation at limited inputs
        conv = worst <= tol
        if not conv and it > 1 and worst < rprev:
            theta = worst / rprev
            conv = theta / (1.0 - theta) * worst <= tol
        # at the rounding floor the steps stop shrinking: a divided difference of H cancels digits
        # (its noise moves potentials and currents by ~1e-11), a floating part of the circuit held
        # by GMIN alone has its common potential fixed to microvolts only (its Jacobian's
        # condition); then each equation holding to the rounding of its own terms is convergence
        if worst < wmin:
            wmin = worst
            stall = 0
        else:
            stall += 1
        conv = conv and not limited
        # the next iteration keeps these factors after a small step, unless the last chord step
        # contracted poorly (then the Jacobian has moved more than the step says)
        refac = not (worst <= reuse and (refac or worst <= 1e-3 * rprev))
        rprev = worst
        limited = evaluate_at(z, K, net, lim, wold, not conv, IN, INa, OUT, F, Jx, kin, kf, W)
        if not conv and stall >= 2 and not limited and _backward_error(F, Jx, lu[0], lu[1], z, w) <= FLOOR:
            conv = True
        elif conv and not limited and not _backward_error(F, Jx, lu[0], lu[1], z, w) <= ACCEPT:
            conv = False        # small steps far from a solution: a flat law's Jacobian, not convergence
        if conv and not limited:
            state[2] = it
            return 0
        # damped (the retry of a step that failed undamped): a large full step that raised the weighted
        # residual, where no junction limit acted, is halved (a saturating law, an op-amp's tanh at a
        # gain of 1e4, throws a full Newton step far into its flat part and back); limited iterations
        # are left alone, as in SPICE
        if damp and f0 >= 0.0 and not limited and worst > DAMP_ABOVE:
            f1 = _merit(F, w, n)
            lam = 1.0
            while not (f1 <= f0) and lam > 1e-3:
                lam *= 0.5
                for i in range(n):
                    z[i] -= lam * d[i]
                limited = evaluate_at(z, K, net, lim, wold, bool(True), IN, INa, OUT, F, Jx, kin, kf, W)
                if limited or not _finite(F):
                    break
                f1 = _merit(F, w, n)
            if lam < 1.0:
                rprev = 1e300
                refac = True
        lam = 1.0
        while not _finite(F) and lam > 1e-3:
            lam *= 0.5
            for i in range(n):
                z[i] -= lam * d[i]
            limited = evaluate_at(z, K, net, lim, wold, bool(True), IN, INa, OUT, F, Jx, kin, kf, W)
            rprev = 1e300
            refac = True
        if it >= maxit:
            state[1] = qi
            state[2] = it
            return 1


# every module of the JIT engine imports this one: the engine's numba cache is made fresh before any
# of its cached functions loads (the ahead-of-time engine, :mod:`.engine`, imports none of them)
ensure_fresh(solve)
