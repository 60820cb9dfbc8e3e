"""The numbers of a sweep's parameter sets on the batch path, without a plan per set.

A :class:`~phsym.simulation.plan.RunPlan` holds a set's loop object, its
probe vectors and its name table; the batch path (:mod:`.batch`)
only stacks numbers: per set the initial state from the netlist ICs, the
input waveforms (to check that the reference set's input rows serve it)
and the loop's numbers, for a Newton loop its parameter vector and state
scales, for a small linear model its row of the template's stacks
(:meth:`~phsym.simulation.engines.linear.template.LinearTemplate.stacks`).
:class:`SetNumbers` holds those.  The functions that compute them are the
ones :meth:`~phsym.simulation.Simulator.plan` calls, so a run from them
is bit-identical to a single run.  The reference set (the first good one)
gets a whole plan (:func:`reference_plan`): the batch reads the input
rows and the signal layout from it.
"""
from __future__ import annotations

from typing import List, Mapping, Sequence

import numpy as np

from ...common.schemes import get_scheme
from ...errors import PhsymError
from ..engines.generated import NewtonLoop
from ..engines.linear.engine import INPUT_CODE
from ..plan import RunPlan, _portstart

__all__ = ["SetNumbers", "batch_sets", "reference_plan"]

#: What building a set's numbers may raise: the set's error, reported by its run on the ordinary path.
FAIL = (PhsymError, ArithmeticError, ValueError, RuntimeError, KeyError)


class SetNumbers:
    """What the batch path reads of one parameter set.

    Parameters
    ----------
    values : mapping of sympy.Symbol to float
        Parameter values (of :meth:`~phsym.model.Model.parameter_values`).
    x_ic : ndarray
        Initial state from the netlist ICs.
    x_ic_desc : str
        What ``x_ic`` is.
    waveforms : list
        Per input: ``None``, ``(shape, numeric arguments)`` or an error.
    loop : tuple
        Newton: ``(p, xs)``, parameter vector and state scales; linear:
        ``(arrays, j, ext)``, an entry of
        :meth:`~phsym.simulation.engines.linear.template.LinearTemplate.stacks`.
    """

    __slots__ = ("values", "x_ic", "x_ic_desc", "waveforms", "loop")

    def __init__(self, values: Mapping, x_ic: np.ndarray, x_ic_desc: str, waveforms: list, loop: tuple):
        self.values, self.x_ic, self.x_ic_desc, self.waveforms, self.loop = values, x_ic, x_ic_desc, waveforms, loop

    def probe_vector(self, sim, label: str) -> np.ndarray:
        """``signal = efforts @ vector`` for ``label`` (what the set's plan gives).

        Parameters
        ----------
        sim : Simulator
            The simulator the set belongs to.
        label : str
            Signal label.
        """
        fixed = sim._fixed_parts()
        return fixed.probe(label, self.values, fixed.J(self.values))

    def needs_port_start(self, sim) -> bool:
        """Whether a Newton run of this set starts from the ports its initial state implies
        (:meth:`~phsym.simulation.plan.RunPlan.needs_port_start`).

        Parameters
        ----------
        sim : Simulator
            The simulator the set belongs to.
        """
        if not sim._gen.unknowns:
            return False
        by_name = {name: float(self.values[sym]) for name, sym in sim.model._symbol_items}     # as the plan's
        return _portstart().singular_at_zero(sim.model.structure, by_name)


def batch_sets(sim, rows: Sequence[Mapping[str, float]]) -> List[object]:
    """Per parameter set a :class:`SetNumbers` or the error its plan would raise.

    Parameters
    ----------
    sim : Simulator
        A simulator of a netlist model: Newton, or linear with
        :attr:`~phsym.simulation.Simulator.batched` true.
    rows : sequence of mapping of str to float
        Parameter overrides by name, one mapping per set.
    """
    model = sim.model
    out: List[object] = [None] * len(rows)
    sets = []
    for i, values in enumerate(model.parameter_values_many(rows)):
        if isinstance(values, Exception):
            out[i] = values
        else:
            sets.append((i, values))
    if sim.engine == "generated":
        from .scales_many import state_scales_many
        g = sim._gen
        loops: list = []
        for (i, values), xs in zip(sets, state_scales_many(model.structure, [v for _, v in sets])):
            try:
                loops.append((np.array([values[s] for s in g.parameters], dtype=float), xs))
            except FAIL as exc:
                loops.append(exc)
    else:
        scheme = get_scheme(sim.scheme)
        fixed = sim._fixed_parts()
        loops = sim._template().stacks([v for _, v in sets], fixed.J, True, sim.h, scheme,
                                       INPUT_CODE[scheme.inputs])
    for (i, values), loop in zip(sets, loops):
        try:
            if isinstance(loop, Exception):
                raise loop
            out[i] = SetNumbers(values, *sim.set_parts(values), loop)
        except FAIL as exc:
            out[i] = exc
    return out


def reference_plan(sim, row: Mapping[str, float], s: SetNumbers) -> RunPlan:
    """The whole plan of the set ``s`` (parameter overrides ``row``), as :meth:`Simulator.plan` builds it.

    Parameters
    ----------
    sim : Simulator
        The simulator.
    row : mapping of str to float
        The set's parameter overrides.
    s : SetNumbers
        The set's numbers.
    """
    if sim.engine == "generated":
        g = sim._gen
        loop = NewtonLoop(g.key, g.n_v, g.n_u, g.n_e, sim.model.states, g.unknowns, *s.loop, sim.tol, sim.maxit,
                          False, module=g.module, numerical=g.numerical, stiff=g.stiff)
    else:
        loop = sim._template().loop_of(s.loop, INPUT_CODE[get_scheme(sim.scheme).inputs])
    return sim._model_plan(row, s.values, loop)
