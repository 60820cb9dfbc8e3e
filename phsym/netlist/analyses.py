"""A deck's analysis and output cards: what SPICE would run and print, read into :class:`Analyses`.

``.op``, ``.ac DEC|OCT|LIN N FSTART FSTOP``, ``.dc SRC START STOP STEP [SRC2
START2 STOP2 STEP2]`` (sources, ``.param`` names or ``TEMP``), ``.tf OUTVAR
INSRC``, ``.four FREQ OV ...``, ``.meas``/``.measure`` (kept as text, read
by the simulation's measurement module), ``.save``/``.print``/``.probe``
vectors, ``.step [LIN|DEC|OCT] PARAM NAME ...`` / ``.step PARAM NAME LIST
...`` and a list of ``.temp`` values.  The simulation stage runs them
(``phsym op``, ``ac``, ``dc``, ``tf``, ``simulate``).

>>> from phsym.netlist.source import read_statements
>>> a = Analyses()
>>> for s in read_statements(".dc VDS 0 10 .5 VGS 0 5 1\\n.tf V(5) VIN\\n"):
...     read_card(s, a)
>>> [(w.name, float(w.values()[-1])) for w in a.dc], a.tf
([('VDS', 10.0), ('VGS', 5.0)], Tf(output='v(5)', source='VIN'))
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from ..errors import Location, NetlistError
from .numbers import looks_numeric, parse_number
from .settings import ANALYSIS_CARDS, Analyses
from .source import Call, LogicalLine, Statement, Word

__all__ = ["Ac", "Sweep", "Tf", "Four", "Measure", "Analyses", "read_card", "ANALYSIS_CARDS",
           "output_label"]



@dataclass(frozen=True)
class Ac:
    """``.ac SWEEP POINTS FSTART FSTOP``."""

    sweep: str
    points: int
    fstart: float
    fstop: float


@dataclass(frozen=True)
class Sweep:
    """One swept quantity of ``.dc`` or ``.step``: a source, a parameter or ``TEMP``.

    Attributes
    ----------
    name : str
        Source or parameter name as written, or ``"TEMP"``.
    kind : str
        ``"source"`` (``.dc``: an independent source, or a parameter when no
        source has the name), ``"param"`` or ``"temp"``.
    points : tuple of float
        The swept values in order.
    """

    name: str
    kind: str
    points: Tuple[float, ...]

    def values(self) -> np.ndarray:
        """The swept values."""
        return np.array(self.points, dtype=float)


@dataclass(frozen=True)
class Tf:
    """``.tf OUTVAR INSRC``: output label (``v(5)``, ``v(a,b)``, ``i(vx)``) and input source."""

    output: str
    source: str


@dataclass(frozen=True)
class Four:
    """``.four FREQ OV1 OV2 ...``: fundamental and signal labels."""

    freq: float
    signals: Tuple[str, ...]


@dataclass(frozen=True)
class Measure:
    """A ``.meas`` card: its analysis (``tran``, ``ac``, ``dc``), its text after the analysis, where."""

    analysis: str
    text: str
    location: Optional[Location] = None



def _num(item, stmt: Statement, what: str, usage: str) -> float:
    if not (isinstance(item, Word) and item.kind == "word" and looks_numeric(item.text)):
        raise NetlistError(f"{what} must be a number", stmt.loc(item) if item is not None else stmt.loc(stmt.head),
                           hint=usage)
    return parse_number(item.text, stmt.loc(item), warn=False)


def output_label(item, stmt: Statement) -> str:
    """A vector of ``.print``/``.save``/``.tf``/``.four`` as a label: ``v(5)``, ``v(a,b)``, ``i(vin)``,
    ``vdb(out)`` (SPICE's AC forms), or a bare word (``all``, a node name)."""
    if isinstance(item, Call):
        args = ",".join(a.text for a in item.args if isinstance(a, Word))
        return f"{item.name.text.lower()}({args})"
    if isinstance(item, Word) and item.kind == "word":
        return item.text
    raise NetlistError("expected an output such as v(5), v(a,b) or i(vin)", stmt.loc(item),
                       hint="SPICE output vectors: V(node), V(n1,n2), I(Vsource), VDB(node), VP(node)")


def _grid(kind: str, start: float, stop: float, step: float, loc, usage: str) -> Tuple[float, ...]:
    if kind == "lin":
        if step == 0 or (stop - start) / step < 0:
            raise NetlistError(f"step {step:g} does not go from {start:g} to {stop:g}", loc, hint=usage)
        n = int(np.floor((stop - start) / step + 1e-9)) + 1
        return tuple(float(start + k * step) for k in range(n))
    if not (start > 0 and stop >= start and step >= 1):
        raise NetlistError(f"a {kind.upper()} sweep needs 0 < START <= STOP and points >= 1", loc, hint=usage)
    per = np.log10(stop / start) * step / (1.0 if kind == "dec" else np.log10(2.0))
    n = int(np.floor(per + 1e-9)) + 1
    return tuple(float(v) for v in start * (stop / start) ** (np.arange(n) / max(per, 1e-300)))


def _dc(stmt: Statement, out: Analyses) -> None:
    usage = ".dc SRC START STOP STEP [SRC2 START2 STOP2 STEP2] (SRC: a source, a .param name or TEMP)"
    items = list(stmt.items)
    if len(items) not in (4, 8):
        raise NetlistError(".dc takes one or two sweeps of four items", stmt.loc(stmt.head), hint=usage)
    for k in range(0, len(items), 4):
        name = items[k]
        if not (isinstance(name, Word) and name.kind == "word") or looks_numeric(name.text):
            raise NetlistError("expected a source, a parameter or TEMP", stmt.loc(name), hint=usage)
        vals = [_num(it, stmt, w, usage) for it, w in zip(items[k + 1:k + 4], ("START", "STOP", "STEP"))]
        kind = "temp" if name.text.lower() == "temp" else "source"
        out.dc.append(Sweep(name.text, kind, _grid("lin", *vals, stmt.loc(items[k + 3]), usage)))


def _step(stmt: Statement, out: Analyses) -> None:
    usage = ".step [LIN|DEC|OCT] PARAM NAME START STOP STEP, .step PARAM NAME LIST v1 v2 ..., .step TEMP ..."
    words = list(stmt.items)
    kind = "lin"
    if words and isinstance(words[0], Word) and words[0].text.lower() in ("lin", "dec", "oct"):
        kind = words.pop(0).text.lower()
    if words and isinstance(words[0], Word) and words[0].text.lower() == "param":
        words.pop(0)
    if not words or not isinstance(words[0], Word) or looks_numeric(words[0].text):
        raise NetlistError(".step needs what it steps", stmt.loc(stmt.head), hint=usage)
    name = words.pop(0)
    which = "temp" if name.text.lower() == "temp" else "param"
    if words and isinstance(words[0], Word) and words[0].text.lower() == "list":
        values = tuple(_num(w, stmt, "a LIST value", usage) for w in words[1:])
        if not values:
            raise NetlistError(".step LIST needs values", stmt.loc(words[0]), hint=usage)
    else:
        if len(words) != 3:
            raise NetlistError(".step needs START STOP STEP (or LIST v1 v2 ...)", stmt.loc(name), hint=usage)
        vals = [_num(w, stmt, what, usage) for w, what in zip(words, ("START", "STOP", "STEP"))]
        values = _grid(kind, *vals, stmt.loc(words[2]), usage)
    out.steps.append(Sweep(name.text, which, values))


def read_card(stmt: Statement, out: Analyses) -> None:
    """Read one analysis or output card into ``out``.

    Parameters
    ----------
    stmt : Statement
        The card (``.meas`` as raw text: its items are empty and its text is in ``rest``).
    out : Analyses
        Updated in place.

    Raises
    ------
    NetlistError
        A malformed card, at the offending item with the card's usage.
    """
    head = stmt.head.text.lower()
    items = list(stmt.items)
    if head == ".op":
        out.op = True
    elif head == ".ac":
        usage = ".ac DEC|OCT|LIN N FSTART FSTOP"
        if len(items) != 4 or not isinstance(items[0], Word) or items[0].text.lower() not in ("dec", "oct", "lin"):
            raise NetlistError("malformed .ac card", stmt.loc(items[0] if items else stmt.head), hint=usage)
        n = _num(items[1], stmt, "N", usage)
        f1, f2 = (_num(it, stmt, w, usage) for it, w in zip(items[2:], ("FSTART", "FSTOP")))
        if n < 1 or n != int(n) or not 0 < f1 <= f2:
            raise NetlistError("an .ac sweep needs N >= 1 and 0 < FSTART <= FSTOP", stmt.loc(items[1]), hint=usage)
        out.ac = Ac(items[0].text.lower(), int(n), f1, f2)
    elif head == ".dc":
        _dc(stmt, out)
    elif head == ".tf":
        usage = ".tf OUTVAR INSRC, e.g. .tf V(5) VIN or .tf I(VOUT) IIN"
        if len(items) != 2 or not isinstance(items[1], Word):
            raise NetlistError(".tf takes an output and an input source", stmt.loc(stmt.head), hint=usage)
        out.tf = Tf(output_label(items[0], stmt), items[1].text)
    elif head in (".four", ".fourier"):
        usage = ".four FREQ OV1 [OV2 ...], e.g. .four 1k V(out)"
        if len(items) < 2:
            raise NetlistError(".four needs a frequency and signals", stmt.loc(stmt.head), hint=usage)
        out.four.append(Four(_num(items[0], stmt, "FREQ", usage), tuple(output_label(i, stmt) for i in items[1:])))
    elif head in (".meas", ".measure"):
        words = stmt.rest.split(None, 1)
        if len(words) < 2 or words[0].lower() not in ("tran", "ac", "dc"):
            raise NetlistError(".meas needs an analysis (TRAN, AC or DC), a name and what it measures",
                               stmt.loc(stmt.head), hint=".meas TRAN vmax MAX v(out)")
        out.measures.append(Measure(words[0].lower(), words[1], stmt.loc(stmt.head)))
    elif head == ".save":
        out.saves += [output_label(i, stmt) for i in items]
    elif head == ".print":
        kind = items[0].text.lower() if items and isinstance(items[0], Word) and items[0].text.lower() in (
            "tran", "ac", "dc", "op", "tf") else "tran"
        vectors = items[1:] if items and isinstance(items[0], Word) and items[0].text.lower() == kind else items
        out.prints.setdefault(kind, []).extend(output_label(i, stmt) for i in vectors)
    elif head == ".step":
        _step(stmt, out)
    else:       # pragma: no cover - the parser dispatches only ANALYSIS_CARDS
        raise NetlistError(f"not an analysis card: {stmt.head.text}", stmt.loc(stmt.head))


def raw_card(line: LogicalLine) -> bool:
    """Whether a card keeps its raw text (``.meas``: its syntax is its own)."""
    return line.text.split(None, 1)[0].lower() in (".meas", ".measure")
