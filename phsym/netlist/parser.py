"""Netlist text -> flattened :class:`~phsym.netlist.spec.Netlist`.

Pipeline: :mod:`.include` (logical lines, ``.include``/``.lib`` read in,
skipped cards removed) -> :mod:`.source` (lark statements; the title line) ->
:mod:`.subckt` (collect definitions) -> :mod:`.cards` (``.tran``,
``.options``, ``.temp``) -> :mod:`.params` (``.param`` table) ->
``.model`` cards -> :mod:`.elements` / :mod:`.subckt` (flatten) -> checks
(duplicate names, ``K`` references) -> :mod:`.ic` -> ``.probe``.

See ``docs/netlist-language.md`` for the language reference.
"""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import sympy as sp

from ..common import budget
from ..common.names import NameTable
from ..common.quantities import PROBE_NAMES, STATE_NAMES, SYMBOLS
from ..errors import Location, NetlistError, NetlistWarning
from ..components import DATUM, REGISTRY, ElementSpec
from .analyses import ANALYSIS_CARDS, Analyses, read_card
from .cards import OPTION_CARDS, DeckSettings, options_card, temp_card, tran_card, warn_ignored
from .covariance import covariance_cards
from .elements import Context, ModelCard, element_kind, node_spellings
from .functions import func_card
from .hysteresis import resolve_hysteresis
from .models import model_cards
from .ic import apply_ic
from .include import read_deck_lines
from .numbers import looks_numeric
from .params import ParamTable, resolve_global_params, word_expr
from .source import Assign, Call, LogicalLine, Statement, Word, parse_statement, raw_statement
from .spec import Netlist, ProbeSpec
from .subckt import MAX_ELEMENTS, collect_subckts, expand, flattened_count
from .tables import table_card

__all__ = ["parse_netlist", "load_netlist", "DOT_COMMANDS"]

DOT_COMMANDS = (".title", ".param", ".model", ".subckt", ".ends", ".probe", ".tran", ".ic", ".options",
                ".temp", ".include", ".lib", ".table", ".func", ".global", ".covariance", ".end") + ANALYSIS_CARDS


def _check_elements(elements: List[ElementSpec]) -> None:
    by_name: Dict[str, ElementSpec] = {}
    for el in elements:
        key = el.name.lower()
        if key in by_name:
            first = by_name[key]
            line = first.location.line if first.location else "?"
            raise NetlistError(f"duplicate element name '{el.name}'", el.location,
                               hint=f"'{first.name}' is already defined at line {line}; "
                                    "names are case-insensitive")
        by_name[key] = el
    for el in list(elements):
        cls = REGISTRY[el.kind]
        kinds = cls.refs * len(el.refs) if cls.variadic_refs else cls.refs
        senses = cls.senses
        resolved = []
        for k, (ref, want) in enumerate(zip(el.refs, kinds)):
            target = by_name.get(ref.lower())
            loc = el.arg_locations.get(f"ref{k}", el.location)
            usage = cls.usage()
            if target is None:
                raise NetlistError(f"{el.kind} '{el.name}' refers to unknown element '{ref}'", loc, hint=usage)
            if senses is not None and target.kind == want:
                index = next(i for i, e in enumerate(elements) if e is target)
                source, target = _sensed(target, senses, el, loc)
                elements[index] = by_name[ref.lower()] = target
                if source is not None:      # a source of non-zero value keeps its port, in series
                    elements[index] = source
                    elements.append(target)
            if target.kind not in (want, senses):
                raise NetlistError(f"{el.kind} '{el.name}' refers to '{target.name}', which is a "
                                   f"{target.kind}, not {'an' if want[0] in 'aeiou' else 'a'} {want}", loc,
                                   hint=usage)
            resolved.append(target.name)
        if len({r.lower() for r in resolved}) < len(resolved):
            raise NetlistError(f"{el.kind} '{el.name}' names '{resolved[0]}' twice",
                               el.arg_locations.get("ref1", el.location))
        if resolved:
            object.__setattr__(el, "refs", tuple(resolved))


