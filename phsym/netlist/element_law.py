"""An element line's law: ``H={...}`` (storages), ``I={...}`` / ``V={...}`` (dissipations), ``=learn``.

The kind's law forms (:meth:`~phsym.components.base.Component.law_form`) say
which keys it takes and the law's variable; the expression is read with the
names of the line's scope and checked to be finite and real at the
parameters' defaults before any structure is built from it.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Type

import sympy as sp

from ..common.bounded import GRID, constant_problem, nonreal_points
from ..common.names import NameTable
from ..components import Component, Law
from ..errors import NetlistError
from .params import word_expr
from .source import Assign, ItemLocations, Statement, Word

__all__ = ["element_law", "value_text"]


def value_text(word: Word) -> str:
    """A value word's text for a message (an expression without its braces, cut to 120 characters)."""
    text = word.inner if word.kind == "braced" else word.text
    return text if len(text) <= 120 else text[:117] + "..."


def element_law(cls: Type[Component], given: Dict[str, Assign], stmt: Statement, names: NameTable,
                defaults: Mapping[sp.Symbol, object], prefix: str, arg_locs: ItemLocations) -> Optional[Law]:
    """The law an element line gives (``H={...}``, ``I={...}``, ``=learn``), checked; ``None`` if none.

    Parameters
    ----------
    cls : type
        The element's component kind (its law forms).
    given : dict
        The line's ``key=value`` assignments by lower-case key.
    stmt : Statement
        The element line (for error locations).
    names : NameTable
        Names an expression may use (parameters, constants); the law's variable is added to a copy.
    defaults : mapping
        Parameter symbols' default values (to check the law is finite and real at them).
    prefix : str
        Subcircuit instance prefix of the element's name (for messages).
    arg_locs : ItemLocations
        The element's argument locations; the law's is recorded under ``"law"``.

    Raises
    ------
    NetlistError
        Two laws, a law beside the value it replaces, or a law with no finite real value.
    """
    keys = [f.key for f in cls.laws if f.key in given]
    if len(keys) > 1:
        raise NetlistError("only one law may be given", stmt.loc(given[keys[1]]))
    if not keys:
        return None
    form = cls.law_form(keys[0])
    a = given[form.key]
    main = cls.main_value()
    if main is not None and main.key in given:
        raise NetlistError(f"both a value ({main.key}) and a law ({form.key}=) are given",
                           stmt.loc(a), hint="give either the value or the law")
    var = sp.Symbol(form.variable, real=True)
    names = names.copy()
    names.set(var.name, var, exact_only=True)
    loc = stmt.loc(a)
    arg_locs["law"] = loc
    if a.value.kind == "word" and a.value.text.lower() == "learn":
        # placeholders fix the structure only: a quadratic energy, a unit resistance or conductance
        return Law(form.key, var ** 2 / 2 if form.key == "H" else var, var, loc, learn=True)
    expr = word_expr(a.value, stmt, names)
    values = {s: v for s, v in defaults.items() if s in expr.free_symbols}
    bad = constant_problem(expr, values, (var,))
    if bad is not None:
        raise NetlistError(f"law {form.key}={{{value_text(a.value)}}} of {prefix + stmt.head.text} has a term with no "
                           f"finite real value at the parameters' defaults: {bad[1]}", loc,
                           hint="check the parameters the law uses and the arguments of exp, sqrt, log and powers")
    if expr.free_symbols <= set(values) | {var} and len(nonreal_points(expr, var, values)) == len(GRID):
        raise NetlistError(f"law {form.key}={{{value_text(a.value)}}} of "
                           f"{prefix + stmt.head.text} is not a real number for any real {var} "
                           f"(sampled from -1e3 to 1e3)", loc,
                           hint="a law must be real-valued: check the arguments of sqrt, log, asin, acos and "
                                "fractional powers")
    return Law(form.key, expr, var, loc)
