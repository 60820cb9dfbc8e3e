"""Element descriptions by numbers: what an element of a library kind contributes, kept so that a
later process builds a circuit of such elements without sympy.

The symbolic build (:class:`phsym.model.Model`) asks each component class
for its contribution; :func:`record` writes that contribution down once per
*signature* -- the kind, the values given (by key) and which of them are
zero at the defaults, the values' constraints -- as a description: its
branches (nodes as terminal numbers or internal names), and per storage,
dissipation and source what :class:`~.data.CircuitData` holds of it, each
coefficient and placeholder as a tree (:mod:`phsym.codegen.laws.facts`)
over the element's value keys, each nonlinear law by its form's key.  The
description comes from the component class, through the same
:meth:`~.data.CircuitData.build` steps; nothing here knows a device's
equations.

:func:`instantiate` reads a description back for an element given by
numbers (:class:`Element`) and :func:`assemble` makes the circuit of a list
of them: the same :class:`~.data.CircuitData` as
:func:`~.numeric.numeric_circuit` of the symbolic build, without sympy.  A
signature never recorded, a damaged or stale file, or a value that breaks
its constraint gives ``None`` / :class:`NotDescribed`: the caller takes the
symbolic path.  Elements with laws, initial conditions, couplings, word
options, controlled or multiport laws are not described.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ...common import library
from ...common.branch import Branch
from ...common.constraints import problem
from ...common.fingerprint import code_fingerprint
from ...common.names import DATUM
from ...common.paths import atomic_write, cache_dir
from ...errors import PhsymError
from ...netlist.plain import PlainElement
from ...version import __version__
from .data import CircuitData, DissipationItem, PortItem, StorageItem, incidence
from .form import Form
from .numeric import Record

__all__ = ["Element", "NotDescribed", "signature", "record", "describe", "instantiate", "assemble", "PREFIX"]

#: File-name prefix of a description.
PREFIX = "phsym_kind_"

#: The kinds described: their components decide their parts by which values are given and
#: non-zero, nothing else (the signature's terms).
KINDS = ("resistor", "capacitor", "inductor", "diode", "vsource", "isource")


class NotDescribed(PhsymError):
    """An element (or a circuit) that has no description to be built from: take the symbolic path."""


#: An element given by numbers (name, kind, nodes, values by key, their constraints; a source's
#: waveform): the record the cold path's netlist reader makes, read here as it is.
Element = PlainElement


def signature(kind: str, values: Mapping[str, float], checks: Mapping[str, str]) -> str:
    """The key of an element's description: its kind, the keys of its values, which are zero, and
    the keys' constraints (a component decides its parts by what is given and non-zero)."""
    keys = sorted((k, "0" if float(v) == 0.0 else "x", checks.get(k) or "") for k, v in values.items())
    text = json.dumps([__version__, kind, keys])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


# ----------------------------------------------------------------------------- recording (sympy)
def _tree(expr, slots: Mapping[object, str]) -> list:
    """``expr`` (parameter symbols of the element's values) as a tree over the value keys
    (``["k", key]``); only what the symbolic path evaluates as arithmetic
    (:func:`~.values._arithmetic`), so both paths compute the same numbers."""
    import sympy as sp
    e = sp.sympify(expr)
    if len(e.args) > 4:
        raise ValueError("not a short arithmetic expression")
    return _arith(e, slots)


def _arith(e, slots) -> list:
    if e.is_Rational or e.is_Float:
        return ["n", float(e)]
    if e.is_Symbol:
        if e not in slots:
            raise ValueError(f"{e} is not one of the element's values")
        return ["k", slots[e]]
    if e.is_Pow:
        return ["^", _arith(e.base, slots), _arith(e.exp, slots)]
    if e.is_Mul or e.is_Add:
        return ["*" if e.is_Mul else "+"] + [_arith(a, slots) for a in e.args]
    raise ValueError(f"cannot describe {type(e).__name__}")


def _node(n: str, spec) -> list:
    if n in spec.nodes:     # a terminal, wherever it is connected (the datum too)
        return ["t", list(spec.nodes).index(n)]
    if n == DATUM:
        return ["0"]
    if n.startswith(spec.name + "#"):
        return ["i", n[len(spec.name):]]
    raise ValueError(f"node {n} is neither a terminal nor internal")


