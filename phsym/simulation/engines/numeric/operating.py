"""The DC operating point with the numeric engine: Newton, gmin stepping, source stepping.

The same compiled Newton as a step (:func:`.newton.solve`: junction limits,
sparse LU) on the equations of :class:`~.dc.DCSystem`; when it fails from the
start, SPICE's homotopies as in :mod:`phsym.simulation.dcsolve`: a
conductance ``g = 1e-2, 1e-3, ... 1e-12, 0`` across every nonlinear element,
each stage from the last, then the sources ramped from zero.

:func:`dc_point` returns the states, the unknowns (potentials, currents) and
the efforts of the storages solved through their effort; with every state
held it gives the potentials and currents a given state implies
(:func:`frozen_start`): Newton's start for the first step of a run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Optional, Sequence, Tuple

import numpy as np

from ....errors import SimulationError
from .dc import DCSystem
from .kernels_py import call
from .layout import STATE
from .engine import entry
from .ordering import PIVOT_TOL, column_order

if TYPE_CHECKING:       # a circuit described by numbers is solved without sympy
    import sympy as sp
    from ....structure.circuit.data import CircuitData


__all__ = ["DCPoint", "dc_point", "frozen_start", "GMIN_START"]

#: gmin stepping starts here and divides by 10 per stage (as :mod:`phsym.simulation.dcsolve`)
GMIN_START = 1e-2
#: The smallest node shunt a DC point may keep when the circuit leaves a node floating (SPICE's gshunt).
SHUNT_END = 1e-12


@dataclass
class DCPoint:
    """A DC solution.

    Attributes
    ----------
    x : ndarray
        The states.
    z : ndarray
        The unknowns of :class:`~.dc.DCSystem` (node potentials first).
    efforts : ndarray
        The efforts of the states solved through their effort (layout order).
    method : str
        ``newton``, ``gmin stepping`` or ``source stepping``.
    system : DCSystem
        The equations.
    K : ndarray
        Their known values (the inputs among them).
    """

    x: np.ndarray
    z: np.ndarray
    efforts: np.ndarray
    method: str
    system: DCSystem
    K: Optional[np.ndarray] = None

    def branch_currents(self) -> np.ndarray:
        """Each branch's current at the point (receiver convention, :attr:`CircuitData.branches` order)."""
        return self.system.branch_currents(self.z, self.K)

    def unknowns(self) -> dict:
        """Value by unknown name (``v(node)``, ``i(V1)``...), the states' slots left out."""
        L = self.system.L
        return {n: float(v) for n, v, k in zip(L.names, self.z, L.kinds) if k != STATE}