def _drop_shorted(elements: List[ElementSpec]) -> List[ElementSpec]:
    """Two-terminal elements with both terminals on one node, named in one warning and left out.

    SPICE carries such a device: it carries no current and stores nothing
    (a clamp diode whose subcircuit ports are both tied to ground).  A
    voltage source of non-zero value across one node has no solution.
    """
    kept, shorted = [], []
    for el in elements:
        if len(el.nodes) != 2 or el.nodes[0] != el.nodes[1] or REGISTRY[el.kind].grounded:
            kept.append(el)
            continue
        wf = el.waveform
        if el.kind == "vsource" and wf is not None and not (
                wf.shape == "dc" and all(sp.sympify(a).is_zero for a in wf.args)):
            raise NetlistError(f"voltage source '{el.name}' has both terminals on node '{el.nodes[0]}'",
                               el.location, hint="a source across one node has no solution; connect it "
                                                 "between two nodes")
        shorted.append(f"{el.name} ({el.location.describe() if el.location else el.nodes[0]})")
    if shorted:
        warnings.warn("elements with both terminals on one node carry no current and store nothing; left out "
                      "(as SPICE carries them): " + ", ".join(shorted), NetlistWarning, stacklevel=4)
    return kept


def _sensed(target: ElementSpec, kind: str, reader: ElementSpec, loc) -> Tuple[Optional[ElementSpec], ElementSpec]:
    """The source ``target`` whose current ``reader`` (F, H, B) reads, and the element of ``kind``
    (an ammeter) that senses it: a 0 V source becomes the ammeter (no source is left); any
    other source keeps its port and gets the ammeter ``NAME#i`` in series at its ``n+``."""
    wf = target.waveform
    zero = (wf is None or (wf.shape == "dc" and all(sp.sympify(a).is_zero for a in wf.args))) and target.ac is None
    if zero:
        return None, dataclasses.replace(target, kind=kind, waveform=None, dc=None)
    inner = f"{target.name}#i"
    source = dataclasses.replace(target, nodes=(inner, target.nodes[1]))
    meter = ElementSpec(inner, kind, (target.nodes[0], inner), location=target.location)
    return source, meter


def _probe(it: Call, stmt: Statement, nodes: Dict[str, str], by_name: Dict[str, ElementSpec],
           usage: str) -> ProbeSpec:
    """The :class:`ProbeSpec` of ``v(...)`` or ``i(...)``, or of a quantity's name (``T(t1)``: the
    node's domain settles it when the structure is built); names checked against the netlist."""
    word = it.name.text.lower()
    q = next(iter(PROBE_NAMES[word].values())) if word in PROBE_NAMES else word
    shown = SYMBOLS.get(word, word)
    args = it.args
    loc = stmt.loc(it)
    for a in args:
        if not (isinstance(a, Word) and a.kind == "word"):
            raise NetlistError("probe arguments are node or element names", stmt.loc(a), hint=usage)
    if not args or len(args) > (2 if q == "v" else 1):
        raise NetlistError(f"{q}(...) takes {'one or two' if q == 'v' else 'one'} "
                           f"name(s), got {len(args)}", loc, hint=usage)
    canon = [nodes.get(a.text.lower(), a.text) for a in args]
    if len(args) == 2:
        for a in args:
            if a.text.lower() not in nodes:
                raise NetlistError(f"probe refers to unknown node '{a.text}'",
                                   stmt.loc(a), hint="check the spelling (node names ignore case)")
        return ProbeSpec("v", tuple(canon), None, f"{shown}({canon[0]},{canon[1]})", loc)
    if q == "v" and args[0].text.lower() in nodes:
        return ProbeSpec("v", (canon[0],), None, f"{shown}({canon[0]})", loc)
    el = by_name.get(args[0].text.lower())
    if el is None:
        what = "node or element" if q == "v" else "element"
        raise NetlistError(f"probe refers to unknown {what} '{args[0].text}'", stmt.loc(args[0]),
                           hint="check the spelling (node and element names ignore case)")
    return ProbeSpec(q, (), el.name, f"{shown}({el.name})", loc)


