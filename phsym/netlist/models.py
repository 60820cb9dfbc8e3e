""".model cards: ``.model NAME TYPE(KEY=value ...)`` (or SPICE2's ``KEY VALUE`` pairs) -> :class:`ModelCard`.

The types and keys are those the component kinds declare
(:attr:`Component.model`, :attr:`Value.model_key`); parameters a kind lists
in :attr:`Component.model_ignored` are accepted and named in one warning.
"""
from __future__ import annotations

import warnings
from typing import Dict, List

from ..common.names import NameTable
from ..components import REGISTRY
from ..errors import NetlistError, NetlistWarning
from .elements import ModelCard
from .numbers import looks_numeric
from .params import ParamTable, word_expr
from .source import Assign, Call, Statement, Word

__all__ = ["model_cards"]


def model_cards(stmts: List[Statement], table: ParamTable, names: NameTable,
            defaults: Dict[tuple, float], options: Dict[str, float]) -> Dict[str, ModelCard]:
    """The ``.model`` cards by lower-case name, their values added to ``table`` as parameters
    ``NAME.key`` (defaults from ``defaults`` by kind and key, temperature laws at ``options['temp']``)."""
    models: Dict[str, ModelCard] = {}
    ignored: Dict[str, List[str]] = {}
    types = sorted({t for c in REGISTRY.values() if c.model for t in (c.model_types or (c.model,))})
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
        declared = {k.lower(): v for c in kinds for v in c.values for k in (v.model_key or v.key, *v.aliases)}
        known = {k.lower() for c in kinds for k in c.model_ignored} - set(declared)
        thermal = {k.lower() for k in kinds[0].model_temperature}
        given: Dict[str, Assign] = {}
        card: Dict[str, float] = {}
        for a in _model_pairs(args, stmt, usage):
            if a.key.text.lower() in thermal:
                loc = stmt.loc(a.value)
                card[a.key.text.upper()] = table.evaluate(word_expr(a.value, stmt, names), loc, a.key.text)
                continue
            v = declared.get(a.key.text.lower())
            if v is None and a.key.text.lower() in known:
                ignored.setdefault(name_word.text, []).append(a.key.text.upper())
                continue
            if v is None:
                accepted = ", ".join(dict.fromkeys((v.model_key or v.key).upper() for v in declared.values()))
                accepted += "".join(", " + k.upper() for k in sorted(thermal))
                raise NetlistError(f"unknown {kinds[0].kind} model parameter '{a.key.text}'",
                                   stmt.loc(a), hint=f"accepted: {accepted}; accepted and ignored: "
                                   + ", ".join(sorted(k.upper() for k in known)))
            if v.key in given:
                raise NetlistError(f"model parameter '{a.key.text}' given twice", stmt.loc(a),
                                   hint="parameter names are case-insensitive; keep one")
            given[v.key] = a
        symbols = {}
        for v in dict.fromkeys(declared.values()):
            pname = f"{name_word.text}.{v.key}"
            if v.key in given:
                expr = word_expr(given[v.key].value, stmt, names)
                symbols[v.key] = table.add_value(pname, expr, stmt.loc(given[v.key].value))
            elif v.default is not None:
                default = defaults.get((kinds[0].kind, v.key), v.default)
                symbols[v.key] = table.add(pname, default, stmt.loc(name_word))
        scaled = kinds[0].at_temperature(symbols, card, options.get("temp", 27.0), options.get("tnom", 27.0))
        for k, expr in scaled.items():      # derived: follows the card's value when it is overridden
            symbols[k] = table.add_value(f"{name_word.text}.{k}_at_T", expr, stmt.loc(name_word))
        mtype = next(t for t in (kinds[0].model_types or (kinds[0].model,)) if t.lower() == type_word.text.lower())
        models[key] = ModelCard(name_word.text, mtype, symbols, stmt.loc(name_word))
    if ignored:
        cards = "; ".join(f"{card}: {', '.join(keys)}" for card, keys in ignored.items())
        warnings.warn(f"SPICE model parameters that phsym does not implement are ignored ({cards}); "
                      "see docs/spice-compatibility.md", NetlistWarning, stacklevel=4)
    return models


def _model_pairs(args: list, stmt: Statement, usage: str) -> List[Assign]:
    """``KEY=VALUE`` items of a ``.model`` card; SPICE2's ``KEY VALUE`` pairs (``BF 20 RB 100``) too."""
    out: List[Assign] = []
    k = 0
    while k < len(args):
        a = args[k]
        if isinstance(a, Assign):
            out.append(a)
            k += 1
            continue
        value = args[k + 1] if k + 1 < len(args) else None
        if not (isinstance(a, Word) and a.kind == "word" and not looks_numeric(a.text)
                and isinstance(value, Word)):
            raise NetlistError("expected KEY=VALUE (or SPICE2's KEY VALUE) in .model", stmt.loc(a), hint=usage)
        out.append(Assign(a, value))
        k += 2
    return out
