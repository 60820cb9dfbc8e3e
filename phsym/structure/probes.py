"""Signal labels of a structure: ``y(V1)``, ``v(out)``, ``v(a,b)``, ``i(R1)``, ``v(R1)``.

Every signal a user may ask for is a linear combination of the entries of
the effort vector ``e`` and the flow vector ``f = J e`` of the Dirac form
(see :mod:`phsym.structure.dirac`).  :func:`probe_map` returns that
combination; the simulator turns it into numbers
(:mod:`phsym.simulation.probes`) and the identification into symbolic step
outputs (:mod:`phsym.codegen.newton.sensitivity`).  This is the one parser of the
labels.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import sympy as sp

from ..common.names import NameTable
from ..errors import StructureError
from .dirac import Structure

__all__ = ["Probe", "parse_probe", "probe_map", "Combination"]

#: ``{("e" or "f", index): coefficient}``: the signal is ``sum coef * e[index]`` (or ``f[index]``).
Combination = Dict[Tuple[str, int], sp.Expr]

_LABEL = re.compile(r"^\s*([viy])\s*\(\s*([^,()]+?)\s*(?:,\s*([^,()]+?)\s*)?\)\s*$", re.I)
USAGE = "y(SOURCE), v(NODE), v(N1,N2), i(ELEMENT) or v(ELEMENT)"


@dataclass(frozen=True)
class Probe:
    """A parsed signal label.

    Attributes
    ----------
    quantity : str
        ``"y"`` (port output), ``"v"`` (across) or ``"i"`` (through).
    first : str
        Node, element or source name.
    second : str or None
        Second node of ``v(N1,N2)``.
    """

    quantity: str
    first: str
    second: Optional[str] = None


def parse_probe(label: str) -> Probe:
    """Parse a signal label (see the module docstring).

    Parameters
    ----------
    label : str
        The label.

    Raises
    ------
    StructureError
        When the label has none of the accepted forms.

    Examples
    --------
    >>> parse_probe("v(a, b)")
    Probe(quantity='v', first='a', second='b')
    """
    m = _LABEL.match(label) if isinstance(label, str) else None
    if not m or (m.group(1).lower() != "v" and m.group(3) is not None):
        raise StructureError(f"cannot read signal label {label!r}: use {USAGE}")
    return Probe(m.group(1).lower(), m.group(2), m.group(3))


def probe_map(S: Structure, label: str) -> Combination:
    """The signal ``label`` as a linear combination of efforts and flows.

    Parameters
    ----------
    S : Structure
        The structure.
    label : str
        A signal label.

    Returns
    -------
    dict
        ``{("e" or "f", index): coefficient}`` (coefficients in parameter symbols).

    Raises
    ------
    StructureError
        Unknown label, element, source or node.
    """
    p = parse_probe(label)
    if p.quantity == "y":
        inputs = NameTable(((str(u), i) for i, u in enumerate(S.inputs)), what="source")
        i = inputs.lookup(p.first, StructureError, hint=f"signal {label!r}")
        return {("f", S.block("u").start + i): sp.Integer(-1)}
    if p.second is None:
        names = NameTable(((b.name, k) for k, b in enumerate(S.branches)), what="branch")
        for k, b in enumerate(S.branches):       # an element's name means its first branch
            if b.element not in names:
                names.set(b.element, k)
        k = names[p.first] if p.first in names else None
        if k is not None:
            across, through = S.branch_map(k)
            return dict(across if p.quantity == "v" else through)
        if p.quantity == "i":
            raise StructureError(f"signal {label!r}: no element {p.first!r}")
    out: Combination = dict(S.node_potential(p.first))
    if p.second is not None:
        for key, coef in S.node_potential(p.second).items():
            out[key] = out.get(key, 0) - coef
    return {k: v for k, v in out.items() if v != 0}
