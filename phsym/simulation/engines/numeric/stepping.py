"""The numeric engine's time loop, compiled once for every circuit.

:func:`run` steps ``k0 .. k1 - 1``: the step's known values ``K`` (states,
scales, the inputs by the scheme's rule, the carried efforts), a predictor
(linear extrapolation of the last two steps' unknowns), Newton
(:func:`.newton.solve`), then the step's end: the states and carried
efforts move, the storages' energies (their kernels at the new state), the
dissipated, injected and supplied powers from every branch's voltage and
current, the numerical dissipation of stiff storages stepped to the end,
and the recorded step vector ``[potentials, branch currents, inputs]``.
The arrays it fills are those of :class:`~phsym.simulation.engines.arrays`'s
``RunArrays`` (the generated loop's), so results are built the same way.
"""
from __future__ import annotations

import math

from numba import njit

from .newton import call_groups, csr_add, evaluate, solve

__all__ = ["run", "energies", "known"]


@njit(cache=True, error_model="numpy")
def known(K, x, xs, ub, se):
    """``K = [x, x_scale, u_step, efforts, 1]`` (the controls after it are :func:`run`'s)."""
    nx, nu, ne = x.shape[0], ub.shape[0], se.shape[0]
    for i in range(nx):
        K[i] = x[i]
        K[nx + i] = xs[i]
    for j in range(nu):
        K[2 * nx + j] = ub[j]
    for m in range(ne):
        K[2 * nx + nu + m] = se[m]
    K[2 * nx + nu + ne] = 1.0


@njit(cache=True, error_model="numpy")
def energies(x, se, post, EIN, EOUT):
    """Stored energy at ``(x, se)``: the linear storages' ``x^T Q x / 2`` and every energy kernel
    (its outputs, one per storage, left in ``EOUT``)."""
    QL, EG, EP, einp = post[6], post[7], post[8], post[9]
    nx = x.shape[0]
    H = 0.0
    for r in range(nx):
        s = 0.0
        for k in range(QL[0][r], QL[0][r + 1]):
            s += QL[2][k] * x[QL[1][k]]
        H += 0.5 * x[r] * s
    if EG.shape[0]:
        for p in range(einp.shape[0]):
            j = einp[p]
            EIN[p] = x[j] if j < nx else se[j - nx]
        call_groups(EG, EP, EIN, EOUT, EIN)       # energy kernels have no step preparation: W unread
        for p in range(EOUT.shape[0]):
            H += EOUT[p]
    return H


