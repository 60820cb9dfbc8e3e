"""An element's contribution to a model, its symbolic work bounded (:mod:`phsym.common.bounded`)."""
from __future__ import annotations

from typing import Mapping

import sympy as sp

from ..common.bounded import TIMEOUT_ENV, deadline
from ..errors import PhsymError, StructureError
from .base import Contribution
from .component import REGISTRY

__all__ = ["contribute"]


def contribute(spec, defaults: Mapping[sp.Symbol, float]) -> Contribution:
    """The element's contribution, its symbolic work (integrating a law, deciding passivity) under the
    time budget of :mod:`phsym.common.bounded`; sympy's and arithmetic errors on the element's values
    and laws become a :class:`StructureError` naming it."""
    law = f" {spec.law.key}={{{spec.law.expr}}}" if getattr(spec, "law", None) is not None else ""
    law = law if len(law) < 200 else law[:196] + "...}"

    def slow(seconds: float) -> StructureError:
        return StructureError(f"the symbolic work on {spec.name}'s law{law} took more than {seconds:g} s",
                              [spec.name], hint=f"give the law in a simpler form, or raise {TIMEOUT_ENV}")
    try:
        with deadline(slow):
            return REGISTRY[spec.kind](spec, defaults).contribute()
    except PhsymError:
        raise
    except (ArithmeticError, ValueError, TypeError, RecursionError, sp.polys.polyerrors.PolynomialError) as exc:
        raise StructureError(f"cannot build {spec.name}{law}: {type(exc).__name__}: {str(exc)[:200]}",
                             [spec.name], hint="check the element's values and law") from None
