"""Element lines -> :class:`~phsym.netlist.spec.ElementSpec`.

The kind comes from a kind keyword right after the nodes (``mass``,
``spring``, ...) or else from the name's prefix (``TF``/``GY``) or first
letter (``R C L V I D K X``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import sympy as sp

from ..errors import Location, NetlistError
from .numbers import looks_numeric, parse_number
from .params import Names, ParamTable, word_expr
from .source import Assign, Call, Statement, Word
from .spec import DATUM, KIND_KEYWORDS, KINDS, LAW_VARIABLES, ElementSpec, Law, Waveform
from .waveforms import WAVEFORM_ARITY

__all__ = ["Model", "Context", "element_kind", "build_element", "canonical_node",
           "DIODE_DEFAULTS", "LETTERS"]

LETTERS = {"r": "resistor", "c": "capacitor", "l": "inductor", "v": "vsource",
           "i": "isource", "d": "diode", "k": "coupling", "x": "subckt"}
PREFIXES = {"tf": "transformer", "gy": "gyrator"}
DIODE_DEFAULTS = {"Is": 1e-14, "N": 1.0, "Vt": 0.02585}
KIND_HINT = ("element names start with R C L V I D K X, or TF (transformer) / GY (gyrator); "
             "or write a kind keyword after the nodes: " + " ".join(KIND_KEYWORDS))


@dataclass
class Model:
    """A ``.model NAME D(...)`` card: its parameter symbols per key."""

    name: str
    symbols: Dict[str, sp.Symbol]
    location: Optional[Location] = None


@dataclass
class Context:
    """Where elements are being expanded (top level or inside an instance)."""

    table: ParamTable
    names: Names
    models: Dict[str, Model]
    prefix: str = ""
    node_map: Dict[str, str] = field(default_factory=dict)
    #: Element and instance names seen so far (lower case -> location), shared.
    seen: Dict[str, Location] = field(default_factory=dict)

    def register(self, stmt: Statement) -> None:
        """Record the statement's (prefixed) name; error on a duplicate."""
        name = self.prefix + stmt.head.text
        first = self.seen.get(name.lower())
        loc = stmt.loc(stmt.head)
        if first is not None:
            raise NetlistError(f"duplicate element name '{name}'", loc,
                               hint=f"an element or instance with this name is already defined "
                                    f"at line {first.line}; names are case-insensitive")
        self.seen[name.lower()] = loc


def canonical_node(text: str, ctx: Context) -> str:
    """Datum -> ``"0"``, subcircuit ports -> outer nodes, internal -> prefixed."""
    if text == "0" or text.lower() == "gnd":
        return DATUM
    if text in ctx.node_map:
        return ctx.node_map[text]
    return ctx.prefix + text


def element_kind(stmt: Statement) -> Tuple[str, Optional[Word]]:
    """Return (kind, kind keyword word or None) for an element statement."""
    items = stmt.items
    if len(items) > 2 and isinstance(items[2], Word) and items[2].kind == "word" \
            and items[2].text.lower() in KIND_KEYWORDS:
        return items[2].text.lower(), items[2]
    name = stmt.head.text
    low = name.lower()
    if low[:2] in PREFIXES:
        return PREFIXES[low[:2]], None
    if low[:1] in LETTERS:
        return LETTERS[low[:1]], None
    raise NetlistError(f"unknown element type '{name}'", stmt.loc(stmt.head), hint=KIND_HINT)


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