@njit(cache=True, error_model="numpy", nogil=True)
def run(k0, k1, h, mid, U, x, se, xs, z, zh, cnt, net, lim, lu, post, maps, tol, maxit, linear, flag,
        X, Y, Hh, Pd, Ps, Pn, IT, FL, E, rec, info, wold, wstart, lustate, work, init, reuse):
    """Step ``k0 .. k1 - 1`` (see the module docstring); returns -1, or the failed step (``info``:
    ``[step, status, unknown]``).

    ``zh`` holds the last two steps' unknowns (rows 0, 1) and ``cnt[0]`` how many exist; ``wold`` the
    limited junctions' values (``wstart``: at the start of the last step, for a restart); ``work``
    is ``(K, sc, IN, INa, OUT, F, Jx, d, EIN, EOUT, EOUT0, Ib, Vb, dx, ub, w)``; ``maps`` is
    ``(state_of, effort_z, n_nodes)``; ``init``: set the junctions' values (their limits' first
    reference) from the kernels' inputs at Newton's start, without limiting; ``reuse``: Newton's
    chord threshold (:func:`.newton.solve`).
    """
    K, sc, IN, INa, OUT, F, Jx, d, EIN, EOUT, EOUT0, Ib, Vb, dx, ub, wr = work
    state_of, effort_z, n_nodes = maps
    Zd, Od, Zb, Ob, Kb, Zv = post[0], post[1], post[2], post[3], post[4], post[5]
    passive, active, sources, stiff = post[10], post[11], post[12], post[13]
    nx, nz, nu, nb = x.shape[0], z.shape[0], ub.shape[0], Ib.shape[0]
    # the columns of U after the inputs are the controls: K's last entries, stepped by the inputs' rule
    nc = U.shape[1] - nu
    kc = K.shape[0] - nc
    Hh[k0] = energies(x, se, post, EIN, EOUT0)
    if init:
        for j in range(nu):
            ub[j] = U[k0, j]
        known(K, x, xs, ub, se)
        for j in range(nc):
            K[kc + j] = U[k0, nu + j]
        evaluate(z, K, net, lim, wold, bool(False), IN, INa, OUT, F, Jx)
    for k in range(k0, k1):
        for j in range(nu):
            ub[j] = 0.5 * (U[k, j] + U[k + 1, j]) if mid else U[k + 1, j]
        known(K, x, xs, ub, se)
        for j in range(nu, nu + nc):
            K[kc + j - nu] = 0.5 * (U[k, j] + U[k + 1, j]) if mid else U[k + 1, j]
        for i in range(nz):
            s = state_of[i]
            sc[i] = 1.0 if s < 0 else abs(x[s]) + xs[s]
        if cnt[0] >= 2:
            for i in range(nz):
                z[i] = 2.0 * zh[0, i] - zh[1, i]
        elif cnt[0] == 1:
            for i in range(nz):
                z[i] = zh[0, i]
        for j in range(wold.shape[0]):
            wstart[j] = wold[j]
        status = solve(z, K, sc, net, lim, wold, lu, lustate, tol, maxit, linear, IN, INa, OUT, F, Jx, d, wr,
                       bool(False), reuse)
        it0 = lustate[2]
        # the predictor overshot into an exponential, or Newton wandered on a flat law: again from the
        # last step, damped (the undamped path is the generated loop's and SPICE's, kept where it works)
        if (status == 1 or status == 2) and cnt[0] >= 1:
            for i in range(nz):
                z[i] = zh[0, i]
            for j in range(wold.shape[0]):
                wold[j] = wstart[j]
            status = solve(z, K, sc, net, lim, wold, lu, lustate, tol, maxit, linear, IN, INa, OUT, F, Jx, d, wr,
                           bool(True), reuse)
            lustate[2] += it0
        IT[k] = lustate[2]
        if status != 0:
            FL[k] = status
            info[0], info[1], info[2] = k, status, lustate[1]
            if not flag:
                return k
            for i in range(nz):
                if not math.isfinite(z[i]):
                    z[i] = zh[0, i] if cnt[0] >= 1 else 0.0
        # the step's end
        dx[:] = 0.0
        csr_add(dx, Zd[0], Zd[1], Zd[2], z, 1.0)
        csr_add(dx, Od[0], Od[1], Od[2], OUT, 1.0)
        Ib[:] = 0.0
        csr_add(Ib, Zb[0], Zb[1], Zb[2], z, 1.0)
        csr_add(Ib, Ob[0], Ob[1], Ob[2], OUT, 1.0)
        csr_add(Ib, Kb[0], Kb[1], Kb[2], K, 1.0)
        Vb[:] = 0.0
        csr_add(Vb, Zv[0], Zv[1], Zv[2], z, 1.0)
        pd = 0.0
        pa = 0.0
        for b in range(nb):
            p = Vb[b] * Ib[b]
            pd += passive[b] * p
            pa += active[b] * p
        ps = 0.0
        for j in range(nu):
            b = sources[j, 0]
            y = -Ib[b] if sources[j, 1] == 1 else -Vb[b]
            Y[k, j] = y
            ps += y * ub[j]
        pw = 0.0        # work of the end-point gradients of stiff storages: gbar dx
        for r in range(stiff.shape[0]):
            pw += OUT[stiff[r, 0]] * dx[stiff[r, 1]]
        for i in range(nx):
            x[i] += dx[i]
            X[k + 1, i] = x[i]
        for m in range(effort_z.shape[0]):
            se[m] += z[effort_z[m]]
        H = energies(x, se, post, EIN, EOUT)
        for r in range(stiff.shape[0]):     # P_num = (gbar dx - (H_end - H_start)) / h, per storage
            pw -= EOUT[stiff[r, 2]] - EOUT0[stiff[r, 2]]
        for p in range(EOUT.shape[0]):
            EOUT0[p] = EOUT[p]
        pn = pw / h if stiff.shape[0] else 0.0
        Hh[k + 1] = H
        Pd[k] = pd + pn
        Pn[k] = pn
        Ps[k] = ps - pa
        if rec:
            for i in range(n_nodes):
                E[k, i] = z[i]
            for b in range(nb):
                E[k, n_nodes + b] = Ib[b]
            for j in range(nu):
                E[k, n_nodes + nb + j] = ub[j]
        for i in range(nz):
            zh[1, i] = zh[0, i]
            zh[0, i] = z[i]
        if cnt[0] < 2:
            cnt[0] += 1
        if not math.isfinite(H):
            info[0], info[1], info[2] = k, 4, 0
            for i in range(nx):
                if not math.isfinite(x[i]):
                    info[2] = i
            if not flag:
                return k
            FL[k] = 4
    return -1
