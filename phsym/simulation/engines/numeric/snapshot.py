"""A numeric step system as numbers: what a warm-start snapshot keeps of it.

:class:`~.loop.NumericLoop` reads of its :class:`~.step.StepSystem` only
numbers (the triplets of the residual, the kernels' inputs and the powers,
the Jacobian's pattern and stamps, the kernel groups' tables and
placeholders, the junctions' limits, the layout's names).  :func:`pack`
writes them as a JSON-able description and named arrays (the format of
:meth:`phsym.simulation.plan.RunPlan.to_arrays`, :mod:`phsym.simulation.warm`);
:class:`FrozenSystem` gives back an object with the same attributes, without the
circuit, sympy or the laws' derivations: the kernels load by their cache
keys on the first run (a kernel that left the cache raises ``ImportError``,
and :func:`phsym.simulate` then plans again from the netlist).
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Dict, List, Tuple

import numpy as np

from ....codegen.laws.native import compiled
from .groups import GROUP_FIELDS
from .layout import Layout
from .limits import Slots
from .sparse_build import Compressed, StepNumbers, Triplets

__all__ = ["pack", "FrozenSystem"]

#: The step system's triplets (:class:`~.sparse_build.Triplets`) a loop reads.
TRIPLETS = ("IZ", "IK", "R", "RO", "RK", "DZ", "DO", "BZ", "BO", "BK", "V", "QL")
#: Its plain arrays.
ARRAYS = ("stamp_pos", "stamp_src", "energy_inputs", "passive", "active", "sources", "stiff_end", "control_values",
          "_jconst_map")
#: The junction limits' arrays (:class:`~.limits.Slots`).
SLOTS = ("terms", "c", "c0", "vt", "kabs", "per_h", "readers", "tptr", "rptr")


def _groups(G, name: str, meta: dict, arrays: dict) -> None:
    table, P = G.arrays()
    meta[name] = {"keys": [k.key for k in G.kernels], "n_in": int(G.n_in), "n_out": int(G.n_out)}
    arrays[f"{name}_table"] = table
    arrays[f"{name}_P"] = P


def pack(S) -> Tuple[dict, Dict[str, np.ndarray]]:
    """``(meta, arrays)`` of a step system (see the module docstring).

    Parameters
    ----------
    S : StepSystem
        The system.
    """
    L, c = S.L, S.circuit
    meta = {"scheme": S.scheme, "n_branches": len(c.branches), "n_ports": len(c.ports), "states": list(c.states),
            "layout": {"n_nodes": L.n_nodes, "n_x": L.n_x, "n_z": L.n_z, "names": list(L.names),
                       "current": sorted(L.current.items()), "w_unknown": sorted(L.w_unknown.items()),
                       "effort_index": sorted(L.effort_index.items()), "n_u": L.n_u, "n_c": L.n_c},
            "triplets": {}, "n_slots": len(S.slots), "J_shape": list(S.J.shape)}
    arrays: Dict[str, np.ndarray] = {"layout_kinds": np.asarray(L.kinds, np.int64),
                                     "J_indptr": S.J.indptr, "J_indices": S.J.indices,
                                     "stamp_a": S._stamp_ab[0], "stamp_b": S._stamp_ab[1]}
    for name in TRIPLETS:
        T = getattr(S, name)
        meta["triplets"][name] = list(T.shape)
        arrays[f"t_{name}_rows"] = np.asarray(T.rows, np.int64)
        arrays[f"t_{name}_cols"] = np.asarray(T.cols, np.int64)
        arrays[f"t_{name}_a"] = np.asarray(T.a, float)
        arrays[f"t_{name}_b"] = np.asarray(T.b, float)
    for name in ARRAYS:
        arrays[f"a_{name}"] = np.asarray(getattr(S, name))
    for name in SLOTS:
        arrays[f"s_{name}"] = np.asarray(getattr(S.slots, name))
    _groups(S.groups, "groups", meta, arrays)
    _groups(S.energies, "energies", meta, arrays)
    return meta, arrays


class _FrozenGroups:
    """A :class:`~.groups.GroupTable`'s numbers; its kernels load (by key) on first use."""

    def __init__(self, meta: dict, table: np.ndarray, P: np.ndarray):
        self.keys: List[str] = list(meta["keys"])
        self.n_in, self.n_out = int(meta["n_in"]), int(meta["n_out"])
        self._table, self._P = table, P
        self._modules: list = []

    def __len__(self) -> int:
        return len(self.keys)

    def arrays(self) -> Tuple[np.ndarray, np.ndarray]:
        """``(table, P)`` with the kernels' addresses of this process (see :meth:`GroupTable.arrays`)."""
        if len(self._modules) != len(self.keys):
            table = np.array(self._table, dtype=np.int64).reshape(-1, len(GROUP_FIELDS))
            loaded = [compiled(k, int(table[g, 10])) for g, k in enumerate(self.keys)]    # ImportError: plan again
            for g, (owner, address, prepare) in enumerate(loaded):
                table[g, 0], table[g, 8] = address, prepare
            self._modules = [owner for owner, _, _ in loaded]
            self._table = table
        return self._table, self._P


