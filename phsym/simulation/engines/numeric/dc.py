""":class:`DCSystem`: the DC operating point in the numeric engine's nodal form.

No state moves: a capacitor-like state carries no current and its row is
``dH/dx(x) = v`` (unknown: the state itself, or the effort of a law solved
through its effort, whose row is then ``e = v``); an inductor-like state is
a short, ``v = 0``, carrying the current ``dH/dx(x)``.  A storage held at its
initial condition (SPICE's ``.ic`` without ``UIC``, and every storage when
the potentials of a given state are wanted: :func:`~.solve.frozen_start`)
is a source instead: a capacitor of voltage ``dH/dx(x_ic)`` whose current is
the unknown, an inductor of current ``dH/dx(x_ic)``.

Where the network conserves a combination of states the DC point is not
unique, and as every transient does phsym keeps the combination at its value
in the initial state (:mod:`phsym.simulation.initial`): a node group joined
to the rest by capacitors only keeps its charge (the total of the plates on
its side), a loop of inductors and voltage sources its flux; their
Kirchhoff row or short's row is replaced by that condition.

gmin stepping (:mod:`.solve`) adds a conductance ``g`` across every
nonlinear voltage-controlled element and a resistance in series with every
current-controlled one, as the symbolic DC solver does
(:mod:`phsym.simulation.dcsolve`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence

import numpy as np

from ....codegen.laws.build import gradient_kernel
from ....structure.circuit.values import linear_hessians, placeholder_values
from .layout import branch_voltage
from .system import System

if TYPE_CHECKING:       # a circuit described by numbers is solved without sympy
    import sympy as sp
    from ....structure.circuit.data import CircuitData


__all__ = ["DCSystem", "CONSERVE_LIMIT"]

#: Nodes up to which the DC fallback finds conserved combinations through two-ports (a dense SVD).
CONSERVE_LIMIT = 2000


class _UF:
    def __init__(self, n: int):
        self.p = list(range(n))

    def find(self, a: int) -> int:
        while self.p[a] != a:
            self.p[a] = self.p[self.p[a]]
            a = self.p[a]
        return a

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.p[ra] = rb
        return True


class DCSystem(System):
    """The DC equations (see the module docstring and :class:`~.system.System`).

    Parameters
    ----------
    c : CircuitData
        The circuit.
    values : mapping of sympy.Symbol to float
        Parameter values.
    x_fix : ndarray
        The states' values: the held ones keep them, the conserved combinations are taken from them.
    held : sequence of int
        States held (their storages become sources).
    shunt : bool
        Also a conductance from every node to the datum in the homotopy (SPICE's ``gshunt``: a
        node that only storages at rest and laws flat at the point reach has no potential else).
    """

    def __init__(self, c: CircuitData, values: Mapping[sp.Symbol, float], x_fix: np.ndarray,
                 held: Sequence[int] = (), shunt: bool = False):
        self.x_fix = np.asarray(x_fix, dtype=float)
        self.held = set(int(i) for i in held)
        self.shunt = shunt
        self._gmin: List[int] = []
        self._gmin_val: List[float] = []
        self._replaced: set = set()
        super().__init__(c, values)

    # ------------------------------------------------------------ storages
    def _held(self, s) -> bool:
        return any(i in self.held for i in s.states)

    def state_input(self, i: int):
        """State ``i`` (its unknown in DC) as a kernel input."""
        L = self.L
        if i in L.effort_index:
            raise self.unsupported(f"a law reads the state {self.circuit.states[i]}, which is solved through "
                                   "its effort")
        if i in self.held:
            return [], [(L.k_x(i), 1.0)]
        return [(L.z_state(i), 1.0)], []

    def _storage_instances(self, values) -> None:
        c = self.circuit
        by_form: Dict[str, List[int]] = {}
        for s_i, s in enumerate(c.storages):
            if not s.linear and not s.by_effort:
                by_form.setdefault(s.form.key, []).append(s_i)
        for ss in by_form.values():
            items = [c.storages[s] for s in ss]
            P = placeholder_values([s.placeholders for s in items], values, [s.element for s in items])
            k = gradient_kernel(items[0].form, len(items[0].states), items[0].element)
            for row, s_i, s in zip(P, ss, items):
                self.inst[("s", s_i)] = self.groups.add(k, row, [self.state_input(i) for i in s.states], [],
                                                        s.element)
        self._values = values

    def held_efforts(self, hessians=None) -> Dict[int, float]:
        """``dH/dx`` of each held state at its start state (:meth:`start_effort`; ``hessians``: the
        storages' :func:`~phsym.structure.circuit.canonical.linear_hessians`, when known)."""
        c = self.circuit
        if hessians is None:
            hessians = linear_hessians(c.storages, self._values)
        out = {}
        for s, Q in zip(c.storages, hessians):
            if self._held(s):
                out.update(zip(s.states, self.start_effort(s, Q)))
        return out

    def start_effort(self, s, Q: Optional[np.ndarray] = None) -> np.ndarray:
        """``dH/dx`` of the storage ``s`` at its start state (:attr:`x_fix`; ``Q``: its Hessian if linear,
        when known)."""
        from .kernels_py import gradient_at     # numbers of a kernel, outside the compiled loop
        x = self.x_fix[list(s.states)]
        if s.linear:
            return (linear_hessians([s], self._values)[0] if Q is None else Q) @ x
        return gradient_at(s, x, self._values, effort=s.by_effort)

    def _held_sources(self, held: Dict[int, float]) -> set:
        """The held states on a capacitor-like port as voltage sources ``dH/dx(x_fix)``, written
        together (every capacitor of a large mesh at a run's start); returns those states."""
        c, L = self.circuit, self.L
        rows = [(i, b, held[i]) for s in c.storages for i, b, e in zip(s.states, s.branches, s.effort_port)
                if e and i in self.held]
        if not rows:
            return set()
        i = np.array([r[0] for r in rows], dtype=np.int64)
        b = np.array([r[1] for r in rows], dtype=np.int64)
        g = np.array([r[2] for r in rows], dtype=float)
        zi = np.array([L.z_state(k) for k in i.tolist()], dtype=np.int64)
        one = np.ones(len(rows))
        for node, sign in ((c.b_from[b], 1.0), (c.b_to[b], -1.0)):      # v = dH/dx: its current is the unknown
            m = node >= 0
            self.R.extend(zi[m], node[m], sign * one[m])
        self.RK.extend(zi, np.full(len(rows), L.k_one, dtype=np.int64), -g)
        self.currents(b, zi, one)
        return set(i.tolist())

    def _storage_rows(self, values) -> None:
        c, L, G, R = self.circuit, self.L, self.groups, self.R
        hessians = linear_hessians(c.storages, values)
        held = self.held_values = self.held_efforts(hessians)
        done = self._held_sources(held)
        for s_i, s in enumerate(c.storages):
            Q = hessians[s_i]
            for a, (i, b, effort) in enumerate(zip(s.states, s.branches, s.effort_port)):
                if i in done:
                    continue
                zi = L.z_state(i)
                vb = branch_voltage(c, b)
                if i in self.held:
                    g = held[i]
                    if effort:      # a voltage source dH/dx(x_ic): its current is the unknown
                        R.add_all(zi, vb, 1.0)
                        self.RK.add(zi, L.k_one, -g)
                        self.current(b, z=[(zi, 1.0)])
                    else:           # a current source dH/dx(x_ic); the unknown is idle
                        R.add(zi, zi, 1.0)
                        self.current(b, k=[(L.k_one, g)])
                    continue
                if s.linear:
                    gz = [(L.z_state(j), Q[a, m]) for m, j in enumerate(s.states) if Q[a, m] != 0.0 and j not in self.held]
                    gk = [(L.k_x(j), Q[a, m]) for m, j in enumerate(s.states) if Q[a, m] != 0.0 and j in self.held]
                    go = []
                elif s.by_effort:   # the unknown is the effort itself
                    gz, gk, go = [(zi, 1.0)], [], []
                else:
                    gz, gk, go = [], [], [(G.out(self.inst[("s", s_i)], a), 1.0)]
                if effort:          # dH/dx = v, no current
                    R.add_all(zi, gz)
                    self.RK.add_all(zi, gk)
                    self.RO.add_all(zi, go)
                    R.add_all(zi, vb, -1.0)
                else:               # a short carrying dH/dx
                    R.add_all(zi, vb, 1.0)
                    self.current(b, z=gz, k=gk, o=go)

    def _finish_rows(self, values) -> None:
        self._conserve(values)

    # ------------------------------------------------------------ invariants
    def _conserve(self, values) -> None:
        """Replace dependent rows by the conserved charges and fluxes (see the module docstring)."""
        c, L = self.circuit, self.L
        nn = L.n_nodes
        effort_branch = {}
        flow_branch = {}
        for s in c.storages:
            for i, b, e in zip(s.states, s.branches, s.effort_port):
                if i in self.held or s.by_effort:
                    continue
                (effort_branch if e else flow_branch)[b] = i
        sources_through = {p.branch for p in c.ports if not p.across}
        # charge islands: nodes joined by anything but capacitor-like storages and current sources
        uf = _UF(nn + 1)        # node nn stands for the datum
        node = lambda k: nn if k < 0 else int(k)    # noqa: E731
        for b in range(len(c.branches)):
            if b not in effort_branch and b not in sources_through:
                uf.union(node(c.b_from[b]), node(c.b_to[b]))
        ground = uf.find(nn)
        islands: Dict[int, List[int]] = {}
        for n in range(nn):
            r = uf.find(n)
            if r != ground:
                islands.setdefault(r, []).append(n)
        for nodes in islands.values():
            inside = set(nodes)
            row = nodes[0]
            self._replace_row(row)
            total = 0.0
            for b, i in effort_branch.items():
                sign = (1.0 if node(c.b_from[b]) in inside else 0.0) - (1.0 if node(c.b_to[b]) in inside else 0.0)
                if sign:
                    self.R.add(row, L.z_state(i), sign)
                    total += sign * self.x_fix[i]
            self.RK.add(row, L.k_one, -total)
        if self.shunt:
            self._conserve_through_twoports(flow_branch)
            return
        # flux loops: inductor-like storages closing a loop of shorts and voltage sources
        uf = _UF(nn + 1)
        tree: Dict[int, List[tuple]] = {}
        across = [p.branch for p in c.ports if p.across]
        for b in across + sorted(flow_branch):
            a, z = node(c.b_from[b]), node(c.b_to[b])
            if uf.union(a, z):
                tree.setdefault(a, []).append((z, b, 1.0))
                tree.setdefault(z, []).append((a, b, -1.0))
            elif b in flow_branch:
                path = _path(tree, z, a)        # from the branch's end back to its start
                zi = L.z_state(flow_branch[b])
                self._replace_row(zi)
                total = 0.0
                for bb, sign in [(b, 1.0)] + path:
                    if bb in flow_branch:
                        self.R.add(zi, L.z_state(flow_branch[bb]), sign)
                        total += sign * self.x_fix[flow_branch[bb]]
                self.RK.add(zi, L.k_one, -total)

    def _conserve_through_twoports(self, flow_branch: Dict[int, int]) -> None:
        """The conserved combinations ``c . x`` of inductor-like states, two-ports included (a
        magnetic gap's width and a tine's modal springs, joined by the beam's transformers): ``c``
        such that ``sum_i c_i v_i = 0`` for every set of potentials the across constraints allow
        (voltage sources at zero, ``v_p = n v_s``, nullators), from the null space of
        ``[V_flow^T  C^T]`` (dense: only in the fallback of :func:`~.operating.dc_point`, on circuits
        of at most :data:`CONSERVE_LIMIT` nodes); each replaces one state's short row."""
        c, L = self.circuit, self.L
        nn = L.n_nodes
        states = sorted(flow_branch.items(), key=lambda t: t[1])
        if not states or nn > CONSERVE_LIMIT:
            return
        values = self._values

        def row(b, scale=1.0):
            r = np.zeros(nn)
            for col, coef in branch_voltage(c, b):
                r[col] += scale * coef
            return r
        V = np.array([row(b) for b, _ in states])
        C = [row(p.branch) for p in c.ports if p.across]
        C += [row(d.branch) for d in c.dissipations if d.nullator]
        ratios = placeholder_values([[t.ratio] for t in c.twoports], values,
                                    [t.record.element for t in c.twoports])[:, 0] if c.twoports else []
        C += [row(t.branch_p) - row(t.branch_s, n) for t, n in zip(c.twoports, ratios) if not t.gyrator]
        A = np.hstack([V.T, np.array(C).T]) if C else V.T
        _, sv, vt = np.linalg.svd(A)
        tol = max(A.shape) * np.finfo(float).eps * (sv[0] if sv.size else 1.0)
        rank = int(np.sum(sv > tol))
        B = vt[rank:, :len(states)]
        B = B[np.abs(B).max(axis=1) > 1e-9] if B.size else B
        for coef, p in _echelon(B):
            i = states[p][1]
            zi = L.z_state(i)
            self._replace_row(zi)
            total = 0.0
            for (_, j), a in zip(states, coef):
                if abs(a) > 1e-12:
                    self.R.add(zi, L.z_state(j), float(a))
                    total += a * self.x_fix[j]
            self.RK.add(zi, L.k_one, -total)

    def _replace_row(self, row: int) -> None:
        """Drop every entry of equation ``row`` (it is replaced)."""
        self._replaced.add(row)
        for T in (self.R, self.RO, self.RK):
            for k, r in enumerate(T.rows):
                if r == row:
                    T.a[k] = T.b[k] = 0.0
            T._pattern = None

    # ------------------------------------------------------------ gmin
    def _dissipation_rows(self) -> None:
        super()._dissipation_rows()
        c, L = self.circuit, self.L
        if self.shunt:
            for n in range(L.n_nodes):
                self._gmin_entry(n, n, 1.0)
        for j, d in enumerate(c.dissipations):
            if d.linear or d.nullator:
                continue
            vb = branch_voltage(c, d.branch)
            if d.across:        # g v across the element
                for node, sign in ((c.b_from[d.branch], 1.0), (c.b_to[d.branch], -1.0)):
                    if node >= 0:
                        for col, coef in vb:
                            self._gmin_entry(int(node), col, sign * coef)
            else:               # g i in series
                t = L.w_unknown[j]
                self._gmin_entry(t, t, 1.0)

    def _gmin_entry(self, row: int, col: int, value: float) -> None:
        self._gmin.append(len(self.R.rows))
        self._gmin_val.append(value)
        self.R.add(row, col, 0.0)

    def residual_values(self, g: float) -> np.ndarray:
        """Values of the triplets of ``R`` with the homotopy conductance ``g``."""
        v = self.R.values(1.0)
        if self._gmin:
            rows = np.asarray(self.R.rows)[np.asarray(self._gmin)]
            keep = ~np.isin(rows, list(self._replaced))
            v[np.asarray(self._gmin)[keep]] += g * np.asarray(self._gmin_val)[keep]
        return v


def _echelon(B: np.ndarray) -> List[tuple]:
    """The rows of ``B``'s reduced row echelon form with their pivot columns ``(row, pivot)``."""
    B = np.array(B, dtype=float)
    out, r = [], 0
    for col in range(B.shape[1] if B.ndim == 2 else 0):
        if r >= B.shape[0]:
            break
        k = r + int(np.argmax(np.abs(B[r:, col])))
        if abs(B[k, col]) < 1e-9:
            continue
        B[[r, k]] = B[[k, r]]
        B[r] /= B[r, col]
        for q in range(B.shape[0]):
            if q != r:
                B[q] -= B[q, col] * B[r]
        out.append(r)
        r += 1
    pivots = [int(np.argmax(np.abs(B[q]) > 1e-9)) for q in out]
    return [(B[q], p) for q, p in zip(out, pivots)]


def _path(tree: Dict[int, List[tuple]], a: int, b: int) -> List[tuple]:
    """Branches ``(branch, orientation)`` of the forest path from node ``a`` to ``b``."""
    prev = {a: None}
    todo = [a]
    while todo:
        n = todo.pop()
        if n == b:
            break
        for m, br, sign in tree.get(n, ()):
            if m not in prev:
                prev[m] = (n, br, sign)
                todo.append(m)
    out = []
    n = b
    while prev.get(n) is not None:
        p, br, sign = prev[n]
        out.append((br, sign))
        n = p
    return out
