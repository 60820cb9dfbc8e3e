"""Element lines -> :class:`~phsym.components.element.ElementSpec`.

Everything kind-specific comes from the component registry
(:data:`phsym.components.REGISTRY`): the kind is chosen by a kind keyword
right after the nodes (``M1 v 0 mass m=1``) or else by the name's prefix
(the longest registered prefix wins: ``TF1`` before ``T``); the kind's
declaration says how many terminals it has, which values and laws it
accepts, their defaults, its SPICE ``.model`` type and whether ``IC=`` is
allowed.  ``X`` lines are subcircuit instances (:mod:`.subckt`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple, Type, Union

import sympy as sp

from ..components import DATUM, REGISTRY, Component, ElementSpec, Waveform
from ..common.names import NameTable
from ..errors import Location, NetlistError
from .numbers import looks_numeric, parse_number
from .params import ParamTable, word_expr
from .element_law import element_law
from .source import Assign, Call, Group, ItemLocations, Statement, Word
from .parasitics import parasitic_elements, split_parasitics
from .sourcespec import source_spec

__all__ = ["ModelCard", "Context", "element_kind", "build_element", "canonical_node", "node_spellings", "SUBCKT"]

#: Kind of ``X`` lines (subcircuit instances, expanded by :mod:`.subckt`).
SUBCKT = "subckt"


def kind_hint() -> str:
    """Which names and keywords select a kind (for messages)."""
    return ("element names start with " + " ".join(REGISTRY.all_letters()) + " or X (subcircuit); "
            "or write a kind keyword after the nodes: " + " ".join(REGISTRY.all_keywords()))


@dataclass
class ModelCard:
    """A ``.model NAME TYPE(...)`` card: its parameter symbols per value key."""

    name: str
    type: str
    symbols: Dict[str, sp.Symbol]
    location: Optional[Location] = None


@dataclass
class Context:
    """Where elements are being expanded (top level or inside an instance)."""

    table: ParamTable
    names: NameTable
    models: Dict[str, ModelCard]
    prefix: str = ""
    node_map: Dict[str, str] = field(default_factory=dict)
    #: Element and instance names seen so far (lower case -> their statement), shared.
    seen: Dict[str, Statement] = field(default_factory=dict)
    #: Defaults that replace the declared ones, by (kind, value key) (deck temperature -> diode Vt).
    defaults: Dict[Tuple[str, str], float] = field(default_factory=dict)
    #: Node names are case-insensitive (as in SPICE): lower case -> the first spelling, shared.
    spelling: Dict[str, str] = field(default_factory=dict)
    #: The deck's ``.tran`` card (SPICE's default edges of PULSE...).
    tran: Optional[object] = None
    #: What was read and is not used, with its position (one warning for the deck), shared.
    ignored: List[str] = field(default_factory=list)
    #: ``.global`` nodes (lower case): the same node inside every subcircuit.
    globals: Set[str] = field(default_factory=set)
    #: Elements a line adds besides its own (LTspice's ``Rser=``...), taken by the caller.
    extra: List[ElementSpec] = field(default_factory=list)

    def register(self, stmt: Statement) -> None:
        """Record the statement's (prefixed) name; error on a duplicate."""
        name = self.prefix + stmt.head.text
        key = name.lower()
        first = self.seen.get(key)
        if first is not None:
            raise NetlistError(f"duplicate element name '{name}'", stmt.loc(stmt.head),
                               hint=f"an element or instance with this name is already defined "
                                    f"at line {first.loc(first.head).line}; names are case-insensitive")
        self.seen[key] = stmt


def canonical_node(text: str, ctx: Context) -> str:
    """Datum -> ``"0"``, subcircuit ports -> outer nodes, internal -> prefixed; any case
    spells the node first written (``OUT`` after ``out`` is ``out``)."""
    if text == "0" or text.lower() == "gnd":
        return DATUM
    port = ctx.node_map.get(text.lower())
    if port is not None:
        return port
    name = text if text.lower() in ctx.globals else ctx.prefix + text
    return ctx.spelling.setdefault(name.lower(), name)