class _Solver:
    def __init__(self, S: DCSystem, xs: np.ndarray, u0: np.ndarray):
        self.S = S
        L = S.L
        c = S.circuit
        self.K0 = np.zeros(L.n_k)
        self.K0[:c.n_x] = S.x_fix
        self.K0[c.n_x:2 * c.n_x] = xs
        self.u0 = np.asarray(u0, dtype=float)
        self.K0[L.k_one] = 1.0
        S.fill_controls(self.K0)
        self.sc = np.ones(L.n_z)
        for i in range(c.n_x):
            if i not in L.effort_index and i not in S.held:
                self.sc[L.z_state(i)] = xs[i]
        table, P = S.groups.arrays()
        self.table, self.P = table, P
        Rp = S.R.pattern()
        self.Rp = Rp
        p = S.J
        n, nnz = L.n_z, p.nnz
        self.q = column_order(p)
        cap = 4 * nnz + 2 * n + 16
        self.cap = cap
        sl = S.slots
        self.lim = (sl.terms, sl.c, sl.c0, sl.vt, sl.vcrit(1.0), sl.readers, sl.tptr, sl.rptr)

    def _csr(self, T):
        p, i, x = T.csr(1.0)
        return (np.ascontiguousarray(p, np.int64), np.ascontiguousarray(i, np.int64), np.ascontiguousarray(x))

    def net(self, g: float) -> tuple:
        S = self.S
        vals = S.residual_values(g)
        R = (self.Rp.indptr, self.Rp.indices, self.Rp.data(vals))
        jconst = np.bincount(S._jconst_map, weights=vals, minlength=S.J.nnz).astype(float)
        return (self._csr(S.IZ), self._csr(S.IK), R, self._csr(S.RO), self._csr(S.RK), jconst, S.stamp_pos,
                S.stamp_src, S.stamp_coefficients(1.0), self.table, self.P)

    def newton(self, z0: np.ndarray, g: float = 0.0, s: float = 1.0, maxit: int = 150,
               tol: float = 1e-12) -> Tuple[Optional[np.ndarray], int]:
        S, L = self.S, self.S.L
        n, i64 = L.n_z, np.int64
        z = z0.copy()
        K = self.K0.copy()
        K[L.k_u(0):L.k_u(0) + self.u0.size] = s * self.u0
        lu = (S.J.indptr, S.J.indices, self.q, np.zeros(n + 1, i64), np.zeros(self.cap, i64), np.zeros(self.cap),
              np.zeros(n + 1, i64), np.zeros(self.cap, i64), np.zeros(self.cap), np.zeros(n, i64), np.zeros(n),
              np.zeros(2 * n, i64), np.zeros(n, i64), np.zeros(n), PIVOT_TOL)
        nin, nout = max(S.groups.n_in, 1), max(S.groups.n_out, 1)
        state = np.zeros(4, i64)
        wold = np.zeros(len(S.slots))
        for _ in range(4):
            st = entry("solve")(z, K, self.sc, self.net(g), self.lim, wold, lu, state, tol, maxit, len(S.groups) == 0,
                       np.zeros(nin), np.zeros(nin), np.zeros(nout), np.zeros(n), np.zeros(S.J.nnz), np.zeros(n),
                       np.zeros(2 * n), False, 0.0)
            if st != 5:
                break
            self.cap *= 2
            lu = lu[:4] + (np.zeros(self.cap, i64), np.zeros(self.cap)) + lu[6:7] + \
                (np.zeros(self.cap, i64), np.zeros(self.cap)) + lu[9:]
            z = z0.copy()
        ok = st == 0 and np.all(np.isfinite(z))
        return (z if ok else None), int(state[2])


def _effort_start(S: DCSystem, u0: np.ndarray) -> np.ndarray:
    """Newton's start: the free states in their slots; the potentials that voltage sources and held
    capacitor-like storages fix from the datum (a law singular at zero potential, the entropy flow
    ``Q / T`` of a heat transfer, is then evaluated where it is defined); the rest zero."""
    c, L = S.circuit, S.L
    z = np.zeros(L.n_z)
    for i in range(c.n_x):
        if i not in L.effort_index and i not in S.held:
            z[L.z_state(i)] = S.x_fix[i]
    fixed = {}      # branch -> its across value
    for j, p in enumerate(c.ports):
        if p.across:
            fixed[p.branch] = float(u0[j])
    for s in c.storages:
        # a free thermal storage starts at its start state's temperature (a network at 0 K has none)
        free = None if all(i in S.held for i in s.states) or c.branches[s.branches[0]].domain != "thermal" \
            else S.start_effort(s)
        for a, (i, b, e) in enumerate(zip(s.states, s.branches, s.effort_port)):
            if e and i in S.held:
                fixed[b] = float(S.held_values[i])
            elif e and free is not None:
                fixed.setdefault(b, float(free[a]))
    adj: dict = {}
    for b, v in fixed.items():
        a, t = int(c.b_from[b]), int(c.b_to[b])
        adj.setdefault(t, []).append((a, v))       # e(from) = e(to) + v
        adj.setdefault(a, []).append((t, -v))
    known = {-1: 0.0}
    todo = [-1]
    while todo:
        n = todo.pop()
        for m, v in adj.get(n, ()):
            if m not in known:
                known[m] = known[n] + v
                todo.append(m)
    for n, v in known.items():
        if n >= 0:
            z[n] = v
    return z


