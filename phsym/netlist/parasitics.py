"""LTspice's parasitics written on an element line: ``Rser=``, ``Rpar=``, ``Cpar=``.

Schematic exports from LTspice give sources, capacitors and inductors their
series and parallel parasitics as keywords (``V1 in 0 SINE(0 1 1k)
Rser=0.1``, ``C1 a b 10u Rser=5m``).  Each becomes an element of its own:
``Rser`` a resistor ``NAME.rser`` in series (the element then ends at the
internal node ``NAME#s``), ``Rpar`` a resistor ``NAME.rpar`` and ``Cpar`` a
capacitor ``NAME.cpar`` across the terminals.  Other LTspice keywords
(``Lser``, ``mfg``, ``Ipk``...) are named in the deck's one warning and
not used.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Tuple

from ..components import ElementSpec
from ..errors import NetlistError
from .numbers import looks_numeric, parse_number
from .params import word_expr
from .source import Assign, Statement

__all__ = ["PARASITICS", "split_parasitics", "parasitic_elements"]

#: the parasitics each kind takes (lower case)
PARASITICS = {"vsource": ("rser", "cpar"), "capacitor": ("rser", "rpar"), "inductor": ("rser", "rpar", "cpar")}
#: LTspice keywords of those kinds that phsym reads and does not use
_IGNORED = ("lser", "mfg", "pn", "type", "ipk", "rpk", "irms", "ppkg", "v", "x", "m", "q", "n", "voltage",
            "current", "tc1", "tc2", "temp")


def split_parasitics(kind: str, items: list, stmt: Statement) -> Tuple[list, Dict[str, Assign], List[str]]:
    """``items`` without the parasitics of ``kind``, those by lower-case key, and the LTspice keywords left unused."""
    if kind not in PARASITICS:
        return items, {}, []
    kept, found, ignored = [], {}, []
    for it in items:
        key = it.key.text.lower() if isinstance(it, Assign) else ""
        if key in PARASITICS[kind]:
            found[key] = it
        elif key in _IGNORED and key not in ("ic",) and it.value.kind != "braced":
            # LTspice's ratings take numbers (V=50: a capacitor's voltage rating); a braced value
            # is phsym's law (V={q/C0 + q**3}) and stays
            ignored.append(f"{it.key.text}= ({stmt.loc(it).describe()})")
        else:
            kept.append(it)
    return kept, found, ignored


def parasitic_elements(spec: ElementSpec, found: Dict[str, Assign], stmt: Statement, ctx) -> List[ElementSpec]:
    """The element with its series parasitic's node, then the parasitic elements.

    Parameters
    ----------
    spec : ElementSpec
        The element as its line gives it.
    found : dict of str to Assign
        Its parasitics (:func:`split_parasitics`).
    stmt : Statement
        Its line.
    ctx : Context
        Where it is expanded (parameters, locations).
    """
    out = [spec]
    a, b = spec.nodes
    for key in ("rser", "rpar", "cpar"):
        if key not in found:
            continue
        it = found[key]
        name = f"{spec.name}.{key}"
        loc = stmt.loc(it)
        word = it.value
        if word.kind == "word" and looks_numeric(word.text):
            value = parse_number(word.text, loc)
            if value == 0 and key == "rser":
                continue                        # LTspice's Rser=0: no resistor
            if value <= 0:
                raise NetlistError(f"{it.key.text}= must be positive, got {value:g}", loc,
                                   hint="a parasitic resistance or capacitance is positive (Rser=0 means none)")
            expr = ctx.table.add(name, value, loc)
        else:
            expr = word_expr(word, stmt, ctx.names)
        kind, main = ("capacitor", "C") if key == "cpar" else ("resistor", "R")
        if key == "rser":
            inner = f"{spec.name}#s"
            out[0] = dataclasses.replace(out[0], nodes=(a, inner))
            out.append(ElementSpec(name, kind, (inner, b), {main: expr}, location=loc))
        else:
            out.append(ElementSpec(name, kind, (a, b), {main: expr}, location=loc))
    return out
