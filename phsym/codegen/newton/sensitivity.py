"""Forward sensitivities of the simulated outputs: the Newton loop, differentiated.

For grey-box fitting (:class:`phsym.identify.ParameterEstimator`) the outputs
of every step and their exact derivatives with respect to free parameters
and initial states are needed.  Differentiating the discrete equations
``F(v; x_k, p) = 0`` of :mod:`phsym.codegen.steps` gives, with
``S_x = dx_k/dtheta``,

    F_v S_v = -(F_p + F_x S_x),     S_x <- S_x + S_v[:n_x],
    dy_k/dtheta = g_v S_v + g_x S_x + g_p,

so the sensitivities are exact derivatives of the simulated outputs (up to
the Newton tolerance).  ``F_v`` is the Newton Jacobian at the converged
step; the other matrices are sympy derivatives of the same residual
expressions, written as the functions ``sens`` and ``outs`` of a module made
by :func:`phsym.codegen.newton.module.module_source`: the sensitivity loop is the
simulator's loop with the differentiation added.

Columns of the sensitivity beyond the free parameters are initial-state
unknowns: their ``F_p``/``g_p`` part is zero and the caller seeds ``S_x``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np
import sympy as sp

from ...common.names import NameTable
from ...common.schemes import get_scheme
from ...errors import IdentificationError, StructureError
from ...netlist.params import expand_derived
from ...structure.probes import probe_map, state_label, state_quantities
from ..cache import cache_key, load_module
from ..printing import block
from ..steps import step_equations
from .module import PUBLIC, SensitivityCode, module_source, parameter_array

__all__ = ["SensitivityStep", "build_sensitivity"]


@dataclass
class SensitivityStep:
    """A generated sensitivity module and its layout.

    Attributes
    ----------
    module : module
        Generated module (``resjac``, ``sens``, ``outs``, ``run``).
    key : str
        Cache key of the module.
    parameters : list of sympy.Symbol
        Order of the runtime parameter array ``p`` (every netlist parameter).
    free : list of str
        Names of the free parameters (columns of ``F_p`` and ``g_p``).
    outputs : list of str
        Output labels (rows of ``g``).
    unknowns : list of str
        Newton unknowns of a step.
    scheme : str
        Canonical scheme name.
    n_x, n_v, n_u, n_e : int
        States, unknowns, ports, effort-vector size.
    """

    module: object
    key: str
    parameters: List[sp.Symbol]
    free: List[str]
    outputs: List[str]
    unknowns: List[str]
    scheme: str
    n_x: int
    n_v: int
    n_u: int
    n_e: int

    def run(self, x0: np.ndarray, S0: np.ndarray, U: np.ndarray, p: np.ndarray, xs: np.ndarray, h: float,
            tol: float = 1e-12, maxit: int = 200,
            want: bool = True) -> Tuple[np.ndarray, Optional[np.ndarray], int]:
        """Run the loop with sensitivities.

        Parameters
        ----------
        x0 : ndarray
            Initial state.
        S0 : ndarray (n_x, n_s)
            Its sensitivity (``n_s >= n_free``: extra columns for initial-state unknowns).
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        p, xs : ndarray
            Parameter array and state scales.
        h, tol : float
            Step and Newton tolerance.
        maxit : int
            Newton iteration cap.
        want : bool
            Compute the sensitivities (else outputs only).

        Returns
        -------
        Y : ndarray (N, n_y)
            Step outputs.
        DY : ndarray (N, n_y, n_s) or None
            Their derivatives.
        failed : int
            First step whose Newton iteration failed, or -1.
        """
        N = U.shape[0] - 1
        ny, nf, ns = len(self.outputs), len(self.free), S0.shape[1]
        m, mu, me = max(self.n_v, 1), max(self.n_u, 1), max(self.n_e, 1)
        Yo = np.zeros((N, ny))
        DY = np.zeros((N, ny, ns)) if want else np.zeros((1, 1, 1))
        x = np.array(x0, dtype=float)
        Sx = np.ascontiguousarray(S0, dtype=float).copy()
        info = np.zeros(4, dtype=np.int64)
        z = np.zeros
        sim = (z((N + 1, self.n_x)), z((N, self.n_u)), z(N + 1), z(N), z(N), z(N), z(N), z(N, np.int64), z(N, np.int64),
               z((1, me)), False, info)
        # Jm square: sensitivity modules factor the whole Jacobian (no Schur columns, phsym.codegen.newton.schur)
        work = (z(m), z((m, m)), z(m, np.int64), z(m), z(m), np.ones(m), z(mu), z(me), z(mu), z(m), z(1))
        sens = (Sx, Yo, DY, bool(want), z((m, max(self.n_x, 1))), z((m, max(nf, 1))), z((m, max(ns, 1))),
                z((max(ny, 1), m)), z((max(ny, 1), max(self.n_x, 1))), z((max(ny, 1), max(nf, 1))), z(max(ny, 1)))
        bad = self.module.run(x, z(m), np.ascontiguousarray(U, dtype=float), np.asarray(p, float),
                              np.asarray(xs, float), float(h), 0, N, float(tol), int(maxit), False, *sim, *work, *sens)
        return Yo, (DY if want else None), int(bad)


def _outputs(S, labels: Sequence[str], eq, psub) -> List[sp.Expr]:
    """Symbolic step value of each signal label (:func:`phsym.structure.probes.probe_map`), or of a
    state (``x_K1``, ``x(K1)``, ``q(C1)``: :func:`phsym.structure.probes.state_label`): the state at
    the point of the step the scheme evaluates (``eq.xsub``), as grid samples are compared
    (:func:`phsym.identify.data.step_targets`)."""
    states = {str(x): x for x in S.states}
    quantity = state_quantities(S.topology, S.storages)
    out = []
    for label in labels:
        try:
            name = state_label(label, states, quantity.get)
        except StructureError as exc:
            raise IdentificationError(f"output {exc.message} ({exc.hint})") from None
        if name is not None:
            out.append(eq.xsub[states[name]])
            continue
        try:
            combo = probe_map(S, label)
        except StructureError as exc:
            raise IdentificationError(f"output {exc.message}; or a state: {', '.join(map(str, S.states))} "
                                      "(also as x(ELEMENT) or by its quantity: q(C1), phi(L1), p(M1))") from None
        out.append(sp.Add(*[sp.sympify(c).xreplace(psub) * (eq.e[i] if kind == "e" else eq.Je(i))
                            for (kind, i), c in combo.items()]))
    return out


def build_sensitivity(model, free: Sequence[str], outputs: Sequence[str], scheme: str,
                      stiff: str = "scheme") -> SensitivityStep:
    """Generate (or load from the cache) the sensitivity module.

    Parameters
    ----------
    model : phsym.Model
        The model.
    free : sequence of str
        Names of the parameters to differentiate with respect to.
    outputs : sequence of str
        Output labels: ``y(SOURCE)`` port outputs, probe labels or state names (``x_K1``).
    scheme : str
        ``backward_euler``, ``midpoint`` or ``discrete_gradient``.
    stiff : str
        How stiff storages step: ``"backward_euler"`` or ``"scheme"`` (as
        the simulator at the data's step: :func:`phsym.common.schemes.stiff_rule`).

    Returns
    -------
    SensitivityStep
    """
    scheme = get_scheme(scheme, ("discrete_gradient", "midpoint", "backward_euler"), IdentificationError).name
    S = model.structure
    params = [p.symbol for p in model.netlist.parameters.values()]
    table = NameTable(((n, p.symbol) for n, p in model.netlist.parameters.items()), what="parameter")
    free_syms = [table.lookup(f, IdentificationError) for f in free]
    P, to_p = parameter_array(params)
    # derived parameters that are not free follow their definitions (chain rule)
    derived = expand_derived(model.netlist.parameters, keep=free)
    psub = {s: sp.sympify(derived.get(s, s)).xreplace(to_p) for s in params}
    eq = step_equations(S, scheme, psub, stiff=stiff)
    ys = _outputs(S, outputs, eq, psub)
    F, V, X = eq.F, eq.V, eq.X
    Pf = [to_p[s] for s in free_syms]
    nv, nx, ny, nf = len(V), S.n_x, len(ys), len(Pf)

    def jac(name, exprs, wrt):
        return [(f"{name}[{r}, {c}]", dv) for r in range(len(exprs)) for c in range(len(wrt))
                if (dv := sp.diff(exprs[r], wrt[c])) != 0]
    sizes = {"x": nx, "xs": nx, "v": nv, "ub": S.n_u, "p": len(P)}
    funcs: List[str] = [PUBLIC, "def sens(x, v, ub, p, xs, h, Fx, Fp):", "    Fx[:, :] = 0.0", "    Fp[:, :] = 0.0"]
    fx, fp = jac("Fx", F, X), jac("Fp", F, Pf)
    if fx or fp:
        funcs += block(fx + fp, sizes)
    funcs += ["", PUBLIC, "def outs(x, v, ub, p, xs, h, y, Gv, Gx, Gp):", "    Gv[:, :] = 0.0", "    Gx[:, :] = 0.0",
              "    Gp[:, :] = 0.0"]
    funcs += block([(f"y[{i}]", e) for i, e in enumerate(ys)] + jac("Gv", ys, V) + jac("Gx", ys, X)
                   + jac("Gp", ys, Pf), sizes)
    legend = ["Free parameters (columns of Fp, Gp):"] + [f"    {f} = p[{params.index(s)}]"
                                                        for f, s in zip(free, free_syms)]
    legend += ["Outputs yo[i] (rows of Gv, Gx, Gp):"] + [f"    yo[{i}] = {lab}" for i, lab in enumerate(outputs)]
    body = module_source(eq, params, scheme, model.netlist.file or model.name,
                         SensitivityCode(funcs, ny, nf, legend, _sensitivities(S.n_x, len(eq.V), ny, nf)))
    key = cache_key(body, "sensitivity", scheme)
    mod = load_module(body, key, loop=True)
    return SensitivityStep(mod, key, params, list(free), list(outputs), eq.names, scheme, nx, nv, S.n_u, S.size)


def _sensitivities(nx: int, nv: int, ny: int, nf: int) -> List[str]:
    """Differentiate the converged step (inside ``for k``, 8 spaces)."""
    a, b = " " * 8, " " * 12
    L = [f"{a}outs(x, v, ub, p, xs, h, yo, Gv, Gx, Gp)",
         f"{a}for r in range({ny}):",
         f"{a}    Yo[k, r] = yo[r]",
         f"{a}if want:"]
    if nv:
        L += [f"{b}resjac(x, v, ub, p, xs, h, F, Jm)       # Jacobian at the converged step"]
        if nv > 1:
            L += [f"{b}if not lu_factor(Jm, piv):", f"{b}    info[0] = k", f"{b}    info[1] = 3",
                  f"{b}    info[2] = 0", f"{b}    return k"]
        L += [f"{b}sens(x, v, ub, p, xs, h, Fx, Fp)",
              f"{b}for c in range(Sx.shape[1]):",
              f"{b}    for i in range({nv}):",
              f"{b}        s = Fp[i, c] if c < {nf} else 0.0",
              f"{b}        for j in range({nx}):",
              f"{b}            s += Fx[i, j] * Sx[j, c]",
              f"{b}        d[i] = -s"]
        L += ([f"{b}    d[0] = d[0] / Jm[0, 0]"] if nv == 1 else [f"{b}    lu_solve(Jm, piv, d)"])
        L += [f"{b}    for i in range({nv}):", f"{b}        Sv[i, c] = d[i]"]
    L += [f"{b}for r in range({ny}):",
          f"{b}    for c in range(Sx.shape[1]):",
          f"{b}        s = Gp[r, c] if c < {nf} else 0.0"]
    if nv:
        L += [f"{b}        for i in range({nv}):", f"{b}            s += Gv[r, i] * Sv[i, c]"]
    L += [f"{b}        for j in range({nx}):",
          f"{b}            s += Gx[r, j] * Sx[j, c]",
          f"{b}        DY[k, r, c] = s"]
    if nv:
        L += [f"{b}for j in range({nx}):", f"{b}    for c in range(Sx.shape[1]):",
              f"{b}        Sx[j, c] += Sv[j, c]"]
    return L
