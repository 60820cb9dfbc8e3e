"""Signal labels of a structure: ``y(V1)``, ``v(out)``, ``v(a,b)``, ``i(R1)``, ``v(R1)``.

Non-electrical signals may be named by their quantity as well
(:data:`phsym.common.quantities.PROBE_NAMES`): ``T(t1)`` is ``v(t1)`` of a
thermal node, ``vel(m1)`` ``v(m1)`` of a translational node (mobility
analogy), ``F(K1)`` the force through a spring; such a name on a node or
element of another domain is refused.  :func:`label_quantity` gives the
name by quantity and the unit of any label.

Every signal a user may ask for is a linear combination of the entries of
the effort vector ``e`` and the flow vector ``f = J e`` of the Dirac form
(see :mod:`phsym.structure.dirac`).  :func:`probe_map` returns that
combination; the simulator turns it into numbers
(:mod:`phsym.simulation.probes`) and the identification into symbolic step
outputs (:mod:`phsym.codegen.newton.sensitivity`).  This is the one parser of the
labels; :func:`names_node` is the one rule for a name that is both a node and
an element (``v(X)`` reads the node, as in SPICE).

A storage's state is named as the simulator names it (``x_K1``, ``q_C1``) or as a
probe: ``x(K1)`` for any element's state, or by its quantity (``q(C1)`` a
charge, ``phi(L1)`` a flux linkage, ``p(M1)`` a momentum, ``x(K1)`` a
displacement, ``theta(...)``, ``s(...)``); :func:`state_label` reads those.
"""
from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional, Tuple

import sympy as sp

from ..common.names import NameTable
from ..common.quantities import DOMAINS as _DOMAINS, STATE_NAMES, Quantity, domain_of, probe_quantity
from ..errors import StructureError
from .dirac import Structure
from .labels import (_LABEL, USAGE, Probe, _across_name, names_node, node_domains, parse_probe,  # noqa: F401
                     probe_domain, settle)

__all__ = ["Probe", "parse_probe", "probe_map", "Combination", "label_quantity", "names_node", "state_label",
           "state_quantities", "branch_domains", "settle", "probe_domain", "node_domains"]

#: ``{("e" or "f", index): coefficient}``: the signal is ``sum coef * e[index]`` (or ``f[index]``).
Combination = Dict[Tuple[str, int], sp.Expr]

def _node_domains(graph) -> Mapping:
    """Node -> domain of a model's graph (a :class:`~phsym.graph.BranchGraph` or its networkx form)."""
    return graph.domains if hasattr(graph, "domains") else dict(graph.nodes(data="domain"))


def _branches(graph) -> list:
    """The branch records of a model's graph (either form)."""
    return graph.branches if hasattr(graph, "domains") else graph.graph["branches"]


def _domain(graph, p: Probe) -> Tuple[str, bool]:
    """Domain of what ``p`` names, and whether it is an element (else a node)."""
    return probe_domain(_node_domains(graph), _branches(graph), p)


def _settle(graph, p: Probe, label: str) -> Probe:
    """``p`` with a quantity name read on its node's or element's domain (an error on another domain)."""
    return settle(p, label, lambda q: _domain(graph, q))


def label_quantity(graph, label: str) -> Tuple[str, Optional[Quantity]]:
    """A signal label named by its quantity, with the quantity: ``v(t1)`` of a thermal node is
    ``("T(t1)", temperature [K])``; electrical labels stay as they are.

    Parameters
    ----------
    graph : phsym.graph.BranchGraph or networkx.MultiDiGraph
        The model's graph (``Model.topology``, or its networkx form ``Model.graph``).
    label : str
        A signal label.

    Returns
    -------
    (str, Quantity or None)
        The label by quantity and its quantity (``None`` for a port output ``y(...)``, whose
        quantity is the source's conjugate).
    """
    p = _settle(graph, parse_probe(label), label)
    if p.quantity == "y":
        return label.strip(), None
    dom, _ = _domain(graph, p)
    q = probe_quantity(p.quantity, dom)
    args = p.first + (f",{p.second}" if p.second is not None else "")
    return f"{q.symbol}({args})", q


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
    p = _settle(S.topology, parse_probe(label), label)
    if p.quantity == "y":
        inputs = NameTable(((str(u), i) for i, u in enumerate(S.inputs)), what="source")
        i = inputs.lookup(p.first, StructureError, hint=f"signal {label!r}")
        return {("f", S.block("u").start + i): sp.Integer(-1)}
    if p.second is None:
        names = NameTable(((b.name, k) for k, b in enumerate(S.branches)), what="branch")
        for k, b in enumerate(S.branches):       # an element's name means its first branch
            if b.element not in names:
                names.set(b.element, k)
        k = names[p.first] if p.first in names and not names_node(p, S.topology) else None
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


