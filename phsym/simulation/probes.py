"""Signal labels as numbers: ``signal = efforts @ probe_vector(...)``.

The label is turned into a combination of efforts and flows by
:func:`phsym.structure.probes.probe_map`; with the numeric ``J`` (``f = J e``)
the flows fold into the efforts, so every recorded signal is one dot
product with the effort vector of a step.
"""
from __future__ import annotations

from typing import Mapping, Optional

import numpy as np
import sympy as sp

from ..common.quantities import STATE_NAMES
from ..errors import SignalError, StructureError
from ..structure.dirac import Structure
from ..structure.probes import probe_map, state_label, state_quantities

__all__ = ["probe_vector", "state_signal"]


def state_signal(model, states, label: str) -> Optional[str]:
    """The state a probe-form label names (``x(K1)``, ``q(C1)``), else ``None``.

    Parameters
    ----------
    model : Model, ModelSummary or LinearPHS
        The simulated model (a quantity form checks the state's quantity when it has its physics).
    states : sequence of str
        The state names.
    label : str
        A signal label.

    Raises
    ------
    SignalError
        A state form naming no state, or the wrong quantity.
    """
    word = label.split("(")[0].strip().lower()
    if not states or word not in STATE_NAMES:
        return None
    quantity = None
    if word != "x":                   # a quantity form (q(C1)) checks the physics
        full = model.full_model() if hasattr(model, "full_model") else model
        if hasattr(full, "_records"):
            quantity = state_quantities(full.topology, full._records[0]).get
    try:
        return state_label(label, states, quantity)
    except StructureError as exc:
        raise SignalError(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None


def probe_vector(S: Structure, label: str, values: Mapping[sp.Symbol, float], Jn: "scipy.sparse.spmatrix") -> np.ndarray:
    """Vector ``c`` with ``signal = e @ c`` for every step's effort vector ``e``.

    Parameters
    ----------
    S : Structure
        The structure.
    label : str
        Signal label (``y(V1)``, ``v(out)``, ``v(a,b)``, ``i(R1)``, ``v(R1)``).
    values : mapping of sympy.Symbol to float
        Parameter values.
    Jn : scipy.sparse matrix
        ``J`` at ``values`` (:meth:`Structure.J_numeric`).

    Raises
    ------
    SignalError
        For a label that names nothing in the model.
    """
    try:
        combo = probe_map(S, label)
    except StructureError as exc:
        raise SignalError(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None
    ce, cf = np.zeros(S.size), np.zeros(S.size)
    for (kind, idx), coef in combo.items():
        coef = sp.sympify(coef)
        c = float(coef.xreplace({s: values[s] for s in coef.free_symbols if s in values}))
        (ce if kind == "e" else cf)[idx] += c
    if np.any(cf):
        ce = ce + Jn.T @ cf
    return np.asarray(ce, dtype=float)
