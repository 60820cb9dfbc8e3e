"""Kernel groups: the instances of one law kernel, their numbers and their places.

Every nonlinear element of a circuit is an *instance* of a kernel
(:mod:`phsym.codegen.laws`): its row of placeholder values, its inputs (each
a linear combination of Newton's unknowns ``z`` and of the step's known
values ``K``, or one entry of ``K``) and its outputs.  A :class:`GroupTable`
collects the instances by kernel, lays them out in flat arrays (``P``,
``IN``, ``OUT``: see :mod:`phsym.codegen.laws.abi`) and says where each
instance's inputs and outputs live, so that one compiled loop evaluates all
groups one call each.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

import numpy as np

if TYPE_CHECKING:
    from ....codegen.laws.build import Kernel

__all__ = ["GroupTable", "Instance", "GROUP_FIELDS"]

#: Columns of the group table the compiled code reads: kernel address, instances, offsets of the
#: group's first row in ``P``, ``IN`` and ``OUT``, the widths of a row of each, the address of the
#: kernel's step preparation (0: none), the offset of its first row in ``W`` and that row's width
#: (:mod:`phsym.codegen.laws.abi`).
GROUP_FIELDS = ("address", "n", "p0", "i0", "o0", "p_width", "i_width", "o_width", "prepare", "w0", "w_width")

#: An input: ``(z entries [(col, coef)], K entries [(index, coef)])``.
Input = Tuple[List[Tuple[int, float]], List[Tuple[int, float]]]


@dataclass
class _Group:
    kernel: Kernel
    params: List[np.ndarray] = field(default_factory=list)
    var: List[List[Input]] = field(default_factory=list)
    const: List[List[int]] = field(default_factory=list)
    labels: List[str] = field(default_factory=list)
    p0: int = 0
    i0: int = 0
    o0: int = 0
    w0: int = 0


@dataclass(frozen=True)
class Instance:
    """Handle of one instance: its group and index in it."""

    group: int
    index: int


class GroupTable:
    """Instances of kernels (see the module docstring)."""

    def __init__(self):
        self._groups: List[_Group] = []
        self._by_key: Dict[str, int] = {}
        self._done = False

    def add(self, kernel: Kernel, params: np.ndarray, var: Sequence[Input], const: Sequence[int],
            label: str) -> Instance:
        """Add an instance.

        Parameters
        ----------
        kernel : Kernel
            Its kernel.
        params : ndarray
            Its placeholder values.
        var : sequence of Input
            Its unknown-dependent inputs (``kernel.n_var`` of them).
        const : sequence of int
            Its constant inputs: indices in ``K`` (``kernel.n_const`` of them).
        label : str
            Element name (error messages).
        """
        if len(var) != kernel.n_var or len(const) != kernel.n_const:
            raise ValueError(f"{label}: kernel takes {kernel.n_var} + {kernel.n_const} inputs")
        g = self._by_key.get(kernel.key)
        if g is None:
            g = self._by_key[kernel.key] = len(self._groups)
            self._groups.append(_Group(kernel))
        grp = self._groups[g]
        grp.params.append(np.asarray(params, dtype=float))
        grp.var.append(list(var))
        grp.const.append(list(const))
        grp.labels.append(label)
        return Instance(g, len(grp.labels) - 1)

    def finish(self) -> None:
        """Lay the groups out (offsets); no instance can be added afterwards."""
        p = i = o = w = 0
        for grp in self._groups:
            grp.p0, grp.i0, grp.o0, grp.w0 = p, i, o, w
            n, k = len(grp.labels), grp.kernel
            p += n * self._p_width(grp)
            i += n * k.in_width
            o += n * k.width
            w += n * k.n_pre
        self.n_p, self.n_in, self.n_out, self.n_w = p, i, o, w
        self._done = True

    @staticmethod
    def _p_width(grp: _Group) -> int:
        return max(grp.params[0].size if grp.params else 0, 1)

    def __len__(self) -> int:
        return len(self._groups)

    def out(self, inst: Instance, m: int) -> int:
        """Position in ``OUT`` of output ``m`` of ``inst``."""
        grp = self._groups[inst.group]
        return grp.o0 + inst.index * grp.kernel.width + m

    def derivative(self, inst: Instance, m: int, j: int) -> int:
        """Position in ``OUT`` of ``d output_m / d var_j`` of ``inst``."""
        grp = self._groups[inst.group]
        k = grp.kernel
        return grp.o0 + inst.index * k.width + k.n_out + m * k.n_var + j

    def inp(self, inst: Instance, j: int) -> int:
        """Position in ``IN`` of input ``j`` of ``inst`` (var inputs first)."""
        grp = self._groups[inst.group]
        return grp.i0 + inst.index * grp.kernel.in_width + j

    def shape(self, inst: Instance) -> Tuple[int, int]:
        """``(n_out, n_var)`` of the instance's kernel."""
        k = self._groups[inst.group].kernel
        return k.n_out, k.n_var

    def instances(self):
        """Every ``(Instance, var inputs, const inputs, label)``."""
        for g, grp in enumerate(self._groups):
            for i in range(len(grp.labels)):
                yield Instance(g, i), grp.var[i], grp.const[i], grp.labels[i]

    def arrays(self) -> Tuple[np.ndarray, np.ndarray]:
        """``(table, P)``: the group table (:data:`GROUP_FIELDS`, int64) and the flat placeholders."""
        table = np.zeros((len(self._groups), len(GROUP_FIELDS)), dtype=np.int64)
        P = np.zeros(max(self.n_p, 1))
        for g, grp in enumerate(self._groups):
            k, n, pw = grp.kernel, len(grp.labels), self._p_width(grp)
            table[g] = (k.address, n, grp.p0, grp.i0, grp.o0, pw, k.in_width, k.width, k.prepare, grp.w0, k.n_pre)
            if grp.params and grp.params[0].size:
                P[grp.p0:grp.p0 + n * pw] = np.concatenate(grp.params)
        return table, P

    @property
    def kernels(self) -> List[Kernel]:
        """The kernels, one per group (kept alive with the table)."""
        return [g.kernel for g in self._groups]

    def label(self, inst: Instance) -> str:
        """The element of an instance."""
        return self._groups[inst.group].labels[inst.index]
