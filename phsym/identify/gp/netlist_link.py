"""EffortGP from a phsym model: the structure of the netlist's descriptor form
with the laws of some storage elements to be learned."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

import numpy as np

from ...errors import IdentificationError

__all__ = ["structure_from_model", "element_law"]


def structure_from_model(model: Any, learn: Optional[Sequence[str]] = None, x_op: Optional[Mapping[str, float]] = None,
                         params: Optional[Mapping[str, float]] = None) -> Dict[str, Any]:
    """``E, J, R, B``, variable names and learned-state indices of a model's descriptor form.

    Parameters
    ----------
    model : phsym.Model
        The model (its nonlinear storage laws are only used for the
        operating point of the descriptor matrices; ``J``, ``B``, ``E`` do not
        depend on laws and ``R`` holds the resistances of linear dissipative
        elements).
    learn : sequence of str, optional
        Storage elements whose law is learned (default: those written
        ``H=learn`` in the netlist).
    x_op : mapping of str to float, optional
        Storage states of the operating point (default 1 for every state:
        laws such as ``q^(3/2)`` have no finite Hessian at 0).
    params : mapping of str to float, optional
        Parameter overrides.

    Returns
    -------
    dict
        ``E, J, R, B`` (dense), ``names`` (the descriptor variables ``xi``,
        data columns in this order) and ``storage`` (indices of the learned
        states).

    Raises
    ------
    IdentificationError
        For an element that is not a storage of the model, or a nonlinear
        dissipative law (its resistance would depend on the operating point).
    """
    from ...structure.linearize import descriptor_matrices

    marked = [el.name for el in model.netlist.elements if el.law is not None and el.law.learn]
    resistive = [el.name for el in model.netlist.elements if el.law is not None and el.law.learn and el.law.key != "H"]
    if resistive:
        storages = list(dict.fromkeys(str(el) for el in list(learn or []) + marked if el not in resistive))
        raise IdentificationError(_joint_message(resistive, storages))
    if not learn:
        learn = marked
        if not learn:
            raise IdentificationError("no element to learn: name them (learn=[...]) or write H=learn in the netlist")
    S = model.structure
    values = model.parameter_values(params)
    for d in S.dissipative:
        import sympy as sp
        if sp.diff(d.z, d.w, 2) != 0:
            raise IdentificationError(f"{d.element} has a nonlinear law: EffortGP needs a constant R "
                                      "(learn that element's law, or linearise it explicitly)")
    by_element = {}
    for st in S.storages:
        for el, x in zip(st.elements, st.states):
            by_element[el.upper()] = str(x)
    x_vec = np.array([float((x_op or {}).get(str(x), 1.0)) for x in S.states])
    dm = descriptor_matrices(S, values, x_op=x_vec)
    names = list(dm.names)
    storage = []
    for el in learn:
        state = by_element.get(str(el).upper())
        if state is None:
            hint = ("; for a dissipative law use DissipativeLawGP" if any(
                d.element.upper() == str(el).upper() for d in S.dissipative) else "")
            raise IdentificationError(f"{el!r} is not a storage element of the model; storages: "
                                      f"{', '.join(sorted(by_element))}{hint}")
        storage.append(names.index(state))
    return {"E": dm.E, "J": dm.J, "R": dm.R, "B": dm.B, "names": names, "storage": storage}


def _joint_message(resistive: Sequence[str], storages: Sequence[str]) -> str:
    """Why a dissipative law cannot be learned by EffortGP, and the route that works."""
    res = ", ".join(resistive)
    if not storages:
        return (f"the dissipative law of {res} is to be learned: EffortGP needs a constant R; learn it with "
                "phsym.identify.gp.DissipativeLawGP (port_samples) once the other laws are known")
    return (f"{', '.join(storages)} and the dissipative law of {res} cannot be learned jointly: in EffortGP's "
            "form E x' = (J - R) z(x) + B u with constant R the port variable of a nonlinear resistor would be "
            "one effort in both its own law and the network equations, so no effort fits the data.  Learn in "
            f"two steps: (1) learn {', '.join(storages)} with EffortGP on a copy of the netlist where {res} is "
            "replaced by a source driven by its measured port variable (current source for I=learn, voltage "
            f"source for V=learn; that data column becomes an input); (2) put the learned law(s) into the "
            f"netlist and learn {res} with phsym.identify.gp.DissipativeLawGP from port_samples")


def element_law(gp: Any, element_state: str, variable: str) -> str:
    """Netlist text ``H={...}`` of the learned law of one storage state.

    Parameters
    ----------
    gp : EffortGP
        Fitted with ``variant="energy"`` and names (see :meth:`EffortGP.from_model`).
    element_state : str
        The state's name, e.g. ``"q_C1"``.
    variable : str
        The law's variable in the netlist (``q`` for a capacitor).
    """
    import sympy as sp

    from .laws import hamiltonian_expression, law_text

    if gp.names is None:
        raise IdentificationError("the estimator has no state names: build it with EffortGP.from_model")
    names = [str(n) for n in gp.names]
    hin = [names[i] for i in gp.posterior_.layout.hin]
    if hin != [element_state]:
        raise IdentificationError(f"the learned Hamiltonian depends on {hin}, not on {element_state!r} alone")
    return law_text(hamiltonian_expression(gp, [sp.Symbol(variable, real=True)]), variable)