def node_spellings(elements) -> Dict[str, str]:
    """Every node of ``elements`` (and the datum) by its lower-case name: node names are case-insensitive.

    Parameters
    ----------
    elements : iterable of ElementSpec
        Flattened elements.
    """
    out = {"0": DATUM, "gnd": DATUM}
    for el in elements:
        for n in el.nodes:
            out.setdefault(n.lower(), n)
    return out


Kind = Union[Type[Component], str]


def _form(item) -> str:
    """The word an item starts with (``POLY`` of ``POLY(2)``, ``VALUE`` of ``VALUE={...}``), lower case."""
    if isinstance(item, Call):
        return item.name.text.lower()
    if isinstance(item, Assign):
        return item.key.text.lower()
    return item.text.lower() if isinstance(item, Word) and item.kind == "word" else ""


def element_kind(stmt: Statement, subckts=()) -> Tuple[Kind, Optional[Word]]:
    """The component class of an element statement (or :data:`SUBCKT`) and its kind keyword.

    An ``X`` line naming a defined subcircuit is its instance, even when the
    subcircuit's name is a kind keyword (``XOP a b c OPAMP``); ``subckts``
    holds the defined names (lower case)."""
    if subckts and stmt.head.text[:1].lower() == "x":
        words = [it for it in stmt.items if isinstance(it, Word) and it.kind == "word"]
        if words and words[-1].text.lower() in subckts:
            return SUBCKT, None
    for pos, item in enumerate(stmt.items):
        word = item.name if isinstance(item, Call) else item     # learn(...): a keyword with arguments
        if isinstance(word, Word) and word.kind == "word":
            cls = REGISTRY.by_keyword(word.text)
            if cls is not None and pos == len(cls.terminals):
                return cls, word
    cls = REGISTRY.by_name(stmt.head.text)
    if cls is not None:
        forms = getattr(cls, "behavioral", ())       # E1 o 0 POLY(2) ..., G1 o 0 VALUE={...}
        if forms and any(_form(it) in forms for it in stmt.items[2:3]):
            return REGISTRY["behavioral"], None
        return cls, None
    if stmt.head.text[:1].lower() == "x":
        return SUBCKT, None
    raise NetlistError(f"unknown element type '{stmt.head.text}'", stmt.loc(stmt.head), hint=kind_hint())


def _word(item, stmt: Statement, what: str) -> Word:
    if isinstance(item, Word) and item.kind == "word":
        return item
    raise NetlistError(f"expected {what}", stmt.loc(item),
                       hint=f"{what}s are plain names; remove '=', '(...)' or '{{...}}'")


def _value(word: Word, stmt: Statement, ctx: Context, pname: str) -> sp.Expr:
    """Element value: a number makes a new parameter ``pname``."""
    if word.kind == "word" and looks_numeric(word.text):
        loc = stmt.loc(word)
        return ctx.table.add(pname, parse_number(word.text, loc), loc)
    return word_expr(word, stmt, ctx.names)


def _structural(v, given: Optional[Assign], stmt: Statement, ctx: Context, pname: str,
                default: Optional[float]) -> sp.Expr:
    """A structural value: a number now (see :class:`~phsym.components.Value`)."""
    if given is None:
        if default is None:
            raise NetlistError(f"missing value {v.key}", stmt.loc(stmt.head), hint=f"{v.key}: {v.doc}")
        return sp.Float(default)
    loc = stmt.loc(given)
    number = ctx.table.evaluate(word_expr(given.value, stmt, ctx.names), loc, pname)
    problem = v.problem(number)
    if problem:
        raise NetlistError(f"{pname} {problem}", loc, hint=f"{v.key}: {v.doc}")
    return sp.Float(number)


def _keywords(cls: Type[Component]) -> Dict[str, str]:
    """Accepted keywords (lower case) -> key (word options are taken out before); read, not changed."""
    keys = _KEYWORDS.get(cls)
    if keys is None:
        keys = {v.key.lower(): v.key for v in cls.values}
        keys.update({f.key.lower(): f.key for f in cls.laws})
        if cls.ic:
            keys["ic"] = "IC"
        _KEYWORDS[cls] = keys
    return keys


