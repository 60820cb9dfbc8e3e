"""Magnetic coupling of inductors (``K1 L1 L2 k``)."""
from __future__ import annotations

from typing import List, Sequence

import sympy as sp

from ..errors import StructureError
from ..netlist.spec import ElementSpec
from .base import FLOW, Storage

__all__ = ["couple_inductors"]


def couple_inductors(storages: List[Storage], couplings: Sequence[ElementSpec],
                     specs: dict) -> List[Storage]:
    """Merge coupled inductors into multi-port storages.

    Inductors linked by ``K`` elements (transitively) form one storage with
    flux vector ``phi`` and ``H = phi^T L^{-1} phi / 2``, where
    ``L[i, i] = L_i`` and ``L[i, j] = k_ij sqrt(L_i L_j)``.  The Hamiltonian is
    not separable, so simulators use a multivariate discrete gradient.

    Parameters
    ----------
    storages : list of Storage
        Storages of all elements (one per element so far).
    couplings : sequence of ElementSpec
        The ``K`` elements.
    specs : dict
        Element name (lower case) -> ElementSpec.

    Returns
    -------
    list of Storage
        Storages with coupled inductors merged.
    """
    if not couplings:
        return storages
    by_elem = {s.elements[0].lower(): s for s in storages if len(s.elements) == 1}
    parent = {}

    def find(a):
        while parent.get(a, a) != a:
            a = parent[a]
        return a

    pairs = []
    for k in couplings:
        names = [r.lower() for r in k.refs]
        if len(names) != 2 or names[0] == names[1]:
            raise StructureError(f"coupling {k.name} must name two different inductors", [k.name])
        for n in names:
            spec = specs.get(n)
            if spec is None or spec.kind != "inductor":
                raise StructureError(f"coupling {k.name} refers to {n!r}, which is not an inductor",
                                     [k.name])
            if spec.law is not None:
                raise StructureError(f"coupling {k.name}: inductor {spec.name} has a nonlinear law; "
                                     "only linear inductors can be coupled", [k.name, spec.name])
        a, b = find(names[0]), find(names[1])
        if a != b:
            parent[a] = b
        pairs.append((names[0], names[1], sp.sympify(k.values["k"]), k.name))
    groups = {}
    for n in {p for pr in pairs for p in pr[:2]}:
        groups.setdefault(find(n), []).append(n)
    merged_names = set()
    out = []
    for members in groups.values():
        members.sort(key=lambda n: [s.elements[0].lower() for s in storages].index(n))
        idx = {n: i for i, n in enumerate(members)}
        Ls = [sp.sympify(specs[n].values["L"]) for n in members]
        Lm = sp.diag(*Ls)
        for a, b, kval, kname in pairs:
            if a in idx:
                i, j = idx[a], idx[b]
                if Lm[i, j] != 0:
                    raise StructureError(f"inductors {a} and {b} are coupled twice", [kname])
                Lm[i, j] = Lm[j, i] = kval * sp.sqrt(Ls[i] * Ls[j])
        sts = [by_elem[n] for n in members]
        phi = sp.Matrix([s.states[0] for s in sts])
        Gamma = Lm.inv()
        H = sp.expand((phi.T * Gamma * phi)[0, 0] / 2)
        out.append(Storage(tuple(s.elements[0] for s in sts), tuple(phi), H,
                           tuple(s.branches[0] for s in sts), (FLOW,) * len(sts),
                           tuple(s.initial[0] for s in sts), quadratic=True))
        merged_names.update(members)
    rest = [s for s in storages if not (len(s.elements) == 1 and s.elements[0].lower() in merged_names)]
    return rest + out
