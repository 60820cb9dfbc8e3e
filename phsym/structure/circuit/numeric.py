"""A circuit described by numbers: :class:`CircuitData` without sympy objects.

The numeric engine (:mod:`phsym.simulation.engines.numeric`) reads from a
:class:`~.data.CircuitData` the incidence, the linear coefficients, and per
nonlinear element its law form and placeholders.  :func:`numeric_circuit`
gives the same circuit at one parameter set with every expression replaced
by its number (:func:`~.values.placeholder_values`: the numbers the
engine would compute), every form known by its key alone (its kernels and
junction terms are loaded, not derived: :mod:`phsym.codegen.laws.build`,
:mod:`phsym.codegen.laws.facts`) and the components' records by
:class:`Record` (branches are plain data already).  Such a circuit pickles and
builds its step system in a process that never imports sympy; a form
whose kernels are nowhere to be loaded raises
:class:`~phsym.codegen.laws.build.UnknownForm`.

It is the engine's half of a cold path that does not import sympy;
:mod:`docs/architecture` says what the other half (the elements' numeric
descriptions) still needs.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Mapping, Optional, Sequence, Tuple

from .data import CircuitData, PortItem, TwoPortItem
from .form import Form
from .values import linear_hessians, placeholder_values

if TYPE_CHECKING:
    import sympy as sp

__all__ = ["Record", "numeric_circuit"]


@dataclass(frozen=True)
class Record:
    """What the numeric engine reads of a component's record.

    Attributes
    ----------
    element : str
        The element (a port's name, ``Q1.be``, for a transistor's port).
    elements : tuple of str
        Its elements (coupled inductors: several).
    active, nullator : bool
        A controlled source's output; an ideal op-amp's input.
    initial : tuple of float or None
        Per state, the netlist's ``IC=`` value (a gradient), ``None`` where there is none.
    waveform : tuple, optional
        A source's waveform as ``(shape, numeric arguments)``
        (:meth:`phsym.simulation.plancache.FixedParts.wave`).
    """

    element: str
    elements: Tuple[str, ...]
    active: bool = False
    nullator: bool = False
    initial: Tuple[Optional[float], ...] = ()
    waveform: Optional[tuple] = None


def _form(f: Optional[Form]) -> Optional[Form]:
    return None if f is None else Form(None, f.n_vars, f.n_params, f.key)


def _row(exprs, values, element: str) -> Tuple[float, ...]:
    if not exprs:
        return ()
    return tuple(float(v) for v in placeholder_values([list(exprs)], values, [element])[0])


def numeric_circuit(c: CircuitData, values: Mapping["sp.Symbol", float], waveforms: Sequence = ()) -> CircuitData:
    """The circuit ``c`` at ``values``, described by numbers (see the module docstring).

    Parameters
    ----------
    c : CircuitData
        A circuit built from component records (:meth:`CircuitData.build`).
    values : mapping of sympy.Symbol to float
        Parameter values.
    waveforms : sequence, optional
        Per source, its waveform's ``(shape, numeric arguments)`` or ``None`` (default: none).

    Returns
    -------
    CircuitData
        The same nodes, branches and elements, with numbers in place of expressions.

    Raises
    ------
    ValueError
        For a circuit with control parameters (their numbers move during a run).

    Notes
    -----
    The sources' waveforms are given as numbers (the symbolic ones need sympy to evaluate).
    """
    if c.controls:
        raise ValueError("a circuit with control parameters has no numeric description")
    hessians = linear_hessians(c.storages, values)
    storages = []
    for s, Q in zip(c.storages, hessians):
        ics = tuple(None if ic is None else _row([ic], values, s.element)[0] for ic in s.record.initial)
        rec = Record(s.element, tuple(s.record.elements), initial=ics)
        if s.linear:
            hess = tuple(tuple(float(q) for q in row) for row in Q)
            storages.append(replace(s, record=rec, hessian=hess, compliance=None, form=None, placeholders=()))
        else:
            storages.append(replace(s, record=rec, form=_form(s.form),
                                    placeholders=_row(s.placeholders, values, s.element)))
    dissipations = []
    for d in c.dissipations:
        r = d.record
        rec = Record(d.element, (d.element,), active=bool(r.active), nullator=bool(r.nullator))
        if d.linear:
            coef = _row([d.coefficient], values, d.element)[0]
            dissipations.append(replace(d, record=rec, coefficient=coef, form=None, placeholders=()))
        else:
            dissipations.append(replace(d, record=rec, form=_form(d.form),
                                        placeholders=_row(d.placeholders, values, d.element)))
    waves = list(waveforms) + [None] * (len(c.ports) - len(waveforms))
    ports = [PortItem(Record(p.record.element, (p.record.element,),
                             waveform=None if w is None else (str(w[0]), tuple(float(a) for a in w[1]))),
                      p.branch, p.across) for p, w in zip(c.ports, waves)]
    twoports = [TwoPortItem(Record(t.record.element, (t.record.element,)), t.branch_p, t.branch_s, t.gyrator,
                            _row([t.ratio], values, t.record.element)[0]) for t in c.twoports]
    return CircuitData(list(c.nodes), list(c.branches), c.b_from.copy(), c.b_to.copy(), c.in_tree.copy(), list(c.states),
                       list(c.inputs), storages, dissipations, ports, twoports)
