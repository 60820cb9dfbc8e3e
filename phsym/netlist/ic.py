"""``.ic V(node)=value I(L1)=value``: initial conditions of storage elements.

A node voltage fixes the initial voltage of every capacitor whose two
nodes both have one (the datum is 0 V); ``I(L1)`` fixes an inductor's
initial current.  An element's own ``IC=`` wins, as in SPICE.  The
elements set here are listed in :attr:`DeckSettings.held`: the DC operating
point of a run without ``UIC`` holds them at these values.
"""
from __future__ import annotations

import dataclasses
import re
import warnings
from typing import Dict, List, Tuple

import sympy as sp

from ..components import DATUM, ElementSpec
from ..errors import NetlistError, NetlistWarning
from .elements import node_spellings
from .params import word_expr
from .source import LogicalLine, Statement, Word

__all__ = ["ic_entries", "apply_ic"]

_ENTRY = re.compile(r"\s*([VvIi])\s*\(\s*([^()\s,=]+)\s*\)\s*=\s*(\{[^{}]*\}|[^\s{}=()]+)")
_USAGE = ".ic V(NODE)=VALUE ... I(INDUCTOR)=VALUE ..."


def ic_entries(line: LogicalLine) -> List[Tuple[str, Word, Word]]:
    """``(quantity, name word, value word)`` of each entry of an ``.ic`` line.

    Parameters
    ----------
    line : LogicalLine
        The ``.ic`` statement.
    """
    text = line.text
    pos = len(text.split(None, 1)[0])
    out = []
    stmt = Statement(Word("word", ".ic", 0), [], line)
    while text[pos:].strip():
        m = _ENTRY.match(text, pos)
        if m is None:
            start = pos + len(text[pos:]) - len(text[pos:].lstrip())
            raise NetlistError("expected V(NODE)=VALUE or I(INDUCTOR)=VALUE", stmt.loc(start, 1), hint=_USAGE)
        value = m.group(3)
        kind = "braced" if value.startswith("{") else "word"
        out.append((m.group(1).lower(), Word("word", m.group(2), m.start(2)), Word(kind, value, m.start(3))))
        pos = m.end()
    if not out:
        raise NetlistError(".ic sets nothing", stmt.loc(stmt.head), hint=_USAGE)
    return out


def apply_ic(stmts: List[Statement], elements: List[ElementSpec], names) -> Tuple[List[ElementSpec], Tuple[str, ...]]:
    """Elements with the ``.ic`` values applied, and the names of those set.

    Parameters
    ----------
    stmts : list of Statement
        The ``.ic`` cards.
    elements : list of ElementSpec
        The flattened elements.
    names : mapping of str to sympy.Expr
        Parameter names usable in the values.
    """
    volts: Dict[str, sp.Expr] = {}
    currents: Dict[str, sp.Expr] = {}
    nodes = node_spellings(elements)
    by_name = {el.name.lower(): el for el in elements}
    used_nodes: Dict[str, Tuple[Statement, Word]] = {}
    for stmt in stmts:
        for q, name, value in ic_entries(stmt.line):
            expr = word_expr(value, stmt, names)
            if q == "v":
                node = nodes.get(name.text.lower())
                if node is None:
                    raise NetlistError(f".ic refers to unknown node '{name.text}'", stmt.loc(name),
                                       hint="check the spelling (node names ignore case)")
                if node == DATUM:
                    raise NetlistError("the datum node is at 0 V by definition", stmt.loc(name), hint=_USAGE)
                volts[node] = expr
                used_nodes[node] = (stmt, name)
            else:
                el = by_name.get(name.text.lower())
                if el is None or el.kind != "inductor":
                    what = "unknown element" if el is None else f"{el.kind}, not an inductor"
                    raise NetlistError(f".ic I({name.text}): {what}", stmt.loc(name),
                                       hint="I(...) names an inductor; capacitors take V(node) entries")
                currents[el.name] = expr
    volts[DATUM] = sp.Integer(0)
    held: List[str] = []
    out: List[ElementSpec] = []
    reached = set()
    for el in elements:
        ic = None
        if el.kind == "capacitor" and all(n in volts for n in el.nodes):
            ic = volts[el.nodes[0]] - volts[el.nodes[1]]
            reached.update(el.nodes)
        elif el.name in currents:
            ic = currents[el.name]
        if ic is not None and el.ic is None:
            el = dataclasses.replace(el, ic=ic)
            held.append(el.name)
        out.append(el)
    for node, (stmt, word) in used_nodes.items():
        if node not in reached:
            loc = stmt.loc(word)
            warnings.warn(f"{loc.describe()}: .ic V({word.text}) sets no capacitor voltage and is ignored "
                          "(phsym uses node voltages only across capacitors whose two nodes are given)",
                          NetlistWarning, stacklevel=3)
    return out, tuple(held)