def _named(name: str, spec) -> list:
    """A name holding the element's (``q_C1``, ``q_D1.cj``) as the text around it."""
    at = name.find(spec.name)
    if at < 0:
        raise ValueError(f"{name} does not hold {spec.name}")
    return [name[:at], name[at + len(spec.name):]]


def _suffix(name: str, spec) -> str:
    if not name.startswith(spec.name):
        raise ValueError(f"{name} is not named after {spec.name}")
    return name[len(spec.name):]


def _keyed(spec, defaults) -> Optional[tuple]:
    """``(signature, slots, checks)`` of an element whose values are parameter symbols, else ``None``."""
    import sympy as sp

    from ...components import REGISTRY
    if (spec.kind not in KINDS or spec.law is not None or spec.ic is not None or spec.refs or spec.choices
            or spec.dc is not None or spec.ac is not None):
        return None
    slots, numbers = {}, {}
    for key, val in spec.values.items():
        v = sp.sympify(val)
        if not v.is_Symbol or v not in defaults:
            return None
        slots.setdefault(v, key)
        numbers[key] = float(defaults[v])
    checks = {d.key: d.check for d in REGISTRY[spec.kind].values if d.check is not None and d.key in spec.values}
    return signature(spec.kind, numbers, checks), slots, checks


def describe(spec, contribution, defaults) -> Optional[dict]:
    """The description of one element's contribution, or ``None`` when it has none.

    Parameters
    ----------
    spec : ElementSpec
        The element.
    contribution : Contribution
        What its component contributed.
    defaults : mapping of sympy.Symbol to float
        The parameters' defaults.
    """
    from .data import _dissipation, _storage
    c = contribution
    keyed = _keyed(spec, defaults)
    if keyed is None or c.twoports or c.couplings:
        return None
    sig, slots, checks = keyed
    try:
        branches = [dict(suffix=_suffix(b.name, spec), element=_suffix(b.element, spec), kind=b.kind,
                         nodes=[_node(b.node_from, spec), _node(b.node_to, spec)], domain=b.domain, role=b.role,
                         priority=int(b.priority)) for b in c.branches]
        where = {b.name: k for k, b in enumerate(c.branches)}
        storages = []
        for st in c.storages:
            if any(ic is not None for ic in st.initial):
                return None
            item = _storage(st, tuple(range(len(st.states))), tuple(where[b] for b in st.branches))
            storages.append(dict(
                elements=[_suffix(e, spec) for e in st.elements],
                states=[_named(getattr(x, "name", None) or str(x), spec) for x in st.states],
                branches=list(item.branches), effort_port=list(item.effort_port), linear=item.linear,
                compliance=None if item.compliance is None else _tree(item.compliance, slots),
                hessian=None if not item.linear or item.compliance is not None
                else [[_tree(e, slots) for e in row] for row in item.hessian],
                form=None if item.form is None else [item.form.key, item.form.n_vars, item.form.n_params],
                placeholders=[_tree(p, slots) for p in item.placeholders], by_effort=item.by_effort,
                stiff=item.stiff))
        dissipations = []
        for d in c.dissipations:
            if d.couples or d.reads:
                return None
            item = _dissipation(d, 0, where[d.branch], {d.element: 0}, {})
            dissipations.append(dict(
                element=_suffix(d.element, spec), branch=item.branch, across=item.across, linear=item.linear,
                coefficient=None if item.coefficient is None else _tree(item.coefficient, slots),
                form=None if item.form is None else [item.form.key, item.form.n_vars, item.form.n_params],
                placeholders=[_tree(p, slots) for p in item.placeholders], active=bool(d.active),
                nullator=bool(d.nullator)))
        ports = [dict(element=_suffix(p.element, spec), branch=where[p.branch], across=p.fixes == "across")
                 for p in c.ports]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return dict(code=code_fingerprint(), kind=spec.kind, signature=sig, checks=checks, branches=branches, storages=storages, dissipations=dissipations, ports=ports)


def _file(sig: str) -> str:
    return f"{PREFIX}{sig}.json"


