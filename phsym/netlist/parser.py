"""Netlist text -> flattened :class:`~phsym.netlist.spec.Netlist`.

Pipeline: :mod:`.source` (logical lines, lark statements) ->
:mod:`.subckt` (collect definitions) -> :mod:`.params` (``.param`` table) ->
``.model`` cards -> :mod:`.elements` / :mod:`.subckt` (flatten) -> checks
(duplicate names, ``K`` references) -> ``.probe``.

See ``docs/netlist-language.md`` for the language reference.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

from ..common.names import NameTable
from ..errors import Location, NetlistError
from ..components import DATUM, REGISTRY, ElementSpec
from .elements import Context, ModelCard
from .params import ParamTable, resolve_global_params, word_expr
from .source import Assign, Call, Statement, Word, read_statements
from .spec import Netlist, ProbeSpec
from .subckt import collect_subckts, expand

__all__ = ["parse_netlist", "load_netlist", "DOT_COMMANDS"]

DOT_COMMANDS = (".title", ".param", ".model", ".subckt", ".ends", ".probe", ".end")


def _models(stmts: List[Statement], table: ParamTable, names: NameTable) -> Dict[str, ModelCard]:
    """``.model NAME TYPE(KEY=value ...)`` cards; the types and keys are those the
    component kinds declare (:attr:`Component.model`, :attr:`Value.model_key`)."""
    models: Dict[str, ModelCard] = {}
    types = sorted({c.model for c in REGISTRY.values() if c.model})
    usage = ".model NAME TYPE(KEY=value ...) with TYPE one of " + ", ".join(types)
    for stmt in stmts:
        items = list(stmt.items)
        if not items or not (isinstance(items[0], Word) and items[0].kind == "word"):
            raise NetlistError(".model needs a name and a type", stmt.loc(stmt.head), hint=usage)
        name_word = items.pop(0)
        if not items:
            raise NetlistError(f".model {name_word.text} needs a type", stmt.loc(name_word), hint=usage)
        type_item = items.pop(0)
        if isinstance(type_item, Call):
            type_word, args = type_item.name, list(type_item.args)
            if items:
                raise NetlistError("unexpected text after the model parameters", stmt.loc(items[0]), hint=usage)
        elif isinstance(type_item, Word) and type_item.kind == "word":
            type_word, args = type_item, items
        else:
            raise NetlistError("expected a model type", stmt.loc(type_item), hint=usage)
        kinds = REGISTRY.by_model(type_word.text)
        if not kinds:
            raise NetlistError(f"unsupported model type '{type_word.text}'", stmt.loc(type_word), hint=usage)
        key = name_word.text.lower()
        if key in models:
            raise NetlistError(f"model '{name_word.text}' is defined twice", stmt.loc(name_word),
                               hint="give each .model its own name")
        declared = {(v.model_key or v.key).lower(): v for c in kinds for v in c.values}
        given: Dict[str, Assign] = {}
        for a in args:
            if not isinstance(a, Assign):
                raise NetlistError("expected KEY=VALUE in .model", stmt.loc(a), hint=usage)
            v = declared.get(a.key.text.lower())
            if v is None:
                accepted = ", ".join((v.model_key or v.key).upper() for v in declared.values())
                raise NetlistError(f"unknown {kinds[0].kind} model parameter '{a.key.text}'",
                                   stmt.loc(a), hint=f"accepted: {accepted}")
            if v.key in given:
                raise NetlistError(f"model parameter '{a.key.text}' given twice", stmt.loc(a),
                                   hint="parameter names are case-insensitive; keep one")
            given[v.key] = a
        symbols = {}
        for v in declared.values():
            pname = f"{name_word.text}.{v.key}"
            if v.key in given:
                expr = word_expr(given[v.key].value, stmt, names)
                symbols[v.key] = table.add_value(pname, expr, stmt.loc(given[v.key].value))
            elif v.default is not None:
                symbols[v.key] = table.add(pname, v.default, stmt.loc(name_word))
        models[key] = ModelCard(name_word.text, kinds[0].model, symbols, stmt.loc(name_word))
    return models


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
    for el in elements:
        kinds = REGISTRY[el.kind].refs
        resolved = []
        for k, (ref, want) in enumerate(zip(el.refs, kinds)):
            target = by_name.get(ref.lower())
            loc = el.arg_locations.get(f"ref{k}", el.location)
            usage = REGISTRY[el.kind].usage()
            if target is None:
                raise NetlistError(f"{el.kind} '{el.name}' refers to unknown element '{ref}'", loc, hint=usage)
            if target.kind != want:
                raise NetlistError(f"{el.kind} '{el.name}' refers to '{target.name}', which is a "
                                   f"{target.kind}, not {'an' if want[0] in 'aeiou' else 'a'} {want}", loc,
                                   hint=usage)
            resolved.append(target.name)
        if len({r.lower() for r in resolved}) < len(resolved):
            raise NetlistError(f"{el.kind} '{el.name}' names '{resolved[0]}' twice",
                               el.arg_locations.get("ref1", el.location))
        if resolved:
            object.__setattr__(el, "refs", tuple(resolved))


def _probes(stmts: List[Statement], elements: List[ElementSpec]) -> List[ProbeSpec]:
    nodes = {DATUM}
    for el in elements:
        nodes.update(el.nodes)
    by_name = {el.name.lower(): el for el in elements}
    out: List[ProbeSpec] = []
    labels = set()
    usage = ".probe v(NODE) v(N1,N2) i(ELEMENT) v(ELEMENT)"
    for stmt in stmts:
        if not stmt.items:
            raise NetlistError(".probe lists nothing", stmt.loc(stmt.head), hint=usage)
        for it in stmt.items:
            if not isinstance(it, Call) or it.name.text.lower() not in ("v", "i"):
                raise NetlistError("expected v(...) or i(...)", stmt.loc(it), hint=usage)
            q = it.name.text.lower()
            args = it.args
            loc = stmt.loc(it)
            for a in args:
                if not (isinstance(a, Word) and a.kind == "word"):
                    raise NetlistError("probe arguments are node or element names",
                                       stmt.loc(a), hint=usage)
            if not args or len(args) > (2 if q == "v" else 1):
                raise NetlistError(f"{q}(...) takes {'one or two' if q == 'v' else 'one'} "
                                   f"name(s), got {len(args)}", loc, hint=usage)
            canon = [DATUM if a.text == "0" or a.text.lower() == "gnd" else a.text for a in args]
            if len(args) == 2:
                for a, c in zip(args, canon):
                    if c not in nodes:
                        raise NetlistError(f"probe refers to unknown node '{a.text}'",
                                           stmt.loc(a), hint="node names are case-sensitive")
                probe = ProbeSpec("v", tuple(canon), None, f"v({canon[0]},{canon[1]})", loc)
            elif q == "v" and canon[0] in nodes:
                probe = ProbeSpec("v", (canon[0],), None, f"v({canon[0]})", loc)
            else:
                el = by_name.get(args[0].text.lower())
                if el is None:
                    what = "node or element" if q == "v" else "element"
                    raise NetlistError(f"probe refers to unknown {what} '{args[0].text}'",
                                       stmt.loc(args[0]),
                                       hint="node names are case-sensitive; element names are not")
                probe = ProbeSpec(q, (), el.name, f"{q}({el.name})", loc)
            if probe.label not in labels:
                labels.add(probe.label)
                out.append(probe)
    return out


def parse_netlist(text: str, file: Optional[str] = None) -> Netlist:
    """Parse netlist text into a flattened :class:`Netlist`.

    Parameters
    ----------
    text : str
        The netlist source.
    file : str, optional
        File name used in error messages and stored in :attr:`Netlist.file`.

    Raises
    ------
    NetlistError
        For any problem, with file, line, column, the offending text and a hint.

    Examples
    --------
    >>> nl = parse_netlist("R1 a 0 1k\\nC1 a 0 10u IC=1\\n")
    >>> [e.name for e in nl.elements], nl.parameters["R1"].default
    (['R1', 'C1'], 1000.0)
    """
    if not isinstance(text, str):
        raise NetlistError(f"netlist text must be a str, not {type(text).__name__}")
    statements = read_statements(text, file)
    top, subckts, hoisted = collect_subckts(statements)
    title = ""
    param_defs, model_stmts, probe_stmts, element_stmts = [], list(hoisted), [], []
    for stmt in top:
        head = stmt.head.text.lower()
        if head == ".title":
            title = stmt.rest
        elif head == ".param":
            if not stmt.items:
                raise NetlistError(".param defines nothing", stmt.loc(stmt.head),
                                   hint=".param name=value [name2=value2 ...]")
            for it in stmt.items:
                if not isinstance(it, Assign):
                    raise NetlistError("expected name=value in .param", stmt.loc(it),
                                       hint=".param name=value [name2=value2 ...]")
                if not (it.key.text[0].isalpha() or it.key.text[0] == "_") \
                        or it.key.text.startswith("__"):
                    raise NetlistError(f"invalid parameter name '{it.key.text}'", stmt.loc(it),
                                       hint="parameter names start with a letter")
                param_defs.append((it.key, it.value, stmt))
        elif head == ".model":
            model_stmts.append(stmt)
        elif head == ".probe":
            probe_stmts.append(stmt)
        elif head.startswith("."):
            raise NetlistError(f"unknown dot-command '{stmt.head.text}'", stmt.loc(stmt.head),
                               hint="supported: " + " ".join(DOT_COMMANDS) +
                                    " (no analysis cards: simulations are run from Python "
                                    "or the command line)")
        else:
            element_stmts.append(stmt)
    table = ParamTable()
    names: NameTable = NameTable(what="parameter")
    resolve_global_params(param_defs, table, names)
    models = _models(model_stmts, table, names)
    elements: List[ElementSpec] = []
    expand(element_stmts, Context(table, names, models), names, subckts, [], elements)
    if not elements:
        lines = text.split("\n")
        raise NetlistError("the netlist has no elements", Location(file, 1, 1, lines[0] if lines else "", 0),
                           hint="add elements, one per line, e.g. 'V1 in 0 SIN(0 1 1k)' and 'R1 in 0 1k'")
    _check_elements(elements)
    probes = _probes(probe_stmts, elements)
    parameters = {p.name: p for p in table.params.values()}
    return Netlist(elements, parameters, probes, title, file)


def load_netlist(path) -> Netlist:
    """Read the netlist file at ``path`` (UTF-8) and parse it."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")     # tolerate a byte-order mark
    except UnicodeDecodeError as exc:
        raise NetlistError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise NetlistError(f"cannot read netlist '{name}': {exc.strerror or exc}") from None
    return parse_netlist(text, file=name)