def dc_point(c: CircuitData, values: Mapping[sp.Symbol, float], u0: np.ndarray, x_fix: np.ndarray,
             xs: np.ndarray, held: Sequence[int] = (), fail: bool = True,
             guess: Optional[DCPoint] = None) -> Optional[DCPoint]:
    """The DC operating point (see the module docstring).

    Parameters
    ----------
    c : CircuitData
        The circuit.
    values : mapping of sympy.Symbol to float
        Parameter values.
    u0 : ndarray
        The inputs.
    x_fix : ndarray
        Start states: the held ones keep them, the conserved combinations are taken from them.
    xs : ndarray
        State scales (Newton's test).
    held : sequence of int
        States held at their value.
    fail : bool
        Raise :class:`~phsym.errors.SimulationError` when no method converges (else return None).
    guess : DCPoint, optional
        A point of the same equations at other inputs (a sweep's last point): its equations are
        reused and Newton starts from it (``values``, ``x_fix`` and ``held`` are then its own).
    """
    S = DCSystem(c, values, x_fix, held) if guess is None else guess.system
    sol = _Solver(S, xs, u0)
    z0 = _effort_start(S, np.asarray(u0, dtype=float)) if guess is None else guess.z.copy()
    z, method = _homotopies(sol, z0)
    if z is None and guess is None:
        z, method, S, sol = _flat_fallback(c, values, u0, x_fix, xs, held, S, sol, z0)
    if z is None:
        if not fail:
            return None
        raise SimulationError("no DC operating point found (Newton, gmin stepping and source stepping failed: "
                              "the DC problem is singular or has no solution; give x0 explicitly)", step=0, time=0.0)
    K = sol.K0.copy()
    K[S.L.k_u(0):S.L.k_u(0) + sol.u0.size] = sol.u0
    return DCPoint(_states(S, z, values), z, _efforts(S, z), method, S, K)


def _homotopies(sol: _Solver, z0: np.ndarray) -> Tuple[Optional[np.ndarray], str]:
    """Newton from ``z0``, then gmin stepping, then source stepping: ``(z, method)``, ``z`` None when
    all fail."""
    z, _ = sol.newton(z0)
    if z is not None:
        return z, "newton"
    z = z0
    for g in [GMIN_START * 10.0 ** -k for k in range(11)] + [0.0]:
        z, _ = sol.newton(z, g=g)
        if z is None:
            break
    if z is not None:
        return z, "gmin stepping"
    z, s, ds = np.zeros_like(z0), 0.0, 0.1
    while s < 1.0 and z is not None:
        target = min(1.0, s + ds)
        z_s, it = sol.newton(z, s=target, maxit=60)
        if z_s is None:
            ds *= 0.25
            if ds < 1e-6:
                z = None
            continue
        z, s = z_s, target
        ds = min(0.5, ds * (2.0 if it < 10 else 1.0))
    return z, "source stepping"


def _shunted(sol: _Solver, z0: np.ndarray, first: float = GMIN_START) -> Tuple[Optional[np.ndarray], str]:
    """gmin stepping with the nodes shunted to the datum from ``g = first``, to ``g = 0`` where Newton
    converges there, else ending at :data:`SHUNT_END`: ``(z, method)``."""
    z, last = z0, None
    for g in [g for g in [GMIN_START * 10.0 ** -k for k in range(11)] if g <= first * (1 + 1e-9)] + [0.0]:
        z_g, _ = sol.newton(z, g=g)
        if z_g is None:
            break
        z, last = z_g, g
    if last is None or last > SHUNT_END:
        return None, ""
    return z, "gmin stepping with node shunts" + ("" if last == 0.0 else f" ({last:g} S left: floating nodes)")