def _digest(desc: dict) -> str:
    body = {k: v for k, v in desc.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


_RECORDED: set = set()


def record(spec, contribution, defaults) -> None:
    """Keep the description of an element (once per signature and process; see :func:`describe`).

    Written to the user's cache directory, and to the package's library when
    ``phsym cache build --package`` fills it (:func:`phsym.codegen.laws.library.writing`).
    """
    if spec.kind not in KINDS:
        return
    try:        # what the signature reads, cheaply (a mesh of 10^5 resistors has one signature)
        seen = (spec.kind, spec.law is None and spec.ic is None and not spec.refs and not spec.choices,
                tuple(sorted((k, None if v not in defaults else defaults[v] == 0.0) for k, v in spec.values.items())))
    except TypeError:
        return
    if seen in _RECORDED:
        return
    _RECORDED.add(seen)
    desc = describe(spec, contribution, defaults)
    if desc is None:
        return
    desc["digest"] = _digest(desc)
    data = json.dumps(desc).encode()
    try:
        path = cache_dir() / _file(desc["signature"])
        if _read(path, desc["kind"], desc["signature"]) != desc:     # missing, damaged or stale: (re)written
            atomic_write(path, lambda fh: fh.write(data))
        if library.writing():
            library.LIBRARY.mkdir(parents=True, exist_ok=True)
            atomic_write(library.LIBRARY / _file(desc["signature"]), lambda fh: fh.write(data))
    except OSError:
        pass        # a read-only cache: recorded again next time


# ----------------------------------------------------------------------------- reading (no sympy)
def _read(path: Path, kind: str, sig: str) -> Optional[dict]:
    try:
        desc = json.loads(path.read_text())
        ok = (isinstance(desc, dict) and desc.get("code") == code_fingerprint() and desc.get("kind") == kind
              and desc.get("signature") == sig and desc.get("digest") == _digest(desc))
    except (OSError, ValueError, TypeError):
        return None
    return desc if ok else None


def _lookup(kind: str, sig: str) -> Optional[dict]:
    for path in (cache_dir() / _file(sig), library.LIBRARY / _file(sig)):
        desc = _read(path, kind, sig)
        if desc is not None:
            return desc
    return None


def _value(tree, values: Mapping[str, float]) -> float:
    """A tree over value keys (``["k", key]``) at the element's numbers."""
    if not isinstance(tree, list) or not tree:
        raise NotDescribed("a damaged description")
    if tree[0] == "k":
        if len(tree) != 2 or tree[1] not in values:
            raise NotDescribed("a damaged description")
        return float(values[tree[1]])
    if tree[0] in ("+", "*", "^"):
        args = [_value(a, values) for a in tree[1:]]
        if tree[0] == "^":
            if len(args) != 2:
                raise NotDescribed("a damaged description")
            r = args[0] ** args[1]
            return float("nan") if isinstance(r, complex) else r
        out = 1.0 if tree[0] == "*" else 0.0
        for a in args:
            out = out * a if tree[0] == "*" else out + a
        return out
    if tree[0] != "n" or len(tree) != 2 or not isinstance(tree[1], (int, float)) or isinstance(tree[1], bool):
        raise NotDescribed("a damaged description")
    return float(tree[1])


def _number(tree, values, element: str) -> float:
    v = _value(tree, values)
    if not np.isfinite(v):
        raise NotDescribed(f"a value of {element} is not a finite real number")
    return v


def instantiate(e: Element) -> dict:
    """The parts of an element from its description: ``branches`` (:class:`~phsym.common.branch.Branch`),
    ``storages``, ``dissipations`` and ``ports`` (item fields, branches by the element's own index).

    Raises
    ------
    NotDescribed
        No description of its signature, a damaged one, or a value that breaks its constraint.
    """
    for key, check in e.checks.items():
        if key in e.values and problem(check, float(e.values[key])):
            raise NotDescribed(f"value {key} of {e.name} {problem(check, float(e.values[key]))}")
    desc = _lookup(e.kind, signature(e.kind, e.values, e.checks))
    if desc is None or desc.get("checks") != dict(e.checks):
        raise NotDescribed(f"no description of {e.name} ({e.kind} with these values)")
    try:
        def node(n):
            if n[0] == "0":
                return DATUM
            if n[0] == "t":
                return e.nodes[n[1]]
            if n[0] == "i":
                return e.name + n[1]
            raise KeyError(n[0])
        branches = [Branch(e.name + b["suffix"], e.name + b["element"], b["kind"], node(b["nodes"][0]),
                                  node(b["nodes"][1]), b["domain"], b["role"], int(b["priority"]))
                    for b in desc["branches"]]
        v = e.values
        storages = []
        for s in desc["storages"]:
            elements = tuple(e.name + x for x in s["elements"])
            states = [x[0] + e.name + x[1] for x in s["states"]]
            hess = comp = None
            if s["compliance"] is not None:
                comp = _number(s["compliance"], v, e.name)
            elif s["linear"]:
                hess = tuple(tuple(_number(t, v, e.name) for t in row) for row in s["hessian"])
            form = None if s["form"] is None else Form(None, int(s["form"][1]), int(s["form"][2]), str(s["form"][0]))
            storages.append((states, dict(record=Record(elements[0], elements, initial=(None,) * len(states)),
                                          branches=tuple(s["branches"]), effort_port=tuple(s["effort_port"]),
                                          linear=bool(s["linear"]), hessian=hess, compliance=comp, form=form,
                                          placeholders=tuple(_number(t, v, e.name) for t in s["placeholders"]),
                                          by_effort=bool(s["by_effort"]), stiff=bool(s["stiff"]))))
        dissipations = []
        for d in desc["dissipations"]:
            name = e.name + d["element"]
            form = None if d["form"] is None else Form(None, int(d["form"][1]), int(d["form"][2]), str(d["form"][0]))
            dissipations.append(dict(
                record=Record(name, (name,), active=bool(d["active"]), nullator=bool(d["nullator"])),
                branch=int(d["branch"]), across=bool(d["across"]), linear=bool(d["linear"]),
                coefficient=None if d["coefficient"] is None else _number(d["coefficient"], v, e.name),
                form=form, placeholders=tuple(_number(t, v, e.name) for t in d["placeholders"])))
        ports = [dict(record=Record(e.name + p["element"], (e.name + p["element"],)), branch=int(p["branch"]),
                      across=bool(p["across"])) for p in desc["ports"]]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise NotDescribed(f"a damaged description of {e.name}: {exc}") from None
    return dict(branches=branches, storages=storages, dissipations=dissipations, ports=ports)


def assemble(elements: Sequence[Element]) -> Tuple[CircuitData, List[Branch], np.ndarray]:
    """The circuit of elements given by numbers (see the module docstring).

    Returns
    -------
    circuit : CircuitData
        As :func:`~.numeric.numeric_circuit` of the symbolic build.
    branches : list of Branch
        Every branch, in the model's order.
    in_tree : ndarray of bool
        The graph's normal tree.

    Raises
    ------
    NotDescribed
        For an element without a description.
    StructureError
        The graph's errors (:func:`phsym.graph.build_graph`, :func:`phsym.graph.check_sources`).
    """
    from ...graph import branches_of, build_graph, check_sources
    parts = [instantiate(e) for e in elements]
    all_branches = [b for p in parts for b in p["branches"]]
    topology = build_graph(all_branches)
    branches, in_tree = branches_of(topology)
    bidx = {b.name: k for k, b in enumerate(branches)}
    port_records = []
    for p in parts:
        for q in p["ports"]:
            fixes = "across" if q["across"] else "through"
            port_records.append(_PortView(q["record"].element, p["branches"][q["branch"]].name, fixes))
    check_sources(topology, branches, in_tree, port_records)
    nodes, b_from, b_to = incidence(branches)
    states: List[str] = []
    storages, dissipations, ports = [], [], []
    for p in parts:
        own = [bidx[b.name] for b in p["branches"]]
        for names, s in p["storages"]:
            idx = tuple(range(len(states), len(states) + len(names)))
            states += names
            storages.append(StorageItem(states=idx, **{**s, "branches": tuple(own[k] for k in s["branches"])}))
        for d in p["dissipations"]:
            dissipations.append(DissipationItem(**{**d, "branch": own[d["branch"]]}))
        for q in p["ports"]:
            ports.append(PortItem(q["record"], own[q["branch"]], q["across"]))
    c = CircuitData(nodes, list(branches), b_from, b_to, np.asarray(in_tree, dtype=bool), states,
                    [q.record.element for q in ports], storages, dissipations, ports, [])
    return c, list(branches), np.asarray(in_tree, dtype=bool)


@dataclass(frozen=True)
class _PortView:
    """What :func:`phsym.graph.check_sources` reads of a source."""

    element: str
    branch: str
    fixes: str