def branch_domains(graph) -> Dict[str, str]:
    """The domain of each branch of a model's graph (a two-port's side, ``"any"``, takes its nodes')."""
    node_dom = _node_domains(graph)
    return {b.name: b.domain if b.domain in _DOMAINS else next(
        (node_dom[n] for n in (b.node_from, b.node_to) if node_dom.get(n) in _DOMAINS), "electrical")
        for b in _branches(graph)}


def state_quantities(graph, storages) -> Dict[str, Quantity]:
    """The quantity of each state (a spring's displacement, a capacitor's charge).

    Parameters
    ----------
    graph : phsym.graph.BranchGraph or networkx.MultiDiGraph
        The model's graph (``Model.topology``, or its networkx form ``Model.graph``).
    storages : iterable
        The storage records (``states``, ``branches``, ``port_types``) of the model.
    """
    dom = branch_domains(graph)
    return {str(x): domain_of(dom.get(br)).state(port)
            for st in storages for x, br, port in zip(st.states, st.branches, st.port_types)}


def state_label(label: str, states: Iterable[str], quantity=None) -> Optional[str]:
    """The state a signal label names, or ``None`` when it names none (a probe or port output).

    Parameters
    ----------
    label : str
        The simulator's name (``x_K1``, ``q_C1``), ``x(K1)`` (the state of ``K1``) or the
        state by its quantity (``q(C1)``, ``phi(L1)``, ``p(M1)``; see :data:`phsym.common.quantities.STATE_NAMES`).
    states : iterable of str
        The model's state names.
    quantity : callable, optional
        State name -> its :class:`~phsym.common.quantities.Quantity`; with it a
        quantity form must name the state's own quantity (``q(L1)`` is refused).

    Raises
    ------
    StructureError
        A state form naming an element without a state, with several states, or
        with another quantity.

    Examples
    --------
    >>> state_label("x(C1)", ["x_K1", "q_C1"]), state_label("q(C1)", ["q_C1"]), state_label("v(out)", ["x_K1"])
    ('q_C1', 'q_C1', None)
    """
    names = list(states)
    low = {n.lower(): n for n in names}
    if not isinstance(label, str):
        return None
    if label.strip().lower() in low:
        return low[label.strip().lower()]
    m = _LABEL.match(label)
    if not m or m.group(1).lower() not in STATE_NAMES or m.group(3) is not None:
        return None
    word, el = m.group(1).lower(), m.group(2)
    owner = {n: n.split("_", 1)[-1] for n in names}       # q_C1, x_K1, p_M1: quantity _ element
    found = [n for n in names if owner[n].lower() == el.lower()] or \
        [n for n in names if owner[n].lower().startswith(f"{el}.".lower())]
    if not found:
        raise StructureError(f"signal {label!r}: {el!r} is not an element with a state",
                             hint="states: " + (", ".join(f"x({owner[n]})" for n in names) or "none"))
    if len(found) > 1:
        raise StructureError(f"signal {label!r}: {el!r} has {len(found)} states",
                             hint="name one: " + ", ".join(f"x({owner[n]})" for n in found))
    name = found[0]
    if word != "x":
        q = quantity(name) if quantity is not None else None
        sym = q.symbol if q is not None else name.split("_", 1)[0]
        if sym.lower() != word:
            what = f"a {q}" if q is not None else f"{name}"
            raise StructureError(f"signal {label!r}: the state of {owner[name]} is {what}, not what "
                                 f"{label.split('(')[0].strip()}(...) names",
                                 hint=f"{sym}({owner[name]}) or x({owner[name]})" if sym.lower() not in ("", "x")
                                 else f"x({owner[name]})")
    return name
