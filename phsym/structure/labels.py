"""Signal labels (``v(out)``, ``i(R1)``, ``T(t1)``...) read without the symbolic structure.

:mod:`.probes` maps a label onto the Dirac structure; what does not need the
structure -- parsing a label, telling a node from an element, settling a
quantity's name on its domain -- is here, so that the numeric engine's plans
(:mod:`phsym.simulation.engines.numeric.parts`) read labels without sympy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Mapping, Optional, Tuple

from ..common.quantities import DOMAINS as _DOMAINS, PROBE_NAMES, SYMBOLS, domain_of
from ..errors import StructureError

__all__ = ["Probe", "USAGE", "parse_probe", "names_node", "probe_domain", "node_domains", "settle"]

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
