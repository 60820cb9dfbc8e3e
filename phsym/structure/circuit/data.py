""":class:`CircuitData`: nodes, branches and element groups of a list of component records.

Built from what the components contribute (:mod:`phsym.components.base`:
branches in receiver convention, storages, dissipations, ports, two-ports)
and the graph's normal tree, without the Dirac structure.  Linear elements
keep their coefficient as an expression (``1/C`` of a capacitor, ``R`` of a
resistor, the Hessian of a coupled storage); nonlinear ones their law form
(:mod:`.canonical`) and what its placeholders stand for.  Everything here is
independent of parameter values; the numeric engine evaluates the
expressions per parameter set.

Examples
--------
>>> import phsym
>>> c = phsym.parse("V1 a 0 1\\nR1 a b 1k\\nD1 b 0 IS=1e-14\\nC1 b 0 1u\\n").circuit
>>> c.nodes, c.states, c.inputs
(['a', 'b'], ['q_C1'], ['V1'])
>>> [(d.element, d.linear) for d in c.dissipations]
[('R1', True), ('D1', False)]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...common.lazy import lazy_field
from ...errors import StructureError
from .form import Form

if TYPE_CHECKING:       # the data reads without sympy (a circuit described by numbers: :mod:`.numeric`)
    import sympy as sp

    from ...components.base import Branch, Dissipation, Port, Storage, TwoPort

__all__ = ["CircuitData", "StorageItem", "DissipationItem", "PortItem", "TwoPortItem"]

_SYMBOLS: Dict[str, list] = {}


def _symbols(prefix: str, n: int) -> list:
    """``n`` real symbols ``{prefix}0 ...`` (the first ones made once per process)."""
    import sympy as sp
    have = _SYMBOLS.setdefault(prefix, [])
    while len(have) < min(n, 64):
        have.append(sp.Symbol(f"{prefix}{len(have)}", real=True))
    return have[:n] if n <= len(have) else [sp.Symbol(f"{prefix}{i}", real=True) for i in range(n)]


@dataclass
class StorageItem:
    """A storage (one element, or coupled inductors) and its states.

    Attributes
    ----------
    record : Storage
        The component's record.
    states : tuple of int
        Its states' indices in :attr:`CircuitData.states`.
    branches : tuple of int
        The branch of each state.
    effort_port : tuple of bool
        Per state: across variable ``= dH/dx`` (capacitor-like) or through variable (inductor-like).
    linear : bool
        Quadratic ``H = x^T Q x / 2``.
    hessian : tuple of tuple of sympy.Expr, optional
        ``Q`` (linear storages); built on first read from :attr:`compliance` when that is given.
    form : Form, optional
        Law form of a nonlinear storage: ``[H]`` in its states, or ``[H, x(e), H(x, e)]`` in the
        state and the effort for a law solved through its effort.
    placeholders : tuple of sympy.Expr
        What the form's placeholders stand for.
    by_effort : bool
        Solved through its effort (:class:`~phsym.components.base.EffortLaw`).
    stiff : bool
        A parasitic storage (:attr:`~phsym.components.base.Storage.stiff`).
    compliance : sympy.Expr, optional
        ``1 / Q`` of a one-state linear storage (:attr:`~phsym.components.base.Storage.compliance`):
        the numeric engine reads its number, no sympy ``Q`` per capacitor.
    """

    record: Storage
    states: Tuple[int, ...]
    branches: Tuple[int, ...]
    effort_port: Tuple[bool, ...]
    linear: bool
    hessian: Optional[Tuple[Tuple[sp.Expr, ...], ...]] = None
    form: Optional[Form] = None
    placeholders: Tuple[sp.Expr, ...] = ()
    by_effort: bool = False
    stiff: bool = False
    compliance: Optional[sp.Expr] = None

    @property
    def element(self) -> str:
        """The (first) element's name."""
        return self.record.elements[0]


StorageItem.hessian = lazy_field("hessian", lambda s: None if s.compliance is None else ((1 / s.compliance,),))


