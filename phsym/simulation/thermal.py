"""The entropy balance of a run with thermal elements.

Energy is what the port-Hamiltonian balance books (``result.balance``); a
thermal network also obeys the second law, which the energy balance does
not show: heat transfers and Joule heating conserve energy but create
entropy.  Per step, the entropy of the heat capacities changes by what the
elements create plus what the sources bring in,

    (S[k+1] - S[k]) / h = sigma[k] + supplied[k],

exactly for a step of phsym's schemes (the entropy flows meet at every
node as the step's interconnection imposes), and ``sigma >= 0``.
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from ..common.schemes import get_scheme, step_inputs
from ..components.element import DATUM
from ..errors import SimulationError

__all__ = ["entropy_balance"]


def entropy_balance(result) -> Dict[str, np.ndarray]:
    """Entropy of the heat capacities, entropy created and supplied, and the residual.

    Parameters
    ----------
    result : SimulationResult
        A run of a model with heat capacities (``heat_capacity``).

    Returns
    -------
    dict of str to numpy.ndarray
        ``"S"`` (N + 1,): total entropy of the heat capacities [J/K]
        relative to their reference temperatures; ``"created"`` (N,): the
        entropy created per second by heat transfers and Joule heating
        during each step [W/K] (never negative); ``"supplied"`` (N,): the
        entropy flow the sources deliver into the network [W/K];
        ``"residual"`` (N,): ``diff(S) / h - created - supplied``
        (round-off).

    Raises
    ------
    SimulationError
        When the model has no heat capacity.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("TH1 a 0 heat_capacity C=10 IC=330\\nTH2 b 0 heat_capacity C=20 IC=290\\n"
    ...                 "G1 a b heat_transfer G=2\\n")
    >>> b = entropy_balance(phsym.simulate(m, 10.0, duration=5.0))
    >>> bool(b["created"].min() > 0), float(abs(b["residual"]).max()) < 1e-12
    (True, True)
    """
    elements = result.model.netlist.elements
    kinds = {e.name: e.kind for e in elements}
    caps = [n for n, k in kinds.items() if k == "heat_capacity"]
    if not caps:
        raise SimulationError("entropy_balance: the model has no heat capacity (heat_capacity element)")
    S = np.sum([result[f"s_{n}"] for n in caps], axis=0)
    n_steps = S.size - 1
    created = np.zeros(n_steps)
    supplied = np.zeros(n_steps)
    for e in elements:
        if e.kind == "heat_transfer":
            created -= result[f"i({e.name}.a)"] + result[f"i({e.name}.b)"]
        elif e.kind == "joule":
            created -= result[f"i({e.name}.t)"]
        elif e.kind in ("temperature", "entropy_flow"):
            a, b = e.nodes[:2]
            # flow into a from the datum adds entropy; a source between two nodes only moves it
            into_a = result[f"y({e.name})"] if e.kind == "temperature" else _input(result, e.name)
            supplied += into_a * ((b == DATUM) - (a == DATUM))
    residual = np.diff(S) / result.info["h"] - created - supplied
    return {"S": S, "created": created, "supplied": supplied, "residual": residual}


def _input(result, name: str) -> np.ndarray:
    """The input of a source during each step, by the scheme's input rule."""
    u = np.asarray(result[name], dtype=float)
    return step_inputs(u[:, None], get_scheme(result.info["scheme"]))[:, 0]
