"""SPICE control cards: ``.tran``, ``.options``, ``.temp`` -> :class:`DeckSettings`.

These cards say how to run a deck, not what the circuit is.  They are read
here without sympy, so ``phsym simulate DECK`` learns its default rate,
duration and Newton settings cheaply (before a warm start), and by the
netlist parser, which stores them in :attr:`Netlist.deck`.

Mapping to phsym (see ``docs/spice-compatibility.md``):

* ``.tran TSTEP TSTOP [TSTART [TMAX]] [UIC]``: rate ``1/TSTEP``, duration
  ``TSTOP``; without ``UIC`` the run starts from the DC operating point.
* ``.options RELTOL= ABSTOL= VNTOL=``: the Newton tolerance on the scaled
  step is the smallest of those given; ``ITL4=`` is the iteration cap per
  step; ``TEMP=``/``TNOM=`` (degrees Celsius) set the diode thermal voltage
  (``TNOM`` is stored); ``GMIN=`` is the conductance across every diode
  junction (default 1e-12 S); ``ITL1=`` is stored.  Any other option is named in one warning and ignored.
* ``.temp T`` is ``.options TEMP=T``.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Dict, List, Optional

from ..common.physics import BOLTZMANN_OVER_Q, KELVIN as _KELVIN
from ..errors import NetlistError, NetlistWarning
from .numbers import looks_numeric, parse_number
from .analyses import raw_card, read_card
from .settings import ANALYSIS_CARDS, OPTION_CARDS, Analyses, DeckSettings, Tran
from .source import Assign, Statement, Word, raw_statement

__all__ = ["Tran", "DeckSettings", "OPTION_CARDS", "USED_OPTIONS", "BOLTZMANN_OVER_Q", "tran_card",
           "options_card", "temp_card", "deck_settings", "warn_ignored"]

#: Options phsym uses (lower case) and what for.
USED_OPTIONS = {"reltol": "Newton tolerance", "abstol": "Newton tolerance", "vntol": "Newton tolerance",
                "itl4": "Newton iterations per step", "itl1": "stored (DC iterations)",
                "gmin": "diode junction conductance", "temp": "thermal voltage",
                "tnom": "nominal temperature of .model cards"}




def _number(word, stmt: Statement, what: str) -> float:
    if not isinstance(word, Word) or word.kind != "word" or not looks_numeric(word.text):
        raise NetlistError(f"{what} must be a number", stmt.loc(word),
                           hint="control cards take plain numbers (SPICE suffixes allowed: 10u, 1m)")
    return parse_number(word.text, stmt.loc(word), warn=False)


def tran_card(stmt: Statement) -> Tran:
    """Read ``.tran TSTEP TSTOP [TSTART [TMAX]] [UIC]``.

    Parameters
    ----------
    stmt : Statement
        The card.
    """
    usage = ".tran TSTEP TSTOP [TSTART [TMAX]] [UIC]"
    items = list(stmt.items)
    uic = bool(items) and isinstance(items[-1], Word) and items[-1].text.lower() == "uic"
    if uic:
        items.pop()
    if len(items) < 2:
        raise NetlistError(".tran needs TSTEP and TSTOP", stmt.loc(stmt.head), hint=usage)
    if len(items) > 4:
        raise NetlistError("unexpected text after TMAX", stmt.loc(items[4]), hint=usage)
    names = ("TSTEP", "TSTOP", "TSTART", "TMAX")
    vals = [_number(it, stmt, names[k]) for k, it in enumerate(items)]
    for k, v in enumerate(vals):
        if not (v > 0 or (k >= 2 and v == 0)):
            raise NetlistError(f"{names[k]} must be positive, got {v:g}", stmt.loc(items[k]), hint=usage)
    if vals[0] > vals[1]:
        raise NetlistError(f"TSTEP {vals[0]:g} is longer than TSTOP {vals[1]:g}", stmt.loc(items[0]), hint=usage)
    if len(vals) > 2 and vals[2] >= vals[1]:
        raise NetlistError(f"TSTART {vals[2]:g} is not before TSTOP {vals[1]:g}", stmt.loc(items[2]), hint=usage)
    return Tran(vals[0], vals[1], vals[2] if len(vals) > 2 else 0.0, vals[3] if len(vals) > 3 else None, uic)


def _check_option(key: str, value: float, stmt: Statement, item) -> None:
    if key in ("itl1", "itl4"):
        if value < 1 or value != int(value):
            raise NetlistError(f"{key.upper()} must be a positive integer, got {value:g}", stmt.loc(item))
    elif key in ("reltol", "abstol", "vntol"):
        if not 0 < value < 1:
            raise NetlistError(f"{key.upper()} must be in (0, 1), got {value:g}", stmt.loc(item))
    elif key == "gmin":
        if value < 0:
            raise NetlistError(f"GMIN must be non-negative, got {value:g}", stmt.loc(item))
    elif value <= -_KELVIN:
        raise NetlistError(f"{key.upper()} is in degrees Celsius and must be above -273.15, got {value:g}",
                           stmt.loc(item))


def options_card(stmt: Statement, options: Dict[str, float], ignored: List[str]) -> None:
    """Read an ``.options`` card into ``options``; unused names go to ``ignored``.

    Parameters
    ----------
    stmt : Statement
        The card (``KEY=value`` entries and flags).
    options : dict of str to float
        Updated with the used options (lower-case keys); a later card wins.
    ignored : list of str
        Extended with the names phsym does not use.
    """
    for it in stmt.items:
        if isinstance(it, Assign):
            key = it.key.text.lower()
            if key in USED_OPTIONS:
                value = _number(it.value, stmt, it.key.text.upper())
                _check_option(key, value, stmt, it.value)
                options[key] = value
            else:
                ignored.append(it.key.text.upper())
        elif isinstance(it, Word) and it.kind == "word":
            if it.text.lower() in USED_OPTIONS:
                raise NetlistError(f"option {it.text.upper()} needs a value", stmt.loc(it),
                                   hint=f"write {it.text.upper()}=VALUE")
            ignored.append(it.text.upper())
        else:
            raise NetlistError("expected NAME=VALUE or a flag in .options", stmt.loc(it),
                               hint=".options RELTOL=1e-4 ABSTOL=1e-12 TEMP=27")


def temp_card(stmt: Statement, options: Dict[str, float], analyses: Optional[Analyses] = None) -> None:
    """Read ``.temp T [T2 ...]`` (degrees Celsius): ``options['temp']`` is the first, a list
    of several goes to ``analyses.temps`` (the deck's analyses run at each).

    Parameters
    ----------
    stmt : Statement
        The card.
    options : dict of str to float
        Updated in place.
    analyses : Analyses, optional
        Receives a list of temperatures.
    """
    if not stmt.items:
        raise NetlistError(".temp needs a temperature", stmt.loc(stmt.head),
                           hint=".temp 27 or .temp 0 27 85 (degrees Celsius)")
    values = [_number(it, stmt, "the temperature") for it in stmt.items]
    for it, value in zip(stmt.items, values):
        _check_option("temp", value, stmt, it)
    options["temp"] = values[0]
    if len(values) > 1 and analyses is not None:
        analyses.temps[:] = values


def warn_ignored(options: List[str], skipped: List[str]) -> None:
    """One :class:`NetlistWarning` naming ignored options, one naming skipped cards.

    Parameters
    ----------
    options : list of str
        Option names phsym does not use.
    skipped : list of str
        Skipped cards with their positions.
    """
    if options:
        names = ", ".join(dict.fromkeys(options))
        warnings.warn(f"ignored .options (not used by phsym): {names}", NetlistWarning, stacklevel=3)
    if skipped:
        warnings.warn("read and not used by phsym (see docs/spice-compatibility.md): " + ", ".join(skipped),
                      NetlistWarning, stacklevel=3)


def deck_settings(path) -> DeckSettings:
    """The control cards of a deck file (its includes read), without building the circuit.

    Parameters
    ----------
    path : str or pathlib.Path
        The deck.

    Raises
    ------
    NetlistError
        For an unreadable file or a malformed control card.
    """
    from .include import read_deck_lines
    from .source import parse_statement
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise NetlistError(f"cannot read netlist '{name}': {exc}") from None
    tran: Optional[Tran] = None
    options: Dict[str, float] = {}
    analyses = Analyses()
    for line in read_deck_lines(text, name).lines:
        head = line.text.split(None, 1)[0].lower()
        if head == ".tran":
            tran = tran_card(parse_statement(line))
        elif head in OPTION_CARDS:
            options_card(parse_statement(line), options, [])
        elif head == ".temp":
            temp_card(parse_statement(line), options, analyses)
        elif head in ANALYSIS_CARDS:
            read_card(raw_statement(line) if raw_card(line) else parse_statement(line), analyses)
    return DeckSettings(tran, options, analyses=analyses)