@dataclass
class DissipationItem:
    """A dissipative port.

    Attributes
    ----------
    record : Dissipation
        The component's record.
    branch : int
        Its branch.
    across : bool
        ``True``: the law gives the through variable of the across variable
        (``i = z(v)``); ``False``: ``v = z(i)``.
    linear : bool
        A law ``z = c w`` reading nothing else (``coefficient`` is ``c``).
    coefficient : sympy.Expr, optional
        ``c`` of a linear law.
    ports : tuple of int
        The other dissipative ports whose variables the law reads (multiports), in the order of
        the form's variables after the port's own.
    reads : tuple of int
        The states the law reads, after those.
    form : Form, optional
        Law form in ``[w, w_other..., x_read...]``.
    placeholders : tuple of sympy.Expr
        What the form's placeholders stand for.
    lossless : bool
        A port of a multiport whose ports' powers cancel identically (a heat transfer: the heat
        leaving one body enters the other; it creates entropy, dissipates no energy): its power is
        left out of ``P_diss``, which is then exactly 0 as the generated loop's sum of the ports'
        ``w z(w)``.
    """

    record: Dissipation
    branch: int
    across: bool
    linear: bool
    coefficient: Optional[sp.Expr] = None
    ports: Tuple[int, ...] = ()
    reads: Tuple[int, ...] = ()
    form: Optional[Form] = None
    placeholders: Tuple[sp.Expr, ...] = ()
    lossless: bool = False

    @property
    def element(self) -> str:
        """The port's element name (``Q1.be`` for a transistor's port)."""
        return self.record.element

    @property
    def active(self) -> bool:
        """A controlled source's output (its power is injected)."""
        return self.record.active

    @property
    def nullator(self) -> bool:
        """An ideal op-amp's input (across and through variable zero)."""
        return self.record.nullator


@dataclass
class PortItem:
    """A source: ``u`` is its branch's across (``fixes="across"``) or through variable."""

    record: Port
    branch: int
    across: bool


@dataclass
class TwoPortItem:
    """An ideal transformer (``v_p = n v_s``, ``i_s = -n i_p``) or gyrator (``v_p = r i_s``, ``v_s = -r i_p``)."""

    record: TwoPort
    branch_p: int
    branch_s: int
    gyrator: bool
    ratio: sp.Expr