def _waveform(items: list, stmt: Statement, ctx: Context) -> Optional[Waveform]:
    if not items:
        return None
    first = items[0]
    for it in items:
        if isinstance(it, (Word, Call)) and (it.name if isinstance(it, Call) else it).text.lower() == "ac":
            raise NetlistError("AC source specifications are not supported", stmt.loc(it),
                               hint="there is no small-signal analysis; linearise the model "
                                    "with linearize() and use its state-space matrices")
    if isinstance(first, Call):
        shape = first.name.text.lower()
        if shape not in WAVEFORM_ARITY:
            raise NetlistError(f"unknown waveform '{first.name.text}'", stmt.loc(first.name),
                               hint="use DC value, SIN(...), PULSE(...) or PWL(...)")
        args = []
        for a in first.args:
            if isinstance(a, Assign):
                raise NetlistError(f"unexpected '{a.key.text}=' in {shape.upper()}(...)", stmt.loc(a),
                                   hint="waveform arguments are positional")
            args.append(word_expr(a, stmt, ctx.names))
        used, loc = 1, stmt.loc(first)
    else:
        if isinstance(first, Assign):
            raise NetlistError(f"unexpected keyword '{first.key.text}=' on a source",
                               stmt.loc(first), hint="sources take DC v, SIN(...), PULSE(...) or PWL(...)")
        shape, loc = "dc", stmt.loc(first)
        if first.kind == "word" and first.text.lower() == "dc":
            if len(items) < 2 or not isinstance(items[1], Word):
                raise NetlistError("DC needs a value", stmt.loc(first), hint="write e.g. DC 5")
            args, used = [word_expr(items[1], stmt, ctx.names)], 2
        else:
            args, used = [word_expr(first, stmt, ctx.names)], 1
    if len(items) > used:
        extra = items[used]
        raise NetlistError("unexpected text after the waveform", stmt.loc(extra),
                           hint="a source takes one waveform: DC v, SIN(...), PULSE(...) or PWL(...)")
    lo, hi = WAVEFORM_ARITY[shape]
    if len(args) < lo or (hi is not None and len(args) > hi) or (shape == "pwl" and len(args) % 2):
        usage = {"dc": "DC(value)", "sin": "SIN(offset amplitude freq [delay [damping]])",
                 "pulse": "PULSE(v1 v2 [delay [rise [fall [width [period]]]]])",
                 "pwl": "PWL(t1 v1 t2 v2 ...) with pairs"}[shape]
        raise NetlistError(f"{shape.upper()} has {len(args)} argument(s)", loc, hint=f"usage: {usage}")
    if shape == "pwl":
        times = [ctx.table.evaluate(a, loc, "PWL time") for a in args[0::2]]
        for k in range(1, len(times)):
            if times[k] < times[k - 1]:
                word = first.args[2 * k]
                raise NetlistError(f"PWL times must be non-decreasing ({times[k]:g} after "
                                   f"{times[k - 1]:g})", stmt.loc(word),
                                   hint="list the (time, value) pairs in time order")
    return Waveform(shape, tuple(args), loc)


def _key_table(kind: str) -> Dict[str, str]:
    info = KINDS[kind]
    keys = {}
    if info.main:
        keys[info.main.lower()] = info.main
    for k in info.extra + info.laws:
        keys[k.lower()] = k
    if info.ic:
        keys["ic"] = "IC"
    return keys