#: :func:`_keywords` per kind (a kind's declaration is fixed once its class is made)
_KEYWORDS: Dict[type, Dict[str, str]] = {}


def _split(rest: list, cls: Type[Component], stmt: Statement) -> Tuple[List[Word], Dict[str, Assign]]:
    """Positional words and ``KEY=value`` items (checked against the declaration)."""
    keys = _keywords(cls)
    positional: List[Word] = []
    given: Dict[str, Assign] = {}
    for it in rest:
        if isinstance(it, (Call, Group)):
            what = f"'{it.name.text}(...)'" if isinstance(it, Call) else "'(...)'"
            raise NetlistError(f"unexpected {what} on {cls.kind} '{stmt.head.text}'", stmt.loc(it),
                               hint=cls.usage())
        if isinstance(it, Word):
            positional.append(it)
            continue
        key = keys.get(it.key.text.lower())
        if key is None and hasattr(cls, "line_key"):        # values whose number the line sets (w1, w2...)
            key = cls.line_key(it.key.text)
        if key is None:
            accepted = ", ".join([k + "=" for k in keys.values()] + [c.key + "=" for c in cls.choices]) or "none"
            raise NetlistError(f"unknown keyword '{it.key.text}' for {cls.kind} '{stmt.head.text}'",
                               stmt.loc(it), hint=f"accepted keywords: {accepted}")
        if key in given:
            raise NetlistError(f"keyword '{it.key.text}' given twice", stmt.loc(it),
                               hint="keywords are case-insensitive; keep one")
        given[key] = it
    return positional, given


def _choices(rest: list, cls: Type[Component], stmt: Statement,
             arg_locs: ItemLocations) -> Tuple[list, Dict[str, str]]:
    """The items without the ``KEY=word`` options the kind declares, and those options."""
    decl = {c.key.lower(): c for c in cls.choices}
    kept, chosen = [], {}
    for it in rest:
        c = decl.get(it.key.text.lower()) if isinstance(it, Assign) else None
        if c is None:
            kept.append(it)
            continue
        word = it.value
        text = word.text.lower() if isinstance(word, Word) and word.kind == "word" else None
        if text not in c.options:
            raise NetlistError(f"{c.key}= must be one of {', '.join(c.options)}", stmt.loc(it),
                               hint=f"{c.key}: {c.doc}")
        if c.key in chosen:
            raise NetlistError(f"keyword '{it.key.text}' given twice", stmt.loc(it))
        chosen[c.key] = text
        arg_locs[c.key] = it
    return kept, chosen