@dataclass
class CircuitData:
    """Nodes, branches and elements of a model (see the module docstring).

    Attributes
    ----------
    nodes : list of str
        The nodes but the datum ``0``; node ``k`` is unknown ``k`` of the engine.
    branches : list of Branch
        Every branch (receiver convention).
    b_from, b_to : ndarray of int
        Node index of each branch's ends (``-1``: the datum).
    in_tree : ndarray of bool
        The graph's normal tree (index-2 storages are the ones it cannot make natural).
    states, inputs : list of str
        Names, in the order of :attr:`phsym.model.Model.states` and ``inputs``.
    storages, dissipations, ports, twoports : list
        The element records (:class:`StorageItem`, ...).
    controls : list of sympy.Symbol
        The control parameters (``.param vol=0.5 control``), in the order of
        :attr:`phsym.model.Model.controls` (set by :attr:`phsym.model.Model.circuit`).
    derived : dict of sympy.Symbol to sympy.Expr
        The parameters derived from a control (``.param b={2*vol}``) as expressions of the
        independent ones.
    """

    nodes: List[str]
    branches: List[Branch]
    b_from: np.ndarray
    b_to: np.ndarray
    in_tree: np.ndarray
    states: List[str]
    inputs: List[str]
    storages: List[StorageItem] = field(default_factory=list)
    dissipations: List[DissipationItem] = field(default_factory=list)
    ports: List[PortItem] = field(default_factory=list)
    twoports: List[TwoPortItem] = field(default_factory=list)
    controls: List[sp.Symbol] = field(default_factory=list)
    derived: Dict[sp.Symbol, sp.Expr] = field(default_factory=dict)

    def control_reads(self, expr) -> List[int]:
        """The controls (indices in :attr:`controls`) an expression of parameters moves with.

        Parameters
        ----------
        expr : sympy.Expr or number
            An element's coefficient or placeholder.
        """
        if not self.controls:
            return []
        import sympy as sp
        free = sp.sympify(expr).xreplace(self.derived).free_symbols
        return [m for m, c in enumerate(self.controls) if c in free]

    def control_obstacles(self) -> List[str]:
        """Elements a control moves other than linear dissipations (their numbers are fixed per plan)."""
        if not self.controls:
            return []
        moved = lambda exprs: any(self.control_reads(e) for e in exprs)      # noqa: E731
        out = [f"{s.element}: a control parameter moves its storage law" for s in self.storages
               if moved([e for row in (s.hessian or ()) for e in row] + list(s.placeholders))]
        out += [f"{d.element}: a control parameter moves its nonlinear law" for d in self.dissipations
                if not d.linear and moved(d.placeholders)]
        out += [f"{t.record.element}: a control parameter moves its ratio" for t in self.twoports
                if moved([t.ratio])]
        return out

    @property
    def n_x(self) -> int:
        """Number of states."""
        return len(self.states)

    @property
    def is_linear(self) -> bool:
        """Quadratic ``H`` and linear dissipation laws."""
        return all(s.linear for s in self.storages) and all(d.linear for d in self.dissipations)

    @property
    def index2(self) -> bool:
        """Whether a storage is constrained by the network (a capacitor in a loop with voltage sources,
        an inductor in a cut set with current sources): the normal tree cannot make it natural."""
        return any(bool(self.in_tree[b]) != e for s in self.storages for b, e in zip(s.branches, s.effort_port))

    @property
    def stiff(self) -> bool:
        """Whether a storage is stiff (a junction charge)."""
        return any(s.stiff for s in self.storages)

    def numeric_obstacles(self) -> List[str]:
        """What the numeric engine cannot step yet, one line per element (empty when it can).

        A law reading a state that is solved through its effort, a law
        solved through its effort on an inductor-like port, and a control parameter that moves anything but a linear
        dissipation (a potentiometer's or a resistor's value is a run-time
        number of the numeric engine; a storage's, a nonlinear law's or a
        two-port's is not).
        """
        by_effort = {i: s for s in self.storages if s.by_effort for i in s.states}
        out = [f"{d.element} reads the state {self.states[i]} of {by_effort[i].element}, solved through its effort"
               for d in self.dissipations for i in d.reads if i in by_effort]
        out += [f"{s.element}: a law solved through its effort on an inductor-like port"
                for s in self.storages if s.by_effort and not s.effort_port[0]]
        return out + self.control_obstacles()

    @classmethod
    def build(cls, branches: Sequence[Branch], in_tree: Sequence[bool], storages: Sequence[Storage],
              dissipations: Sequence[Dissipation], ports: Sequence[Port],
              twoports: Sequence[TwoPort]) -> "CircuitData":
        """Collect the records (see the class docstring).

        Parameters
        ----------
        branches : sequence of Branch
            The graph's branches in model order.
        in_tree : sequence of bool
            The normal tree's flags (:func:`phsym.graph.branches_of`).
        storages, dissipations, ports, twoports : sequence
            The components' records (coupled inductors merged).
        """
        import sympy as sp
        bidx = {b.name: k for k, b in enumerate(branches)}
        nodes, b_from, b_to = incidence(branches)
        states: List[str] = []
        out = cls(nodes, list(branches), b_from, b_to, np.asarray(in_tree, dtype=bool), states,
                  [p.element for p in ports])
        state_branch: Dict[str, int] = {}
        for st in storages:
            idx = []
            for x, bname in zip(st.states, st.branches):
                state_branch[bname] = len(states)
                idx.append(len(states))
                states.append(x.name if isinstance(x, sp.Symbol) else str(x))
            out.storages.append(_storage(st, tuple(idx), tuple(bidx[b] for b in st.branches)))
        port_index = {d.element: j for j, d in enumerate(dissipations)}
        for j, d in enumerate(dissipations):
            out.dissipations.append(_dissipation(d, j, bidx[d.branch], port_index, state_branch))
        _mark_lossless(out.dissipations)
        out.ports = [PortItem(p, bidx[p.branch], p.fixes == "across") for p in ports]
        out.twoports = [TwoPortItem(t, bidx[t.branch_p], bidx[t.branch_s], t.kind == "gyrator", sp.sympify(t.ratio))
                        for t in twoports]
        return out


def incidence(branches: Sequence[Branch]) -> Tuple[List[str], np.ndarray, np.ndarray]:
    """``(nodes, b_from, b_to)``: the nodes but the datum in order of first appearance, and each
    branch's end nodes as their indices (``-1``: the datum)."""
    from ...common.names import DATUM
    nodes: List[str] = []
    nidx: Dict[str, int] = {}
    for b in branches:
        for n in (b.node_from, b.node_to):
            if n != DATUM and n not in nidx:
                nidx[n] = len(nodes)
                nodes.append(n)
    b_from = np.array([nidx.get(b.node_from, -1) for b in branches], dtype=np.int64)
    b_to = np.array([nidx.get(b.node_to, -1) for b in branches], dtype=np.int64)
    return nodes, b_from, b_to


