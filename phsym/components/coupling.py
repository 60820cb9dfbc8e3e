"""Magnetic coupling of inductors (``K1 L1 L2 k``)."""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np
import sympy as sp

from ..common.bounded import TIMEOUT_ENV, NotReal, deadline, real_value
from ..errors import StructureError
from .base import FLOW, Contribution, Coupling, Storage
from .component import Component, Value, register

__all__ = ["MutualInductance", "couple_inductors"]


@register
class MutualInductance(Component):
    """Coupling ``K1 L1 L2 k`` of two linear inductors (``-1 < k < 1``).

    The mutual inductance is ``M = k sqrt(L1 L2)``; coupled inductors form
    one storage with a non-separable energy (see :func:`couple_inductors`).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nL1 a 0 1m\\nL2 b 0 4m\\nR1 b 0 10\\nK1 L1 L2 0.5\\n")
    >>> m.structure.storages[0].elements
    ('L1', 'L2')
    """

    kind = "coupling"
    letters = ("K",)
    terminals = ()
    refs = ("inductor", "inductor")
    values = (Value("k", "", "coupling coefficient", main=True, check="unit"),)
    summary = "magnetic coupling of two linear inductors"

    def contribute(self) -> Contribution:
        a, b = self.spec.refs
        return Contribution(couplings=[Coupling(self.name, (a, b), self.value("k"))])


def couple_inductors(storages: List[Storage], couplings: Sequence[Coupling],
                     values: Optional[Mapping[sp.Symbol, float]] = None) -> List[Storage]:
    """Merge coupled inductors into multi-port storages.

    Inductors linked by ``K`` elements (transitively) form one storage with
    flux vector ``phi`` and ``H = phi^T L^{-1} phi / 2``, where
    ``L[i, i] = L_i`` and ``L[i, j] = k_ij sqrt(L_i L_j)``.  The Hamiltonian is
    not separable, so simulators use a multivariate discrete gradient.

    Parameters
    ----------
    storages : list of Storage
        Storages of all elements (one per element so far).
    couplings : sequence of Coupling
        The coupling records.

    Returns
    -------
    list of Storage
        Storages with coupled inductors merged.
    """
    if not couplings:
        return storages
    by_elem = {s.elements[0].lower(): s for s in storages if len(s.elements) == 1}
    parent: Dict[str, str] = {}

    def find(a: str) -> str:
        while parent.get(a, a) != a:
            a = parent[a]
        return a

    for k in couplings:
        names = [r.lower() for r in k.inductors]
        for n in names:
            st = by_elem.get(n)
            if st is None or st.port_types != (FLOW,) or not st.states[0].name.startswith("phi_"):
                raise StructureError(f"coupling {k.element} refers to {n!r}, which is not an inductor",
                                     [k.element])
            if not st.is_quadratic:
                raise StructureError(f"coupling {k.element}: inductor {st.elements[0]} has a nonlinear law; "
                                     "only linear inductors can be coupled", [k.element, st.elements[0]])
        a, b = find(names[0]), find(names[1])
        if a != b:
            parent[a] = b
    groups: Dict[str, List[str]] = {}
    order = [s.elements[0].lower() for s in storages]
    for n in sorted({n.lower() for k in couplings for n in k.inductors}, key=order.index):
        groups.setdefault(find(n), []).append(n)
    merged = set()
    out = []
    for members in groups.values():
        idx = {n: i for i, n in enumerate(members)}
        sts = [by_elem[n] for n in members]
        # L of a linear inductor from its energy: d2H/dphi2 = 1/L
        Ls = [1 / sp.diff(st.hamiltonian, st.states[0], 2) for st in sts]
        Lm = sp.diag(*Ls)
        for k in couplings:
            a, b = (n.lower() for n in k.inductors)
            if a in idx:
                i, j = idx[a], idx[b]
                if Lm[i, j] != 0:
                    raise StructureError(f"inductors {a} and {b} are coupled twice", [k.element])
                Lm[i, j] = Lm[j, i] = k.k * sp.sqrt(Ls[i] * Ls[j])
        group = [k.element for k in couplings if k.inductors[0].lower() in idx]
        if values is not None:
            _check_positive(Lm, values, group)
        phi = sp.Matrix([st.states[0] for st in sts])
        H = _coupled_energy(phi, Lm, group)
        out.append(Storage(tuple(st.elements[0] for st in sts), tuple(phi), H,
                           tuple(st.branches[0] for st in sts), (FLOW,) * len(sts),
                           tuple(st.initial[0] for st in sts), quadratic=True))
        merged.update(members)
    rest = [s for s in storages if not (len(s.elements) == 1 and s.elements[0].lower() in merged)]
    return rest + out


def _coupled_energy(phi: sp.Matrix, Lm: sp.Matrix, elements: List[str]) -> sp.Expr:
    """``phi^T L^-1 phi / 2``, a :class:`StructureError` naming the couplings when ``L`` is singular
    or its symbolic inverse exceeds the time budget (:mod:`phsym.common.bounded`)."""
    def slow(seconds: float) -> StructureError:
        return StructureError(f"inverting the inductance matrix of {len(elements)} couplings took more than "
                              f"{seconds:g} s", elements,
                              hint=f"couple fewer inductors in one group, or raise {TIMEOUT_ENV}")
    try:
        with deadline(slow):
            return sp.expand((phi.T * Lm.inv() * phi)[0, 0] / 2)
    except (ValueError, ArithmeticError) as exc:       # NonInvertibleMatrixError is a ValueError
        raise StructureError(f"the inductance matrix of the coupled inductors is singular ({exc})", elements,
                             hint="coupling coefficients must keep |k| < 1 (a perfect coupling "
                                  "has no inductance matrix inverse); use a TF transformer instead") from None


def _check_positive(Lm: sp.Matrix, values: Mapping[sp.Symbol, float], elements: List[str]) -> None:
    """A :class:`StructureError` unless the inductance matrix is positive definite at ``values``
    (pairwise ``|k| < 1`` does not make three or more couplings so: k = -1/2 between three equal coils)."""
    try:
        L = np.array([[real_value(v, values) for v in row] for row in Lm.tolist()], dtype=float)
    except NotReal:
        return          # the values' own checks report it
    low = float(np.min(np.linalg.eigvalsh(0.5 * (L + L.T))))
    if not low > 1e-12 * float(np.abs(L).max()):
        raise StructureError(f"the inductance matrix of the coupled inductors is singular or indefinite at the "
                             f"default values (smallest eigenvalue {low:.3g} H)", elements,
                             hint="choose coupling coefficients that keep the inductance matrix positive definite "
                                  "(the stored energy positive)")
