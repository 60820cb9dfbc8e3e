"""The C around the translated step loop (:mod:`.library`): init, reset, parameters, the blocks of
``NAME_process``, the sub-steps of a failed step and the held failure, as a ``str.format`` template
(``{N}``: the library's prefix; sizes and the ``run`` calls filled in by :func:`.library.library_sources`).

Each function mirrors the Python it replaces: ``NAME_subdivide`` is
:func:`phsym.simulation.engines.substeps.subdivide`, ``NAME_substeps``
:meth:`phsym.simulation.engines.generated.NewtonLoop._subdivide`, ``NAME_chunk`` one block of
:meth:`phsym.simulation.stream.Stream.process`.
"""

__all__ = ["DRIVER"]

DRIVER = r"""
#if {UP}_RECORD_ENERGY
#define {N}_RUN(A, hh, k0, k1) {RUN_REC}
#else
#define {N}_RUN(A, hh, k0, k1) {RUN_FAST}
#endif

unsigned long {N}_state_size(void)
{{
    return (unsigned long)sizeof({N}_state);
}}

{DC_POINT}
int {N}_init({N}_state *s, double fs)
{{
    int i;
    if (!(fs > 0.0) || !isfinite(fs))
        return -1;
    memset(s, 0, sizeof *s);
    s->fs = fs;
    s->h = 1.0 / fs;
    s->tol = {TOL};
    s->maxit = {MAXIT};
    for (i = 0; i < {P}; i++)
        s->p[i] = {N}_p0[i];
    for (i = 0; i < {NX}; i++)
        s->xs[i] = {N}_xs0[i];
    for (i = 0; i < {NCTL}; i++)
        s->ctl[i] = s->target[i] = {N}_ctl0[i];
    {N}_reset(s);
    return 0;
}}

void {N}_reset({N}_state *s)
{{
    int i;
    for (i = 0; i < {NX}; i++)
        s->x[i] = {N}_x0[i];
    for (i = 0; i < {M}; i++) {{
        s->v[i] = {N}_v0[i];
        s->vold[i] = 0.0;
        s->F[i] = s->d[i] = s->vp[i] = 0.0;
        s->wt[i] = 1.0;
        s->piv[i] = 0;
    }}
    for (i = 0; i < {M} * {M} * 3; i++)
        s->Jm[i] = 0.0;
    for (i = 0; i < 4; i++)
        s->info[i] = 0;
    for (i = 0; i < {MU}; i++)
        s->ub[i] = s->y[i] = s->y_last[i] = 0.0;
    for (i = 0; i < {NE}; i++)
        s->e[i] = s->e_last[i] = 0.0;
    for (i = 0; i < (int)(sizeof s->ve / sizeof s->ve[0]); i++)
        s->ve[i] = NAN;    /* nothing carried yet */
    s->started = 0;
    s->failures = s->subdivided = s->iterations = s->samples = 0;
    s->last_H = s->last_P_diss = s->last_balance = s->max_balance = 0.0;
    for (i = 0; i < {NCTL}; i++)
        s->ctl[i] = s->target[i];     /* a reset starts at the parameters' set values */
{DC_RESET}
}}

int {N}_dc_status(const {N}_state *s)
{{
    return s->dc_status;
}}

void {N}_get_state(const {N}_state *s, double *x)
{{
    int i;
    for (i = 0; i < {NXR}; i++)
        x[i] = s->x[i];
}}

int {N}_set_param({N}_state *s, int index, double value)
{{
    if (index < 0 || index >= {NCTLR} || !isfinite(value))
        return -1;
    if (value < {N}_ctl_lo[index])
        value = {N}_ctl_lo[index];
    if (value > {N}_ctl_hi[index])
        value = {N}_ctl_hi[index];
    s->target[index] = value;
    return 0;
}}

double {N}_get_param(const {N}_state *s, int index)
{{
    return index >= 0 && index < {NCTLR} ? s->target[index] : NAN;
}}

const char *{N}_param_name(int index)
{{
    return index >= 0 && index < {NCTLR} ? {N}_ctl_names[index] : (const char *)0;
}}

void {N}_param_range(int index, double *minimum, double *maximum, double *value)
{{
    if (index < 0 || index >= {NCTLR})
        return;
    if (minimum) *minimum = {N}_ctl_lo[index];
    if (maximum) *maximum = {N}_ctl_hi[index];
    if (value) *value = {N}_ctl0[index];
}}

long {N}_failures(const {N}_state *s)
{{
    return s->failures;
}}

/* the failed step restarts from the unknowns Newton last converged to, state increments scaled */
static void {N}_restart({N}_state *s, int from_last, double scale)
{{
    int i;
    if (from_last)
        for (i = 0; i < {M}; i++)
            s->v[i] = s->vold[i];
    for (i = 0; i < {NXR} && i < {M}; i++)
        s->v[i] *= scale;
    for (i = 0; i < {M}; i++)
        s->vold[i] = s->v[i];
}}

/* Substeps.add: the time integrals of the sub-steps j0 .. j1-1 of one level */
static void {N}_acc_add({N}_state *s, const {N}_level *A, long j0, long j1, double hs)
{{
    long i;
    if (j1 <= j0)
        return;
    for (i = 0; i < {MU}; i++)
        s->acc_Y[i] += hs * (j1 - j0 == 2 ? A->Y[i] + A->Y[{MU} + i] : A->Y[j0 * {MU} + i]);
    for (i = 0; i < {NE}; i++)
        s->acc_E[i] += hs * (j1 - j0 == 2 ? A->E[i] + A->E[{NE} + i] : A->E[j0 * {NE} + i]);
#if {UP}_RECORD_ENERGY
    s->acc_Pd += hs * (j1 - j0 == 2 ? A->Pd[0] + A->Pd[1] : A->Pd[j0]);
    s->acc_Ps += hs * (j1 - j0 == 2 ? A->Ps[0] + A->Ps[1] : A->Ps[j0]);
    s->acc_Pc += hs * (j1 - j0 == 2 ? A->Pc[0] + A->Pc[1] : A->Pc[j0]);
    s->acc_Pn += hs * (j1 - j0 == 2 ? A->Pn[0] + A->Pn[1] : A->Pn[j0]);
    s->acc_H = A->Hh[j1];
#endif
    for (i = j0; i < j1; i++)
        s->acc_it += A->IT[i];
    s->acc_count += j1 - j0;
}}

/* substeps.subdivide: from u0 to u1 over h in two halves, halving failed halves again */
static int {N}_subdivide({N}_state *s, const double *u0, const double *u1, double h, int level)
{{
    {N}_level *A = &s->lv[level - 1];
    double hh = 0.5 * h;
    long j = 0, k0, k1 = 2, bad, i;
    for (i = 0; i < {NC}; i++) {{
        A->U[i] = u0[i];
        A->U[{NC} + i] = 0.5 * (u0[i] + u1[i]);
        A->U[2 * {NC} + i] = u1[i];
    }}
    for (i = 0; i < {NX}; i++)
        A->X[i] = s->x[i];
    for (i = 0; i < 2; i++) {{
        A->IT[i] = A->FL[i] = 0;
        A->Pc[i] = A->Pn[i] = 0.0;
    }}
    for (i = 0; i < 2 * {NE}; i++)
        A->E[i] = 0.0;
    while (j < 2) {{
        k0 = j;
        bad = {N}_RUN(A, hh, k0, k1);
        {N}_acc_add(s, A, j, bad < 0 ? 2 : bad, hh);
        if (bad < 0)
            return 1;
        if (level >= {LEVELS})
            return 0;
        for (i = 0; i < {NXR}; i++)
            s->x[i] = A->X[bad * {NX} + i];
        {N}_restart(s, 1, 0.5);
        if (!{N}_subdivide(s, &A->U[bad * {NC}], &A->U[(bad + 1) * {NC}], hh, level + 1))
            return 0;
        for (i = 0; i < {NXR}; i++)
            A->X[(bad + 1) * {NX} + i] = s->x[i];
        {N}_restart(s, 0, 2.0);
        j = bad + 1;
    }}
    return 1;
}}

/* NewtonLoop._subdivide: the failed step k of the block in sub-steps; 0 when that fails too */
static int {N}_substeps({N}_state *s, long k)
{{
    {N}_block *A = &s->blk;
    long failed[3], i;
    double h = s->h;
    for (i = 0; i < 3; i++)
        failed[i] = s->info[i];
    for (i = 0; i < {NXR}; i++)
        s->x[i] = A->X[k * {NX} + i];
    for (i = 0; i < {M}; i++)
        s->v[i] = s->vold[i];
    for (i = 0; i < {NXR} && i < {M}; i++)
        s->v[i] *= 0.5;
    for (i = 0; i < {M}; i++)
        s->vold[i] = s->v[i];
    for (i = 0; i < {MU}; i++)
        s->acc_Y[i] = 0.0;
    for (i = 0; i < {NE}; i++)
        s->acc_E[i] = 0.0;
    s->acc_Pd = s->acc_Ps = s->acc_Pc = s->acc_Pn = 0.0;
    s->acc_H = NAN;
    s->acc_it = s->acc_count = 0;
    if (!{N}_subdivide(s, &A->U[k * {NC}], &A->U[(k + 1) * {NC}], h, 1)) {{
        for (i = 0; i < 3; i++)
            s->info[i] = failed[i];
        return 0;
    }}
    for (i = 0; i < {NXR}; i++)
        A->X[(k + 1) * {NX} + i] = s->x[i];
#if {UP}_RECORD_ENERGY
    A->Hh[k + 1] = s->acc_H;
    A->Pd[k] = s->acc_Pd / h;
    A->Ps[k] = s->acc_Ps / h;
    A->Pc[k] = s->acc_Pc / h;
    A->Pn[k] = s->acc_Pn / h;
#endif
    for (i = 0; i < {MU}; i++)
        A->Y[k * {MU} + i] = s->acc_Y[i] / h;
    for (i = 0; i < {NE}; i++)
        A->E[k * {NE} + i] = s->acc_E[i] / h;
    A->IT[k] = s->acc_it;
    A->FL[k] = 0;
    for (i = 0; i < {NXR} && i < {M}; i++)
        s->v[i] = {N}_incr[i] ? A->X[(k + 1) * {NX} + i] - A->X[k * {NX} + i] : 0.0;
    for (i = 0; i < {M}; i++)
        s->vold[i] = s->v[i];
    s->subdivided += 1;
    return 1;
}}

/* the m steps of the block: the generated loop, failed steps subdivided or held */
static void {N}_steps({N}_state *s, long m)
{{
    {N}_block *A = &s->blk;
    double hh = s->h;
    long k0 = 0, k1 = m, bad, i;
    for (i = 0; i < {NXR}; i++)
        A->X[i] = s->x[i];
    for (;;) {{
        bad = {N}_RUN(A, hh, k0, k1);
        if (bad < 0)
            break;
        if (!{N}_substeps(s, bad)) {{
            /* not even in sub-steps: hold the last good state and output, count it */
            s->failures += 1;
            for (i = 0; i < {NXR}; i++) {{
                s->x[i] = A->X[bad * {NX} + i];
                A->X[(bad + 1) * {NX} + i] = s->x[i];
            }}
            for (i = 0; i < {M}; i++)
                s->v[i] = s->vold[i];
            for (i = 0; i < {MU}; i++)
                A->Y[bad * {MU} + i] = bad > 0 ? A->Y[(bad - 1) * {MU} + i] : s->y_last[i];
            for (i = 0; i < {NE}; i++)
                A->E[bad * {NE} + i] = bad > 0 ? A->E[(bad - 1) * {NE} + i] : s->e_last[i];
#if {UP}_RECORD_ENERGY
            A->Hh[bad + 1] = A->Hh[bad];
            A->Pd[bad] = A->Ps[bad] = A->Pc[bad] = A->Pn[bad] = 0.0;
#endif
            A->IT[bad] = 0;
            A->FL[bad] = 1;
        }}
        k0 = bad + 1;
        if (k0 >= k1)
            break;
    }}
    for (i = 0; i < m; i++)
        s->iterations += A->IT[i];
#if {UP}_RECORD_ENERGY
    for (i = 0; i < m; i++) {{
        double r = (A->Hh[i + 1] - A->Hh[i]) - hh * (A->Ps[i] - A->Pd[i]);
        if (fabs(r) > s->max_balance)
            s->max_balance = fabs(r);
        s->last_balance = r;
    }}
    s->last_H = A->Hh[m];
    s->last_P_diss = A->Pd[m - 1];
#endif
    for (i = 0; i < {MU}; i++)
        s->y_last[i] = A->Y[(m - 1) * {MU} + i];
    for (i = 0; i < {NE}; i++)
        s->e_last[i] = A->E[(m - 1) * {NE} + i];
}}

#if {UP}_RECORD_ENERGY
void {N}_energy(const {N}_state *s, double *H, double *P_diss, double *balance, double *max_balance)
{{
    if (H) *H = s->last_H;
    if (P_diss) *P_diss = s->last_P_diss;
    if (balance) *balance = s->last_balance;
    if (max_balance) *max_balance = s->max_balance;
}}
#endif

/* m samples (at most a block) of a call of nframes samples that started `at` samples earlier:
   inputs and outputs at in[j][src + k], out[j][src + k]; controls ramp over the whole call */
static void {N}_chunk({N}_state *s, const double *const *in, double *const *out, int src, int at, int m,
                      int nframes)
{{
    {N}_block *A = &s->blk;
    int i, k;
    (void)nframes;
    for (k = 0; k < m; k++) {{
        double *row = &A->U[(k + 1) * {NC}];
        int idx = at + k + 1;
        (void)idx;
{FILL}
    }}
{DC_FIRST}
    /* before the first sample the input is held at that sample for one step */
    for (i = 0; i < {NC}; i++)
        A->U[i] = s->started ? s->u_prev[i] : A->U[{NC} + i];
    s->started = 1;
    {N}_steps(s, m);
    for (k = 0; k < m; k++) {{
{OUTS}
    }}
    for (i = 0; i < {NC}; i++)
        s->u_prev[i] = A->U[m * {NC} + i];
    s->samples += m;
}}

void {N}_process_double({N}_state *s, const double *const *in, double *const *out, int nframes)
{{
    int at = 0, i;
    while (at < nframes) {{
        int m = nframes - at < {B} ? nframes - at : {B};
        {N}_chunk(s, in, out, at, at, m, nframes);
        at += m;
    }}
    for (i = 0; i < {NCTLR}; i++)
        s->ctl[i] = s->target[i];
}}

void {N}_process({N}_state *s, const float *const *in, float *const *out, int nframes)
{{
    /* a block at a time through double buffers on the stack: no allocation */
    double ib[{NIB}][{B}], ob[{NOB}][{B}];
    const double *ip[{NIB}];
    double *op[{NOB}];
    int at = 0, i, j, k;
    while (at < nframes) {{
        int m = nframes - at < {B} ? nframes - at : {B};
        for (j = 0; j < {NI}; j++) {{
            for (k = 0; k < m; k++)
                ib[j][k] = in && in[j] ? (double)in[j][at + k] : 0.0;
            ip[j] = ib[j];
        }}
        for (j = 0; j < {NO}; j++)
            op[j] = ob[j];
        {N}_chunk(s, ip, op, 0, at, m, nframes);
        for (j = 0; j < {NO}; j++)
            if (out && out[j])
                for (k = 0; k < m; k++)
                    out[j][at + k] = (float)ob[j][k];
        at += m;
    }}
    for (i = 0; i < {NCTLR}; i++)
        s->ctl[i] = s->target[i];
}}
"""
