"""Behavioural and polynomial sources: ``B``, ``E``/``G`` ``VALUE``/``TABLE``/``POLY``, ``F``/``H`` ``POLY``.

All become one component kind, :class:`~phsym.components.controlled.BehavioralSource`:
an output port whose law reads sensed node voltages and source currents.

* ``B1 n+ n- V=expr`` / ``I=expr``: the expression (braces optional, as in
  ngspice) reads ``v(a)``, ``v(a,b)``, ``i(VSRC)``, parameters and
  ``time`` (read, as a voltage, from a hidden source ``NAME#time`` whose
  waveform is the time: an input of the model).
* ``E1 n+ n- VALUE={expr}``, ``G1 n+ n- VALUE={expr}``: voltage / current.
* ``E1 n+ n- TABLE {expr} = (x1,y1) (x2,y2) ...``: linear interpolation of
  the points, constant beyond the first and the last (SPICE's ``TABLE``).
* ``E1 n+ n- POLY(n) (c1+,c1-) ... p0 p1 ...`` (and ``G``), ``F1 n+ n-
  POLY(n) V1 ... Vn p0 p1 ...`` (and ``H``): SPICE's polynomial of the ``n``
  controlling voltages or currents, coefficients in SPICE's order
  (:func:`spice_poly`).

ngspice writes ``B`` and ``VALUE`` expressions without braces; such a line
is given its braces before the grammar reads it
(:func:`phsym.netlist.source.prepare_line`).
"""
from __future__ import annotations

from itertools import combinations_with_replacement
from typing import Dict, List, Optional, Sequence, Tuple

import sympy as sp

from ..components import DATUM, REGISTRY, ElementSpec, Law, Waveform
from ..components.controlled import sense_symbol
from ..errors import Location, NetlistError
from .elements import Context, canonical_node
from .numbers import looks_numeric
from .params import word_expr
from .source import Assign, Call, Group, Statement, Word

__all__ = ["build_behavioral", "spice_poly", "table_expression"]

_USAGE = {"B": "B<name> n+ n- V={expr} | I={expr}  (expr of v(node), v(a,b), i(Vsource), parameters)",
          "E": "E<name> n+ n- nc+ nc- GAIN | VALUE={expr} | TABLE {expr} = (x,y) ... | POLY(n) (nc+,nc-)... p0 p1 ...",
          "G": "G<name> n+ n- nc+ nc- GM | VALUE={expr} | TABLE {expr} = (x,y) ... | POLY(n) (nc+,nc-)... p0 p1 ...",
          "F": "F<name> n+ n- VSENSE GAIN | POLY(n) V1 ... Vn p0 p1 ...",
          "H": "H<name> n+ n- VSENSE R | POLY(n) V1 ... Vn p0 p1 ..."}


def spice_poly(xs: Sequence[sp.Expr], coeffs: Sequence[sp.Expr]) -> sp.Expr:
    """SPICE's polynomial of ``xs`` with coefficients ``p0 p1 ...`` in SPICE's order.

    The terms are the constant, then the monomials of degree 1, 2, ... in
    lexicographic order of their factors: for two variables ``1, x1, x2,
    x1**2, x1*x2, x2**2, x1**3, x1**2*x2, ...``.  A single coefficient is
    ``p0``, as ngspice-39 reads it (SPICE2 took it as the gain ``p1``).

    Parameters
    ----------
    xs : sequence of sympy.Expr
        The controlling variables.
    coeffs : sequence of sympy.Expr
        The coefficients.

    Examples
    --------
    >>> import sympy as sp
    >>> a, b = sp.symbols("a b")
    >>> spice_poly([a, b], [0, 0.5, 0.5, 1, 2])
    a**2 + 2*a*b + 0.5*a + 0.5*b
    >>> spice_poly([a], [0, 3])
    3*a
    """
    terms: List[sp.Expr] = [sp.Integer(1)]
    degree = 1
    while len(terms) < len(coeffs):
        terms += [sp.Mul(*(xs[i] for i in combo)) for combo in combinations_with_replacement(range(len(xs)), degree)]
        degree += 1
    return sp.Add(*(sp.sympify(c) * t for c, t in zip(coeffs, terms)))


