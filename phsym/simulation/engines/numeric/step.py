""":class:`StepSystem`: the storages' equations of one step of a scheme.

A state's unknown is its increment ``dx`` over the step (or, for a storage
solved through its effort, the effort's increment).  A capacitor-like state
(across variable ``dH/dx``) has the equation ``gbar(x, dx) - v = 0`` and puts
the current ``dx / h`` into its nodes; an inductor-like one ``dx / h - v = 0``
with the current ``gbar``.  ``gbar`` is the scheme's discrete gradient:
``Q (x + theta dx)`` for a linear storage (``theta = 1/2``, or 1 for
backward Euler), the form's step kernel otherwise
(:func:`phsym.codegen.laws.build.step_kernel`), at the step's end for a stiff
storage under ``stiff="backward_euler"``.  The energy at the step's end is
``x^T Q x / 2`` and the energy kernels (:func:`~phsym.codegen.laws.build.energy_kernel`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np

from ....codegen.laws.build import energy_kernel, step_kernel
from ....common.schemes import get_scheme
from ....structure.circuit.values import linear_hessians, placeholder_values
from .groups import GroupTable
from .layout import branch_voltage
from .sparse_build import Triplets
from .system import System

if TYPE_CHECKING:       # a circuit described by numbers steps without sympy
    import sympy as sp

    from ....structure.circuit.data import CircuitData

__all__ = ["StepSystem"]


class StepSystem(System):
    """The step ``k -> k + 1`` of a scheme (see the module docstring and :class:`~.system.System`).

    Parameters
    ----------
    c : CircuitData
        The circuit.
    values : mapping of sympy.Symbol to float
        Parameter values.
    scheme : str
        ``discrete_gradient``, ``midpoint`` or ``backward_euler``.
    stiff : str
        ``"backward_euler"``: stiff storages take the gradient at the step's end; ``"scheme"``.

    Attributes
    ----------
    DZ, DO : Triplets
        The states' increments ``dx = DZ z + DO OUT``.
    QL : Triplets
        ``Q`` of the linear storages (their energy ``x^T Q x / 2``).
    energies : GroupTable
        The nonlinear storages' energy kernels; their inputs are entries of ``[x, efforts]``
        after the step (:attr:`energy_inputs`).
    stiff_end : ndarray (n, 3)
        Per stiff storage stepped to the end: its gradient's place in ``OUT``, its state, its
        energy's place in the energy kernels' outputs (its numerical dissipation ``P_num``).
    """

    def __init__(self, c: CircuitData, values: Mapping[sp.Symbol, float], scheme: str, stiff: str = "scheme"):
        self.scheme = get_scheme(scheme, ("discrete_gradient", "midpoint", "backward_euler")).name
        self.theta = 1.0 if self.scheme == "backward_euler" else 0.5
        self.end_rule = stiff == "backward_euler" and self.scheme != "backward_euler"
        self.energies = GroupTable()
        self._eng = {}
        super().__init__(c, values)

    def state_input(self, i: int):
        """State ``i`` at the step (``x + theta dx``) as a kernel input."""
        L = self.L
        if i in L.effort_index:
            raise self.unsupported(f"a law reads the state {self.circuit.states[i]}, which is solved through "
                                   "its effort")
        return [(L.z_state(i), self.theta)], [(L.k_x(i), 1.0)]

    def _pinned(self, s) -> bool:
        """A storage solved through its effort and stepped to its end (backward Euler, a stiff storage
        under the end rule): its effort at the end is its branch's voltage."""
        return s.by_effort and (self.scheme == "backward_euler" or (self.end_rule and s.stiff))

    def effort_input(self, i: int):
        """The effort increment of state ``i`` (solved through its effort) as its kernel reads it: when the
        storage is pinned (:meth:`_pinned`), its branch voltage less the start effort, so that its junction
        is the same one the laws across it read and limit (as the generated loop pins a transistor's ports
        to its junction charges' voltages); else its own unknown."""
        L = self.L
        s = self._storage_of[i]
        if self._pinned(s):
            return branch_voltage(self.circuit, s.branches[0]), [(L.k_effort(i), -1.0)]
        return [(L.z_state(i), 1.0)], []

    def _storage_instances(self, values) -> None:
        c, L = self.circuit, self.L
        self._storage_of = {i: s for s in c.storages for i in s.states}
        by_form = {}
        for s_i, s in enumerate(c.storages):
            if not s.linear:
                by_form.setdefault((s.form.key, s.stiff), []).append(s_i)
        for (_, stiff), ss in by_form.items():
            items = [c.storages[s] for s in ss]
            P = placeholder_values([s.placeholders for s in items], values, [s.element for s in items])
            n = len(items[0].states)
            end = self.end_rule and stiff and n == 1
            k = step_kernel(items[0].form, n, self.scheme, end, items[0].element)
            effort = k.n_out > n            # the increment of a law solved through its effort is an output
            ke = energy_kernel(items[0].form, n, items[0].by_effort, items[0].element)
            for row, s_i, s in zip(P, ss, items):
                if effort and not s.effort_port[0]:
                    raise self.unsupported(f"{s.element}: a law solved through its effort on an inductor-like port")
                var = [self.effort_input(s.states[0])] if effort else [([(L.z_state(i), 1.0)], []) for i in s.states]
                const = [L.k_x(i) for i in s.states] + [L.k_scale(i) for i in s.states]
                if effort:
                    const.append(L.k_effort(s.states[0]))
                self.inst[("s", s_i)] = self.groups.add(k, row, var, const, s.element)
                ecost = list(s.states) + ([c.n_x + L.effort_index[s.states[0]]] if s.by_effort else [])
                self._eng[s_i] = self.energies.add(ke, row, [], ecost, s.element)
        self.energies.finish()

    def _capacitor_rows(self, hessians) -> set:
        """The rows of the one-state linear storages on a capacitor-like port, written together (a large
        mesh's capacitors); returns their indices.  Per storage, as the loop of :meth:`_storage_rows`:
        ``dx/h`` is the branch current and ``Q (x + theta dx) - v = 0``."""
        c, L = self.circuit, self.L
        ks = [k for k, s in enumerate(c.storages) if s.linear and len(s.states) == 1 and s.effort_port[0]
              and hessians[k][0, 0] != 0.0]
        if not ks:
            return set()
        i = np.array([c.storages[k].states[0] for k in ks], dtype=np.int64)
        b = np.array([c.storages[k].branches[0] for k in ks], dtype=np.int64)
        q = np.array([hessians[k][0, 0] for k in ks])
        zi = np.array([L.z_state(j) for j in i.tolist()], dtype=np.int64)
        kx = np.array([L.k_x(j) for j in i.tolist()], dtype=np.int64)
        one = np.ones(len(ks))
        self.QL.extend(i, i, q)
        self.DZ.extend(i, zi, one)
        for node, sign in ((c.b_from[b], -1.0), (c.b_to[b], 1.0)):     # - v
            m = node >= 0
            self.R.extend(zi[m], node[m], sign * one[m])
        self.R.extend(zi, zi, self.theta * q)
        self.RK.extend(zi, kx, q)
        self.currents(b, zi, one, per_h=True)
        return set(ks)

    def _storage_rows(self, values) -> None:
        c, L, G, R = self.circuit, self.L, self.groups, self.R
        nx, no = c.n_x, max(G.n_out, 1)
        self.DZ, self.DO, self.QL = Triplets((nx, L.n_z)), Triplets((nx, no)), Triplets((nx, nx))
        th = self.theta
        hessians = linear_hessians(c.storages, values)
        simple = self._capacitor_rows(hessians)
        for s_i, s in enumerate(c.storages):
            if s_i in simple:
                continue
            if s.linear:
                Q = hessians[s_i]
                for a, ia in enumerate(s.states):
                    for bb, ib in enumerate(s.states):
                        if Q[a, bb] != 0.0:
                            self.QL.add(ia, ib, Q[a, bb])
                for a, (i, b, effort) in enumerate(zip(s.states, s.branches, s.effort_port)):
                    zi = L.z_state(i)
                    g_z = [(L.z_state(j), th * Q[a, m]) for m, j in enumerate(s.states) if Q[a, m] != 0.0]
                    g_k = [(L.k_x(j), Q[a, m]) for m, j in enumerate(s.states) if Q[a, m] != 0.0]
                    self.DZ.add(i, zi, 1.0)
                    R.add_all(zi, branch_voltage(c, b), -1.0)
                    if effort:      # gbar - v = 0, current dx / h
                        R.add_all(zi, g_z)
                        self.RK.add_all(zi, g_k)
                        self.current(b, z=[(zi, 1.0)], per_h=True)
                    else:           # dx / h - v = 0, current gbar
                        R.add(zi, zi, 1.0, per_h=True)
                        self.current(b, z=g_z, k=g_k)
                continue
            h = self.inst[("s", s_i)]
            n_out, _ = G.shape(h)
            effort_law = n_out > len(s.states)
            for a, (i, b, effort) in enumerate(zip(s.states, s.branches, s.effort_port)):
                zi = L.z_state(i)
                dz = ([], [(G.out(h, len(s.states)), 1.0)]) if effort_law else ([(zi, 1.0)], [])
                self.DZ.add_all(i, dz[0])
                self.DO.add_all(i, dz[1])
                gbar = [(G.out(h, a), 1.0)]
                R.add_all(zi, branch_voltage(c, b), -1.0)
                if effort_law and self._pinned(s):     # the unknown keeps the effort's increment: dv = v - s0
                    R.add(zi, zi, 1.0)
                    self.RK.add(zi, L.k_effort(i), 1.0)
                    self.current(b, z=dz[0], o=dz[1], per_h=True)
                elif effort:
                    self.RO.add_all(zi, gbar)
                    self.current(b, z=dz[0], o=dz[1], per_h=True)
                else:
                    R.add_all(zi, dz[0], 1.0, per_h=True)
                    self.current(b, o=gbar)
        E = self.energies
        self.energy_inputs = np.zeros(max(E.n_in, 1), dtype=np.int64)
        for inst, _, const, _ in E.instances():
            for m, idx in enumerate(const):
                self.energy_inputs[E.inp(inst, m)] = idx
        rows = []
        if self.end_rule:
            for s_i, s in enumerate(c.storages):
                if s.stiff and not s.linear and len(s.states) == 1:
                    rows.append((G.out(self.inst[("s", s_i)], 0), s.states[0], E.out(self._eng[s_i], 0)))
        self.stiff_end = np.array(rows, dtype=np.int64).reshape(-1, 3)
