"""The numbers of a circuit's equations: sparse matrices, kernel groups, stamps.

:class:`System` turns a :class:`~phsym.structure.circuit.data.CircuitData`
and its parameter values into what the compiled Newton (:mod:`.newton`)
reads; the storages' rows are those of a step (:class:`~.step.StepSystem`)
or of the DC problem (:class:`~.dc.DCSystem`), everything else is shared
(unknowns and equations: :mod:`.layout`):

* the residual ``F(z) = Zr z + Or OUT + Kr K`` (``OUT``: the kernels' outputs,
  ``K``: the known values) and its Jacobian ``Zr + Or D(OUT) Zi``, whose
  pattern is fixed: the constant entries once, then one *stamp* per kernel
  derivative and entry it reaches;
* the kernels' inputs ``IN = Zi z + Ki K``;
* each branch's current ``Ib = Zb z + Ob OUT + Kb K`` and voltage ``Vb = Zv z``
  (powers, probes, the recorded step vector);
* the junction inputs Newton limits (:mod:`.limits`).

Entries that hold the step ``h`` are kept as ``a + b / h``
(:mod:`.sparse_build`): a sub-step changes numbers, not patterns.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Sequence, Tuple

import numpy as np

from ....codegen.laws.build import law_kernel
from ....errors import SimulationInputError
from ....structure.circuit.values import placeholder_values
from .groups import GroupTable, Instance
from .layout import Layout, branch_voltage
from .limits import junction_slots
from .engine import entry
from .sparse_build import Compressed, StepNumbers, Triplets

__all__ = ["System"]

if TYPE_CHECKING:       # a circuit described by numbers is stepped without sympy
    import sympy as sp

    from ....structure.circuit.data import CircuitData

Entries = List[Tuple[int, float]]


def coefficient_values(exprs: Sequence[sp.Expr], values: Mapping[sp.Symbol, float],
                       elements: Sequence[str]) -> np.ndarray:
    """Numbers of one expression per element (linear coefficients, two-port ratios)."""
    return placeholder_values([[e] for e in exprs], values, elements)[:, 0] if exprs else np.zeros(0)


class System(StepNumbers):
    """Equations of a circuit at one parameter set (see the module docstring).

    Parameters
    ----------
    c : CircuitData
        The circuit.
    values : mapping of sympy.Symbol to float
        Parameter values.
    """

    def __init__(self, c: CircuitData, values: Mapping[sp.Symbol, float]):
        self.circuit = c
        # a linear dissipation a control moves: a kernel of its coefficient and the controls' step values
        self.moved = {j: c.control_reads(d.coefficient) for j, d in enumerate(c.dissipations) if d.linear}
        self.moved = {j: m for j, m in self.moved.items() if m}
        lin = [d for j, d in enumerate(c.dissipations) if d.linear and j not in self.moved]
        coef = coefficient_values([d.coefficient for d in lin], values, [d.element for d in lin])
        self._coef = dict(zip((id(d) for d in lin), coef))
        self.converted = {j for j, d in enumerate(c.dissipations)
                          if d.linear and not d.across and (j in self.moved or self._coef[id(d)] != 0.0)}
        #: the controls' values of this parameter set (``K``'s controls outside a run: DC, small signal)
        self.control_values = np.array([float(values[s]) for s in c.controls])
        self.L = Layout.of(c, self.converted)
        self.groups = GroupTable()
        self.inst: Dict[tuple, Instance] = {}
        self._dissipation_instances(values)
        self._storage_instances(values)
        self.groups.finish()
        nz, nb, nk, no = self.L.n_z, len(c.branches), self.L.n_k, max(self.groups.n_out, 1)
        self.R, self.RO, self.RK = Triplets((nz, nz)), Triplets((nz, no)), Triplets((nz, nk))
        self.BZ, self.BO, self.BK = Triplets((nb, nz)), Triplets((nb, no)), Triplets((nb, nk))
        self.V = Triplets((nb, nz))
        for b in range(nb):
            self.V.add_all(b, branch_voltage(c, b))
        self.passive = np.zeros(nb)
        self.active = np.zeros(nb)
        self._storage_rows(values)
        self._dissipation_rows()
        self._source_rows()
        self._twoport_rows(values)
        self._finish_rows(values)
        self._input_rows()
        self._stamps()
        self._values, self._slots = values, None

    @property
    def slots(self):
        """The junction inputs Newton limits (:func:`.limits.junction_slots`), found on first use (a
        system that only evaluates its residual, as a sensitivity's neighbouring parameter set, never
        needs them)."""
        if self._slots is None:
            self._slots = junction_slots(self, self.inst, self._values)
        return self._slots

    # ------------------------------------------------------------ hooks
    def _storage_instances(self, values) -> None:
        """Add the nonlinear storages' kernel instances (``self.inst[("s", index)]``)."""
        raise NotImplementedError

    def _storage_rows(self, values) -> None:
        """Write the storages' equations and branch currents."""
        raise NotImplementedError

    def state_input(self, i: int) -> Tuple[Entries, Entries]:
        """State ``i`` as a kernel input: ``(z entries, K entries)``."""
        raise NotImplementedError

    def _finish_rows(self, values) -> None:
        """Last changes to the equations once every element has written its rows."""

    # ------------------------------------------------------------ shared pieces
    def current(self, b: int, z: Entries = (), o: Entries = (), k: Entries = (), per_h: bool = False) -> None:
        """Branch ``b``'s current (its row of ``Ib`` and the KCL rows of its nodes)."""
        c = self.circuit
        for M, ent in ((self.BZ, z), (self.BO, o), (self.BK, k)):
            M.add_all(b, ent, 1.0, per_h)
        for node, sign in ((c.b_from[b], 1.0), (c.b_to[b], -1.0)):
            if node >= 0:
                self.R.add_all(int(node), z, sign, per_h)
                self.RO.add_all(int(node), o, sign, per_h)
                self.RK.add_all(int(node), k, sign, per_h)

    def fill_controls(self, K: np.ndarray) -> np.ndarray:
        """Write this parameter set's control values into the known values ``K`` (returned)."""
        for m, v in enumerate(self.control_values):
            K[self.L.k_c(m)] = v
        return K

    def port_variable(self, j: int) -> Tuple[Entries, Entries]:
        """Dissipation ``j``'s port variable as a kernel input."""
        d = self.circuit.dissipations[j]
        if j in self.moved:
            raise self.unsupported(f"a law reading the port of {d.element}, which a control moves")
        if j in self.L.w_unknown:
            return [(self.L.w_unknown[j], 1.0)], []
        vb = branch_voltage(self.circuit, d.branch)
        if not d.across:        # a linear current-controlled port written as a conductance: i = v / R
            return [(col, coef / self._coef[id(d)]) for col, coef in vb], []
        return vb, []

    def _dissipation_instances(self, values) -> None:
        c = self.circuit
        by_form: Dict[str, List[int]] = {}
        for j, d in enumerate(c.dissipations):
            if not d.linear and not d.nullator:
                by_form.setdefault(d.form.key, []).append(j)
        for js in by_form.values():
            ds = [c.dissipations[j] for j in js]
            P = placeholder_values([d.placeholders for d in ds], values, [d.element for d in ds])
            k = law_kernel(ds[0].form, ds[0].element)
            for row, j, d in zip(P, js, ds):
                var = [self.port_variable(j)] + [self.port_variable(p) for p in d.ports] + \
                      [self.state_input(i) for i in d.reads]
                self.inst[("d", j)] = self.groups.add(k, row, var, [], d.element)
        self._moved_instances(values)

    def _moved_instances(self, values) -> None:
        """A linear dissipation a control moves (a potentiometer's part): the law ``i = c v`` or
        ``i = v / c`` as a kernel of the branch voltage and the controls' step values, the
        coefficient's other parameters its placeholders (one kernel per coefficient form: every
        potentiometer of one taper shares it)."""
        if not self.moved:
            return
        import sympy as sp

        from ....structure.circuit.canonical import canonical
        c, L = self.circuit, self.L
        for j, ms in self.moved.items():
            d = c.dissipations[j]
            v = sp.Symbol("_v", real=True)
            cs = [sp.Symbol(f"_c{m}", real=True) for m in range(len(ms))]
            coef = sp.sympify(d.coefficient).xreplace(c.derived).xreplace({c.controls[m]: s for m, s in zip(ms, cs)})
            law = coef * v if d.across else v / coef
            form, ph = canonical([law], [v] + cs, tag="dissipation")
            row = placeholder_values([ph], values, [d.element])[0]
            var = [(branch_voltage(c, d.branch), [])] + [([], [(L.k_c(m), 1.0)]) for m in ms]
            self.inst[("d", j)] = self.groups.add(law_kernel(form, d.element), row, var, [], d.element)

    def currents(self, b: np.ndarray, col: np.ndarray, coef: np.ndarray, per_h: bool = False) -> None:
        """:meth:`current` of many branches ``b``, each ``coef`` times the unknown ``col``."""
        c = self.circuit
        self.BZ.extend(b, col, coef, per_h)
        for node, sign in ((c.b_from[b], 1.0), (c.b_to[b], -1.0)):
            m = node >= 0
            self.R.extend(node[m], col[m], sign * coef[m], per_h)

    def conductances(self, b: np.ndarray, g: np.ndarray) -> None:
        """Branch currents ``g v`` of many branches at once (:meth:`current` with ``z = g v``)."""
        c = self.circuit
        for node, sign in ((c.b_from[b], 1.0), (c.b_to[b], -1.0)):
            m = node >= 0
            self.currents(b[m], node[m], sign * g[m])

    def _dissipation_rows(self) -> None:
        c, L, G, R = self.circuit, self.L, self.groups, self.R
        # linear laws as conductances, stamped together: a large mesh's resistors
        plain = [j for j, d in enumerate(c.dissipations) if d.linear and j not in self.moved
                 and (d.across or j in self.converted)]
        if plain:
            ds = [c.dissipations[j] for j in plain]
            g = np.array([self._coef[id(d)] for d in ds])
            across = np.array([d.across for d in ds], dtype=bool)
            self.conductances(np.array([d.branch for d in ds], dtype=np.int64),
                              np.where(across, g, 1.0 / np.where(across, 1.0, g)))
        plain = set(plain)
        for j, d in enumerate(c.dissipations):
            b = d.branch
            if not d.lossless:      # a lossless multiport's powers cancel: left out, P_diss exactly 0
                (self.active if d.active else self.passive)[b] = 1.0
            if j in plain:
                continue
            vb = branch_voltage(c, b)
            if j in self.moved:
                self.current(b, o=[(G.out(self.inst[("d", j)], 0), 1.0)])
                continue
            if d.linear:            # v = R i with R = 0: a short with an unknown current
                t = L.w_unknown[j]
                self.current(b, z=[(t, 1.0)])
                R.add(t, t, self._coef[id(d)])
                R.add_all(t, vb, -1.0)
                continue
            if d.nullator:          # no current; the row says v = 0, its unknown is what the norator reads
                R.add_all(L.w_unknown[j], vb, 1.0)
                continue
            out = [(G.out(self.inst[("d", j)], 0), 1.0)]
            if d.across:
                self.current(b, o=out)
            else:
                t = L.w_unknown[j]
                self.current(b, z=[(t, 1.0)])
                self.RO.add_all(t, out)
                R.add_all(t, vb, -1.0)

    def _source_rows(self) -> None:
        c, L = self.circuit, self.L
        self.sources = np.zeros((len(c.ports), 2), dtype=np.int64)     # (branch, 1: y = -i, 0: y = -v)
        for jj, p in enumerate(c.ports):
            b = p.branch
            self.sources[jj] = (b, 1 if p.across else 0)
            if p.across:
                t = L.current[b]
                self.current(b, z=[(t, 1.0)])
                self.R.add_all(t, branch_voltage(c, b), 1.0)
                self.RK.add(t, L.k_u(jj), -1.0)
            else:
                self.current(b, k=[(L.k_u(jj), 1.0)])

    def _twoport_rows(self, values) -> None:
        c, L, R = self.circuit, self.L, self.R
        ratios = coefficient_values([t.ratio for t in c.twoports], values, [t.record.element for t in c.twoports])
        for t, n in zip(c.twoports, ratios):
            tp = L.current[t.branch_p]
            if not t.gyrator:       # v_p = n v_s, i_s = -n i_p
                self.current(t.branch_p, z=[(tp, 1.0)])
                self.current(t.branch_s, z=[(tp, -n)])
                R.add_all(tp, branch_voltage(c, t.branch_p), 1.0)
                R.add_all(tp, branch_voltage(c, t.branch_s), -n)
            else:                   # v_p = r i_s, v_s = -r i_p
                ts = L.current[t.branch_s]
                self.current(t.branch_p, z=[(tp, 1.0)])
                self.current(t.branch_s, z=[(ts, 1.0)])
                R.add_all(tp, branch_voltage(c, t.branch_p), 1.0)
                R.add(tp, ts, -n)
                R.add_all(ts, branch_voltage(c, t.branch_s), 1.0)
                R.add(ts, tp, n)

    def _input_rows(self) -> None:
        G, L = self.groups, self.L
        self.IZ, self.IK = Triplets((max(G.n_in, 1), L.n_z)), Triplets((max(G.n_in, 1), L.n_k))
        for h, var, const, _ in G.instances():
            for jj, (zent, kent) in enumerate(var):
                self.IZ.add_all(G.inp(h, jj), zent)
                self.IK.add_all(G.inp(h, jj), kent)
            for m, kidx in enumerate(const):
                self.IK.add(G.inp(h, len(var) + m), kidx, 1.0)

    def _stamps(self) -> None:
        """The Jacobian's pattern (CSC) and the stamps of the kernels' derivatives."""
        G, R, RO = self.groups, self.R, self.RO
        # which rows each output reaches, with coefficient a + b / h (a junction's charge increment over h)
        ro = Compressed(np.asarray(RO.rows, dtype=np.int64), np.asarray(RO.cols, dtype=np.int64), RO.shape,
                        by_column=True)
        ro_a, ro_b = ro.data(np.asarray(RO.a, dtype=float)), ro.data(np.asarray(RO.b, dtype=float))
        iz_ptr, iz_idx, iz_val = self.IZ.csr(1.0)
        rows, cols = list(R.rows), list(R.cols)
        src: List[int] = []
        ca: List[float] = []
        cb: List[float] = []
        for h, var, _, _ in G.instances():
            n_out, n_var = G.shape(h)
            for m in range(n_out):
                o = G.out(h, m)
                lo, hi = ro.indptr[o], ro.indptr[o + 1]
                if lo == hi:
                    continue
                for jv in range(n_var):
                    p = G.inp(h, jv)
                    c_idx, c_val = iz_idx[iz_ptr[p]:iz_ptr[p + 1]], iz_val[iz_ptr[p]:iz_ptr[p + 1]]
                    d = G.derivative(h, m, jv)
                    for q in range(lo, hi):
                        r = int(ro.indices[q])
                        for cc, bv in zip(c_idx, c_val):
                            rows.append(r)
                            cols.append(int(cc))
                            src.append(d)
                            ca.append(ro_a[q] * bv)
                            cb.append(ro_b[q] * bv)
        n_const = len(R.rows)
        self.J = Compressed(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
                            (self.L.n_z, self.L.n_z), by_column=True)
        self._jconst_map = self.J.map[:n_const]
        self.stamp_pos = np.ascontiguousarray(self.J.map[n_const:], dtype=np.int64)
        self.stamp_src = np.asarray(src, dtype=np.int64)
        self._stamp_ab = (np.asarray(ca, dtype=float), np.asarray(cb, dtype=float))

    # ------------------------------------------------------------ numbers at a point
    def outputs(self, z: np.ndarray, K: np.ndarray) -> np.ndarray:
        """Every kernel's outputs and derivatives (``OUT``) at the unknowns ``z`` and known values ``K``
        (outside Newton: no junction limiting).

        Parameters
        ----------
        z, K : ndarray
            Unknowns and known values (:class:`~.layout.Layout`).
        """
        G = self.groups
        IN = self.IZ.apply(1.0, z) + self.IK.apply(1.0, K)
        OUT = np.zeros(max(G.n_out, 1))
        if len(G):
            table, P = G.arrays()
            IN = np.ascontiguousarray(IN, dtype=float)
            W = np.zeros(entry("w_size")(table))
            entry("prepare_groups")(table, P, IN, W)
            entry("call_groups")(table, P, IN, OUT, W)
        return OUT

    def branch_currents(self, z: np.ndarray, K: np.ndarray, h: float = 1.0) -> np.ndarray:
        """Each branch's current ``Ib = Zb z + Ob OUT + Kb K`` (a step's at ``h``; DC has no ``1/h`` entries).

        Parameters
        ----------
        z, K : ndarray
            Unknowns and known values.
        h : float
            The step.
        """
        OUT = self.outputs(z, K)
        return self.BZ.apply(h, z) + self.BO.apply(h, OUT) + self.BK.apply(h, K)

    def unsupported(self, what: str) -> SimulationInputError:
        """The error for a model the numeric engine cannot take."""
        return SimulationInputError(f"{what}: not supported by the numeric engine (use engine='generated')")