def _flat_fallback(c, values, u0, x_fix, xs, held, S, sol, z0):
    """The DC point when the homotopies fail from the start: ``(z, method, system, solver)``.

    A state on which no gradient depends at the start (a contact or a felt not touching: no force
    at any compression below its gap; a magnetic gap without flux: no force at any width) leaves
    Newton's matrix singular there: such states are held at their start, the nodes then reached
    only by storages at rest float and are shunted to the datum (:func:`_shunted`), and from that
    point the states no longer flat are released (the flux found, the gap's force moves the tine).
    A point is returned only when every state still held is flat there too (holding it changed
    nothing).
    """
    u0 = np.asarray(u0, dtype=float)
    flat = _flat_states(S, sol, _with_states(S, z0, S.x_fix))
    S = DCSystem(c, values, x_fix, sorted(set(held) | set(flat)), shunt=True)
    sol = _Solver(S, xs, u0)
    z, method = _shunted(sol, _effort_start(S, u0))
    if z is None or not flat:
        return z, method, S, sol
    x1 = _states(S, z, values)
    S2 = DCSystem(c, values, x_fix, held, shunt=True)
    sol2 = _Solver(S2, xs, u0)
    z2 = _with_states(S2, z, x1)
    still = _flat_states(S2, sol2, z2)
    if len(still) < len(flat):
        S2 = DCSystem(c, values, x_fix, sorted(set(held) | set(still)), shunt=True)
        sol2 = _Solver(S2, xs, u0)
        z2, method2 = _shunted(sol2, _with_states(S2, z, x1), SHUNT_END)
        if z2 is None:
            # a held state no longer flat at the point carries a force its start does not (a magnetic
            # gap's, once the flux is found), and its release fails (a conserved combination through
            # two-ports the DC rows do not replace yet): no point rather than a wrong one
            return None, "", S, sol
        z, method, S, sol, flat = z2, method2, S2, sol2, still
    if flat:
        method += f"; {', '.join(c.states[i] for i in flat)} held where the storage is flat"
    return z, method, S, sol


def _with_states(S: DCSystem, z: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``z`` with the free states' slots set to ``x``."""
    L = S.L
    z = z.copy()
    for i in range(S.circuit.n_x):
        if i not in L.effort_index and i not in S.held:
            z[L.z_state(i)] = x[i]
    return z


def _flat_states(S: DCSystem, sol: _Solver, z: np.ndarray) -> list:
    """The free states of nonlinear storages on which no gradient of theirs depends at ``z``
    (a zero column of the storage's Hessian)."""
    c, G, L = S.circuit, S.groups, S.L
    K = sol.K0.copy()
    K[L.k_u(0):L.k_u(0) + sol.u0.size] = sol.u0
    OUT = S.outputs(z, K)
    out = []
    for s_i, s in enumerate(c.storages):
        inst = S.inst.get(("s", s_i))
        if inst is None or s.linear or s.by_effort or any(i in S.held for i in s.states):
            continue
        n = len(s.states)
        out += [s.states[b] for b in range(n) if all(OUT[G.derivative(inst, a, b)] == 0.0 for a in range(n))]
    return out


def _efforts(S: DCSystem, z: np.ndarray) -> np.ndarray:
    L = S.L
    out = np.zeros(L.n_effort)
    for i, m in L.effort_index.items():
        out[m] = z[L.z_state(i)] if i not in S.held else S.held_values[i]
    return out


def _states(S: DCSystem, z: np.ndarray, values) -> np.ndarray:
    """The states of a solution: the free ones from their slots, the efforts' through ``x(e)``."""
    from ....codegen.laws.build import effort_state_kernel
    from ....structure.circuit.values import placeholder_values
    c, L = S.circuit, S.L
    x = S.x_fix.copy()
    for s in c.storages:
        for i in s.states:
            if i in S.held:
                continue
            if s.by_effort:
                k = effort_state_kernel(s.form, s.element)
                P = placeholder_values([s.placeholders], values, [s.element])
                x[i] = call(k, P, np.array([[z[L.z_state(i)]]]))[0, 0]
            else:
                x[i] = z[L.z_state(i)]
    return x


def frozen_start(c: CircuitData, values: Mapping[sp.Symbol, float], u0: np.ndarray, x0: np.ndarray,
                 xs: np.ndarray) -> Optional[DCPoint]:
    """Potentials and currents the state ``x0`` implies at the inputs ``u0`` (every storage held):
    Newton's start for a run's first step, or None when they cannot be found.

    Parameters
    ----------
    c : CircuitData
        The circuit.
    values : mapping of sympy.Symbol to float
        Parameter values.
    u0 : ndarray
        The first inputs.
    x0 : ndarray
        The state.
    xs : ndarray
        State scales.
    """
    return dc_point(c, values, u0, x0, xs, held=range(c.n_x), fail=False)
