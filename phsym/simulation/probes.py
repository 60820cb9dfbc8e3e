"""Probe labels (``v(out)``, ``v(a,b)``, ``i(R1)``, ``v(R1)``) as linear maps of e and f."""
from __future__ import annotations

import re
from typing import Tuple

import numpy as np
import sympy as sp

from ..errors import SimulationError

__all__ = ["probe_coefficients"]

_LABEL = re.compile(r"^\s*([vi])\s*\(\s*([^,()]+?)\s*(?:,\s*([^,()]+?)\s*)?\)\s*$", re.I)


def _add(out_e, out_f, combo, sign, values):
    for (kind, idx), coef in combo.items():
        coef = sp.sympify(coef)
        c = float(coef.xreplace({s: values[s] for s in coef.free_symbols if s in values})) * sign
        (out_e if kind == "e" else out_f)[idx] += c


def probe_coefficients(model, label: str, values) -> Tuple[np.ndarray, np.ndarray]:
    """Coefficients ``(ce, cf)`` with ``probe = ce . e + cf . (J e)``."""
    S = model.structure
    m = _LABEL.match(label)
    if not m:
        raise SimulationError(f"cannot read probe label {label!r} (expected v(NODE), v(N1,N2), i(EL), v(EL))")
    q, a, b = m.group(1).lower(), m.group(2), m.group(3)
    ce, cf = np.zeros(S.size), np.zeros(S.size)
    elements = {br.element.lower(): k for k, br in reversed(list(enumerate(S.branches)))}
    names = {br.name.lower(): k for k, br in enumerate(S.branches)}
    if b is None and (a.lower() in names or a.lower() in elements):
        k = names.get(a.lower(), elements.get(a.lower()))
        across, through = S.branch_map(k)
        _add(ce, cf, across if q == "v" else through, 1.0, values)
        return ce, cf
    if q != "v":
        raise SimulationError(f"probe {label!r}: no element {a!r}")
    try:
        _add(ce, cf, S.node_potential(a), 1.0, values)
        if b is not None:
            _add(ce, cf, S.node_potential(b), -1.0, values)
    except Exception as exc:
        raise SimulationError(f"probe {label!r}: {exc}") from None
    return ce, cf