def table_expression(x: sp.Expr, xs: Sequence[float], ys: Sequence[float]) -> sp.Expr:
    """SPICE's ``TABLE``: linear between the points, the end values beyond them.

    Parameters
    ----------
    x : sympy.Expr
        The argument.
    xs, ys : sequence of float
        Points (``xs`` non-decreasing).

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> [table_expression(x, [0, 1], [0, 2]).subs(x, v) for v in (-1, 0.25, 5)]
    [0, 0.500000000000000, 2]
    """
    pieces = [(sp.sympify(ys[0]), x <= xs[0])]
    for k in range(1, len(xs)):
        if xs[k] > xs[k - 1]:
            slope = (ys[k] - ys[k - 1]) / (xs[k] - xs[k - 1])
            pieces.append((ys[k - 1] + slope * (x - xs[k - 1]), x <= xs[k]))
    pieces.append((sp.sympify(ys[-1]), True))
    return sp.Piecewise(*pieces)


class _Senses:
    """The voltages and currents a behavioural law reads, each once."""

    def __init__(self, stmt: Statement, ctx: Context):
        self.stmt, self.ctx = stmt, ctx
        self.pairs: List[Tuple[str, str]] = []
        self.refs: List[str] = []
        self.where: Dict[str, Location] = {}

    def voltage(self, a: str, b: str, loc: Optional[Location]) -> sp.Symbol:
        pair = (canonical_node(a, self.ctx), canonical_node(b, self.ctx) if b else DATUM)
        for node, text in zip(pair, (a, b)):
            self.where.setdefault(node, loc)
        if pair not in self.pairs:
            self.pairs.append(pair)
        return sense_symbol("v", self.pairs.index(pair))

    def current(self, name: str, loc: Optional[Location]) -> sp.Symbol:
        ref = self.ctx.prefix + name
        if ref.lower() not in (r.lower() for r in self.refs):
            self.refs.append(ref)
        return sense_symbol("i", [r.lower() for r in self.refs].index(ref.lower()))

    def clock(self) -> str:
        """The node of the element's clock: a hidden source ``NAME#time`` holds it at the time ``t``
        (``time`` in an expression reads it, as any voltage is read)."""
        name = self.ctx.prefix + self.stmt.head.text + "#time"
        if not any(el.name == name for el in self.ctx.extra):
            big = sp.Float(1e9)
            self.ctx.extra.append(ElementSpec(name, "vsource", (name, DATUM), {},
                                              waveform=Waveform("pwl", (sp.Integer(0), sp.Integer(0), big, big),
                                                                self.stmt.loc(self.stmt.head)),
                                              location=self.stmt.loc(self.stmt.head)))
        return self.stmt.head.text + "#time"

    def probe(self, quantity: str, args: str, loc: Optional[Location]) -> sp.Symbol:
        names = [a.strip() for a in args.split(",")]
        if not all(names) or len(names) > (2 if quantity == "v" else 1):
            raise NetlistError(f"{quantity}({args}) reads {'one or two nodes' if quantity == 'v' else 'one source'}",
                               loc, hint=_USAGE["B"])
        if quantity == "v":
            return self.voltage(names[0], names[1] if len(names) > 1 else "", loc)
        return self.current(names[0], loc)


def _expression(word, stmt: Statement, senses: _Senses) -> sp.Expr:
    from .expressions import parse_expression_at
    if not (isinstance(word, Word) and word.kind == "braced"):
        raise NetlistError("expected an expression", stmt.loc(word), hint=_USAGE[stmt.head.text[0].upper()])
    base = word.start + 1
    names = senses.ctx.names.copy()
    clock = sp.Symbol("time#", real=True)
    names.set("time", clock, exact_only=True)      # ngspice's simulation time, unless a parameter is so named
    expr = parse_expression_at(word.inner, names, lambda off, n: stmt.line.locate(base + off, n),
                               probes=senses.probe)
    if expr.has(clock):
        expr = expr.xreplace({clock: senses.voltage(senses.clock(), "", stmt.loc(word))})
    return expr


def _flat(items: list) -> list:
    """Words of the items, groups opened: ``(3,0) (4,0)`` -> ``3 0 4 0``."""
    out = []
    for it in items:
        out += it.args if isinstance(it, Group) else [it]
    return out


