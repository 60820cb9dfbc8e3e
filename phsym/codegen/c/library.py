"""A self-contained C99 library of a model: ``NAME.h`` and ``NAME.c`` (libm only).

The step is the generated numba loop translated statement by statement
(:mod:`phsym.codegen.c.translate`); this module writes what the Python side
of the simulator does around it, in C:

* the instance struct (every array sized at export time: no allocation, no
  globals), ``NAME_init`` / ``NAME_reset`` (the state and Newton start the
  simulator starts from) / ``NAME_set_param`` (control parameters, ramped
  over the next ``process`` call);
* ``NAME_process``: blocks of at most ``NAME_BLOCK`` samples, each a call of
  the generated ``run`` over the inputs of those samples, the previous
  sample ahead of them (:class:`phsym.simulation.stream.Stream`'s layout:
  output sample k is the step that ends at input sample k);
* a step ``run`` gives up on is subdivided exactly as
  :mod:`phsym.simulation.engines.substeps` does (halves, down to ``h/1024``,
  with the same accumulation of the sub-steps' outputs); a step that fails
  even then holds the last good state and output and is counted
  (``NAME_failures``): no blocking, no NaN;
* outputs: probes as the dot product of the step's efforts with the probe
  vector (summed in the order :meth:`SimulationResult._probe` sums them),
  states, port outputs.

``NAME_RECORD_ENERGY`` (0 by default) compiles the loop that books the
stored energy and the powers of every step, as the simulator's loop does.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ...errors import ExportError
from ...version import __version__
from .prune import dead_code, without_record
from .dc import DC_FUNCTIONS, DC_KINDS, DCSpec, dc_python, dc_source, dc_work
from .driver import DRIVER
from .subset import literal
from .translate import HELPERS, Translator
from .waveforms import waveform_function

__all__ = ["Control", "Output", "LibrarySpec", "c_identifier", "library_sources", "RUN_KINDS", "MAX_LEVELS"]

#: Halvings of a failed step (as :data:`phsym.simulation.engines.substeps.MAX_LEVELS`).
MAX_LEVELS = 10

#: Kinds of the generated ``run``'s arguments (:data:`phsym.codegen.newton.module.RUN_ARGS`).
RUN_KINDS = dict(x="D1", v="D1", U="D2", p="D1", xs="D1", h="d", k0="i", k1="i", tol="d", maxit="i", flag="b",
                 X="D2", Y="D2", Hh="D1", Pd="D1", Ps="D1", Pc="D1", Pn="D1", IT="I1", FL="I1", E="D2", rec_e="b",
                 info="I1", F="D1", Jm="D2", piv="I1", d="D1", vp="D1", wt="D1", ub="D1", e="D1", y="D1",
                 vold="D1", ve="D1")


@dataclass
class Control:
    """A parameter the library changes while running (``NAME_set_param``).

    Attributes
    ----------
    name : str
        Parameter name in the netlist.
    column : int
        Its column of the input array ``U`` of ``run``.
    default, minimum, maximum : float
        Value at export and range.
    unit : str
        Unit (for plugin metadata), may be empty.
    """

    name: str
    column: int
    default: float
    minimum: float
    maximum: float
    unit: str = ""


@dataclass
class Output:
    """A signal the library returns: ``kind`` ``"e"`` (probe: ``sum c_j e_j``), ``"x"`` (state at the
    step's end), ``"y"`` (port output of the step) or ``"u"`` (input column at the sample)."""

    label: str
    kind: str
    index: int = 0
    coefs: List[Tuple[int, float]] = field(default_factory=list)


@dataclass
class LibrarySpec:
    """Everything the C library is made of (numbers and the generated module).

    Attributes
    ----------
    name : str
        C identifier prefixing every symbol.
    origin : str
        What the model came from (netlist file), for the header comment.
    module_source : str
        The generated step module (:func:`phsym.codegen.newton.module.module_source`).
    namespace : dict
        Callables the module imports (kernels), by name.
    scheme : str
        The step's scheme.
    fs : float
        Sample rate the export was made and checked at.
    n_x, n_v, n_u, n_e, n_ve : int
        States, Newton unknowns, ports, effort-vector size, carried work array size.
    p, xs : list of float
        Parameter array and state scales.
    tol : float
        Newton tolerance.
    maxit : int
        Newton iteration cap.
    x0, v0 : list of float
        State and Newton start after ``NAME_reset``.
    increments : list of bool
        Per state: whether its unknown is its increment (a failed step's restart, as the simulator's).
    columns : list of str
        Names of the columns of ``U``: the model's inputs, then its controls.
    inputs : list of int
        Columns fed by ``NAME_process``'s input channels, in channel order.
    fixed : dict of int to float
        The other input columns with a constant netlist value: that value.
    waves : dict of int to (str, list of float)
        The other input columns with a time-varying netlist waveform: its shape and arguments
        (evaluated at each sample's time, :mod:`.waveforms`).
    dc : DCSpec or None
        The DC problem ``NAME_reset`` solves (:mod:`.dc`); None: the deck starts from its initial
        conditions (``x0``, ``v0``).
    controls : list of Control
        Control parameters (``NAME_set_param``).
    outputs : list of Output
        Output channels.
    block : int
        Samples per call of the generated loop.
    """

    name: str
    origin: str
    module_source: str
    namespace: Dict[str, object]
    scheme: str
    fs: float
    n_x: int
    n_v: int
    n_u: int
    n_e: int
    n_ve: int
    p: List[float]
    xs: List[float]
    tol: float
    maxit: int
    x0: List[float]
    v0: List[float]
    increments: List[bool]
    columns: List[str]
    inputs: List[int]
    fixed: Dict[int, float]
    controls: List[Control]
    outputs: List[Output]
    block: int = 64
    waves: Dict[int, Tuple[str, List[float]]] = field(default_factory=dict)
    dc: Optional[DCSpec] = None


def c_identifier(text: str) -> str:
    """A C identifier from a name (``overdrive`` from ``overdrive.cir``, ``v_out_`` from ``v(out)``).

    Parameters
    ----------
    text : str
        Any name.
    """
    s = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return s if s and not s[0].isdigit() else "m_" + s


def _num(v: float) -> str:
    return literal(float(v))


def _array(values: Sequence[float]) -> str:
    return "{" + ", ".join(_num(v) for v in values) + "}" if len(values) else "{0}"


def _run_call(fn, args: Dict[str, str], dims: Dict[Tuple[str, int], str]) -> str:
    """The C call of a translated ``run``: its arguments, then each array's hidden dimensions."""
    out = []
    for p in fn.params:
        out.append(args[p])
        out += [dims[(p, j)] for j in range(2) if (p, j) in fn.hidden]
    return f"{fn.cname}({', '.join(out)})"


def _dc_reset(spec: LibrarySpec) -> str:
    """C of NAME_reset after the constants: the DC point for the inputs at zero, the other sources at
    t = 0, the parameters' set values."""
    N, NU = spec.name, max(spec.n_u, 1)
    if spec.dc is None:
        return "    s->dc_status = -1;"
    u = [f"        u[{c}] = {_num(v)};" for c, v in sorted(spec.fixed.items()) if c < spec.n_u]
    u += [f"        u[{c}] = {N}_wave{c}(0.0);" for c in sorted(spec.waves) if c < spec.n_u]
    return "\n".join(["    {", f"        double u[{NU}] = {{0}};"] + u + [f"        {N}_dc_point(s, u);", "    }"])


def _dc_point(spec: LibrarySpec) -> str:
    """C of NAME_dc_point: the DC operating point for inputs u and the parameters' set values, from the
    export's point; the state and Newton's start on success (the simulator's ``carry(start)``)."""
    N = spec.name
    if spec.dc is None:
        return ""
    return "\n".join([
        "/* the DC operating point for the inputs u and the parameters' set values, from the export's point */",
        f"static void {N}_dc_point({N}_state *s, const double *u)",
        "{",
        f"    {N}_dcwork *W = &s->dcw;",
        "    long i;",
        "    int same = 1;",
        f"    for (i = 0; i < {N}_DC_NZ; i++)",
        f"        W->z[i] = {N}_dc_z0[i];",
        f"    for (i = 0; i < {len(spec.controls)}; i++)",
        "        s->dc_c[i] = s->target[i];",
        f"    for (i = 0; i < {spec.n_u}; i++)",
        "        s->dc_u[i] = u[i];",
        f"    for (i = 0; i < {spec.n_u}; i++)",
        f"        same &= u[i] == {N}_dc_u0[i];",
        f"    for (i = 0; i < {len(spec.controls)}; i++)",
        f"        same &= s->target[i] == {N}_dc_c0[i];",
        "    if (same) {      /* the export's problem: its point is the simulator's own solution */",
        f"        for (i = 0; i < {spec.n_x}; i++)",
        f"            s->x[i] = {N}_x0[i];",
        f"        for (i = 0; i < {N}_DC_NV; i++)",
        f"            s->v[i] = {N}_v0[i];",
        "        s->dc_status = 1;",
        "        return;",
        "    }",
        f"    if (!{N}_dc_solve_point(W, s->target, u, W->z)) {{",
        "        s->dc_status = 0;     /* the state and start stay where they were */",
        "        return;",
        "    }",
        f"    for (i = 0; i < {N}_DC_NX; i++)",
        f"        s->x[i] = {N}_dc_xfix[i];",
        f"    for (i = 0; i < {N}_DC_NF; i++)",
        f"        s->x[{N}_dc_free[i]] = W->z[i] * {N}_dc_sc[{N}_dc_free[i]];",
        f"    for (i = 0; i < {N}_DC_NV; i++)",
        f"        s->v[i] = {N}_dc_vmap[i] >= 0 ? W->z[{N}_dc_vmap[i]] : 0.0;",
        "    s->dc_status = 1;",
        "}", ""])


def _dc_first(spec: LibrarySpec) -> str:
    """C of the first sample after a reset: the DC point again when its inputs or parameters differ
    from the reset's (the simulator's stream solves it for its first input sample)."""
    N = spec.name
    if spec.dc is None:
        return ""
    return "\n".join([
        "    if (!s->started) {",
        "        int again = 0;",
        f"        for (i = 0; i < {spec.n_u}; i++)",
        f"            again |= A->U[{max(len(spec.columns), 1)} + i] != s->dc_u[i];",
        f"        for (i = 0; i < {len(spec.controls)}; i++)",
        "            again |= s->target[i] != s->dc_c[i];",
        "        if (again)",
        f"            {N}_dc_point(s, &A->U[{max(len(spec.columns), 1)}]);",
        "    }"])


def library_sources(spec: LibrarySpec) -> Tuple[str, str]:
    """``(NAME.h, NAME.c)`` of a model.

    Parameters
    ----------
    spec : LibrarySpec
        The model's numbers and generated module.
    """
    N = spec.name
    up = N.upper()
    M, MU, NE = max(spec.n_v, 1), max(spec.n_u, 1), max(spec.n_e, 1)
    NX, NC, NCTL = max(spec.n_x, 1), max(len(spec.columns), 1), max(len(spec.controls), 1)
    P, B = max(len(spec.p), 1), int(spec.block)
    if len(spec.v0) > M or len(spec.x0) != spec.n_x:
        raise ExportError("C export: the initial state does not fit the model")

    def transform(name: str, node: ast.FunctionDef) -> ast.FunctionDef:
        if name == "run_fast":
            return without_record(node, spec.n_x)
        import copy
        return dead_code(copy.deepcopy(node))

    T = Translator(spec.module_source, spec.namespace, f"{N}_", transform=transform)
    if "run" not in T.defs:
        raise ExportError("C export: the generated module has no run loop")
    T.defs["run_fast"] = T.defs["run"]
    if spec.dc is not None:
        from ..kernels import junction as kernels
        T.namespace.update({k: getattr(kernels, k) for k in kernels.__all__})
        T.defs.update({n.name: n for n in ast.parse(dc_python(spec.dc)).body if isinstance(n, ast.FunctionDef)})
        for fn in DC_FUNCTIONS:
            T.function(fn, DC_KINDS, f"{N}_{fn}")
    rec = T.function("run", RUN_KINDS, f"{N}_run_rec")
    fast = T.function("run_fast", RUN_KINDS, f"{N}_run_fast")
    body = T.source({rec.cname: f"{up}_RECORD_ENERGY", fast.cname: f"!{up}_RECORD_ENERGY"})

    def call(fn, A: str) -> str:
        a = {"x": "s->x", "v": "s->v", "U": f"{A}U", "p": "s->p", "xs": "s->xs", "h": "hh", "k0": "k0", "k1": "k1",
             "tol": "s->tol", "maxit": "s->maxit", "flag": "0", "rec_e": "1", "info": "s->info"}
        a.update({k: f"{A}{k}" for k in ("X", "Y", "Hh", "Pd", "Ps", "Pc", "Pn", "IT", "FL", "E")})
        a.update({k: f"s->{k}" for k in ("F", "Jm", "piv", "d", "vp", "wt", "ub", "e", "y", "vold", "ve")})
        dims = {("U", 1): str(NC), ("X", 1): str(NX), ("Y", 1): str(MU), ("E", 1): str(NE), ("Jm", 1): str(3 * M)}
        return _run_call(fn, a, dims)

    ctl_names = [c.name for c in spec.controls]
    enum = [f"    {up}_PARAM_{c_identifier(n).upper()} = {j}," for j, n in enumerate(ctl_names)]
    legend = [f" *   input {j}: {spec.columns[c]}" for j, c in enumerate(spec.inputs)] + \
             [f" *   output {j}: {o.label}" for j, o in enumerate(spec.outputs)] + \
             [f" *   parameter {j}: {c.name} = {c.default:g} in [{c.minimum:g}, {c.maximum:g}] {c.unit}".rstrip()
              for j, c in enumerate(spec.controls)]
    head = [f"/* {N}: generated by phsym {__version__} (phsym.codegen.c) from {spec.origin}.",
            f" * The {spec.scheme} step of phsym's generated loop at {spec.fs:g} Hz, in C99 (libm only).",
            " * Do not edit: phsym export rewrites it from the netlist."] + legend + [" */"]
    h = head + [f"#ifndef {up}_H", f"#define {up}_H", "", "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
                "/* 1: also book the stored energy, the dissipated power and the balance of every step */",
                f"#ifndef {up}_RECORD_ENERGY", f"#define {up}_RECORD_ENERGY 0", "#endif", "",
                f"#define {up}_NUM_INPUTS {len(spec.inputs)}", f"#define {up}_NUM_OUTPUTS {len(spec.outputs)}",
                f"#define {up}_NUM_PARAMS {len(spec.controls)}",
                f"#define {up}_NUM_STATES {spec.n_x}",
                f"#define {up}_SAMPLE_RATE {_num(spec.fs)}  /* the rate the export was checked at */",
                f"#define {up}_BLOCK {B}", "",
                "typedef enum {"] + (enum or [f"    {up}_PARAM_NONE_ = -1,"]) + [f"}} {N}_param;", ""]
    h += [f"/* work arrays of one call of the step loop ({B} steps, or 2 sub-steps) */",
          f"typedef struct {{ double U[({B} + 1) * {NC}], X[({B} + 1) * {NX}], Y[{B} * {MU}], E[{B} * {NE}];",
          f"    double Hh[{B} + 1], Pd[{B}], Ps[{B}], Pc[{B}], Pn[{B}]; long IT[{B}], FL[{B}]; }} {N}_block;",
          f"typedef struct {{ double U[3 * {NC}], X[3 * {NX}], Y[2 * {MU}], E[2 * {NE}];",
          f"    double Hh[3], Pd[2], Ps[2], Pc[2], Pn[2]; long IT[2], FL[2]; }} {N}_level;", "",
          ] + ([dc_work(spec.dc, N), ""] if spec.dc is not None else []) + [
          "/* one instance: everything it uses (no globals, no allocation) */",
          "typedef struct {",
          "    double fs, h, tol; long maxit;",
          f"    double p[{P}], xs[{NX}], x[{NX}], v[{M}], vold[{M}];",
          f"    long info[4], piv[{M}];",
          f"    double F[{M}], Jm[{M} * {3 * M}], d[{M}], vp[{M}], wt[{M}], ub[{MU}], e[{NE}], y[{MU}];",
          f"    double ve[{max(spec.n_ve, 1)}];",
          f"    {N}_block blk;",
          f"    {N}_level lv[{MAX_LEVELS}];",
          f"    double acc_Y[{MU}], acc_E[{NE}], acc_Pd, acc_Ps, acc_Pc, acc_Pn, acc_H; long acc_it, acc_count;",
          f"    double u_prev[{NC}], ctl[{NCTL}], target[{NCTL}], e_last[{NE}], y_last[{MU}];",
          "    int started, dc_status;",
          ] + ([f"    {N}_dcwork dcw; double dc_u[{MU}], dc_c[{NCTL}];"] if spec.dc is not None else []) + [
          "    long failures, subdivided, iterations, samples;",
          "    double last_H, last_P_diss, last_balance, max_balance;",
          f"}} {N}_state;", "",
          f"/* sizeof({N}_state), for hosts that allocate it through a foreign-function interface */",
          f"unsigned long {N}_state_size(void);",
          "/* 0, or -1 for a rate that is not positive */",
          f"int {N}_init({N}_state *s, double fs);",
          "/* back to the state the simulator starts from: the DC operating point for the parameters' set",
          "   values, the inputs at zero and every other source at t = 0 (solved again at the first sample",
          "   when that differs), or the netlist's initial conditions */",
          f"void {N}_reset({N}_state *s);",
          "/* 1: the last reset's DC point was solved; 0: it failed and the export's point is kept;",
          "   -1: the deck starts from its initial conditions (no DC solve) */",
          f"int {N}_dc_status(const {N}_state *s);",
          f"/* the state after the last processed sample (or the reset's): {N.upper()}_NUM_STATES values */",
          f"void {N}_get_state(const {N}_state *s, double *x);",
          "/* a control parameter, reached linearly over the next process call; -1: no such parameter */",
          f"int {N}_set_param({N}_state *s, int index, double value);",
          f"double {N}_get_param(const {N}_state *s, int index);",
          f"const char *{N}_param_name(int index);",
          f"void {N}_param_range(int index, double *minimum, double *maximum, double *value);",
          "/* in[j][k]: input j (volts) at sample k; out[j][k]: output j of the step ending at sample k */",
          f"void {N}_process({N}_state *s, const float *const *in, float *const *out, int nframes);",
          f"void {N}_process_double({N}_state *s, const double *const *in, double *const *out, int nframes);",
          "/* steps that failed even in sub-steps (held at the last good state) since the last reset */",
          f"long {N}_failures(const {N}_state *s);",
          f"#if {up}_RECORD_ENERGY",
          "/* the last step's stored energy [J], dissipated power [W], balance residual [J]; the largest |residual| */",
          f"void {N}_energy(const {N}_state *s, double *H, double *P_diss, double *balance, double *max_balance);",
          "#endif", "", "#ifdef __cplusplus", "}", "#endif", f"#endif /* {up}_H */", ""]

    out_lines = []
    for j, o in enumerate(spec.outputs):
        dst = f"        if (out && out[{j}]) out[{j}][src + k] = "
        if o.kind == "e":
            terms = "".join(f" + A->E[k * {NE} + {i}] * {_num(c)}" for i, c in o.coefs if c != 0.0)
            out_lines.append(f"{dst}0.0{terms};")
        elif o.kind == "x":
            out_lines.append(f"{dst}A->X[(k + 1) * {NX} + {o.index}];")
        elif o.kind == "y":
            out_lines.append(f"{dst}A->Y[k * {MU} + {o.index}];")
        elif o.kind == "u":
            out_lines.append(f"{dst}A->U[(k + 1) * {NC} + {o.index}];")
        else:
            raise ExportError(f"C export: output kind {o.kind!r}")
    fill = [f"        row[{c}] = {_num(v)};" for c, v in sorted(spec.fixed.items())]
    fill += [f"        row[{c}] = {N}_wave{c}((double)(s->samples + k) * s->h);" for c in sorted(spec.waves)]
    fill += [f"        row[{c}] = in && in[{j}] ? in[{j}][src + k] : 0.0;" for j, c in enumerate(spec.inputs)]
    fill += [f"        row[{c.column}] = idx == nframes ? s->target[{j}] : s->ctl[{j}] + (s->target[{j}] - s->ctl[{j}])"
             f" * ((double)idx / (double)nframes);" for j, c in enumerate(spec.controls)]
    names = ", ".join(f'"{n}"' for n in ctl_names) or '""'
    C = head + [f'#include "{N}.h"', "#include <math.h>", "#include <string.h>", "",
                HELPERS, "", body, ""] + [waveform_function(f"{N}_wave{c}", *spec.waves[c]) + "\n"
                                          for c in sorted(spec.waves)] + [
                f"static const double {N}_p0[{P}] = {_array(spec.p)};",
                f"static const double {N}_xs0[{NX}] = {_array(spec.xs)};",
                f"static const double {N}_x0[{NX}] = {_array(spec.x0)};",
                f"static const double {N}_v0[{M}] = {_array(list(spec.v0) + [0.0] * (M - len(spec.v0)))};",
                f"static const int {N}_incr[{NX}] = {{{', '.join('1' if b else '0' for b in spec.increments) or '0'}}};",
                f"static const double {N}_ctl0[{NCTL}] = {_array([c.default for c in spec.controls])};",
                f"static const double {N}_ctl_lo[{NCTL}] = {_array([c.minimum for c in spec.controls])};",
                f"static const double {N}_ctl_hi[{NCTL}] = {_array([c.maximum for c in spec.controls])};",
                f"static const char *const {N}_ctl_names[{NCTL}] = {{{names}}};", ""]
    if spec.dc is not None:
        C += [dc_source(spec.dc, N), ""]
    C += DRIVER.format(N=N, UP=up, NX=NX, M=M, MU=MU, NE=NE, NC=NC, B=B, NCTL=NCTL, NXR=spec.n_x,
                        NCTLR=len(spec.controls), LEVELS=MAX_LEVELS, P=P, NI=len(spec.inputs),
                        NO=len(spec.outputs), NIB=max(len(spec.inputs), 1), NOB=max(len(spec.outputs), 1),
                        TOL=_num(spec.tol), MAXIT=int(spec.maxit),
                        RUN_REC=call(rec, "A->"), RUN_FAST=call(fast, "A->"),
                        FILL="\n".join(fill) or "        (void)row;", OUTS="\n".join(out_lines) or "",
                        DC_RESET=_dc_reset(spec), DC_FIRST=_dc_first(spec),
                        DC_POINT=_dc_point(spec),
                        ).split("\n")
    return "\n".join(h), "\n".join(C) + "\n"
