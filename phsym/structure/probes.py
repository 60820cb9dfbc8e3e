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

import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Mapping, Optional, Tuple

import sympy as sp

from ..common.names import NameTable
from ..common.quantities import (DOMAINS as _DOMAINS, PROBE_NAMES, STATE_NAMES, SYMBOLS, Quantity, domain_of,
                                 probe_quantity)
from ..errors import StructureError
from .dirac import Structure

__all__ = ["Probe", "parse_probe", "probe_map", "Combination", "label_quantity", "names_node", "state_label",
           "state_quantities", "branch_domains", "settle", "probe_domain", "node_domains"]

#: ``{("e" or "f", index): coefficient}``: the signal is ``sum coef * e[index]`` (or ``f[index]``).
Combination = Dict[Tuple[str, int], sp.Expr]

_LABEL = re.compile(r"^\s*([a-z]+)\s*\(\s*([^,()]+?)\s*(?:,\s*([^,()]+?)\s*)?\)\s*$", re.I)
USAGE = ("y(SOURCE), v(NODE), v(N1,N2), i(ELEMENT) or v(ELEMENT) (or by quantity on other domains: "
         + ", ".join(sorted({f"{k}(...)" for k in PROBE_NAMES}, key=str.lower)) + ")")


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
    name : str
        The quantity's name when the label gives one (``"t"`` for ``T(t1)``, lower case;
        ``quantity`` is then its mobility-analogy reading, settled by :func:`probe_map` on the
        node's domain), else empty.
    """

    quantity: str
    first: str
    second: Optional[str] = None
    name: str = ""


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
    Probe(quantity='v', first='a', second='b', name='')
    """
    m = _LABEL.match(label) if isinstance(label, str) else None
    word = m.group(1).lower() if m else ""
    which = word if word in ("v", "i", "y") else next(iter(PROBE_NAMES[word].values()), "") \
        if word in PROBE_NAMES else ""
    if not which or (which != "v" and m.group(3) is not None):
        raise StructureError(f"cannot read signal label {label!r}: use {USAGE}")
    return Probe(which, m.group(2), m.group(3), "" if word == which else word)


def names_node(p: Probe, nodes: Iterable) -> bool:
    """Whether the one-name label ``p`` reads the node ``p.first`` rather than an element.

    As in SPICE, ``v(X)`` is the potential of the node ``X`` whenever the
    circuit has a node of that name (in any case), even when an element is
    named ``X`` too: ``v(m1)`` of a magnetic node ``m1`` is not the velocity
    of a mass ``M1``.  ``i(X)`` and ``y(X)`` always read an element or a source.

    Parameters
    ----------
    p : Probe
        A parsed label with its quantity settled (:func:`probe_map` does that).
    nodes : iterable
        The circuit's node names.
    """
    if p.quantity != "v" or p.second is not None:
        return False
    low = p.first.lower()
    return any(str(n).lower() == low for n in nodes)


def _node_domains(graph) -> Mapping:
    """Node -> domain of a model's graph (a :class:`~phsym.graph.BranchGraph` or its networkx form)."""
    return graph.domains if hasattr(graph, "domains") else dict(graph.nodes(data="domain"))


def _branches(graph) -> list:
    """The branch records of a model's graph (either form)."""
    return graph.branches if hasattr(graph, "domains") else graph.graph["branches"]


def _domain(graph, p: Probe) -> Tuple[str, bool]:
    """Domain of what ``p`` names, and whether it is an element (else a node)."""
    return probe_domain(_node_domains(graph), _branches(graph), p)


def probe_domain(node_domains: Mapping, branches: Iterable, p: Probe) -> Tuple[str, bool]:
    """Domain of what ``p`` names, and whether it is an element (else a node): a node first
    (:func:`names_node`), read from the nodes' and branches' domains (a model's graph, or the
    numeric engine's circuit data).

    Parameters
    ----------
    node_domains : mapping
        Node name -> its domain (``None`` or ``"any"`` where the node has none).
    branches : iterable of Branch
        The branches (``name``, ``element``, ``domain``, ``node_from``, ``node_to``).
    p : Probe
        The parsed label.
    """
    low = p.first.lower()
    node = next((n for n in node_domains if str(n).lower() == low), None)
    if node is not None and (p.second is not None or (_across_name(p.name, node_domains[node]) if p.name
                                                      else p.quantity == "v")):
        return domain_of(node_domains[node]).name, False     # a node first (names_node)
    for b in branches:
        if low in (b.name.lower(), b.element.lower()):
            dom = b.domain if b.domain in _DOMAINS else node_domains.get(b.node_from)
            if dom in (None, "any"):      # a two-port's side on the datum: the other node says
                dom = node_domains.get(b.node_to)
            return domain_of(dom).name, True
    return domain_of(node_domains.get(node) if node is not None else None).name, False


def node_domains(branches: Iterable) -> Dict[str, str]:
    """Each node's domain read from the branches on it (without a model's graph: the numeric engine).

    Parameters
    ----------
    branches : iterable of Branch
        The circuit's branches; a branch of no single domain (a two-port's side, ``"any"``) says nothing.
    """
    out: Dict[str, str] = {}
    for b in branches:
        if b.domain in _DOMAINS:
            for n in (b.node_from, b.node_to):
                out.setdefault(n, b.domain)
    return out


def _across_name(name: str, domain) -> bool:
    """Whether the quantity ``name`` is the across variable on a node's domain (``T`` on a thermal node)."""
    return PROBE_NAMES[name].get(domain_of(domain).name) == "v"


def _settle(graph, p: Probe, label: str) -> Probe:
    """``p`` with a quantity name read on its node's or element's domain (an error on another domain)."""
    return settle(p, label, lambda q: _domain(graph, q))


def settle(p: Probe, label: str, domain: Callable[[Probe], Tuple[str, bool]]) -> Probe:
    """``p`` with a quantity name (``T(t1)``, ``vel(m1)``) read on its node's or element's domain.

    Parameters
    ----------
    p : Probe
        The parsed label.
    label : str
        The label as given (for the message).
    domain : callable
        ``Probe -> (domain name, names an element)`` (:func:`probe_domain`).

    Raises
    ------
    StructureError
        The quantity names nothing on that domain (the message lists the names that do).
    """
    if not p.name:
        return p
    dom, element = domain(p)
    which = PROBE_NAMES[p.name].get(dom)
    if which is None:
        d = domain_of(dom)
        raise StructureError(f"signal {label!r}: {p.first!r} is {'an element' if element else 'a node'} of the "
                             f"{dom} domain, where {SYMBOLS.get(p.name, p.name)}(...) names nothing",
                             hint=f"there: {d.across.symbol}(...) for the {d.across}, "
                                  f"{d.through.symbol}(...) for the {d.through} of an element")
    return Probe(which, p.first, p.second, p.name)


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
