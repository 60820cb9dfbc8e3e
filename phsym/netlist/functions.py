"""User functions of a deck: ``.func NAME(a, b) {expression}`` (SPICE/ngspice).

A function's body is text, parsed when the function is called (with the
parameters known then, so bodies and ``.param`` definitions may use each
other in any order) by the same safe parser as every expression; its
arguments are substituted into it.

>>> import sympy as sp
>>> from phsym.common.names import NameTable
>>> from phsym.netlist.expressions import parse_expression
>>> names = NameTable(what="parameter")
>>> names.set("sq", UserFunction("sq", ("x",), "x*x", names))
>>> parse_expression("sq(3) + sq(2)", names)
13
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

import sympy as sp

from ..errors import Location, NetlistError

__all__ = ["UserFunction", "func_card"]

_FUNC = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(([^()]*)\)\s*=?\s*(.*?)\s*$", re.DOTALL)
_DEPTH = [0]


class UserFunction:
    """A ``.func`` of a deck, called as ``NAME(args)`` in expressions.

    Parameters
    ----------
    name : str
        The function's name.
    params : sequence of str
        Its argument names.
    body : str
        Its expression (without braces).
    names : mapping of str to object
        The deck's names (parameters, tables, functions), looked up when the body is parsed.
    location : Location, optional
        Where it was defined.
    """

    def __init__(self, name: str, params: Sequence[str], body: str, names, location: Optional[Location] = None):
        self.name, self.params, self.body, self.names, self.location = name, tuple(params), body, names, location

    @property
    def arity(self) -> int:
        """The number of arguments."""
        return len(self.params)

    def __call__(self, *args: sp.Expr) -> sp.Expr:
        from .expressions import parse_expression
        if _DEPTH[0] > 50:
            raise NetlistError(f".func {self.name} calls itself", self.location,
                               hint="a function's body cannot use the function, directly or indirectly")
        local = self.names.copy()
        dummies = [sp.Dummy(p, real=True) for p in self.params]
        for p, d in zip(self.params, dummies):
            local.set(p, d)
        _DEPTH[0] += 1
        try:
            expr = parse_expression(self.body, local, self.location)
        finally:
            _DEPTH[0] -= 1
        return expr.xreplace(dict(zip(dummies, args)))


def func_card(text: str, location: Optional[Location], names) -> UserFunction:
    """A ``.func NAME(a, b) {body}`` card's function (``=`` before the body and the braces optional).

    Parameters
    ----------
    text : str
        The card's text after ``.func``.
    location : Location, optional
        Where the card is.
    names : NameTable
        The deck's names.
    """
    m = _FUNC.match(text)
    usage = ".func NAME(a, b) {expression of a, b and parameters}"
    if not m or not m.group(3):
        raise NetlistError("malformed .func", location, hint=usage)
    params = [p.strip() for p in m.group(2).split(",") if p.strip()]
    body = m.group(3)
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    if any(not re.fullmatch(r"[A-Za-z_]\w*", p) for p in params) or len(set(p.lower() for p in params)) < len(params):
        raise NetlistError(f".func {m.group(1)}: arguments are distinct names", location, hint=usage)
    return UserFunction(m.group(1), params, body, names, location)