def build_element(stmt: Statement, cls: Type[Component], kw: Optional[Word], ctx: Context) -> ElementSpec:
    """Interpret an element statement of the component kind ``cls``."""
    name = ctx.prefix + stmt.head.text
    items = list(stmt.items)
    arg_locs = ItemLocations(stmt)
    n_nodes = len(cls.terminals)
    if len(items) < n_nodes:
        raise NetlistError(f"{cls.kind} '{stmt.head.text}' needs {n_nodes} nodes, got {len(items)}",
                           stmt.line.locate(len(stmt.line.text), 1), hint=cls.usage())
    nodes: List[str] = []
    for k in range(n_nodes):
        w = _word(items[k], stmt, "node name")
        nodes.append(canonical_node(w.text, ctx))
        arg_locs[f"node{k}"] = w
    if cls.optional_terminals and len(items) > n_nodes + 1 and all(
            isinstance(it, Word) and it.kind == "word" for it in items[n_nodes:n_nodes + 2]) \
            and items[n_nodes + 1].text.lower() in ctx.models:
        # Q c b e SUBSTRATE MODEL: a node before the model name is the optional terminal
        nodes.append(canonical_node(items[n_nodes].text, ctx))
        arg_locs[f"node{n_nodes}"] = items[n_nodes]
        n_nodes += 1
    tail = items[n_nodes + (1 if kw is not None else 0):]
    if kw is not None and isinstance(items[n_nodes], Call):
        tail = _call_arguments(items[n_nodes], stmt) + tail
    rest, parasitics, unused = split_parasitics(cls.kind, tail, stmt)
    ctx.ignored += unused
    rest, chosen = _choices(rest, cls, stmt, arg_locs)
    if cls.is_grounded(chosen) and DATUM not in nodes:
        raise NetlistError(f"{cls.kind} '{stmt.head.text}' must have one node at the datum (0)",
                           stmt.loc(stmt.head),
                           hint=f"it is referenced to ground in the mobility analogy: "
                                f"write {stmt.head.text} NODE 0 {cls.kind} ..." +
                                (" (or analogy=impedance)" if any(c.key == "analogy" for c in cls.choices) else ""))
    if cls.source:
        spec = source_spec(rest, stmt, ctx.names, ctx.table, ctx.tran)
        if spec.keywords:
            a = spec.keywords[0]
            raise NetlistError(f"unexpected keyword '{a.key.text}=' on a source", stmt.loc(a), hint=cls.usage())
        if spec.waveform is not None:
            arg_locs["waveform"] = spec.waveform.location
        ctx.ignored += [f"{w} ({stmt.loc(stmt.head).describe()})" for w in spec.ignored]
        return _with_parasitics(ElementSpec(name, cls.kind, tuple(nodes), {}, waveform=spec.waveform,
                                            location=stmt.loc(stmt.head), arg_locations=arg_locs, choices=chosen,
                                            dc=spec.dc, ac=spec.ac), parasitics, stmt, ctx)
    positional, given = _split(rest, cls, stmt)
    refs: List[str] = []
    for k, ref_kind in enumerate(cls.refs):
        if not positional:
            raise NetlistError(f"{cls.kind} '{stmt.head.text}' needs {len(cls.refs)} {ref_kind} names",
                               stmt.loc(stmt.head), hint=cls.usage())
        w = _word(positional.pop(0), stmt, f"{ref_kind} name")
        refs.append(ctx.prefix + w.text)
        arg_locs[f"ref{k}"] = w
    card = _model_card(cls, positional, stmt, ctx, arg_locs)
    if card is not None and cls.model_types:
        # the card's type (NPN / PNP...) is the element's polarity
        if chosen.get("polarity", card.type.lower()) != card.type.lower():
            raise NetlistError(f"polarity={chosen['polarity']} contradicts model '{card.name}' of type "
                               f"{card.type}", arg_locs.get("polarity", stmt.loc(stmt.head)),
                               hint="drop polarity= or name a model of that type")
        chosen["polarity"] = card.type.lower()
    main = cls.main_value()
    if positional and main is not None and main.key not in given:
        word = positional.pop(0)
        given[main.key] = Assign(Word("word", main.key, word.start), word)
        arg_locs[main.key] = word
    if positional:
        raise NetlistError(f"unexpected value '{positional[0].text}'", stmt.loc(positional[0]), hint=cls.usage())
    law = element_law(cls, given, stmt, ctx.names, ctx.table.defaults, ctx.prefix, arg_locs)
    values: Dict[str, sp.Expr] = {}
    def take(v) -> None:
        pname = name if v.main else f"{name}.{v.key}"
        if v.structural:
            default = ctx.defaults.get((cls.kind, v.key), v.default)
            if v.key in given or default is not None or not v.optional:
                values[v.key] = _structural(v, given.get(v.key), stmt, ctx, pname, default)
            return
        if v.key in given:
            values[v.key] = _value(given[v.key].value, stmt, ctx, pname)
            if v.key not in arg_locs:
                arg_locs[v.key] = given[v.key]
        elif card is not None and v.key in card.symbols:
            values[v.key] = card.symbols[v.key]
        elif v.default is not None:
            default = ctx.defaults.get((cls.kind, v.key), v.default)
            values[v.key] = ctx.table.add(pname, default, stmt.loc(stmt.head))
        elif not (v.main and law is not None) and not v.optional:
            raise NetlistError(f"missing value {v.key} for {cls.kind} '{stmt.head.text}'",
                               stmt.loc(stmt.head), hint=cls.usage())
    for v in cls.values:
        take(v)
    extra = _line_values(cls, values, stmt)      # parameters whose number the structural values set
    for v in extra:
        take(v)
    known = set(_keywords(cls).values()) | {v.key for v in extra} | {"IC"}
    for key, a in given.items():
        if key not in known:
            raise NetlistError(f"unknown keyword '{a.key.text}' for {cls.kind} '{stmt.head.text}'", stmt.loc(a),
                               hint=f"this line has the values {', '.join(v.key for v in extra)}")
    ic = None
    if "IC" in given:
        ic = word_expr(given["IC"].value, stmt, ctx.names)
        arg_locs["ic"] = given["IC"]
    return _with_parasitics(ElementSpec(name, cls.kind, tuple(nodes), values, law=law, ic=ic, refs=tuple(refs),
                                        location=stmt.loc(stmt.head), arg_locations=arg_locs, choices=chosen),
                            parasitics, stmt, ctx)


