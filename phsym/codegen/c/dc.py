"""The DC operating point in C: :mod:`phsym.simulation.dcsolve` for ``NAME_reset``.

The residual and exact Jacobian of the DC equations (``DCProblem.evaluate``)
with the homotopy parameters ``g`` (a conductance ``g w`` added to every
nonlinear law) and ``s`` (the inputs scaled by ``s``); Newton with SPICE's
junction limiting (``DCProblem.newton``), then gmin stepping, then source
stepping (``solve_dc``).  The expressions (gradients, Hessian entries,
laws and their derivatives) are printed by the printer of the generated
numba code (:mod:`phsym.codegen.printing`, the control parameters as the
array ``c``) and translated to C with the step module, junction-charge
kernels included; the solver is the template :data:`DC_DRIVER`, written once.

Differences from the Python solver: the linear solve is LU with partial
pivoting (numpy: LAPACK ``gesv``, falling back to least squares for a
singular matrix; here a singular matrix fails the Newton attempt and the
next method takes over), the start is the DC point found at export, and the
simulator's last resort (scipy's trust-region solver) is absent: when every
method fails ``NAME_reset`` keeps the export's point and ``NAME_dc_failed``
says so.  The point is the simulator's to Newton's tolerance (a relative
step of 1e-12), not bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence, Tuple

import sympy as sp

from ..printing import block
from .dcdriver import DC_DRIVER
from .subset import literal

__all__ = ["DCSpec", "dc_source", "dc_work", "dc_python", "DC_DRIVER", "DC_FUNCTIONS", "DC_KINDS"]


@dataclass
class DCSpec:
    """The DC problem of a model (see :class:`phsym.simulation.dcsolve.DCProblem`): sizes, the
    interconnection matrix ``Jn``, expressions in ``x[i]``, ``w[k]`` and the controls ``c[j]``,
    index pairs, flags, invariants (``rows``, ``inv``, ``inv_x`` transposed), junction terms,
    ``vmap`` (the ``z`` index of each Newton unknown of the loop, -1: zero) and the start ``z0``:
    the export's DC point, the simulator's solution for the inputs ``u0`` and the controls at ``c0``."""

    nx: int
    nw: int
    nl: int
    nu: int
    free: List[int]
    x_fix: List[float]
    sc: List[float]
    Jn: List[List[float]]
    grads: List[sp.Expr]
    hess_at: List[Tuple[int, int]]
    hess: List[sp.Expr]
    laws: List[sp.Expr]
    dpairs: List[Tuple[int, int]]
    dlaw: List[sp.Expr]
    xpairs: List[Tuple[int, int]]
    dlaw_x: List[sp.Expr]
    effort_out: List[bool]
    null: List[bool]
    nonlinear: List[float]
    rows: List[List[float]]
    inv: List[List[float]]
    inv_x: List[List[float]]
    jport: List[int]
    jc: List[float]
    jarg0: List[float]
    jvt: List[float]
    jvc: List[float]
    vmap: List[int]
    z0: List[float]
    n_ctl: int
    u0: List[float]
    c0: List[float]


#: The expression functions of the DC problem (Python, translated to C with the step module).
DC_FUNCTIONS = ("dc_grad", "dc_hess", "dc_law", "dc_dlaw", "dc_dlawx")

#: Kinds of their arguments (:class:`.translate.Translator`).
DC_KINDS = dict(x="D1", w="D1", c="D1", out="D1")


def dc_python(spec: DCSpec) -> str:
    """The expression functions of the DC problem as the subset of Python the step module is written
    in (``out[i] = ...`` from the arrays ``x``, ``w``, ``c``; junction charges as kernel calls): the
    library translates them to C with the step (:mod:`.translate`)."""
    sizes = {"x": spec.nx, "w": spec.nw, "c": spec.n_ctl}
    src = []
    for name, exprs in zip(DC_FUNCTIONS, (spec.grads, spec.hess, spec.laws, spec.dlaw, spec.dlaw_x)):
        body = block([(f"out[{i}]", e) for i, e in enumerate(exprs)], sizes) if exprs else []
        src += [f"def {name}(x, w, c, out):"] + (body or ["    return"]) + [""]
    return "\n".join(src)


def _arr(values: Sequence[float], kind: str = "double") -> str:
    if kind == "double":
        return "{" + (", ".join(literal(float(v)) for v in values) or "0") + "}"
    return "{" + (", ".join(str(int(v)) for v in values) or "0") + "}"


def dc_work(spec: DCSpec, N: str) -> str:
    """The typedef ``{N}_dcwork``: the DC solve's scratch, inside the instance (no allocation).

    Parameters
    ----------
    spec : DCSpec
        The DC problem.
    N : str
        The library's prefix.
    """
    nx, nw, nf = max(spec.nx, 1), max(spec.nw, 1), len(spec.free)
    ne = max(spec.nx + spec.nw + spec.nl + spec.nu, 1)
    nz = max(nf + spec.nw + spec.nl, 1)
    nh, nd, ndx = max(len(spec.hess_at), 1), max(len(spec.dpairs), 1), max(len(spec.xpairs), 1)
    return "\n".join([
        "typedef struct {",
        f"    double x[{nx}], grad[{nx}], hess[{nh}], law[{nw}], dl[{nd}], dlx[{ndx}];",
        f"    double dz[{nw * nw}], dzx[{nw * nx}], e[{ne}], f[{ne}], De[{ne * nz}], Jf[{ne * nz}];",
        f"    double r[{nz}], J[{nz * nz}], d[{nz}], zn[{nz}], zt[{nz}], z[{nz}], z1[{nz}];",
        f"}} {N}_dcwork;"])


def dc_source(spec: DCSpec, N: str) -> str:
    """The C of the DC solve of a library with prefix ``N`` (functions ``{N}_dc_*``).

    Parameters
    ----------
    spec : DCSpec
        The DC problem.
    N : str
        The library's prefix.
    """
    nx, nw, nl, nu = spec.nx, spec.nw, spec.nl, spec.nu
    nf = len(spec.free)
    q = len(spec.inv)
    rk = len(spec.rows)
    ne = nx + nw + nl + nu
    nz = nf + nw + nl
    flat = [v for row in spec.Jn for v in row]
    consts = [
        f"#define {N}_DC_NX {nx}", f"#define {N}_DC_NW {nw}", f"#define {N}_DC_NL {nl}",
        f"#define {N}_DC_NU {nu}", f"#define {N}_DC_NF {nf}", f"#define {N}_DC_NE {ne}",
        f"#define {N}_DC_NZ {nz}", f"#define {N}_DC_NQ {q}", f"#define {N}_DC_RK {rk}",
        f"#define {N}_DC_NH {len(spec.hess_at)}", f"#define {N}_DC_ND {len(spec.dpairs)}",
        f"#define {N}_DC_NDX {len(spec.xpairs)}", f"#define {N}_DC_NJ {len(spec.jport)}",
        f"#define {N}_DC_NV {len(spec.vmap)}",
        f"static const double {N}_dc_Jn[{max(len(flat), 1)}] = {_arr(flat)};",
        f"static const long {N}_dc_free[{max(nf, 1)}] = {_arr(spec.free, 'long')};",
        f"static const double {N}_dc_xfix[{max(nx, 1)}] = {_arr(spec.x_fix)};",
        f"static const double {N}_dc_sc[{max(nx, 1)}] = {_arr(spec.sc)};",
        f"static const long {N}_dc_hess_at[{max(2 * len(spec.hess_at), 1)}] = "
        f"{_arr([i for p in spec.hess_at for i in p], 'long')};",
        f"static const long {N}_dc_dpairs[{max(2 * len(spec.dpairs), 1)}] = "
        f"{_arr([i for p in spec.dpairs for i in p], 'long')};",
        f"static const long {N}_dc_xpairs[{max(2 * len(spec.xpairs), 1)}] = "
        f"{_arr([i for p in spec.xpairs for i in p], 'long')};",
        f"static const int {N}_dc_eo[{max(nw, 1)}] = {_arr([int(b) for b in spec.effort_out], 'long')};",
        f"static const int {N}_dc_null[{max(nw, 1)}] = {_arr([int(b) for b in spec.null], 'long')};",
        f"static const double {N}_dc_nonlin[{max(nw, 1)}] = {_arr(spec.nonlinear)};",
        f"static const double {N}_dc_rows[{max(rk * nf, 1)}] = {_arr([v for r in spec.rows for v in r])};",
        f"static const double {N}_dc_inv[{max(q * nf, 1)}] = {_arr([v for r in spec.inv for v in r])};",
        f"static const double {N}_dc_invx[{max(q * nf, 1)}] = {_arr([v for r in spec.inv_x for v in r])};",
        f"static const long {N}_dc_jport[{max(len(spec.jport), 1)}] = {_arr(spec.jport, 'long')};",
        f"static const double {N}_dc_jc[{max(len(spec.jc), 1)}] = {_arr(spec.jc)};",
        f"static const double {N}_dc_jarg0[{max(len(spec.jc), 1)}] = {_arr(spec.jarg0)};",
        f"static const double {N}_dc_jvt[{max(len(spec.jc), 1)}] = {_arr(spec.jvt)};",
        f"static const double {N}_dc_jvc[{max(len(spec.jc), 1)}] = {_arr(spec.jvc)};",
        f"static const long {N}_dc_vmap[{max(len(spec.vmap), 1)}] = {_arr(spec.vmap, 'long')};",
        f"static const double {N}_dc_z0[{max(nz, 1)}] = {_arr(spec.z0)};",
        f"static const double {N}_dc_u0[{max(nu, 1)}] = {_arr(spec.u0)};",
        f"static const double {N}_dc_c0[{max(spec.n_ctl, 1)}] = {_arr(spec.c0)};",
        f"static const double {N}_dc_jscale = {repr(max(1.0, max((abs(v) for v in flat), default=0.0)))};",
    ]
    return "\n".join(consts) + "\n" + DC_DRIVER.replace("{N}", N)
