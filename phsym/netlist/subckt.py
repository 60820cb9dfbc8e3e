"""Subcircuits: ``.subckt``/``.ends`` collection and flattening of ``X`` instances.

An instance ``X1 a b NAME k=3`` copies the body of ``NAME`` with element
names prefixed ``X1.``, internal nodes prefixed ``X1.`` (ports replaced by the
instance's nodes, the datum kept as ``"0"``) and subcircuit parameters
turned into parameters ``X1.k``.  Instances nest (``X1.X2.R1``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..common.names import NameTable
from ..errors import NetlistError
from ..components import REGISTRY
from .behavioral import build_behavioral
from .elements import SUBCKT, Context, build_element, canonical_node, element_kind
from .params import word_expr
from .source import Assign, Statement, Word

__all__ = ["Subckt", "collect_subckts", "expand", "flattened_count", "MAX_ELEMENTS"]

#: Upper bound on the number of flattened elements, whatever the memory.
MAX_ELEMENTS = 2_000_000

#: Dot-commands allowed inside a .subckt body (hoisted to the top level).
_HOISTED = (".model",)


@dataclass
class Subckt:
    """A subcircuit definition."""

    name: str
    ports: List[str]
    params: List[Tuple[Word, Word]]
    body: List[Statement]
    stmt: Statement


def _definition(stmt: Statement) -> Subckt:
    items = stmt.items
    if not items or not (isinstance(items[0], Word) and items[0].kind == "word"):
        raise NetlistError(".subckt needs a name and port nodes", stmt.loc(stmt.head),
                           hint=".subckt NAME n1 n2 ... [params: a=1 b=2]")
    name = items[0].text
    ports: List[str] = []
    params: List[Tuple[Word, Word]] = []
    seen_params = set()
    for it in items[1:]:
        if isinstance(it, Word) and it.kind == "word" and it.text.lower() == "params:":
            continue
        if isinstance(it, Assign):
            key = it.key
            if key.text.lower().startswith("params:"):
                cut = len("params:")
                key = Word("word", key.text[cut:], key.start + cut)
            if not key.text or not (key.text[0].isalpha() or key.text[0] == "_"):
                raise NetlistError(f"invalid parameter name '{key.text}'", stmt.loc(it.key))
            if key.text.lower() in seen_params:
                raise NetlistError(f"subcircuit parameter '{key.text}' given twice", stmt.loc(key),
                                   hint="keep one definition")
            seen_params.add(key.text.lower())
            params.append((key, it.value))
            continue
        if params or not (isinstance(it, Word) and it.kind == "word"):
            raise NetlistError("unexpected item on .subckt line", stmt.loc(it),
                               hint=".subckt NAME n1 n2 ... [params: a=1 b=2]; ports come "
                                    "before the parameters")
        if it.text == "0" or it.text.lower() == "gnd":
            raise NetlistError("the datum node cannot be a subcircuit port", stmt.loc(it),
                               hint="the datum 0 is global; use it inside the subcircuit directly")
        if it.text.lower() in (p.lower() for p in ports):
            raise NetlistError(f"port '{it.text}' listed twice", stmt.loc(it),
                               hint="each port node appears once in the .subckt line")
        ports.append(it.text)
    return Subckt(name, ports, params, [], stmt)


def collect_subckts(statements: List[Statement]
                    ) -> Tuple[List[Statement], Dict[str, Subckt], List[Statement]]:
    """Split statements into (top level, subcircuits by lower-case name, hoisted cards)."""
    top: List[Statement] = []
    hoisted: List[Statement] = []
    subckts: Dict[str, Subckt] = {}
    current: Optional[Subckt] = None
    for stmt in statements:
        head = stmt.head.text.lower()
        if head == ".subckt":
            if current is not None:
                raise NetlistError("nested .subckt definitions are not supported",
                                   stmt.loc(stmt.head),
                                   hint=f"close '{current.name}' with .ends first; define "
                                        "subcircuits one after the other and instantiate "
                                        "one inside the other")
            current = _definition(stmt)
            key = current.name.lower()
            if key in subckts:
                first = subckts[key].stmt.loc(subckts[key].stmt.head)
                raise NetlistError(f"subcircuit '{current.name}' is defined twice",
                                   stmt.loc(stmt.items[0]),
                                   hint=f"first definition at line {first.line}")
            continue
        if head == ".ends":
            if current is None:
                raise NetlistError(".ends without .subckt", stmt.loc(stmt.head),
                                   hint="remove it or add the matching .subckt NAME ... line")
            if stmt.items:
                it = stmt.items[0]
                if not isinstance(it, Word) or it.text.lower() != current.name.lower() \
                        or len(stmt.items) > 1:
                    raise NetlistError(f".ends does not match .subckt '{current.name}'",
                                       stmt.loc(it), hint=f"write .ends {current.name}")
            subckts[current.name.lower()] = current
            current = None
            continue
        if current is None:
            top.append(stmt)
        elif head in _HOISTED:
            hoisted.append(stmt)
        elif head.startswith("."):
            raise NetlistError(f"{stmt.head.text} is not allowed inside a .subckt",
                               stmt.loc(stmt.head),
                               hint="subcircuit parameters go on the .subckt line (params: a=1); "
                                    ".param and .probe belong to the top level")
        else:
            current.body.append(stmt)
    if current is not None:
        raise NetlistError(f"missing .ends for .subckt '{current.name}'",
                           current.stmt.loc(current.stmt.head),
                           hint=f"add '.ends {current.name}' after its last element")
    return top, subckts, hoisted


def _instance(stmt: Statement, ctx: Context, global_names: NameTable, subckts: Dict[str, Subckt],
              stack: List[str], out: list) -> None:
    positional: List[Word] = []
    overrides: List[Assign] = []
    for it in stmt.items:
        if isinstance(it, Assign):
            overrides.append(it)
        elif isinstance(it, Word) and it.kind == "word" and not overrides:
            positional.append(it)
        else:
            raise NetlistError("unexpected item in subcircuit instance", stmt.loc(it),
                               hint="X<name> n1 n2 ... SUBCKT [param=value ...]")
    if not positional:
        raise NetlistError(f"instance '{stmt.head.text}' names no subcircuit", stmt.loc(stmt.head),
                           hint="X<name> n1 n2 ... SUBCKT [param=value ...]")
    sub_word, node_words = positional[-1], positional[:-1]
    sub = subckts.get(sub_word.text.lower())
    if sub is None:
        known = ", ".join(s.name for s in subckts.values()) or "none defined"
        raise NetlistError(f"unknown subcircuit '{sub_word.text}'", stmt.loc(sub_word),
                           hint=f"known subcircuits: {known}")
    if sub.name.lower() in stack:
        chain = " -> ".join(stack[stack.index(sub.name.lower()):] + [sub.name.lower()])
        raise NetlistError(f"recursive subcircuit instantiation: {chain}", stmt.loc(sub_word),
                           hint="a subcircuit cannot contain itself, directly or indirectly")
    if len(node_words) != len(sub.ports):
        raise NetlistError(f"subcircuit '{sub.name}' has {len(sub.ports)} port(s) "
                           f"({' '.join(sub.ports)}), instance gives {len(node_words)}",
                           stmt.loc(stmt.head), hint="connect one node per port")
    prefix = ctx.prefix + stmt.head.text + "."
    node_map = {p.lower(): canonical_node(w.text, ctx) for p, w in zip(sub.ports, node_words)}
    declared = {k.text.lower(): (k, v) for k, v in sub.params}
    given: Dict[str, Assign] = {}
    for a in overrides:
        key = a.key.text.lower()
        if key not in declared:
            accepted = ", ".join(k.text for k, _ in sub.params) or "none"
            raise NetlistError(f"subcircuit '{sub.name}' has no parameter '{a.key.text}'",
                               stmt.loc(a), hint=f"its parameters: {accepted}")
        if key in given:
            raise NetlistError(f"parameter '{a.key.text}' given twice", stmt.loc(a),
                               hint="keep one value")
        given[key] = a
    names = global_names.copy()
    for key_word, default in sub.params:
        pname = prefix + key_word.text
        if key_word.text.lower() in given:
            a = given[key_word.text.lower()]
            expr = word_expr(a.value, stmt, ctx.names)
            loc = stmt.loc(a.value)
        else:
            expr = word_expr(default, sub.stmt, names)
            loc = sub.stmt.loc(default)
        names.set(key_word.text, ctx.table.add_value(pname, expr, loc))
    inner = Context(ctx.table, names, ctx.models, prefix, node_map, ctx.seen, ctx.defaults, ctx.spelling, ctx.tran,
                    ctx.ignored, ctx.globals)
    expand(sub.body, inner, global_names, subckts, stack + [sub.name.lower()], out)


def _instance_of(stmt: Statement) -> Optional[str]:
    words = [it for it in stmt.items if isinstance(it, Word) and it.kind == "word"]
    return words[-1].text.lower() if words else None


def flattened_count(statements: List[Statement], subckts: Dict[str, Subckt]) -> int:
    """Elements ``statements`` flatten to, counted without expanding (capped past :data:`MAX_ELEMENTS`).

    Nested instances multiply (ten levels of ten instances are 10**10
    elements): counting first lets a netlist that would not fit be refused
    before any element is built.  Unknown or recursive subcircuits count 0;
    :func:`expand` reports them.
    """
    memo: Dict[str, int] = {}

    def count(body: List[Statement], stack: Tuple[str, ...]) -> int:
        total = 0
        for stmt in body:
            if stmt.head.text[:1].lower() != "x":       # only an X line can be an instance
                total += 1
                continue
            try:
                kind, _ = element_kind(stmt, subckts)
            except NetlistError:
                total += 1
                continue
            if kind != SUBCKT:
                total += 1
                continue
            name = _instance_of(stmt)
            if name not in subckts or name in stack:
                continue
            if name not in memo:
                memo[name] = count(subckts[name].body, stack + (name,))
            total += memo[name]
            if total > MAX_ELEMENTS:
                return MAX_ELEMENTS + 1
        return total

    return count(statements, ())


def expand(statements: List[Statement], ctx: Context, global_names: NameTable,
           subckts: Dict[str, Subckt], stack: List[str], out: list) -> None:
    """Append the flattened elements of ``statements`` to ``out``."""
    for stmt in statements:
        kind, kw = element_kind(stmt, subckts)
        ctx.register(stmt)
        if kind == SUBCKT:
            _instance(stmt, ctx, global_names, subckts, stack, out)
        elif kind is REGISTRY["behavioral"]:
            out.append(build_behavioral(stmt, ctx))
            out += ctx.extra
            ctx.extra.clear()
        else:
            out.append(build_element(stmt, kind, kw, ctx))
            out += ctx.extra
            ctx.extra.clear()
        if len(out) > MAX_ELEMENTS:
            raise NetlistError(f"more than {MAX_ELEMENTS} elements after flattening subcircuits",
                               stmt.loc(stmt.head), hint="check for runaway nesting")