def _line_values(cls: Type[Component], values: Dict[str, sp.Expr], stmt: Statement) -> list:
    """The values a kind adds once its structural values are known (a learned law's coefficients)."""
    hook = getattr(cls, "line_values", None)
    if hook is None:
        return []
    numbers = {v.key: float(values[v.key]) for v in cls.values if v.structural and v.key in values}
    try:
        return list(hook(numbers))
    except ValueError as exc:
        raise NetlistError(str(exc), stmt.loc(stmt.head), hint=cls.usage()) from None


def _call_arguments(call: Call, stmt: Statement) -> list:
    """The arguments of a keyword call (``learn(kind=monotone, range=-2..2)``) as line items;
    ``range=LO..HI`` becomes ``lo=LO hi=HI``."""
    out = []
    for arg in call.args:
        if isinstance(arg, Assign) and arg.key.text.lower() == "range":
            text = arg.value.text
            lo, sep, hi = text.partition("..")
            if not sep or not lo or not hi or arg.value.kind != "word":
                raise NetlistError(f"range must be written LO..HI, got '{text}'", stmt.loc(arg),
                                   hint="e.g. range=-2..2 (numbers, SPICE suffixes allowed: -10m..10m)")
            start = arg.value.start
            out.append(Assign(Word("word", "lo", arg.key.start), Word("word", lo, start)))
            out.append(Assign(Word("word", "hi", arg.key.start), Word("word", hi, start + len(lo) + 2)))
        else:
            out.append(arg)
    return out


def _with_parasitics(spec: ElementSpec, found, stmt: Statement, ctx: Context) -> ElementSpec:
    """The element; its LTspice parasitics go to :attr:`Context.extra` (expanded after it)."""
    if not found:
        return spec
    main, *extra = parasitic_elements(spec, found, stmt, ctx)
    ctx.extra += extra
    return main


def _model_card(cls: Type[Component], positional: List[Word], stmt: Statement, ctx: Context,
                arg_locs: ItemLocations) -> Optional[ModelCard]:
    """The ``.model`` card the element names (first positional word), if the kind takes one."""
    if cls.model is None or not positional:
        return None
    first = positional[0]
    if first.kind == "word" and (not looks_numeric(first.text) or first.text.lower() in ctx.models):   # 1N4148
        mw = positional.pop(0)
        card = ctx.models.get(mw.text.lower())
        if card is None:
            known = ", ".join(m.name for m in ctx.models.values())
            raise NetlistError(f"unknown model '{mw.text}'", stmt.loc(mw),
                               hint=f"define it with .model {mw.text} {cls.model}(...)"
                                    + (f" (known: {known})" if known else ""))
        types = cls.model_types or (cls.model,)
        if card.type.lower() not in (t.lower() for t in types):
            raise NetlistError(f"model '{card.name}' has type {card.type}, a {cls.kind} needs "
                               f"{' or '.join(types)}", stmt.loc(mw), hint=f"define a .model NAME {types[0]}(...)")
        arg_locs["model"] = mw
        return card
    return None
