"""The DC solver of the C library as a template (:mod:`.dc` fills in the prefix ``{N}``; sizes come
from the ``{N}_DC_*`` macros and tables :func:`.dc.dc_source` writes before it).

Each function mirrors the Python it replaces: ``{N}_dc_eval`` is
:meth:`phsym.simulation.dcsolve.DCProblem.evaluate`, ``{N}_dc_limit``
``DCProblem.limit``, ``{N}_dc_newton`` ``DCProblem.newton`` and
``{N}_dc_solve_point`` :func:`phsym.simulation.dcsolve.solve_dc` (Newton, gmin
stepping, source stepping); ``{N}_dc_solve`` is LU with partial pivoting.
"""

__all__ = ["DC_DRIVER"]

#: The solver, once for every library (``{N}``: the prefix; sizes from the ``{N}_DC_*`` macros).
DC_DRIVER = r"""
/* DCProblem.evaluate: residual r and Jacobian J (row-major) at z */
static void {N}_dc_eval({N}_dcwork *W, const double *c, const double *u, const double *z, double g, double sfac)
{
    const long nx = {N}_DC_NX, nw = {N}_DC_NW, nl = {N}_DC_NL, nu = {N}_DC_NU, nf = {N}_DC_NF;
    const long ne = {N}_DC_NE, nz = {N}_DC_NZ, q = {N}_DC_NQ, rk = {N}_DC_RK;
    const double *w = z + nf, *lam = z + nf + nw;
    long i, j, k;
    for (i = 0; i < nx; i++)
        W->x[i] = {N}_dc_xfix[i];
    for (i = 0; i < nf; i++)
        W->x[{N}_dc_free[i]] = z[i] * {N}_dc_sc[{N}_dc_free[i]];
    {N}_dc_grad(W->x, w, c, W->grad);
    {N}_dc_hess(W->x, w, c, W->hess);
    {N}_dc_law(W->x, w, c, W->law);
    {N}_dc_dlaw(W->x, w, c, W->dl);
    {N}_dc_dlawx(W->x, w, c, W->dlx);
    for (j = 0; j < nw; j++)
        W->law[j] += g * {N}_dc_nonlin[j] * w[j];
    for (i = 0; i < nw * nw; i++)
        W->dz[i] = 0.0;
    for (i = 0; i < nw * nx; i++)
        W->dzx[i] = 0.0;
    for (i = 0; i < {N}_DC_ND; i++)
        W->dz[{N}_dc_dpairs[2 * i] * nw + {N}_dc_dpairs[2 * i + 1]] = W->dl[i];
    for (i = 0; i < {N}_DC_NDX; i++)
        W->dzx[{N}_dc_xpairs[2 * i] * nx + {N}_dc_xpairs[2 * i + 1]] = W->dlx[i];
    for (j = 0; j < nw; j++)
        W->dz[j * nw + j] += g * {N}_dc_nonlin[j];
    for (i = 0; i < nx; i++)
        W->e[i] = W->grad[i];
    for (j = 0; j < nw; j++)
        W->e[nx + j] = {N}_dc_null[j] ? 0.0 : ({N}_dc_eo[j] ? W->law[j] : w[j]);
    for (j = 0; j < nl; j++)
        W->e[nx + nw + j] = lam[j];
    for (j = 0; j < nu; j++)
        W->e[nx + nw + nl + j] = sfac * u[j];
    for (i = 0; i < ne; i++) {
        double acc = 0.0;
        for (k = 0; k < ne; k++)
            acc += {N}_dc_Jn[i * ne + k] * W->e[k];
        W->f[i] = acc;
    }
    /* the state rows (the conserved combinations replace the dependent ones) */
    if (q > 0) {
        for (i = 0; i < rk; i++) {
            double acc = 0.0;
            for (k = 0; k < nf; k++)
                acc += {N}_dc_rows[i * nf + k] * W->f[{N}_dc_free[k]];
            W->r[i] = acc;
        }
        for (i = 0; i < q; i++) {
            double acc = 0.0;
            for (k = 0; k < nf; k++)
                acc += {N}_dc_invx[i * nf + k] * (W->x[{N}_dc_free[k]] - {N}_dc_xfix[{N}_dc_free[k]]);
            W->r[rk + i] = acc;
        }
    } else {
        for (i = 0; i < nf; i++)
            W->r[i] = W->f[{N}_dc_free[i]];
    }
    for (j = 0; j < nw; j++)
        W->r[nf + j] = ({N}_dc_null[j] ? 0.0 : ({N}_dc_eo[j] ? w[j] : W->law[j])) - W->f[nx + j];
    for (j = 0; j < nl; j++)
        W->r[nf + nw + j] = W->f[nx + nw + j];
    /* de/dz, then the rows of r */
    for (i = 0; i < ne * nz; i++)
        W->De[i] = 0.0;
    for (i = 0; i < {N}_DC_NH; i++) {
        long a = {N}_dc_hess_at[2 * i], b = {N}_dc_hess_at[2 * i + 1];
        for (k = 0; k < nf; k++)
            if ({N}_dc_free[k] == b)
                W->De[a * nz + k] = W->hess[i] * {N}_dc_sc[b];
    }
    for (j = 0; j < nw; j++)
        for (k = 0; k < nw; k++)
            W->De[(nx + j) * nz + nf + k] = {N}_dc_null[j] ? 0.0 : ({N}_dc_eo[j] ? W->dz[j * nw + k] : (j == k ? 1.0 : 0.0));
    if ({N}_DC_NDX > 0)
        for (j = 0; j < nw; j++)
            for (k = 0; k < nf; k++)
                W->De[(nx + j) * nz + k] = {N}_dc_eo[j] ? W->dzx[j * nx + {N}_dc_free[k]] * {N}_dc_sc[{N}_dc_free[k]] : 0.0;
    for (j = 0; j < nl; j++)
        W->De[(nx + nw + j) * nz + nf + nw + j] = 1.0;
    for (i = 0; i < ne; i++)
        for (k = 0; k < nz; k++) {
            double acc = 0.0;
            long m;
            for (m = 0; m < ne; m++)
                acc += {N}_dc_Jn[i * ne + m] * W->De[m * nz + k];
            W->Jf[i * nz + k] = acc;
        }
    if (q > 0) {
        for (i = 0; i < rk; i++)
            for (k = 0; k < nz; k++) {
                double acc = 0.0;
                long m;
                for (m = 0; m < nf; m++)
                    acc += {N}_dc_rows[i * nf + m] * W->Jf[{N}_dc_free[m] * nz + k];
                W->J[i * nz + k] = acc;
            }
        for (i = 0; i < q; i++)
            for (k = 0; k < nz; k++)
                W->J[(rk + i) * nz + k] = k < nf ? {N}_dc_inv[i * nf + k] : 0.0;
    } else {
        for (i = 0; i < nf; i++)
            for (k = 0; k < nz; k++)
                W->J[i * nz + k] = W->Jf[{N}_dc_free[i] * nz + k];
    }
    for (j = 0; j < nw; j++)
        for (k = 0; k < nz; k++)
            W->J[(nf + j) * nz + k] = -W->Jf[(nx + j) * nz + k];
    for (j = 0; j < nl; j++)
        for (k = 0; k < nz; k++)
            W->J[(nf + nw + j) * nz + k] = W->Jf[(nx + nw + j) * nz + k];
    for (j = 0; j < nw; j++)
        for (k = 0; k < nw; k++)
            W->J[(nf + j) * nz + nf + k] += {N}_dc_null[j] ? 0.0 : ({N}_dc_eo[j] ? (j == k ? 1.0 : 0.0) : W->dz[j * nw + k]);
    if ({N}_DC_NDX > 0)
        for (j = 0; j < nw; j++)
            for (k = 0; k < nf; k++)
                W->J[(nf + j) * nz + k] += {N}_dc_eo[j] ? 0.0 : W->dzx[j * nx + {N}_dc_free[k]] * {N}_dc_sc[{N}_dc_free[k]];
}

/* J d = -r by LU with partial pivoting (J overwritten); 0 for a singular or non-finite system */
static int {N}_dc_solve({N}_dcwork *W)
{
    const long n = {N}_DC_NZ;
    long i, j, k;
    for (i = 0; i < n; i++)
        W->d[i] = -W->r[i];
    for (k = 0; k < n; k++) {
        long p = k;
        double best = fabs(W->J[k * n + k]);
        for (i = k + 1; i < n; i++)
            if (fabs(W->J[i * n + k]) > best) {
                best = fabs(W->J[i * n + k]);
                p = i;
            }
        if (!(best > 0.0) || !isfinite(best))
            return 0;
        if (p != k) {
            double t;
            for (j = 0; j < n; j++) {
                t = W->J[k * n + j]; W->J[k * n + j] = W->J[p * n + j]; W->J[p * n + j] = t;
            }
            t = W->d[k]; W->d[k] = W->d[p]; W->d[p] = t;
        }
        for (i = k + 1; i < n; i++) {
            double m = W->J[i * n + k] / W->J[k * n + k];
            if (m != 0.0) {
                for (j = k + 1; j < n; j++)
                    W->J[i * n + j] -= m * W->J[k * n + j];
                W->d[i] -= m * W->d[k];
            }
        }
    }
    for (i = n - 1; i >= 0; i--) {
        double acc = W->d[i];
        for (j = i + 1; j < n; j++)
            acc -= W->J[i * n + j] * W->d[j];
        W->d[i] = acc / W->J[i * n + i];
        if (!isfinite(W->d[i]))
            return 0;
    }
    return 1;
}

/* DCProblem.limit: every junction voltage of zn limited against z (SPICE's rule) */
static void {N}_dc_limit(const double *z, double *zn)
{
    long m;
    for (m = 0; m < {N}_DC_NJ; m++) {
        long k = {N}_DC_NF + {N}_dc_jport[m];
        double vt = {N}_dc_jvt[m], vc = {N}_dc_jvc[m], c = {N}_dc_jc[m];
        double so = (c * z[k] + {N}_dc_jarg0[m]) * vt;
        double sn = (c * zn[k] + {N}_dc_jarg0[m]) * vt;
        if (sn > vc && fabs(sn - so) > 2.0 * vt) {
            double slim;
            if (so > 0.0) {
                double arg = 1.0 + (sn - so) / vt;
                slim = arg > 0.0 ? so + vt * log(arg) : vc;
            } else {
                slim = vt * log(sn / vt);
            }
            zn[k] = (slim / vt - {N}_dc_jarg0[m]) / c;
        }
    }
}

static int {N}_dc_finite(const double *a, long n)
{
    long i;
    for (i = 0; i < n; i++)
        if (!isfinite(a[i]))
            return 0;
    return 1;
}

/* DCProblem.newton: limited Newton from z (overwritten by the solution); iterations, or -1 */
static long {N}_dc_newton({N}_dcwork *W, const double *c, const double *u, double *z, double g, double sfac,
                          long maxit)
{
    const long n = {N}_DC_NZ;
    long it, i;
    for (it = 1; it <= maxit; it++) {
        int limited = 0;
        double step = 0.0;
        {N}_dc_eval(W, c, u, z, g, sfac);
        if (!{N}_dc_finite(W->r, n) || !{N}_dc_finite(W->J, n * n))
            return -1;
        if (!{N}_dc_solve(W))
            return -1;
        for (i = 0; i < n; i++)
            W->zn[i] = W->zt[i] = z[i] + W->d[i];
        {N}_dc_limit(z, W->zn);
        for (i = 0; i < n; i++) {
            double sti = fabs(W->zn[i] - z[i]) / (fabs(z[i]) + 1.0);
            if (W->zn[i] != W->zt[i])
                limited = 1;
            if (sti > step || isnan(sti))
                step = sti;
        }
        for (i = 0; i < n; i++)
            z[i] = W->zn[i];
        if (!limited && step <= 1e-12) {
            double big = 0.0;
            {N}_dc_eval(W, c, u, z, g, sfac);
            if (!{N}_dc_finite(W->r, n))
                return -1;
            for (i = 0; i < n; i++)
                if (fabs(W->r[i]) > big)
                    big = fabs(W->r[i]);
            return big < 1e-9 * {N}_dc_jscale ? it : -1;
        }
    }
    return -1;
}

/* solve_dc: Newton, then gmin stepping, then source stepping, from z (the solution on success); 1 or 0 */
static int {N}_dc_solve_point({N}_dcwork *W, const double *c, const double *u, double *z)
{
    const long n = {N}_DC_NZ;
    double *z0 = W->z1, s = 0.0, ds = 0.1, g = 1e-2;
    long i, k, it;
    for (i = 0; i < n; i++)
        z0[i] = z[i];
    if ({N}_dc_newton(W, c, u, z, 0.0, 1.0, 150) >= 0)
        return 1;
    /* gmin stepping: g = 1e-2, 1e-3, ..., 1e-12, then 0 */
    for (i = 0; i < n; i++)
        z[i] = z0[i];
    for (k = 0; k <= 11; k++) {
        double gk = k < 11 ? g * pow(10.0, -(double)k) : 0.0;
        if ({N}_dc_newton(W, c, u, z, gk, 1.0, 150) < 0)
            break;
        if (k == 11)
            return 1;
    }
    /* source stepping from zero */
    for (i = 0; i < n; i++)
        z[i] = 0.0;
    while (s < 1.0) {
        double target = s + ds < 1.0 ? s + ds : 1.0;
        for (i = 0; i < n; i++)
            z0[i] = z[i];
        it = {N}_dc_newton(W, c, u, z0, 0.0, target, 60);
        if (it < 0) {
            ds *= 0.25;
            if (ds < 1e-6)
                return 0;
            continue;
        }
        for (i = 0; i < n; i++)
            z[i] = z0[i];
        s = target;
        ds = ds * (it < 10 ? 2.0 : 1.0);
        if (ds > 0.5)
            ds = 0.5;
    }
    return 1;
}
"""
