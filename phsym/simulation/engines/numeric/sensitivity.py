"""Forward sensitivities of the numeric engine's converged steps (grey-box fits on large circuits).

The counterpart of :mod:`phsym.codegen.newton.sensitivity` for the numeric
engine.  A step ``k -> k + 1`` solves ``F(z; K_k, p) = 0`` for its unknowns
``z`` (:mod:`.layout`), with the known values ``K_k = [x_k, x_scale, u, e_k, 1]``
(``e_k``: the carried efforts of the storages solved through their effort).
Differentiating the converged step with respect to a parameter or an
initial state ``theta``,

    F_z dz/dtheta = -(F_K dK/dtheta + F_p dp/dtheta),
    x_{k+1} = x_k + dx(z, K_k, p),   e_{k+1} = e_k + z[efforts],

and each output is an entry of the step vector ``[potentials, branch
currents, inputs]`` (or a state), so its derivative follows from ``dz`` and
``dK`` the same way.  ``F_z`` is the Newton Jacobian at the converged ``z``,
factored by the engine's own sparse LU (:mod:`.sparse`) with the column
order of the run: one extra numeric factorisation per step, because the
Newton's last factor is the Jacobian at the iterate *before* convergence
(reusing it would leave an error of the order of Newton's tolerance in
every sensitivity).

The partial derivatives ``F_K dK``, ``F_p`` (and those of ``dx`` and the
branch currents) are directional derivatives of the compiled residual
(:func:`.newton.evaluate`, every kernel at once) by the fourth-order
central stencil (steps of ``1e-4`` of each quantity's scale): exact up to
rounding where the residual is at most cubic in what moves (the stamps'
dependence on states and efforts), about ``1e-10`` relative elsewhere (a
conductance ``1/R``, an elastance ``1/C``, the law kernels).  ``F_p`` uses the circuit's
numbers at ``p +- t`` (the parameter sets' :class:`~.step.StepSystem`, built
once per run), so a parameter reaches every law, placeholder and stamp it
enters without a derivative written per element kind.

A step the engine took in sub-steps (:mod:`phsym.simulation.engines.substeps`)
is differentiated through each sub-step as it was taken (the loop keeps each
sub-step's size, inputs, start and unknowns), its outputs as their time
average, as the engine records them.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import sympy as sp
from numba import njit

from ....common.schemes import get_scheme
from ....errors import IdentificationError, SimulationError, StructureError
from ....structure.probes import state_label
from .kernels_py import effort_of_state
from .loop import NumericLoop, _triplets_csr, net_arrays
from .newton import csr_add, evaluate, factor
from .operating import frozen_start
from .parts import NumericParts
from .planner import NumericPlanner
from .sparse import lu_solve
from .step import StepSystem
from .stepping import known

__all__ = ["NumericSensitivity", "STENCIL", "REL_STEP"]

#: Fourth-order central difference: ``f'(0) ~ sum(w f(m t)) / t``.
STENCIL = ((-2.0, 1.0 / 12.0), (-1.0, -8.0 / 12.0), (1.0, 8.0 / 12.0), (2.0, -1.0 / 12.0))

#: Size of the stencil's steps relative to each quantity's scale.
REL_STEP = 1e-4

#: ``values_of({name: value})``: the parameter values (every symbol) with these free parameters.
ValuesOf = Callable[[Mapping[str, float]], Mapping[sp.Symbol, float]]


@njit(cache=True, error_model="numpy")
def step_numbers(z, K, net, lim, post, wold, IN, INa, OUT, F, Jx, out):
    """``out = [F, dx, Ib]`` at ``(z, K)``: the residual, the states' increments and the branch currents
    (``post``: the CSR ``(DZ, DO, BZ, BO, BK)``; no junction limiting)."""
    evaluate(z, K, net, lim, wold, bool(False), IN, INa, OUT, F, Jx)
    DZ, DO, BZ, BO, BK = post
    nz, nx = F.shape[0], DZ[0].shape[0] - 1
    out[:] = 0.0
    out[:nz] = F
    dx = out[nz:nz + nx]
    csr_add(dx, DZ[0], DZ[1], DZ[2], z, 1.0)
    csr_add(dx, DO[0], DO[1], DO[2], OUT, 1.0)
    Ib = out[nz + nx:]
    csr_add(Ib, BZ[0], BZ[1], BZ[2], z, 1.0)
    csr_add(Ib, BO[0], BO[1], BO[2], OUT, 1.0)
    csr_add(Ib, BK[0], BK[1], BK[2], K, 1.0)


class _StepNumbers:
    """The numbers of one parameter set's step at ``h``: residual, state increments, branch currents."""

    def __init__(self, S: StepSystem, xs: np.ndarray, h: float, base: Optional["_StepNumbers"] = None):
        self.S = S
        if base is None:
            self.net, self.lim, post = NumericLoop(S, xs, 1e-12, 1, False)._arrays(h)
            self.post = post[:5]
        else:       # a neighbouring parameter set: its numbers, the base's junctions (never limited here)
            self.net, self.lim = net_arrays(S, h), base.lim
            self.post = tuple(_triplets_csr(T, h) for T in (S.DZ, S.DO, S.BZ, S.BO, S.BK))
        G = S.groups
        nin, nout, nz = max(G.n_in, 1), max(G.n_out, 1), S.L.n_z
        self._w = (np.zeros(nin), np.zeros(nin), np.zeros(nout), np.zeros(nz), np.zeros(S.J.nnz))
        self._wold = np.zeros(self.lim[6].shape[0] - 1)
        self.nz, self.nx = nz, S.circuit.n_x
        self._n = nz + S.circuit.n_x + len(S.circuit.branches)

    def residual(self, z: np.ndarray, K: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(F, Jx)`` at ``z`` (no junction limiting): copies."""
        IN, INa, OUT, F, Jx = self._w
        evaluate(z, K, self.net, self.lim, self._wold, False, IN, INa, OUT, F, Jx)
        return F.copy(), Jx.copy()

    def all(self, z: np.ndarray, K: np.ndarray) -> np.ndarray:
        """``[F, dx, Ib]`` (:func:`step_numbers`)."""
        out = np.empty(self._n)
        step_numbers(z, K, self.net, self.lim, self.post, self._wold, *self._w, out)
        return out


def _step_of(direction: np.ndarray, scale: np.ndarray) -> float:
    """The stencil's step along ``direction``: ``REL_STEP`` of the scale of the quantity it moves most."""
    r = np.max(np.abs(direction) / scale, initial=0.0)
    return REL_STEP / r if r > 0 else 0.0


def _stencil(f: Callable[[float], np.ndarray], t: float) -> np.ndarray:
    return sum(w * f(m * t) for m, w in STENCIL) / t


class _RecordingLoop(NumericLoop):
    """The engine's loop, keeping each sub-step it takes: ``record[k]`` lists the sub-steps of step
    ``k`` in time order as ``(h_s, u_start, u_end, x_start, efforts_start, z)``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.record: Dict[int, list] = {}

    def _subdivide(self, compiled, A, U, x, cr, info, k, h, rec) -> bool:
        subs: list = []

        def one_by_one(xx, UU, hh, k0, k1, AA, flag):      # one compiled call per sub-step: its unknowns
            for j in range(k0, k1):
                x_s, se_s = xx.copy(), cr["se"].copy()
                bad = compiled(xx, UU, hh, j, j + 1, AA, flag)
                if bad >= 0:
                    return bad
                subs.append((hh, UU[j].copy(), UU[j + 1].copy(), x_s, se_s, cr["z"].copy()))
            return -1
        ok = super()._subdivide(one_by_one, A, U, x, cr, info, k, h, rec)
        if ok:
            self.record[k] = subs
        return ok


class NumericSensitivity:
    """Outputs of the numeric engine's steps and their derivatives (see the module docstring).

    Parameters
    ----------
    model : Model
        The model.
    free : sequence of str
        Free parameter names (netlist spelling).
    outputs : sequence of str
        Port outputs ``y(SOURCE)``, probes ``v(node)``, ``v(a,b)``, ``i(R1)``, ``v(R1)`` or states.
    scheme : str
        ``backward_euler``, ``midpoint`` or ``discrete_gradient``.
    stiff : str
        The resolved stiff rule (``"backward_euler"`` or ``"scheme"``).

    Attributes
    ----------
    reason : str or None
        Why the last :meth:`run` failed.
    subdivided : dict of int to int
        Steps of the last :meth:`run` taken in sub-steps, and how many.
    """

    engine = "numeric"

    def __init__(self, model, free: Sequence[str], outputs: Sequence[str], scheme: str, stiff: str):
        c = model.circuit
        if model.controls:
            raise IdentificationError("the numeric engine does not drive control parameters "
                                      f"({', '.join(model.controls)}): use engine='generated'")
        obstacles = c.numeric_obstacles()
        if obstacles:
            raise IdentificationError(f"the numeric engine cannot step this model ({obstacles}): "
                                      "use engine='generated'")
        self.model, self.circuit = model, c
        self.free, self.outputs = list(free), list(outputs)
        self.scheme = get_scheme(scheme).name
        self.stiff = stiff
        self.parts = NumericParts(c)
        self.n_x = c.n_x
        self.reason: Optional[str] = None
        self.subdivided: Dict[int, int] = {}
        states = {s: i for i, s in enumerate(c.states)}
        self._labels: List[Tuple[str, object]] = []
        for lab in self.outputs:
            try:        # x_K1, x(K1) or by quantity (q(C1)), as the generated loop's outputs
                name = state_label(lab, c.states)
            except StructureError as exc:
                raise IdentificationError(f"output {exc.message} ({exc.hint})") from None
            self._labels.append(("x", states[name]) if name is not None else ("e", lab))

    # ------------------------------------------------------------------ pieces
    def scales(self, values: Mapping[sp.Symbol, float]) -> np.ndarray:
        """State scales at ``values`` (the numeric engine's)."""
        return self.parts.scales(values)

    def initial(self, values: Mapping[sp.Symbol, float]) -> np.ndarray:
        """The state of the netlist's ICs (zero elsewhere)."""
        return self.parts.initial(values)[0]

    def _vectors(self, n_nodes: int) -> np.ndarray:
        """Each signal output's vector on the step vector ``[potentials, branch currents, inputs]``."""
        out = []
        for kind, lab in self._labels:
            if kind == "e":
                try:
                    out.append(self.parts.probe(lab, n_nodes))
                except SimulationError as exc:
                    raise IdentificationError(f"output {exc}; or a state: {', '.join(self.circuit.states)}"
                                              ) from None
            else:
                out.append(None)
        return out

    # ------------------------------------------------------------------ run
    def run(self, values_of: ValuesOf, pvals: Mapping[str, float], x0: np.ndarray, S0: np.ndarray, U: np.ndarray,
            xs: np.ndarray, h: float, tol: float = 1e-12, maxit: int = 200,
            want: bool = True) -> Tuple[np.ndarray, Optional[np.ndarray], int]:
        """Run the numeric engine and differentiate its steps.

        Parameters
        ----------
        values_of : callable
            ``values_of({name: value})``: every parameter's value with these free parameters.
        pvals : mapping of str to float
            The free parameters.
        x0, S0, U, xs, h, tol, maxit, want
            As :meth:`phsym.codegen.newton.sensitivity.SensitivityStep.run`: the initial state and
            its sensitivity ``(n_x, n_s)`` (columns beyond the free parameters: initial-state
            unknowns), the grid inputs, the state scales, the step, Newton's tolerance and
            iteration cap, and whether to differentiate.

        Returns
        -------
        Y, DY : ndarray
            Step outputs ``(N, n_y)`` and their derivatives ``(N, n_y, n_s)`` (``None`` unless ``want``).
        failed : int
            First step that failed (Newton, also in sub-steps), or -1.
        """
        self.reason = None
        values = values_of(pvals)
        c = self.circuit
        S = StepSystem(c, values, self.scheme, self.stiff)
        loop = _RecordingLoop(S, xs, tol, maxit, False, stiff=self.stiff if c.stiff else None)
        U = np.ascontiguousarray(U, dtype=float)
        N = U.shape[0] - 1
        start = _frozen(c, values, U[0], x0, xs)
        cr = loop.carry(start)
        L = S.L
        Z, SE = np.zeros((N, L.n_z)), np.zeros((N + 1, L.n_effort))
        SE[0] = cr["se"]

        def grab(done, total):
            Z[done - 1] = cr["z"]
            SE[done] = cr["se"]
        x = np.array(x0, dtype=float)
        try:
            A, _ = loop.run(x, U, h, True, grab if want else None, 1 if want else 0, carry=cr)
        except SimulationError as exc:
            self.reason = str(exc)
            return np.zeros((N, len(self.outputs))), None, int(exc.step if exc.step is not None else 0)
        self.subdivided = dict(loop.subdivided)
        vec = self._vectors(L.n_nodes)
        X, E = A.X, A.E
        mid = self.scheme != "backward_euler"
        Y = np.zeros((N, len(self.outputs)))
        for r, ((kind, i), v) in enumerate(zip(self._labels, vec)):
            Y[:, r] = (0.5 * (X[:-1, i] + X[1:, i]) if mid else X[1:, i]) if kind == "x" else E @ v
        if not want:
            return Y, None, -1
        DY = self._differentiate(values_of, pvals, S, loop, xs, h, U, X, Z, SE, S0, vec)
        return Y, DY, -1

    def _differentiate(self, values_of, pvals, S, loop, xs, h, U, X, Z, SE, S0, vec):
        """The sensitivities of every step's outputs (N, n_y, n_s), step by step (module docstring); a
        step taken in sub-steps through each of them, its outputs their time average (as the engine's)."""
        L, c = S.L, self.circuit
        N, nf, ns = Z.shape[0], len(self.free), S0.shape[1]
        # the free parameters' neighbouring parameter sets, built once per run; their numbers per step size
        pert = []
        for f in self.free:
            p = float(pvals[f])
            t = REL_STEP * (abs(p) or 1.0)
            pert.append((t, [StepSystem(c, values_of({**pvals, f: p + m * t}), self.scheme, self.stiff)
                             for m, _ in STENCIL]))
        by_h: Dict[float, tuple] = {}

        def numbers(hh):
            if hh not in by_h:
                base = _StepNumbers(S, xs, hh)
                by_h[hh] = (base, [(t, [_StepNumbers(Sm, xs, hh, base) for Sm in sys_]) for t, sys_ in pert])
            return by_h[hh]
        effort_z = np.zeros(L.n_effort, dtype=np.int64)
        for i, m in L.effort_index.items():
            effort_z[m] = L.z_state(i)
        work = dict(loop=loop, lu=loop._lu(), fresh=True, y=np.zeros(L.n_z), K=np.zeros(L.n_k),
                    ub=np.zeros(len(c.ports)), effort_z=effort_z)
        mid = self.scheme != "backward_euler"
        Sx = np.ascontiguousarray(S0, dtype=float).copy()
        Se = self._effort_sensitivity(values_of, pvals, X[0], Sx, xs, L, nf)
        DY = np.zeros((N, len(self.outputs), ns))
        signals = [r for r, (kind, _) in enumerate(self._labels) if kind == "e"]
        V = np.array([vec[r] for r in signals]).reshape(len(signals), -1)
        for k in range(N):
            subs = getattr(loop, "record", {}).get(k)
            if subs is None:
                subs = [(h, U[k], U[k + 1], X[k], SE[k], Z[k])]
            Sx0 = Sx
            for hh, u0, u1, x_s, se_s, z in subs:
                Sx, Se, dE = self._substep(numbers(hh), work, 0.5 * (u0 + u1) if mid else u1, x_s, se_s, z, xs,
                                           Sx, Se, nf, ns, L, c)
                if signals:
                    DY[k, signals] += (hh / h) * (V @ dE)
            for r, (kind, i) in enumerate(self._labels):
                if kind == "x":
                    DY[k, r] = 0.5 * (Sx0[i] + Sx[i]) if mid else Sx[i]
        return DY

    def _substep(self, nums, work, ub, x, se, z, xs, Sx, Se, nf, ns, L, c):
        """One converged (sub-)step: the new state and effort sensitivities and the step vector's
        ``(n_e, n_s)``."""
        base, pert = nums
        nx, nz, nn = c.n_x, L.n_z, L.n_nodes
        lu, K, y = work["lu"], work["K"], work["y"]
        work["ub"][:] = ub
        known(K, x, xs, work["ub"], se)
        _, Jx = base.residual(z, K)
        st, col = factor(lu, Jx, work["fresh"])
        if st == 5:         # the factors need more room
            lu = work["lu"] = work["loop"]._lu(grow=True)
            st, col = factor(lu, Jx, True)
        if st != 0:
            raise IdentificationError(f"singular Newton Jacobian at a converged step (unknown "
                                      f"{L.names[col] if col >= 0 else '?'}): no sensitivities")
        work["fresh"] = False
        zscale = np.abs(z) + 1.0
        st_idx = np.flatnonzero(L.kinds == 1)
        zscale[st_idx] = np.abs(z[st_idx]) + xs[st_idx - nn] + np.abs(x[st_idx - nn])
        kscale = np.abs(K) + 1.0
        kscale[:nx] += xs
        k_e = 2 * nx + len(c.ports)
        Sx1, Se1 = Sx.copy(), Se.copy()
        dE = np.zeros((nn + len(c.branches) + len(c.ports), ns))
        for col_ in range(ns):
            dK = np.zeros(L.n_k)
            dK[:nx] = Sx[:, col_]
            dK[k_e:k_e + L.n_effort] = Se[:, col_]
            part = np.zeros(nz + nx + len(c.branches))       # [F, dx, Ib] moved by p (and by K below)
            if col_ < nf:
                tp, nums_p = pert[col_]
                part += sum(w * nm.all(z, K) for (_, w), nm in zip(STENCIL, nums_p)) / tp
            tk = _step_of(dK, kscale)
            if tk > 0:
                part[:nz] += _stencil(lambda t, dK=dK: base.all(z, K + t * dK)[:nz], tk)
            d = -part[:nz]
            lu_solve(nz, lu[2], lu[3], lu[4], lu[5], lu[6], lu[7], lu[8], lu[9], d, y)
            tz = _step_of(np.concatenate([d, dK]), np.concatenate([zscale, kscale]))
            rest = part[nz:].copy()
            if tz > 0:
                rest += _stencil(lambda t, d=d, dK=dK: base.all(z + t * d, K + t * dK)[nz:], tz)
            Sx1[:, col_] += rest[:nx]
            Se1[:, col_] += d[work["effort_z"]]
            dE[:nn, col_] = d[:nn]
            dE[nn:nn + len(c.branches), col_] = rest[nx:]
        return Sx1, Se1, dE

    def _effort_sensitivity(self, values_of, pvals, x0, Sx0, xs, L, nf) -> np.ndarray:
        """d e_0 / dtheta of the carried efforts: each is ``e(x_0)`` of its storage (the run's start,
        :func:`.operating.frozen_start`)."""
        out = np.zeros((L.n_effort, Sx0.shape[1]))
        if not L.n_effort:
            return out
        c = self.circuit
        values = values_of(pvals)
        for s in c.storages:
            if not s.by_effort:
                continue
            i = s.states[0]
            m = L.effort_index[i]
            xi = float(x0[i])
            tx = REL_STEP * (abs(xi) + xs[i])
            dedx = float(_stencil(lambda t, s=s, xi=xi: np.array([effort_of_state(s, xi + t, values)]), tx)[0])
            out[m] = dedx * Sx0[i]
            for j, f in enumerate(self.free[:nf]):
                p = float(pvals[f])
                tp = REL_STEP * (abs(p) or 1.0)
                out[m, j] += float(_stencil(lambda t, s=s, xi=xi, f=f, p=p: np.array([effort_of_state(
                    s, xi, values_of({**pvals, f: p + t}))]), tp)[0])
        return out


def _frozen(c, values, u0, x0, xs) -> Dict[str, float]:
    """Newton's start of the first step (as the planner's: the potentials the state implies)."""
    p = frozen_start(c, values, u0, x0, xs)
    return NumericPlanner._start_of(p) if p is not None else {}