def _poly(call: Call, rest: list, stmt: Statement, senses: _Senses, letter: str) -> sp.Expr:
    usage = _USAGE[letter]
    if len(call.args) != 1 or not isinstance(call.args[0], Word) or not call.args[0].text.isdigit() \
            or int(call.args[0].text) < 1:
        raise NetlistError("POLY(n) needs the number of controlling variables", stmt.loc(call), hint=usage)
    n = int(call.args[0].text)
    flat = _flat(rest)
    width = 2 * n if letter in "EG" else n
    controls, coeffs = flat[:width], flat[width:]
    for w in controls:
        if not (isinstance(w, Word) and w.kind == "word"):
            raise NetlistError("expected a node or source name", stmt.loc(w), hint=usage)
    if len(controls) < width or not coeffs:
        raise NetlistError(f"POLY({n}) needs {width} controlling {'nodes' if letter in 'EG' else 'sources'} "
                           "and at least one coefficient", stmt.loc(call), hint=usage)
    if letter in "EG":
        xs = [senses.voltage(controls[2 * k].text, controls[2 * k + 1].text, stmt.loc(controls[2 * k]))
              for k in range(n)]
    else:
        xs = [senses.current(w.text, stmt.loc(w)) for w in controls]
    values = []
    for w in coeffs:
        if not isinstance(w, Word):
            raise NetlistError("expected a coefficient", stmt.loc(w), hint=usage)
        values.append(word_expr(w, stmt, senses.ctx.names))
    return spice_poly(xs, values)


def _table(rest: list, stmt: Statement, senses: _Senses) -> sp.Expr:
    usage = _USAGE[stmt.head.text[0].upper()]
    if not rest:
        raise NetlistError("TABLE needs an expression and points", stmt.loc(stmt.head), hint=usage)
    x = _expression(rest[0], stmt, senses)
    points = _flat(rest[1:])
    nums = []
    for w in points:
        if not (isinstance(w, Word) and w.kind == "word" and looks_numeric(w.text)):
            raise NetlistError("TABLE points are numbers", stmt.loc(w), hint=usage)
        nums.append(float(word_expr(w, stmt, senses.ctx.names)))
    if len(nums) < 4 or len(nums) % 2:
        raise NetlistError(f"TABLE needs pairs (x, y), at least two; got {len(nums)} number(s)",
                           stmt.loc(rest[0]), hint=usage)
    xs, ys = nums[0::2], nums[1::2]
    bad = next((k for k in range(1, len(xs)) if xs[k] < xs[k - 1]), None)
    if bad is not None:
        raise NetlistError(f"TABLE x values must not decrease ({xs[bad]:g} after {xs[bad - 1]:g})",
                           stmt.loc(points[2 * bad]), hint=usage)
    return table_expression(x, xs, ys)


def build_behavioral(stmt: Statement, ctx: Context) -> ElementSpec:
    """The :class:`ElementSpec` of a ``B`` line or a behavioural ``E``/``F``/``G``/``H`` line.

    Parameters
    ----------
    stmt : Statement
        The line.
    ctx : Context
        Where it is expanded.
    """
    letter = stmt.head.text[0].upper()
    usage = _USAGE.get(letter, _USAGE["B"])
    items = list(stmt.items)
    if len(items) < 3:
        raise NetlistError(f"'{stmt.head.text}' needs two nodes and its value", stmt.loc(stmt.head), hint=usage)
    nodes = []
    for w in items[:2]:
        if not (isinstance(w, Word) and w.kind == "word"):
            raise NetlistError("expected node name", stmt.loc(w), hint=usage)
        nodes.append(canonical_node(w.text, ctx))
    senses = _Senses(stmt, ctx)
    form, rest = items[2], items[3:]
    if letter == "B":
        if not isinstance(form, Assign) or form.key.text.upper() not in ("V", "I") or rest:
            raise NetlistError("a B source takes V=expr or I=expr", stmt.loc(form), hint=usage)
        key, expr = form.key.text.upper(), _expression(form.value, stmt, senses)
    elif isinstance(form, Call) and form.name.text.lower() == "poly":
        key, expr = ("V" if letter in "EH" else "I"), _poly(form, rest, stmt, senses, letter)
    elif isinstance(form, Assign) and form.key.text.lower() == "value":
        if rest:
            raise NetlistError("unexpected text after the VALUE expression", stmt.loc(rest[0]), hint=usage)
        key, expr = ("V" if letter == "E" else "I"), _expression(form.value, stmt, senses)
    else:
        key, expr = ("V" if letter == "E" else "I"), _table(rest, stmt, senses)
    flat = tuple(n for pair in senses.pairs for n in pair)
    arg_locs = {f"node{k}": stmt.loc(w) for k, w in enumerate(items[:2])}
    arg_locs.update({f"sense:{n}": loc for n, loc in senses.where.items() if loc is not None})
    return ElementSpec(ctx.prefix + stmt.head.text, REGISTRY["behavioral"].kind, tuple(nodes) + flat, {},
                       law=Law(key, sp.sympify(expr), sp.Symbol("w", real=True), stmt.loc(form)),
                       refs=tuple(senses.refs), location=stmt.loc(stmt.head), arg_locations=arg_locs)
