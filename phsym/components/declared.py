"""Declared constraints of element values (positive R and C, |k| < 1, ...) checked at a parameter set.

Each :class:`~phsym.components.Value` may declare a check; :class:`DeclaredChecks` gathers
those of a netlist once and evaluates them at any parameter set, in floats (sympy's
``evalf`` overflows mpmath on ``exp(exp(...))``), remembering the last value each
check passed so that a sweep, which moves a few parameters, re-checks only those.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import sympy as sp

from ..common.bounded import NotReal, real_value
from ..errors import StructureError
from .component import REGISTRY

__all__ = ["DeclaredChecks"]


class DeclaredChecks:
    """The declared value checks of a netlist's elements.

    Parameters
    ----------
    elements : iterable of ElementSpec
        The netlist's elements (``name``, ``kind``, ``values``).
    """

    def __init__(self, elements: Iterable):
        self.items: List[Tuple[str, object, sp.Expr]] = [
            (spec.name, v, sp.sympify(spec.values[v.key]))
            for spec in elements for v in REGISTRY[spec.kind].values
            if v.check is not None and v.key in spec.values]
        self._ok: Dict[int, float] = {}        # the last value each check passed

    def depending_on(self, symbols: set) -> List[int]:
        """Indices of the checks whose expression uses any of ``symbols``."""
        return [i for i, (_, _, expr) in enumerate(self.items) if expr.free_symbols & symbols]

    def __call__(self, values: Mapping[sp.Symbol, float], only: Optional[Sequence[int]] = None) -> None:
        """Raise a :class:`StructureError` naming the element if a value breaks its declared
        constraint at ``values``; ``only`` the checks of these indices."""
        for i in range(len(self.items)) if only is None else only:
            name, decl, expr = self.items[i]
            if expr.is_Symbol and expr in values:      # the common case, without sympy arithmetic
                v = float(values[expr])
                if self._ok.get(i) == v:      # a sweep varies a few values: the others pass as before
                    continue
            else:
                try:
                    v = real_value(expr, values)
                except NotReal as exc:
                    raise StructureError(f"value {decl.key} of {name} is not a finite real number: {exc}",
                                         [name], hint="check the expression and the parameter values") from None
            problem = decl.problem(v)
            if problem:
                raise StructureError(f"value {decl.key} of {name} {problem}", [name],
                                     hint="such a value has no passive meaning; "
                                          "remove the element or use a nonlinear law")
            self._ok[i] = v
