"""The port-Hamiltonian structure of a network in Dirac (implicit) form.

phsym represents every model, explicit or differential-algebraic, as

    [ dx/dt ]       [ grad H(x) ]
    [  f_w  ]  = J  [    e_w    ]          J = -J^T
    [   0   ]       [  lambda   ]
    [  -y   ]       [     u     ]

where

* ``x`` are the storage states (charges, fluxes, momenta, elongations);
* each dissipative port ``j`` has a variable ``w_j`` and a law ``z_j``; it
  is *effort-out* (``f_w = w``, ``e_w = z(w)``, the PyPHS convention) or
  *flow-out* (``e_w = w``, ``f_w = z(w)``) depending on how the network
  drives it; either way it receives the power ``w z(w) >= 0``;
* ``lambda`` are algebraic variables with zero flow: storage ports the
  network constrains (capacitor loops with voltage sources, inductor cut
  sets with current sources: index 2), and the port variables and
  multipliers of ideal transformers and gyrators;
* ``u`` are the port inputs and ``y`` the collocated outputs.

Because J is skew, ``e^T f = 0`` gives the power balance
``dH/dt = -sum_j w_j z_j(w_j) + y^T u`` for any solution, which is also what
makes the discretisations of :mod:`phsym.codegen` passive.  When the algebraic
part can be eliminated (:meth:`Structure.explicit`), the model is an explicit
PHS ``[dx/dt; -y] = (J - R) [grad H; u]`` (possibly with feedthrough); the
descriptor form ``E xi' = (J - R) z(xi) + B u`` of the pH-DAE literature is
given by :meth:`Structure.descriptor` (linear dissipation) and
:meth:`Structure.linearize`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Dict, List, Optional, Sequence, Tuple

import sympy as sp

from ..components.base import EFFORT, Dissipation, Port, Storage, TwoPort
from ..components.element import DATUM
from ..errors import StructureError
from ..graph import BranchGraph, branches_of, check_sources, loop_entries, tree_path
from .multiport import couple_ports, port_groups, read_states

__all__ = ["Structure", "Variable"]


@dataclass(frozen=True)
class Variable:
    """One entry of the effort vector e (and the matching flow f = J e).

    Attributes
    ----------
    name : str
        Label, e.g. ``q_C1``, ``w_R1``, ``lam_C2``, ``V1``.
    block : str
        ``"x"``, ``"w"``, ``"lambda"`` or ``"u"``.
    effort : sympy.Expr
        The effort entry (``dH/dx``, ``z(w)`` or ``w``, ``lambda``, ``u``).
    flow : sympy.Expr or None
        What the flow row equals (``dx/dt`` symbol name, ``w`` or ``z(w)``,
        0, ``-y``) - for display.
    element : str
        Owning element (empty for multipliers).
    """

    name: str
    block: str
    effort: sp.Expr
    flow: object
    element: str = ""


@dataclass
class DissipativePort:
    """A dissipative port with its orientation in the Dirac form."""

    element: str
    branch: int
    w: sp.Symbol
    z: sp.Expr            # law z(w) in the symbol w
    effort_out: bool      # True: f = w, e = z(w);  False: e = w, f = z(w)
    linear: bool
    #: other ports whose variables ``w_k`` the law ``z`` also reads (multiports)
    coupled: Tuple[int, ...] = ()
    #: a controlled source's port (not passive; see Dissipation.active)
    active: bool = False
    #: states the law ``z`` reads (indices into ``Structure.states``)
    reads: Tuple[int, ...] = ()
    #: an ideal op-amp's input (see :attr:`Dissipation.nullator`): effort and flow are zero
    nullator: bool = False

    @property
    def effort(self) -> sp.Expr:
        """Its entry of the effort vector in ``w``: ``z(w)`` (effort-out), ``w``, or 0 (nullator)."""
        return sp.Integer(0) if self.nullator else (self.z if self.effort_out else self.w)

    @property
    def flow(self) -> sp.Expr:
        """Its flow in ``w`` (the network sets it to ``(J e)_w``): ``w``, ``z(w)``, or 0 (nullator)."""
        return sp.Integer(0) if self.nullator else (self.w if self.effort_out else self.z)


class Structure:
    """Port-Hamiltonian structure of a network (see module docstring).

    Parameters
    ----------
    graph : phsym.graph.BranchGraph
        The branch graph with its normal tree (:func:`phsym.graph.build_graph`), kept as
        :attr:`topology`; :attr:`graph` is the same as a ``networkx.MultiDiGraph``.
    storages : list of Storage
        Storage records of the components (coupled inductors merged).
    dissipations : list of Dissipation
        Dissipation records.
    ports : list of Port
        Source ports.
    twoports : list of TwoPort
        Ideal two-ports.

    Attributes
    ----------
    branches : list of Branch
        All branches; ``in_tree[k]`` says whether branch k is a tree branch.
    states : list of sympy.Symbol
        Storage states x.
    hamiltonian : sympy.Expr
        Total energy H(x).
    variables : list of Variable
        Effort-vector layout ``[x, w, lambda, u]``.
    J : dict
        Sparse skew matrix: ``{(row, col): sympy.Expr}`` over ``variables``.
    """

    def __init__(self, graph: BranchGraph, storages: Sequence[Storage],
                 dissipations: Sequence[Dissipation], ports: Sequence[Port],
                 twoports: Sequence[TwoPort]):
        self.topology = graph
        self.branches, self.in_tree = branches_of(graph)
        self.storages = list(storages)
        self.ports = list(ports)
        self.twoports = list(twoports)
        bidx = {b.name: k for k, b in enumerate(self.branches)}
        check_sources(graph, self.branches, self.in_tree, self.ports)
        rows, cols, vals, _, self._paths = loop_entries(self.branches, self.in_tree)
        tree = [k for k in range(len(self.branches)) if self.in_tree[k]]
        links = [k for k in range(len(self.branches)) if not self.in_tree[k]]
        # S in branch indexing: c = S a
        S: Dict[int, Dict[int, int]] = {k: {} for k in range(len(self.branches))}
        for r, c, v in zip(rows, cols, vals):
            l, t = links[r], tree[c]
            S[l][t] = int(v)       # v_L = M v_T
            S[t][l] = -int(v)      # i_T = -M^T i_L
        self._S = S

        # ----- variables: x block
        self.states: List[sp.Symbol] = []
        self.hamiltonian = sp.Integer(0)
        self.state_branch: List[int] = []
        self.state_natural: List[bool] = []
        self.state_storage: List[int] = []
        self.state_initial: List[Optional[sp.Expr]] = []
        grads = []
        self.hamiltonian = sp.Add(*[st.hamiltonian for st in self.storages])
        for si, st in enumerate(self.storages):
            for x, bname, ptype, ic in zip(st.states, st.branches, st.port_types, st.initial):
                k = bidx[bname]
                self.states.append(x)
                self.state_branch.append(k)
                natural = bool(self.in_tree[k]) == (ptype == EFFORT)
                self.state_natural.append(natural)
                self.state_storage.append(si)
                self.state_initial.append(ic)
                grads.append(sp.diff(st.hamiltonian, x))
        self.gradients = grads
        # ----- w block
        self.dissipative: List[DissipativePort] = []
        for d in dissipations:
            self.dissipative.append(self._orient(d, bidx[d.branch]))
        couple_ports(self.dissipative, dissipations)
        read_states(self.dissipative, dissipations, self.states, [self.branches[k].name for k in self.state_branch])
        variables: List[Variable] = []
        self._a_var: Dict[int, int] = {}   # branch -> variable whose effort is a_b
        self._c_row: Dict[int, int] = {}   # branch -> row whose flow is c_b (if a plain row)
        for i, x in enumerate(self.states):
            variables.append(Variable(str(x), "x", grads[i], sp.Symbol("d" + str(x)),
                                      self._elem(self.state_branch[i])))
        for dp in self.dissipative:
            variables.append(Variable(str(dp.w), "w", dp.effort, dp.flow, dp.element))
        nx_, nw = len(variables) - len(self.dissipative), len(self.dissipative)
        lam: List[Variable] = []
        self.lambda_of_state: Dict[int, int] = {}
        for i in range(len(self.states)):
            if not self.state_natural[i]:
                s = sp.Symbol(f"lam_{self.states[i]}", real=True)
                self.lambda_of_state[i] = nx_ + nw + len(lam)
                lam.append(Variable(str(s), "lambda", s, 0, self._elem(self.state_branch[i])))
        self.twoport_vars: List[Tuple[TwoPort, List[int], Optional[int], object]] = []
        for tp in self.twoports:
            kp, ks = bidx[tp.branch_p], bidx[tp.branch_s]
            ids = []
            for k, tag in ((kp, "p"), (ks, "s")):
                s = sp.Symbol(f"lam_{tp.element}.{tag}", real=True)
                ids.append(nx_ + nw + len(lam))
                lam.append(Variable(str(s), "lambda", s, 0, tp.element))
            rel, vec = self._twoport_relation(tp, kp, ks)
            mu = None
            if rel == "constrained":
                s = sp.Symbol(f"mu_{tp.element}", real=True)
                mu = nx_ + nw + len(lam)
                lam.append(Variable(str(s), "lambda", s, 0, tp.element))
            self.twoport_vars.append((tp, ids, mu, (rel, vec, kp, ks)))
        variables += lam
        n_nonu = len(variables)
        self.inputs: List[sp.Symbol] = []
        for p in self.ports:
            u = sp.Symbol(p.element, real=True)
            self.inputs.append(u)
            variables.append(Variable(p.element, "u", u, sp.Symbol(f"-y({p.element})"), p.element))
        self.variables = variables
        self.n_x, self.n_w, self.n_lambda, self.n_u = nx_, nw, len(lam), len(self.ports)
        # ----- map branches to variables
        for i, k in enumerate(self.state_branch):
            if self.state_natural[i]:
                self._a_var[k] = i
                self._c_row[k] = i
            else:
                self._a_var[k] = self.lambda_of_state[i]
                self._c_row[k] = self.lambda_of_state[i]
        for j, dp in enumerate(self.dissipative):
            self._a_var[dp.branch] = nx_ + j
            self._c_row[dp.branch] = nx_ + j
        for tp, ids, mu, (rel, vec, kp, ks) in self.twoport_vars:
            self._a_var[kp], self._a_var[ks] = ids
            self._c_row[kp], self._c_row[ks] = ids
        for p_i, p in enumerate(self.ports):
            k = bidx[p.branch]
            self._a_var[k] = n_nonu + p_i
            self._c_row[k] = n_nonu + p_i
        # ----- assemble J
        J: Dict[Tuple[int, int], sp.Expr] = {}
        for k, row in S.items():
            r = self._c_row[k]
            for kk, v in row.items():
                J[(r, self._a_var[kk])] = sp.Integer(v)
        for i, lam_i in self.lambda_of_state.items():
            J[(lam_i, i)] = sp.Integer(-1)
            J[(i, lam_i)] = sp.Integer(1)
        for tp, ids, mu, (rel, vec, kp, ks) in self.twoport_vars:
            ip, is_ = ids
            if rel == "natural":      # c = K a with K = [[0, k], [-k, 0]]
                kk = vec
                J[(ip, is_)] = J.get((ip, is_), 0) - kk
                J[(is_, ip)] = J.get((is_, ip), 0) + kk
            else:                     # c = g mu, g^T a = 0
                g0, g1 = vec
                J[(ip, mu)], J[(is_, mu)] = -g0, -g1
                J[(mu, ip)], J[(mu, is_)] = g0, g1
        self.J = {key: val for key, val in J.items() if val != 0}
        self._is_linear: Optional[bool] = None

    # ------------------------------------------------------------ helpers
    @cached_property
    def graph(self):
        """The branch graph as a ``networkx.MultiDiGraph`` (built on first use; the structure
        works on :attr:`topology`)."""
        return self.topology.to_networkx()

    def _elem(self, k: int) -> str:
        return self.branches[k].element

    def _orient(self, d: Dissipation, k: int) -> DissipativePort:
        tree = bool(self.in_tree[k])
        w = sp.Symbol(f"w_{d.element}", real=True)
        law = d.law.subs(d.variable, w)
        # a = across on tree branches, through on links; c the other one.
        # effort-out (natural) means a = z(c): law must give 'a' from 'c'.
        gives_through = d.control == "across"      # i = f(v)
        effort_out = (not tree) == gives_through    # link: a = i; tree: a = v
        if not effort_out and d.linear:
            coef = sp.diff(law, w)
            law = w / coef
            effort_out = True
        return DissipativePort(d.element, k, w, law, effort_out, d.linear, active=d.active, nullator=d.nullator)

    def _twoport_relation(self, tp: TwoPort, kp: int, ks: int):
        """Relation of a two-port in Dirac variables ``a`` (inputs) and ``c``.

        Returns ``("natural", k)`` for ``c = [[0, k], [-k, 0]] a`` or
        ``("constrained", (g_p, g_s))`` for ``c = g mu``, ``g^T a = 0``.
        """
        tp_tree, ts_tree = bool(self.in_tree[kp]), bool(self.in_tree[ks])
        n = tp.ratio
        if tp.kind == "transformer":     # v_p = n v_s, i_s = -n i_p
            if tp_tree and not ts_tree:  # a = (v_p, i_s); c = (i_p, v_s) = (-a_s/n, a_p/n)
                return "natural", -1 / n
            if ts_tree and not tp_tree:  # a = (i_p, v_s); c = (v_p, i_s) = (n a_s, -n a_p)
                return "natural", n
            if tp_tree:                  # both tree: a_p - n a_s = 0; c = (i_p, i_s) = mu (1, -n)
                return "constrained", (sp.Integer(1), -n)
            return "constrained", (n, sp.Integer(1))   # both links: n a_p + a_s = 0
        # gyrator: v_p = r i_s, v_s = -r i_p
        if tp_tree and ts_tree:          # a = (v_p, v_s); c = (i_p, i_s) = (-a_s/r, a_p/r)
            return "natural", -1 / n
        if not tp_tree and not ts_tree:  # a = (i_p, i_s); c = (v_p, v_s) = (r a_s, -r a_p)
            return "natural", n
        if tp_tree:                      # a = (v_p, i_s): a_p - r a_s = 0; c = (i_p, v_s) = mu (1, -r)
            return "constrained", (sp.Integer(1), -n)
        return "constrained", (n, sp.Integer(1))       # a = (i_p, v_s): r a_p + a_s = 0

    # -------------------------------------------------------- public views
    @property
    def size(self) -> int:
        """Length of the effort vector."""
        return len(self.variables)

    def J_matrix(self) -> sp.Matrix:
        """Dense sympy matrix of J (for display; small models)."""
        J = sp.zeros(self.size, self.size)
        for (r, c), v in self.J.items():
            J[r, c] = v
        return J

    def J_numeric(self, values: Dict[sp.Symbol, float], dense: bool = False):
        """J evaluated at parameter values, as a scipy CSR matrix (``dense``: a numpy array; no scipy
        import, for the small models a netlist's load checks)."""
        rows, cols, data = [], [], []
        for (r, c), v in self.J.items():
            rows.append(r)
            cols.append(c)
            data.append(float(v) if v.is_number else
                        float(v.xreplace({s: sp.Float(values[s]) for s in v.free_symbols if s in values})))
        if dense:
            import numpy as np
            J = np.zeros((self.size, self.size))
            np.add.at(J, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)), data)
            return J
        import scipy.sparse as sps
        return sps.csr_matrix((data, (rows, cols)), shape=(self.size, self.size))

    def block(self, name: str) -> slice:
        """Slice of a block (``x``, ``w``, ``lambda``, ``u``) in the effort vector."""
        o = {"x": 0, "w": self.n_x, "lambda": self.n_x + self.n_w,
             "u": self.n_x + self.n_w + self.n_lambda}[name]
        n = {"x": self.n_x, "w": self.n_w, "lambda": self.n_lambda, "u": self.n_u}[name]
        return slice(o, o + n)

    def port_groups(self) -> List[Tuple[int, ...]]:
        """Dissipative ports grouped into devices (:func:`~phsym.structure.multiport.port_groups`)."""
        return port_groups(self.dissipative)

    @property
    def is_explicit_ode(self) -> bool:
        """Whether there are no algebraic (lambda) variables."""
        return self.n_lambda == 0

    @property
    def is_linear(self) -> bool:
        """Quadratic H, linear dissipation laws."""
        if self._is_linear is None:
            self._is_linear = (all(st.is_quadratic for st in self.storages)
                               and all(d.linear for d in self.dissipative))
        return self._is_linear

    def branch_map(self, k: int) -> Tuple[Dict[Tuple[str, int], sp.Expr], Dict[Tuple[str, int], sp.Expr]]:
        """Across and through variable of branch ``k`` as linear combinations.

        Returns
        -------
        across, through : dict
            ``{("e", idx) or ("f", idx): coefficient}``: the branch variable
            equals ``sum coef * e[idx]`` (effort vector) or ``* f[idx]``
            (flow vector, ``f = J e``).
        """
        a = {("e", self._a_var[k]): sp.Integer(1)}
        c: Dict[Tuple[str, int], sp.Expr]
        i_state = [i for i, kk in enumerate(self.state_branch) if kk == k]
        if i_state and not self.state_natural[i_state[0]]:
            c = {("e", i_state[0]): sp.Integer(1)}
        else:
            c = {("f", self._c_row[k]): sp.Integer(1)}
            for tp, ids, mu, (rel, vec, kp, ks) in self.twoport_vars:
                if k in (kp, ks):
                    side = 0 if k == kp else 1
                    if rel == "natural":   # c = K a
                        kk = vec
                        c = ({("e", ids[1]): kk} if side == 0 else {("e", ids[0]): -kk})
                    else:
                        c = {("e", mu): vec[side]}
        if self.in_tree[k]:
            return a, c
        return c, a

    def node_potential(self, node: str) -> Dict[Tuple[str, int], sp.Expr]:
        """Potential of ``node`` relative to the datum as a linear combination
        (see :meth:`branch_map`).

        Parameters
        ----------
        node : str
            Node name.
        """
        if node == DATUM or node.lower() == "gnd":
            return {}
        if node not in self.topology:      # node names ignore case, as in SPICE
            node = next((n for n in self.topology if str(n).lower() == node.lower()), node)
        if node not in self.topology:
            raise StructureError(f"unknown node {node!r}")
        path = tree_path(self.topology, node, DATUM)
        if not path:
            raise StructureError(f"node {node!r} has no tree path to the datum")
        bidx = {b.name: k for k, b in enumerate(self.branches)}
        out: Dict[Tuple[str, int], sp.Expr] = {}
        for u_, _v, name in path:
            k = bidx[name]
            sgn = 1 if self.branches[k].node_from == u_ else -1
            for key, coef in self.branch_map(k)[0].items():
                out[key] = out.get(key, 0) + sgn * coef
        return {k: v for k, v in out.items() if v != 0}