def _probes(stmts: List[Statement], elements: List[ElementSpec]) -> List[ProbeSpec]:
    nodes = node_spellings(elements)
    by_name = {el.name.lower(): el for el in elements}
    out: List[ProbeSpec] = []
    labels = set()
    usage = ".probe v(NODE) v(N1,N2) i(ELEMENT) v(ELEMENT), or by quantity: T(NODE), vel(NODE), F(ELEMENT), ..."
    for stmt in stmts:
        if not stmt.items:
            raise NetlistError(".probe lists nothing", stmt.loc(stmt.head), hint=usage)
        for it in stmt.items:
            if isinstance(it, Call) and it.name.text.lower() in STATE_NAMES and it.args and \
                    isinstance(it.args[0], Word) and it.args[0].text.lower() in by_name:
                raise NetlistError(f"{_item_text(it)} is a state: every run records the states",
                                   stmt.loc(it), hint=f"read it as res['{_item_text(it)}'] or phsym simulate "
                                                      f"--signals '{_item_text(it)}'; .probe takes {usage[7:]}")
            if not isinstance(it, Call) or it.name.text.lower() not in ("v", "i", *PROBE_NAMES):
                raise NetlistError("expected v(...), i(...) or a quantity's name", stmt.loc(it), hint=usage)
            probe = _probe(it, stmt, nodes, by_name, usage)
            if probe.label not in labels:
                labels.add(probe.label)
                out.append(probe)
    return out


def _item_text(it) -> str:
    if isinstance(it, Call):
        return f"{it.name.text}(" + ",".join(a.text for a in it.args if isinstance(a, Word)) + ")"
    return it.text if isinstance(it, Word) else "?"


def _saves(stmts: List[Statement], elements: List[ElementSpec]) -> Tuple[Tuple[str, ...], bool, List[str]]:
    """``.save`` and ``.print tran`` vectors: their labels, whether ``all`` is asked, and what phsym
    cannot record (``@m1[id]``, ``vdb(5)`` of a transient), for the deck's one warning."""
    nodes = node_spellings(elements)
    by_name = {el.name.lower(): el for el in elements}
    usage = ".save all | v(NODE) v(N1,N2) i(VSOURCE) ...; .print tran v(NODE) ..."
    labels: List[str] = []
    every, unused = False, []
    for stmt in stmts:
        items = list(stmt.items)
        if stmt.head.text.lower() == ".print":
            kind = items[0].text.lower() if items and isinstance(items[0], Word) else ""
            if kind in ("dc", "ac", "op", "tf"):
                continue                    # another analysis' table
            items = items[1:] if kind == "tran" else items
        for it in items:
            if isinstance(it, Word) and it.text.lower() == "all":
                every = True
            elif isinstance(it, Call) and it.name.text.lower() in ("v", "i"):
                label = _probe(it, stmt, nodes, by_name, usage).label
                labels += [label] if label not in labels else []
            else:
                unused.append(f"{stmt.head.text} {_item_text(it)} ({stmt.loc(it).describe()})")
    return tuple(labels), every or not labels, unused


def _statements(lines: List[LogicalLine]) -> List[Statement]:
    """Lark statements; ``.title``, ``.ic``, ``.meas`` and ``.func`` keep their raw text (their syntax is their own)."""
    return [raw_statement(line) if line.text.split(None, 1)[0].lower() in _RAW else parse_statement(line)
            for line in lines]


_RAW = (".title", ".ic", ".meas", ".measure", ".func")


def _title_candidate(lines: List[LogicalLine], file: Optional[str]) -> Optional[LogicalLine]:
    """The first logical line when it starts on line 1 of the deck and is not a dot card."""
    if not lines or lines[0].file != file or lines[0].positions[0][0] != 1:
        return None
    return None if lines[0].text.lstrip().startswith(".") else lines[0]


def _check_size(element_stmts: List[Statement], subckts, file: Optional[str]) -> None:
    """Refuse a netlist whose flattened elements would not fit, before building any."""
    count = flattened_count(element_stmts, subckts)
    if count > MAX_ELEMENTS:
        # the top-level instance whose expansion is largest is the one to look at
        top = max((st for st in element_stmts if st.head.text[:1].lower() == "x"),
                  key=lambda st: flattened_count([st], subckts), default=element_stmts[0])
        raise NetlistError(f"more than {MAX_ELEMENTS} elements after flattening subcircuits "
                           f"({top.head.text} alone expands to {flattened_count([top], subckts):,} or more)",
                           top.loc(top.head), hint="check for runaway nesting of X instances")
    budget.check(f"a netlist of {count} elements (subcircuits flattened)", count * budget.BYTES_PER_ELEMENT,
                 hint="check the nesting of X instances; split the circuit or use a machine with more memory")