class FrozenSystem(StepNumbers):
    """A step system restored from :func:`pack`'s ``(meta, arrays)``: the attributes and number methods of a
    :class:`~.step.StepSystem` that :class:`~.loop.NumericLoop` reads."""

    def __init__(self, meta: dict, arrays: Dict[str, np.ndarray]):
        lm = meta["layout"]
        self.L = Layout(int(lm["n_nodes"]), int(lm["n_x"]), int(lm["n_z"]), list(lm["names"]),
                        np.asarray(arrays["layout_kinds"], np.int64), {int(a): int(b) for a, b in lm["current"]},
                        {int(a): int(b) for a, b in lm["w_unknown"]}, {int(a): int(b) for a, b in lm["effort_index"]},
                        int(lm["n_u"]), int(lm.get("n_c", 0)))
        self.scheme = meta["scheme"]
        # what a loop's messages read of the circuit (a frozen loop names states and unknowns only)
        self.circuit = SimpleNamespace(states=list(meta["states"]), n_x=len(meta["states"]), nodes=[],
                                       branches=[None] * int(meta["n_branches"]), ports=[None] * int(meta["n_ports"]),
                                       storages=[])
        for name, shape in meta["triplets"].items():
            T = Triplets(tuple(shape))
            T.rows, T.cols = arrays[f"t_{name}_rows"].tolist(), arrays[f"t_{name}_cols"].tolist()
            T.a, T.b = arrays[f"t_{name}_a"].tolist(), arrays[f"t_{name}_b"].tolist()
            setattr(self, name, T)
        for name in ARRAYS:
            setattr(self, name, arrays[f"a_{name}"])
        self.control_values = np.asarray(self.control_values, dtype=float)
        self.stiff_end = np.asarray(self.stiff_end, np.int64).reshape(-1, 3)
        self.sources = np.asarray(self.sources, np.int64).reshape(-1, 2)
        J = Compressed.__new__(Compressed)
        J.indptr, J.indices = arrays["J_indptr"], arrays["J_indices"]
        J.shape, J.by_column, J.nnz = tuple(meta["J_shape"]), True, int(arrays["J_indices"].size)
        self.J = J
        self._stamp_ab = (arrays["stamp_a"], arrays["stamp_b"])
        sl = Slots.__new__(Slots)
        for name in SLOTS:
            setattr(sl, name, arrays[f"s_{name}"])
        sl.per_h = np.asarray(sl.per_h, dtype=bool)
        sl.readers = np.asarray(sl.readers, np.int64).reshape(-1, 7)
        sl.n = int(meta["n_slots"])
        self.slots = sl
        self.groups = _FrozenGroups(meta["groups"], arrays["groups_table"], arrays["groups_P"])
        self.energies = _FrozenGroups(meta["energies"], arrays["energies_table"], arrays["energies_P"])
