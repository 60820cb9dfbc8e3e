"""An element's contribution to a model, its symbolic work bounded (:mod:`phsym.common.bounded`)."""
from __future__ import annotations

from typing import Mapping

import sympy as sp

from ..common.bounded import TIMEOUT_ENV, deadline
from ..errors import PhsymError, StructureError
from .base import Contribution
from .component import REGISTRY

__all__ = ["contribute"]


def _law_text(spec) -> str:
    """`` H={...}`` of the element's law for a message (cut to 200 characters), or ``""``."""
    if spec.law is None:
        return ""
    text = f" {spec.law.key}={{{spec.law.expr}}}"
    return text if len(text) < 200 else text[:196] + "...}"


def contribute(spec, defaults: Mapping[sp.Symbol, float]) -> Contribution:
    """The element's contribution, its symbolic work (integrating a law, deciding passivity) under the
    time budget of :mod:`phsym.common.bounded`; sympy's and arithmetic errors on the element's values
    and laws become a :class:`StructureError` naming it."""
    def slow(seconds: float) -> StructureError:
        return StructureError(f"the symbolic work on {spec.name}'s law{_law_text(spec)} took more than "
                              f"{seconds:g} s", [spec.name], hint=f"give the law in a simpler form, or raise {TIMEOUT_ENV}")
    try:
        if spec.law is None:        # values only: no symbolic work worth a timer (a large mesh has 10^5 of them)
            return REGISTRY[spec.kind](spec, defaults).contribute()
        with deadline(slow):
            return REGISTRY[spec.kind](spec, defaults).contribute()
    except PhsymError:
        raise
    except (ArithmeticError, ValueError, TypeError, RecursionError, sp.polys.polyerrors.PolynomialError) as exc:
        raise StructureError(f"cannot build {spec.name}{_law_text(spec)}: {type(exc).__name__}: {str(exc)[:200]}",
                             [spec.name], hint="check the element's values and law") from None