def _build(statements: List[Statement], title: str, file: Optional[str], skipped: List[str],
           overrides: Optional[Dict[str, float]] = None) -> Netlist:
    top, subckts, hoisted = collect_subckts(statements)
    param_defs, model_stmts, probe_stmts, element_stmts, ic_stmts, tables = [], list(hoisted), [], [], [], []
    tran = None
    options: Dict[str, float] = {}
    ignored: List[str] = []
    analyses = Analyses()
    funcs: List[Statement] = []
    save_stmts: List[Statement] = []
    cov_stmts: List[Statement] = []
    globals_: List[str] = []
    for stmt in top:
        head = stmt.head.text.lower()
        if head == ".title":
            title = stmt.rest
        elif head == ".param":
            if not stmt.items:
                raise NetlistError(".param defines nothing", stmt.loc(stmt.head),
                                   hint=".param name=value [name2=value2 ...]")
            for it in stmt.items:
                if isinstance(it, Word) and it.kind == "word" and it.text.lower() == "control":
                    if not param_defs or param_defs[-1][2] is not stmt or param_defs[-1][3]:
                        raise NetlistError("'control' must follow the name=value it marks", stmt.loc(it),
                                           hint=".param pos=0.5 control  (a run can then drive pos)")
                    param_defs[-1] = param_defs[-1][:3] + (True,)
                    continue
                if not isinstance(it, Assign):
                    raise NetlistError("expected name=value in .param", stmt.loc(it),
                                       hint=".param name=value [control] [name2=value2 ...]")
                if not (it.key.text[0].isalpha() or it.key.text[0] == "_") \
                        or it.key.text.startswith("__"):
                    raise NetlistError(f"invalid parameter name '{it.key.text}'", stmt.loc(it),
                                       hint="parameter names start with a letter")
                param_defs.append((it.key, it.value, stmt, False))
        elif head == ".model":
            model_stmts.append(stmt)
        elif head == ".probe":
            probe_stmts.append(stmt)
        elif head in (".save", ".print"):
            save_stmts.append(stmt)
            read_card(stmt, analyses)
        elif head == ".tran":
            if tran is not None:
                raise NetlistError("a second .tran card", stmt.loc(stmt.head),
                                   hint="phsym runs one transient per deck; keep one .tran")
            tran = tran_card(stmt)
        elif head in OPTION_CARDS:
            options_card(stmt, options, ignored)
        elif head == ".temp":
            temp_card(stmt, options, analyses)
        elif head in ANALYSIS_CARDS:
            read_card(stmt, analyses)
        elif head == ".ic":
            ic_stmts.append(stmt)
        elif head == ".table":
            tables.append(stmt)
        elif head == ".func":
            funcs.append(stmt)
        elif head == ".covariance":
            cov_stmts.append(stmt)
        elif head == ".global":
            globals_ += [it.text for it in stmt.items if isinstance(it, Word)]
        elif head.startswith("."):
            raise NetlistError(f"unknown dot-command '{stmt.head.text}'", stmt.loc(stmt.head),
                               hint="supported: " + " ".join(DOT_COMMANDS) +
                                    " (see docs/spice-compatibility.md)")
        else:
            element_stmts.append(stmt)
    options.update(overrides or {})      # a run at another temperature (.dc TEMP, .step TEMP, .temp lists)
    settings = DeckSettings(tran, options)
    table = ParamTable()
    names: NameTable = NameTable(what="parameter")
    for stmt in funcs:          # before the parameters: a .param may call a .func
        fn = func_card(stmt.rest, stmt.loc(stmt.head), names)
        if fn.name in names:
            raise NetlistError(f".func {fn.name} is defined twice", stmt.loc(stmt.head), hint="keep one definition")
        names.set(fn.name, fn)
    resolve_global_params(param_defs, table, names)
    for stmt in tables:
        table_card(stmt, names, stmt.line.file)     # a file table is relative to the file of its card
    defaults = {}
    for cls in REGISTRY.values():      # diodes, transistors: every kind with a thermal voltage or a GMIN
        keys = {v.key for v in cls.values}
        if settings.thermal_voltage is not None and "Vt" in keys:
            defaults[(cls.kind, "Vt")] = settings.thermal_voltage
        if "gmin" in options and "Gmin" in keys:
            defaults[(cls.kind, "Gmin")] = options["gmin"]
    if tran is not None:
        defaults[("tline", "Tstep")] = tran.step       # a line's default sections resolve this step
    models = model_cards(model_stmts, table, names, defaults, options)
    _check_size(element_stmts, subckts, file)
    elements: List[ElementSpec] = []
    ctx = Context(table, names, models, defaults=defaults, tran=tran, globals={g.lower() for g in globals_})
    expand(element_stmts, ctx, names, subckts, [], elements)
    if not elements:
        raise NetlistError("the netlist has no elements", Location(file, 1, 1, "", 0),
                           hint="add elements, one per line, e.g. 'V1 in 0 SIN(0 1 1k)' and 'R1 in 0 1k'")
    elements = resolve_hysteresis(_drop_shorted(elements), table.defaults, tran)
    _check_elements(elements)
    held: Tuple[str, ...] = ()
    if ic_stmts:
        elements, held = apply_ic(ic_stmts, elements, names)
    probes = _probes(probe_stmts, elements)
    saves, save_all, unused = _saves(save_stmts, elements)
    skipped = skipped + [f"{u}: not a signal phsym records" for u in unused]
    parameters = {p.name: p for p in table.params.values()}
    warn_ignored(ignored, skipped + ctx.ignored)
    return Netlist(elements, parameters, probes, title, file, DeckSettings(tran, options, held, analyses),
                   saves=saves, save_all=save_all and not probe_stmts,
                   covariances=covariance_cards(cov_stmts, elements))


