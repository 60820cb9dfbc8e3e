"""The values of an independent source line, in any SPICE order.

``V1 n+ n- [[DC] v] [AC [mag [phase]]] [TRAN-FUNCTION]`` where the
transient function is ``SIN``, ``PULSE``, ``PWL``, ``EXP`` or ``SFFM``
(LTspice's ``SINE`` too), with or without parentheses (``PULSE 0 5 2NS
2NS 2NS 50NS 100NS``), and the three parts in any order
(``vin 1 0 0.0 ac 1.0 sin(0 1 1k)``).  As in SPICE:

* the transient run follows the transient function, else the DC value;
* DC analyses (``.op``, ``.dc``, the operating point of ``.ac``) use the
  DC value when one is given, else the transient function at ``t = 0``;
* ``AC`` without a magnitude is ``AC 1``; the phase is in degrees;
* a ``PULSE`` rise or fall time that is zero or missing is the deck's
  ``.tran`` TSTEP (phsym's 1 ps without a ``.tran`` card), an ``EXP`` time
  constant likewise.

``DISTOF1``/``DISTOF2`` (distortion analysis) are read and named in one
warning.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import sympy as sp

from ..components import Waveform
from ..errors import NetlistError
from .numbers import looks_numeric
from .params import word_expr
from .source import Assign, Call, Group, Statement, Word
from .waveforms import PULSE_EDGE, WAVEFORM_ARITY

__all__ = ["SourceSpec", "source_spec", "SHAPES"]

#: transient functions by their spellings
SHAPES = {"sin": "sin", "sine": "sin", "pulse": "pulse", "pwl": "pwl", "exp": "exp", "sffm": "sffm"}
_USAGE = {"dc": "DC value", "sin": "SIN(offset amplitude [freq [delay [damping [phase]]]])",
          "pulse": "PULSE(v1 v2 [delay [rise [fall [width [period]]]]])",
          "pwl": "PWL(t1 v1 t2 v2 ...) with pairs",
          "exp": "EXP(v1 v2 [delay1 [tau1 [delay2 [tau2]]]])",
          "sffm": "SFFM(offset amplitude [carrier [index [signal]]])"}
_KEYWORDS = ("dc", "ac", "distof1", "distof2")
_HINT = "a source takes [DC] v, AC [mag [phase]] and one of SIN, PULSE, PWL, EXP, SFFM, in any order"


@dataclass
class SourceSpec:
    """What an independent source line gives.

    Attributes
    ----------
    waveform : Waveform or None
        The transient value (the transient function, else the DC value);
        None when the line gives nothing (the input is supplied at run time).
    dc : sympy.Expr or None
        The DC value when it differs in meaning from the waveform (a DC
        value next to a transient function).
    ac : (sympy.Expr, sympy.Expr) or None
        AC magnitude and phase [degrees].
    keywords : list of Assign
        ``KEY=value`` items left for the caller (``Rser=``).
    ignored : list of str
        Specifications read and not used (``DISTOF1``), for one warning.
    """

    waveform: Optional[Waveform] = None
    dc: Optional[sp.Expr] = None
    ac: Optional[Tuple[sp.Expr, sp.Expr]] = None
    keywords: Optional[List[Assign]] = None
    ignored: Optional[List[str]] = None


def _is_value(item) -> bool:
    return isinstance(item, Word) and (item.kind == "braced" or item.text.lower() not in _KEYWORDS
                                       and item.text.lower() not in SHAPES)


def _function(items: list, k: int, stmt: Statement, names, table, tran) -> Tuple[Waveform, int]:
    """The transient function at ``items[k]`` (a call, or a word followed by its values)."""
    first = items[k]
    if isinstance(first, Call):
        shape, raw, used = SHAPES[first.name.text.lower()], list(first.args), 1
    else:
        shape, raw, used = SHAPES[first.text.lower()], [], 1
        while k + used < len(items) and _is_value(items[k + used]):
            raw.append(items[k + used])
            used += 1
    loc = stmt.loc(first)
    args = []
    for a in raw:
        if not isinstance(a, Word):
            raise NetlistError(f"unexpected item in {shape.upper()}", stmt.loc(a),
                               hint=f"arguments are positional values: {_USAGE[shape]}")
        args.append(word_expr(a, stmt, names, warn=False))      # times: M is milli
    lo, hi = WAVEFORM_ARITY[shape]
    if len(args) < lo or (hi is not None and len(args) > hi) or (shape == "pwl" and len(args) % 2):
        raise NetlistError(f"{shape.upper()} has {len(args)} argument(s)", loc, hint=f"usage: {_USAGE[shape]}")
    if shape == "pwl":
        times = [table.evaluate(a, loc, "PWL time") for a in args[0::2]]
        for j in range(1, len(times)):
            if times[j] < times[j - 1]:
                raise NetlistError(f"PWL times must be non-decreasing ({times[j]:g} after {times[j - 1]:g})",
                                   stmt.loc(raw[2 * j]), hint="list the (time, value) pairs in time order")
    edge = sp.Float(tran.step if tran is not None else PULSE_EDGE)
    if shape in ("sin", "sffm") and tran is not None:       # missing frequencies: 1/TSTOP
        slots = (2,) if shape == "sin" else (2, 4)
        args += [sp.Integer(0)] * (max(slots) + 1 - len(args))
        for j in slots:
            if sp.sympify(args[j]).is_zero:
                args[j] = sp.Float(1.0 / tran.stop)
    if shape == "pulse":            # SPICE: a zero or missing rise or fall time is TSTEP
        args += [sp.Integer(0)] * (5 - len(args))
        args[3:5] = [edge if sp.sympify(a).is_zero else a for a in args[3:5]]
    elif shape == "exp":            # SPICE's defaults: tau1 = tau2 = TSTEP, delay2 = delay1 + TSTEP
        given = len(args)
        args += [sp.Integer(0)] * (6 - len(args))
        if given < 5:
            args[4] = args[2] + edge
        args[3], args[5] = [edge if sp.sympify(a).is_zero else a for a in (args[3], args[5])]
    return Waveform(shape, tuple(args), loc), used


def source_spec(items: list, stmt: Statement, names, table, tran=None) -> SourceSpec:
    """Read the items after a source's nodes.

    Parameters
    ----------
    items : list
        The statement's items after the nodes.
    stmt : Statement
        The source line (for locations).
    names : mapping of str to sympy.Expr
        Parameter names usable in values.
    table : ParamTable
        The parameter table (PWL times are checked at the defaults).
    tran : Tran, optional
        The deck's ``.tran`` card (SPICE's defaults: edges of ``PULSE`` and
        time constants of ``EXP`` are TSTEP, frequencies of ``SIN`` and
        ``SFFM`` 1/TSTOP).

    Raises
    ------
    NetlistError
        Malformed or repeated specifications, at the offending item.
    """
    out = SourceSpec(keywords=[], ignored=[])
    tran_wf: Optional[Waveform] = None
    dc = None
    k = 0
    while k < len(items):
        it = items[k]
        word = it.name.text.lower() if isinstance(it, Call) else it.text.lower() \
            if isinstance(it, Word) and it.kind == "word" else None
        if isinstance(it, Assign):
            out.keywords.append(it)
            k += 1
        elif word in SHAPES:
            if tran_wf is not None:
                raise NetlistError("a second transient function", stmt.loc(it), hint=_HINT)
            tran_wf, used = _function(items, k, stmt, names, table, tran)
            k += used
        elif word == "dc" or (_is_value(it) and dc is None and k == 0):
            value = it if word != "dc" else (items[k + 1] if k + 1 < len(items) else None)
            if not _is_value(value):
                raise NetlistError("DC needs a value", stmt.loc(it), hint="write e.g. DC 5")
            if dc is not None:
                raise NetlistError("a second DC value", stmt.loc(it), hint=_HINT)
            dc = word_expr(value, stmt, names)
            k += 1 if word != "dc" else 2
        elif word == "ac":
            vals = []
            k += 1
            while k < len(items) and len(vals) < 2 and _is_value(items[k]):
                vals.append(word_expr(items[k], stmt, names))
                k += 1
            if out.ac is not None:
                raise NetlistError("a second AC specification", stmt.loc(it), hint=_HINT)
            out.ac = (vals[0] if vals else sp.Integer(1), vals[1] if len(vals) > 1 else sp.Integer(0))
        elif word in ("distof1", "distof2"):
            k += 1
            while k < len(items) and _is_value(items[k]) and looks_numeric(items[k].text):
                k += 1
            out.ignored.append(word.upper())
        elif isinstance(it, Call):
            raise NetlistError(f"unknown waveform '{it.name.text}'", stmt.loc(it.name),
                               hint="use DC v, AC mag, SIN, PULSE, PWL, EXP or SFFM")
        elif isinstance(it, Group):
            raise NetlistError("unexpected '(' on a source", stmt.loc(it), hint=_HINT)
        else:
            raise NetlistError("unexpected text after the source's values", stmt.loc(it), hint=_HINT)
    if tran_wf is not None:
        out.waveform = tran_wf
        out.dc = dc
    elif dc is not None or out.ac is not None:
        out.waveform = Waveform("dc", (dc if dc is not None else sp.Integer(0),),
                                stmt.loc(items[0]) if items else stmt.loc(stmt.head))
    return out