def _storage(st: Storage, idx: Tuple[int, ...], branches: Tuple[int, ...]) -> StorageItem:
    import sympy as sp

    from ...components.base import EFFORT
    from .canonical import canonical
    ports = tuple(p == EFFORT for p in st.port_types)
    xs = _symbols("_state", len(st.states))
    sub = dict(zip(st.states, xs))
    if st.compliance is not None:
        return StorageItem(st, idx, branches, ports, True, None, stiff=st.stiff, compliance=st.compliance)
    if st.hessian is not None and len(xs) == 1:
        return StorageItem(st, idx, branches, ports, True, hessian=((st.hessian,),), stiff=st.stiff)
    H = sp.sympify(st.hamiltonian).xreplace(sub)
    if st.is_quadratic:
        if len(xs) == 1:        # H = a x^2 / 2: a = 2 H(1) (a quadratic form has no other term)
            hess = ((sp.expand(2 * H.xreplace({xs[0]: 1})),),)
        else:
            hess = tuple(tuple(sp.diff(H, a, b) for b in xs) for a in xs)
        return StorageItem(st, idx, branches, ports, True, hessian=hess, stiff=st.stiff)
    law = st.by_effort
    if law is not None and len(xs) == 1:
        sym, state = law.template      # the law in its template's symbol: one expression per model
        sub[law.effort] = sym
        exprs = [H, sp.sympify(state), sp.sympify(law.energy).xreplace(sub)]      # x(e) reads no state
        form, ph = canonical(exprs, [xs[0], sym], tag="storage-effort")
        return StorageItem(st, idx, branches, ports, False, form=form, placeholders=ph, by_effort=True,
                           stiff=st.stiff)
    form, ph = canonical([H], list(xs), tag="storage")
    return StorageItem(st, idx, branches, ports, False, form=form, placeholders=ph, stiff=st.stiff)


def _mark_lossless(items: List[DissipationItem]) -> None:
    """Mark the ports of each multiport (ports that read each other) whose powers ``w z(w)`` add up
    to zero identically (:attr:`DissipationItem.lossless`)."""
    seen = set()
    for j, d in enumerate(items):
        if not d.ports or j in seen or d.active:
            continue
        group = {j}
        todo = [j]
        while todo:
            for k in items[todo.pop()].ports:
                if k not in group:
                    group.add(k)
                    todo.append(k)
        seen |= group
        if any(items[k].active for k in group):
            continue
        import sympy as sp
        power = sp.Add(*[items[k].record.variable * sp.sympify(items[k].record.law) for k in sorted(group)])
        if power == 0 or sp.expand(power) == 0:
            for k in group:
                items[k].lossless = True


def _dissipation(d: Dissipation, j: int, branch: int, port_index: Dict[str, int],
                 state_branch: Dict[str, int]) -> DissipationItem:
    import sympy as sp

    from .canonical import canonical
    across = d.control == "across"
    if d.linear and not d.couples and not d.reads and not d.nullator and d.coefficient is not None:
        return DissipationItem(d, branch, across, True, coefficient=d.coefficient)
    law = sp.sympify(d.law)
    if d.linear and not d.couples and not d.reads and not d.nullator:
        c = law.xreplace({d.variable: 1})
        if law.xreplace({d.variable: 0}) != 0 or c.has(d.variable):
            raise StructureError(f"the linear law of {d.element} is not proportional to its variable: {law}",
                                 [d.element])
        return DissipationItem(d, branch, across, True, coefficient=c)
    ports, reads, var = [], [], [d.variable]
    for sym, name in d.couples:
        k = port_index.get(name)
        if k is None or k == j:
            raise StructureError(f"law of {d.element} reads the variable of {name!r}, "
                                 "which is not another dissipative port", [d.element])
        ports.append(k)
        var.append(sym)
    for sym, bname in d.reads:
        i = state_branch.get(bname)
        if i is None:
            raise StructureError(f"law of {d.element} reads the state of {bname!r}, which is not a "
                                 "storage branch", [d.element])
        reads.append(i)
        var.append(sym)
    fixed = _symbols("_port", len(var))
    form, ph = canonical([law.xreplace(dict(zip(var, fixed)))], list(fixed), tag="dissipation")
    return DissipationItem(d, branch, across, False, ports=tuple(ports), reads=tuple(reads), form=form,
                           placeholders=ph)