def _as_title(exc: NetlistError, rest: List[Statement], title: str, file: Optional[str],
              skipped: List[str], overrides=None) -> Netlist:
    """The netlist without line 1 (its title); ``exc`` (line 1's own error) if nothing else is left."""
    try:
        return _build(rest, title, file, skipped, overrides)
    except NetlistError as again:
        if again.message.startswith("the netlist has no elements"):
            raise exc from None        # line 1 was meant as an element
        raise


def parse_netlist(text: str, file: Optional[str] = None, options: Optional[Dict[str, float]] = None) -> Netlist:
    """Parse netlist text (a SPICE deck) into a flattened :class:`Netlist`.

    The first line is the title, as in SPICE, unless it is a comment, a dot
    card or a valid element line (see ``docs/netlist-language.md``).

    Parameters
    ----------
    text : str
        The netlist source.
    file : str, optional
        File name used in error messages and stored in :attr:`Netlist.file`;
        ``.include`` paths are relative to its directory.
    options : dict of str to float, optional
        ``.options`` values that win over the deck's (``{"temp": 85}``: the
        deck at 85 degrees Celsius).

    Raises
    ------
    NetlistError
        For any problem, with file, line, column, the offending text and a hint.

    Examples
    --------
    >>> nl = parse_netlist("R1 a 0 1k\\nC1 a 0 10u IC=1\\n")
    >>> [e.name for e in nl.elements], nl.parameters["R1"].default
    (['R1', 'C1'], 1000.0)
    >>> parse_netlist("RC low-pass\\nV1 a 0 1\\nR1 a 0 1k\\n").title
    'RC low-pass'
    """
    if not isinstance(text, str):
        raise NetlistError(f"netlist text must be a str, not {type(text).__name__}")
    deck = read_deck_lines(text, file)
    lines = deck.lines
    first = _title_candidate(lines, file)
    if first is None:
        return _build(_statements(lines), "", file, deck.skipped, options)
    title = first.text.strip()
    rest = _statements(lines[1:])
    try:
        stmt = parse_statement(first)
        element_kind(stmt)
    except NetlistError as exc:
        return _as_title(exc, rest, title, file, deck.skipped, options)     # not an element: the title
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            netlist = _build([stmt] + rest, "", file, deck.skipped, options)
    except NetlistError as exc:
        if exc.file != file or exc.line != 1:
            raise
        netlist = _as_title(exc, rest, title, file, deck.skipped, options)
        if any(ch.isdigit() for ch in stmt.head.text):
            warnings.warn(f"{first.locate(0).describe()}: line 1 '{title}' is read as the title: as an element "
                          f"line it is invalid ({exc.message}); start the deck with a title line or "
                          "'.title' to silence this", NetlistWarning, stacklevel=2)
        return netlist
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return netlist


def load_netlist(path, options: Optional[Dict[str, float]] = None) -> Netlist:
    """Read the netlist file at ``path`` (UTF-8) and parse it (``options``: see :func:`parse_netlist`)."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")     # tolerate a byte-order mark
    except UnicodeDecodeError as exc:
        raise NetlistError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise NetlistError(f"cannot read netlist '{name}': {exc.strerror or exc}") from None
    return parse_netlist(text, file=name, options=options)