def build_element(stmt: Statement, kind: str, kw: Optional[Word], ctx: Context) -> ElementSpec:
    """Interpret an element statement of a known (non-subcircuit) kind."""
    info = KINDS[kind]
    name = ctx.prefix + stmt.head.text
    items = list(stmt.items)
    arg_locs: Dict[str, Location] = {}
    nodes: List[str] = []
    if len(items) < info.n_nodes:
        loc = stmt.line.locate(len(stmt.line.text), 1)
        raise NetlistError(f"{kind} '{stmt.head.text}' needs {info.n_nodes} nodes, "
                           f"got {len(items)}", loc, hint=_usage(kind))
    for k in range(info.n_nodes):
        w = _word(items[k], stmt, "node name")
        nodes.append(canonical_node(w.text, ctx))
        arg_locs[f"node{k}"] = stmt.loc(w)
    rest = items[info.n_nodes + (1 if kw is not None else 0):]
    if info.source:
        wf = _waveform(rest, stmt, ctx)
        if wf is not None:
            arg_locs["waveform"] = wf.location
        return ElementSpec(name, kind, tuple(nodes), {}, waveform=wf, location=stmt.loc(stmt.head),
                           arg_locations=arg_locs)
    keys = _key_table(kind)
    positional: List[Word] = []
    given: Dict[str, Assign] = {}
    for it in rest:
        if isinstance(it, Call):
            raise NetlistError(f"unexpected '{it.name.text}(...)' on {kind} '{stmt.head.text}'",
                               stmt.loc(it), hint=_usage(kind))
        if isinstance(it, Word):
            positional.append(it)
            continue
        key = keys.get(it.key.text.lower())
        if key is None:
            accepted = ", ".join(k + "=" for k in keys.values()) or "none"
            raise NetlistError(f"unknown keyword '{it.key.text}' for {kind} '{stmt.head.text}'",
                               stmt.loc(it), hint=f"accepted keywords: {accepted}")
        if key in given:
            raise NetlistError(f"keyword '{it.key.text}' given twice", stmt.loc(it),
                               hint="keywords are case-insensitive; keep one")
        given[key] = it
    values: Dict[str, sp.Expr] = {}
    refs: Tuple[str, ...] = ()
    if kind == "coupling":
        if len(positional) < 2:
            raise NetlistError(f"coupling '{stmt.head.text}' needs two inductor names",
                               stmt.loc(stmt.head), hint=_usage(kind))
        ref_words = [_word(positional[0], stmt, "inductor name"),
                     _word(positional[1], stmt, "inductor name")]
        refs = tuple(ctx.prefix + w.text for w in ref_words)
        arg_locs["ref0"], arg_locs["ref1"] = stmt.loc(ref_words[0]), stmt.loc(ref_words[1])
        positional = positional[2:]
    model: Optional[Model] = None
    if kind == "diode" and positional:
        mw = _word(positional[0], stmt, "model name")
        model = ctx.models.get(mw.text.lower())
        if model is None:
            raise NetlistError(f"unknown model '{mw.text}'", stmt.loc(mw),
                               hint="define it with .model " + mw.text + " D(IS=... N=...)" +
                               (" (known: " + ", ".join(m.name for m in ctx.models.values()) + ")"
                                if ctx.models else ""))
        arg_locs["model"] = stmt.loc(mw)
        positional = positional[1:]
    main = info.main
    if positional and main is not None and main not in given:
        word = positional.pop(0)
        given[main] = Assign(Word("word", main, word.start), word)
        arg_locs[main] = stmt.loc(word)
    if positional:
        raise NetlistError(f"unexpected value '{positional[0].text}'", stmt.loc(positional[0]),
                           hint=_usage(kind))
    law = None
    law_keys = [k for k in info.laws if k in given]
    if len(law_keys) > 1:
        raise NetlistError("only one law may be given", stmt.loc(given[law_keys[1]]))
    if law_keys:
        key = law_keys[0]
        a = given[key]
        if main is not None and main in given:
            raise NetlistError(f"both a value ({main}) and a law ({key}=) are given",
                               stmt.loc(a), hint="give either the value or the law")
        var = sp.Symbol(LAW_VARIABLES[(kind, key)], real=True)
        names = Names(ctx.names)
        names.set(var.name, var, exact_only=True)
        expr = word_expr(a.value, stmt, names)
        loc = stmt.loc(a)
        law = Law(key, expr, var, loc)
        arg_locs["law"] = loc
    elif main is not None:
        if main not in given:
            raise NetlistError(f"missing value for {kind} '{stmt.head.text}'",
                               stmt.loc(stmt.head), hint=_usage(kind))
        values[main] = _value(given[main].value, stmt, ctx, name)
        arg_locs.setdefault(main, stmt.loc(given[main]))
    for key in info.extra:
        if key in given:
            values[key] = _value(given[key].value, stmt, ctx, f"{name}.{key}")
            arg_locs[key] = stmt.loc(given[key])
        elif model is not None:
            values[key] = model.symbols[key]
        elif kind == "diode":
            values[key] = ctx.table.add(f"{name}.{key}", DIODE_DEFAULTS[key], stmt.loc(stmt.head))
    ic = None
    if "IC" in given:
        ic = word_expr(given["IC"].value, stmt, ctx.names)
        arg_locs["ic"] = stmt.loc(given["IC"])
    if kind in ("mass", "inertia") and DATUM not in nodes:
        raise NetlistError(f"{kind} '{stmt.head.text}' must have one node at the datum (0)",
                           stmt.loc(stmt.head),
                           hint=f"masses are referenced to ground in the mobility analogy: "
                                f"write {stmt.head.text} NODE 0 {kind} ...")
    return ElementSpec(name, kind, tuple(nodes), values, law=law, ic=ic, refs=refs,
                       location=stmt.loc(stmt.head), arg_locations=arg_locs)


def _usage(kind: str) -> str:
    return {
        "resistor": "R<name> n1 n2 VALUE | R=VALUE | I={f(v)} | V={g(i)}",
        "capacitor": "C<name> n1 n2 VALUE [IC=v0] | H={f(q)}",
        "inductor": "L<name> n1 n2 VALUE [IC=i0] | H={f(phi)}",
        "diode": "D<name> anode cathode [MODEL] [IS=..] [N=..] [VT=..]",
        "coupling": "K<name> L1 L2 VALUE",
        "transformer": "TF<name> p+ p- s+ s- RATIO",
        "gyrator": "GY<name> p+ p- s+ s- R",
        "mass": "NAME node 0 mass m=VALUE [IC=v0] | H={f(p)}",
        "spring": "NAME n1 n2 spring k=VALUE [IC=f0] | H={f(x)}",
        "damper": "NAME n1 n2 damper c=VALUE",
        "inertia": "NAME node 0 inertia J=VALUE [IC=w0] | H={f(p)}",
        "torsion": "NAME n1 n2 torsion k=VALUE [IC=t0] | H={f(theta)}",
        "rdamper": "NAME n1 n2 rdamper c=VALUE",
    }.get(kind, "see docs/netlist-language.md")
