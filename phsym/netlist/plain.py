"""A deck of plain parts, read without sympy: the cold path's netlist reader.

A *plain* deck holds only elements of the kinds declared in
:mod:`.plain_kinds` (R, C, L, D, V, I) whose values are numbers or names of
``.param`` numbers, diodes' ``.model D(...)`` cards of numbers, sources that
are empty, a DC value or a ``SIN(...)``/``PULSE(...)`` of numbers, and
``.probe v(...)``/``i(...)`` cards.  :func:`read_plain` reads such a deck
with the statement layer (:mod:`.source`, :mod:`.include`) and the number
reader (:mod:`.numbers`), giving what the symbolic reader
(:func:`phsym.netlist.parser.parse_netlist`) gives of it as numbers: the
elements' values by key, the parameters by name in the same order, the
probes and saved signals, the waveforms' numbers.

Anything else -- a ``.param`` expression, braces, a law, an ``IC=``, a
subcircuit, another kind or card, a warning the symbolic reader would
give, an error -- raises :class:`NotPlain`: the caller takes the symbolic
path, which reads the deck (and reports its errors) as always.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ..common.names import DATUM
from ..common.quantities import SYMBOLS
from ..errors import NetlistError, NetlistWarning, PhsymError
from .include import read_deck_lines
from .numbers import looks_numeric, parse_number
from .plain_kinds import KEYWORDS, LETTERS, MODEL_TYPES, PLAIN_KINDS, PlainKind
from .shapes import PULSE_EDGE
from .source import Assign, Call, Statement, Word, parse_statement, raw_statement

__all__ = ["NotPlain", "PlainElement", "PlainDeck", "read_plain"]

#: The transient functions read here, with their arity (as the symbolic reader's
#: :data:`~phsym.netlist.waveforms.WAVEFORM_ARITY`).
_SHAPES = {"sin": (2, 6), "pulse": (2, 7)}
#: Words of a source line that are not a DC value (:mod:`.sourcespec`).
_WORDS = ("dc", "ac", "distof1", "distof2", "sin", "sine", "pulse", "pwl", "exp", "sffm")


class NotPlain(PhsymError):
    """A deck that is not plain (see the module docstring): read it with the symbolic reader."""


@dataclass(frozen=True)
class PlainElement:
    """An element of a plain deck: an element given by numbers, which
    :func:`phsym.structure.circuit.kinds.assemble` builds a circuit of (``kinds.Element``).

    Attributes
    ----------
    name, kind : str
        As :class:`phsym.components.ElementSpec`.
    nodes : tuple of str
        Canonical node names (the datum is ``"0"``).
    values : dict of str to float
        Its values by key, at the parameters' values (in the kind's order).
    checks : dict of str to str
        Each value's constraint (:data:`phsym.common.constraints.CHECKS`).
    waveform : (str, tuple of float) or None
        A source's waveform as shape and numbers (:meth:`phsym.simulation.plancache.FixedParts.wave`).
    params : dict of str to str
        The parameter each value is (the symbolic reader's symbol), by key.
    """

    name: str
    kind: str
    nodes: Tuple[str, ...]
    values: Dict[str, float] = field(default_factory=dict)
    checks: Dict[str, str] = field(default_factory=dict)
    waveform: Optional[Tuple[str, Tuple[float, ...]]] = None
    params: Dict[str, str] = field(default_factory=dict)


@dataclass
class PlainDeck:
    """What the symbolic reader gives of a plain deck, as numbers.

    Attributes
    ----------
    title : str
        The ``.title`` (empty without one).
    file : str
        The deck's path.
    elements : list of PlainElement
        In netlist order.
    parameters : dict of str to float
        Every parameter (``.param``, ``.model`` values ``NAME.key``, element values), in the
        symbolic reader's order.
    probes : list of str
        ``.probe`` labels.
    saved : list of str
        The signals a run writes besides its states, inputs and powers
        (:meth:`phsym.netlist.spec.Netlist.outputs`).
    """

    title: str
    file: str
    elements: List[PlainElement]
    parameters: Dict[str, float]
    probes: List[str]
    saved: List[str]

    @property
    def name(self) -> str:
        """The model's name (:attr:`phsym.model.Model.name`)."""
        return self.title or Path(self.file).stem


def _no(why: str, stmt: Optional[Statement] = None) -> NotPlain:
    where = f" ({stmt.loc(stmt.head).describe()})" if stmt is not None else ""
    return NotPlain(f"not a plain deck: {why}{where}")


class _Reader:
    """One deck's reading state: parameters by lower-case name, node spellings, models."""

    def __init__(self) -> None:
        self.params: Dict[str, Tuple[str, float]] = {}
        self.spelling: Dict[str, str] = {}
        self.models: Dict[str, Dict[str, str]] = {}     # card (lower) -> value key -> parameter name

    def add(self, name: str, value: float, stmt: Statement) -> str:
        if name.lower() in self.params:
            raise _no(f"parameter name '{name}' used twice", stmt)
        self.params[name.lower()] = (name, value)
        return name

    def number(self, word, stmt: Statement, warn: bool = True) -> float:
        if not (isinstance(word, Word) and word.kind == "word" and looks_numeric(word.text)):
            raise _no("a value that is not a number", stmt)
        return parse_number(word.text, stmt.loc(word), warn)

    def value(self, word, stmt: Statement, warn: bool = True) -> Tuple[Optional[str], float]:
        """``(parameter name, value)`` of a parameter's name, ``(None, value)`` of a number (``warn``:
        about an upper-case ``M``, as :func:`~.params.word_expr`)."""
        if isinstance(word, Word) and word.kind == "word" and not looks_numeric(word.text):
            found = self.params.get(word.text.lower())
            if found is None:
                raise _no(f"'{word.text}' is not a parameter", stmt)
            return found
        return None, self.number(word, stmt, warn)

    def node(self, word, stmt: Statement) -> str:
        if not (isinstance(word, Word) and word.kind == "word"):
            raise _no("a node that is not a name", stmt)
        if word.text == "0" or word.text.lower() == "gnd":
            return DATUM
        return self.spelling.setdefault(word.text.lower(), word.text)

    # ------------------------------------------------------------------ cards
    def param_card(self, stmt: Statement) -> None:
        if not stmt.items:
            raise _no(".param defines nothing", stmt)
        for it in stmt.items:
            if not isinstance(it, Assign) or not (it.key.text[0].isalpha() or it.key.text[0] == "_") \
                    or it.key.text.startswith("__"):
                raise _no("a .param item that is not NAME=NUMBER", stmt)
            self.add(it.key.text, self.number(it.value, stmt), stmt)

    def model_card(self, stmt: Statement) -> None:
        items = list(stmt.items)
        if len(items) != 2 or not (isinstance(items[0], Word) and items[0].kind == "word") \
                or not isinstance(items[1], Call):
            raise _no("a .model card that is not NAME TYPE(KEY=NUMBER ...)", stmt)
        name, call = items[0].text, items[1]
        kind = MODEL_TYPES.get(call.name.text.lower())
        if kind is None or name.lower() in self.models:
            raise _no(f".model type {call.name.text} (or a second .model {name})", stmt)
        decl = PLAIN_KINDS[kind]
        declared = {k.lower(): v for v in decl.values for k in (v.model_key or v.key, *v.aliases)}
        given: Dict[str, float] = {}
        for a in call.args:
            v = declared.get(a.key.text.lower()) if isinstance(a, Assign) else None
            if v is None or v.key in given:
                raise _no(f"a .model {name} parameter that is not a declared KEY=NUMBER", stmt)
            given[v.key] = self.number(a.value, stmt)
        card = {}
        for v in decl.values:       # the symbolic reader's order: the kind's, given or defaulted
            if v.key in given or v.default is not None:
                card[v.key] = self.add(f"{name}.{v.key}", given.get(v.key, v.default), stmt)
        self.models[name.lower()] = card

    # --------------------------------------------------------------- elements
    def element(self, stmt: Statement) -> PlainElement:
        name = stmt.head.text
        low = name.lower()
        kind = next((LETTERS[low[:n]] for n in (2, 1) if low[:n] in LETTERS), None)
        decl = PLAIN_KINDS.get(kind)
        items = list(stmt.items)
        if decl is None or len(items) < decl.terminals:
            raise _no(f"element {name} is not of a plain kind", stmt)
        if any(isinstance(it, Word) and it.kind == "word" and it.text.lower() in KEYWORDS
               or isinstance(it, Call) and it.name.text.lower() in KEYWORDS for it in items):
            raise _no(f"element {name} names a kind keyword", stmt)
        nodes = tuple(self.node(w, stmt) for w in items[:decl.terminals])
        if len(set(nodes)) < len(nodes):
            raise _no(f"element {name} has both terminals on one node", stmt)
        rest = items[decl.terminals:]
        if decl.source:
            return PlainElement(name, decl.kind, nodes, waveform=self.waveform(rest, stmt))
        values, checks, params = self.values(name, decl, rest, stmt)
        return PlainElement(name, decl.kind, nodes, values, checks, params=params)

    def values(self, name: str, decl: PlainKind, rest: list, stmt: Statement):
        positional = [it for it in rest if not isinstance(it, Assign)]
        keys = {v.key.lower(): v.key for v in decl.values}
        given = {}
        for it in rest:
            if isinstance(it, Assign):
                key = keys.get(it.key.text.lower())
                if key is None or key in given:
                    raise _no(f"keyword {it.key.text}= on {name}", stmt)
                given[key] = it.value
        card = None
        if decl.model and positional:
            first = positional[0]
            if isinstance(first, Word) and first.kind == "word" and (
                    not looks_numeric(first.text) or first.text.lower() in self.models):
                card = self.models.get(first.text.lower())
                if card is None:
                    raise _no(f"model {first.text} of {name} is not a plain .model card", stmt)
                positional.pop(0)
        main = next((v for v in decl.values if v.main), None)
        if positional and main is not None and main.key not in given:
            given[main.key] = positional.pop(0)
        if positional:
            raise _no(f"an unexpected value on {name}", stmt)
        params: Dict[str, str] = {}
        for v in decl.values:       # as the symbolic reader takes them, in the kind's order
            pname = name if v.main else f"{name}.{v.key}"
            if v.key in given:
                param, number = self.value(given[v.key], stmt)
                params[v.key] = self.add(pname, number, stmt) if param is None else param
            elif card is not None and v.key in card:
                params[v.key] = card[v.key]
            elif v.default is not None:
                params[v.key] = self.add(pname, v.default, stmt)
            elif not v.optional:
                raise _no(f"missing value {v.key} of {name}", stmt)
        values = {k: self.params[p.lower()][1] for k, p in params.items()}
        checks = {v.key: v.check for v in decl.values if v.check is not None and v.key in values}
        return values, checks, params

    def waveform(self, rest: list, stmt: Statement) -> Optional[Tuple[str, Tuple[float, ...]]]:
        if not rest:
            return None
        if len(rest) == 2 and isinstance(rest[0], Word) and rest[0].text.lower() == "dc":
            rest = rest[1:]
        it = rest[0]
        if len(rest) == 1 and isinstance(it, Word) and it.text.lower() not in _WORDS:
            return "dc", (self.value(it, stmt)[1],)
        if len(rest) != 1 or not isinstance(it, Call) or it.name.text.lower() not in _SHAPES \
                or any(isinstance(a, Assign) for a in it.args):
            raise _no("a source that is not empty, a DC value, SIN(...) or PULSE(...)", stmt)
        shape = it.name.text.lower()
        args = [self.value(a, stmt, warn=False)[1] for a in it.args]     # times: M is milli
        lo, hi = _SHAPES[shape]
        if not lo <= len(args) <= hi:
            raise _no(f"{shape.upper()} with {len(args)} arguments", stmt)
        if shape == "pulse":        # the symbolic reader's edges: a zero or missing rise or fall time
            args += [0.0] * (5 - len(args))
            args[3:5] = [PULSE_EDGE if a == 0 else a for a in args[3:5]]
        return shape, tuple(float(a) for a in args)

    def probes(self, stmts: List[Statement], elements: List[PlainElement]) -> List[str]:
        nodes = {"0": DATUM, "gnd": DATUM, **{n.lower(): n for e in elements for n in e.nodes}}
        names = {e.name.lower(): e.name for e in elements}
        out: List[str] = []
        for stmt in stmts:
            if not stmt.items:
                raise _no(".probe lists nothing", stmt)
            for it in stmt.items:
                word = it.name.text.lower() if isinstance(it, Call) else ""
                args = [a.text for a in it.args if isinstance(a, Word) and a.kind == "word"] \
                    if isinstance(it, Call) else []
                if word not in ("v", "i") or not args or len(args) != len(it.args) or len(args) > (2 if word == "v" else 1):
                    raise _no("a probe that is not v(NODE), v(N1,N2) or i(ELEMENT)", stmt)
                if word == "v" and all(a.lower() in nodes for a in args):
                    label = f"{SYMBOLS.get(word, word)}({','.join(nodes[a.lower()] for a in args)})"
                elif len(args) == 1 and args[0].lower() in names:
                    label = f"{SYMBOLS.get(word, word)}({names[args[0].lower()]})"
                else:
                    raise _no(f"a probe of an unknown name ({', '.join(args)})", stmt)
                if label not in out:
                    out.append(label)
        return out


def read_plain(path) -> PlainDeck:
    """The plain deck at ``path`` (see the module docstring).

    Parameters
    ----------
    path : str or pathlib.Path
        A netlist file.

    Raises
    ------
    NotPlain
        For a deck that is not plain, or that the symbolic reader would warn about or refuse.
    """
    file = str(path)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            deck = _read(Path(path).read_text(encoding="utf-8-sig"), file)
    except (NetlistError, OSError, UnicodeDecodeError) as exc:
        raise NotPlain(f"not a plain deck: {exc}") from None
    finally:
        for w in seen:      # a cache's warning is given once, here; the deck's are the symbolic reader's
            if not issubclass(w.category, NetlistWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if any(issubclass(w.category, NetlistWarning) for w in seen):
        raise NotPlain("not a plain deck: the symbolic reader warns about it")
    return deck


def _read(text: str, file: str) -> PlainDeck:
    deck = read_deck_lines(text, file)
    if deck.files[1:] or deck.skipped or not deck.lines:
        raise _no("included files or skipped cards")
    first = deck.lines[0]
    if first.positions[0][0] == 1 and not first.text.lstrip().startswith("."):
        raise _no("line 1 may be a title or an element")        # the symbolic reader decides
    r = _Reader()
    title = ""
    cards: Dict[str, List[Statement]] = {".param": [], ".model": [], ".probe": [], "": []}
    for line in deck.lines:
        head = line.text.split(None, 1)[0].lower()
        if head == ".title":
            title = raw_statement(line).rest
            continue
        stmt = parse_statement(line)
        key = "" if not head.startswith(".") else head
        if key not in cards:
            raise _no(f"the card {stmt.head.text}", stmt)
        cards[key].append(stmt)
    for stmt in cards[".param"]:        # the symbolic reader's order: parameters, models, elements
        r.param_card(stmt)
    for stmt in cards[".model"]:
        r.model_card(stmt)
    elements = [r.element(stmt) for stmt in cards[""]]
    if not elements or len({e.name.lower() for e in elements}) < len(elements):
        raise _no("no elements, or an element name used twice")
    labels = r.probes(cards[".probe"], elements)
    saved = list(labels)
    if not cards[".probe"]:     # the symbolic reader's default: every node voltage and voltage source current
        saved = list(dict.fromkeys([f"v({n})" for e in elements for n in e.nodes if n != DATUM]
                                   + [f"i({e.name})" for e in elements if e.kind == "vsource"]))
    return PlainDeck(title, file, elements, {n: v for n, v in r.params.values()}, labels, saved)
