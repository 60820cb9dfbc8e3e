"""Unknowns, equations and known values of a circuit's step, element by element.

The numeric engine writes a step of any scheme in nodal form (the
port-Hamiltonian MNA of Guenther, Bartel, Jacob and Reis, with the step's
storage increments as unknowns).  Newton's unknowns ``z`` are

* the node potentials ``e`` (step values: midpoint values for the
  discrete-gradient and midpoint schemes, end values for backward Euler);
* the state increments ``dx`` over the step (for a storage solved through its
  effort, the effort's increment);
* the through variables the network cannot give from potentials: currents of
  current-controlled dissipations, of voltage sources and two-ports, and the
  unknown of an ideal op-amp's input.

One equation per unknown: Kirchhoff's current law at each node, and per
element its law: a capacitor-like state ``gbar(x, dx) = v`` (its current
``dx / h`` into the nodes), an inductor-like one ``dx / h = v`` (its current
``gbar``), ``v = z(i)``, ``v = u``, a transformer's ``v_p = n v_s``...
``gbar`` is the scheme's discrete gradient, the same formulas as the
generated loop's (:func:`phsym.codegen.gradients.storage_gradients`).  Every
branch's voltage is a difference of potentials, so Kirchhoff's voltage law
holds by construction, and at a solution ``sum_b v_b i_b = e^T (KCL) = 0``:
the step's power balance (Tellegen) is exact up to Newton's tolerance, with
``v_b i_b`` of a storage ``gbar dx / h = (H(x + dx) - H(x)) / h``.

:class:`Layout` numbers the unknowns and the known values ``K = [x, x_scale,
u_step, efforts_start, 1, controls_step]`` of a step (a control parameter
is a run-time number: its step value, by the inputs' rule, is read by the
kernels of the elements it moves).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

import numpy as np

if TYPE_CHECKING:       # a warm start's loop reads the layout without the structure layer (sympy)
    from ....structure.circuit.data import CircuitData

__all__ = ["Layout", "NODE", "STATE", "CURRENT"]

#: Kinds of unknowns (their Newton scale: 1, the state's scale, 1).
NODE, STATE, CURRENT = 0, 1, 2


@dataclass
class Layout:
    """Numbering of a circuit's step (see the module docstring).

    Attributes
    ----------
    n_nodes, n_x, n_z : int
        Nodes (unknowns ``0 .. n_nodes-1``), states (unknowns ``n_nodes + i``), all unknowns.
    names : list of str
        Name of each unknown (``v(out)``, ``q_C1``, ``i(V1)``...).
    kinds : ndarray of int
        :data:`NODE`, :data:`STATE` or :data:`CURRENT` per unknown.
    current : dict of int to int
        Unknown of each branch whose current is one (by branch index).
    w_unknown : dict of int to int
        Unknown of each dissipation whose port variable is one (through-controlled, nullators).
    effort_index : dict of int to int
        Index in ``K``'s start efforts of each state solved through its effort.
    n_k : int
        Length of ``K``.
    """

    n_nodes: int
    n_x: int
    n_z: int
    names: List[str]
    kinds: np.ndarray
    current: Dict[int, int]
    w_unknown: Dict[int, int]
    effort_index: Dict[int, int]
    n_u: int
    n_c: int = 0

    @classmethod
    def of(cls, c: CircuitData, converted: Optional[set] = None) -> "Layout":
        """Number the unknowns of ``c``.

        Parameters
        ----------
        c : CircuitData
            The circuit.
        converted : set of int, optional
            Linear current-controlled dissipations written as conductances (no unknown).
        """
        converted = converted or set()
        names = [f"v({n})" for n in c.nodes] + list(c.states)
        kinds = [NODE] * len(c.nodes) + [STATE] * c.n_x
        current: Dict[int, int] = {}
        w_unknown: Dict[int, int] = {}

        def new(name: str) -> int:
            names.append(name)
            kinds.append(CURRENT)
            return len(names) - 1
        for j, d in enumerate(c.dissipations):
            if d.nullator:
                w_unknown[j] = new(f"w({d.element})")
            elif not d.across and j not in converted:
                w_unknown[j] = current[d.branch] = new(f"i({d.element})")
        for p in c.ports:
            if p.across:
                current[p.branch] = new(f"i({p.record.element})")
        for t in c.twoports:
            current[t.branch_p] = new(f"i({c.branches[t.branch_p].name})")
            if t.gyrator:
                current[t.branch_s] = new(f"i({c.branches[t.branch_s].name})")
        effort_index = {}
        for s in c.storages:
            if s.by_effort:
                effort_index[s.states[0]] = len(effort_index)
                names[len(c.nodes) + s.states[0]] = f"v({s.element})"
        return cls(len(c.nodes), c.n_x, len(names), names, np.array(kinds, dtype=np.int64), current, w_unknown,
                   effort_index, len(c.ports), len(c.controls))

    # ---------------------------------------------------------------- K
    @property
    def n_effort(self) -> int:
        """States solved through their effort."""
        return len(self.effort_index)

    def k_x(self, i: int) -> int:
        """Index in ``K`` of state ``i`` at the step's start."""
        return i

    def k_scale(self, i: int) -> int:
        """Index in ``K`` of state ``i``'s scale."""
        return self.n_x + i

    def k_u(self, j: int) -> int:
        """Index in ``K`` of input ``j``'s step value."""
        return 2 * self.n_x + j

    def k_effort(self, i: int) -> int:
        """Index in ``K`` of the start effort of state ``i`` (solved through its effort)."""
        return 2 * self.n_x + self.n_u + self.effort_index[i]

    @property
    def k_one(self) -> int:
        """Index in ``K`` of the constant 1."""
        return 2 * self.n_x + self.n_u + self.n_effort

    def k_c(self, m: int) -> int:
        """Index in ``K`` of control ``m``'s step value (:attr:`CircuitData.controls` order)."""
        return self.k_one + 1 + m

    @property
    def n_k(self) -> int:
        """Length of ``K``."""
        return self.k_one + 1 + self.n_c

    def z_state(self, i: int) -> int:
        """Unknown of state ``i``'s increment."""
        return self.n_nodes + i


def branch_voltage(c: CircuitData, b: int) -> List[Tuple[int, float]]:
    """Branch ``b``'s across variable in the node potentials: ``[(unknown, coefficient)]``.

    Parameters
    ----------
    c : CircuitData
        The circuit.
    b : int
        Branch index.
    """
    out = []
    if c.b_from[b] >= 0:
        out.append((int(c.b_from[b]), 1.0))
    if c.b_to[b] >= 0:
        out.append((int(c.b_to[b]), -1.0))
    return out
