"""The plans of linear models: the fast path's loops, many parameter sets at once, a LinearPHS.

A mix-in of :class:`~phsym.simulation.Simulator` (its linear half): small
linear models build their loop matrices through the per-structure template
(:mod:`.template`, many parameter sets in one call), larger ones through
scipy.sparse (:mod:`.engine`); a numeric :class:`~phsym.structure.linear.LinearPHS`
has no parameters to vary.
"""
from __future__ import annotations

from typing import Sequence, Mapping

import numpy as np

from ....common.schemes import get_scheme
from ....errors import PhsymError, SimulationInputError
from ....structure.linear import LinearPHS
from ....structure.linearize import descriptor_matrices
from ...plan import RunPlan
from ...summary import ModelSummary
from .engine import DENSE_LIMIT, INPUT_CODE, LinearEngine
from .template import linear_template

__all__ = ["LinearPlanning"]


class LinearPlanning:
    """The linear engine's part of a :class:`~phsym.simulation.Simulator` (a mix-in)."""

    def _template(self):
        """The linear template of this simulator's model when its plans use it (else ``None``)."""
        if self.engine != "linear" or isinstance(self.model, LinearPHS):
            return None
        if self._tpl is False:
            S = self.model.structure
            dense = self.linear_solver == "dense" or (self.linear_solver == "auto"
                                                      and S.n_x + S.n_w + S.n_lambda <= DENSE_LIMIT)
            self._tpl = linear_template(S, self.model.parameter_values().keys()) if dense else None
        return self._tpl

    @property
    def batched(self) -> bool:
        """Whether :meth:`plans` builds the plans of many parameter sets at once (small linear models)."""
        return self._template() is not None and self._fixed_parts().J_constant

    def plans(self, rows: Sequence[Mapping[str, float]]) -> list:
        """The plans of many parameter sets: per set a :class:`RunPlan` or the error building it raised.

        Small linear models build the loop matrices of all sets at once
        (:meth:`~phsym.simulation.engines.linear.template.LinearTemplate.loops`); each plan
        holds the numbers :meth:`plan` gives for its set (a run from either
        is bit-identical).

        Parameters
        ----------
        rows : sequence of mapping of str to float
            Parameter overrides by name, one mapping per set.
        """
        out: list = [None] * len(rows)
        tpl = self._template()
        if not self.batched:
            for i, row in enumerate(rows):
                try:
                    out[i] = self._model_plan(row) if not isinstance(self.model, LinearPHS) else self.plan(row)
                except (PhsymError, ArithmeticError, ValueError) as exc:
                    out[i] = exc
            return out
        fixed, scheme = self._fixed_parts(), get_scheme(self.scheme)
        sets = []
        for i, (row, values) in enumerate(zip(rows, self.model.parameter_values_many(rows))):
            if isinstance(values, Exception):
                out[i] = values
            else:
                sets.append((i, row, values))
        loops = tpl.loops([v for _, _, v in sets], fixed.J, True, self.h, scheme, INPUT_CODE[scheme.inputs])
        for (i, row, values), loop in zip(sets, loops):
            try:
                if isinstance(loop, Exception):
                    raise loop
                out[i] = self._model_plan(row, values, loop)
            except (PhsymError, ArithmeticError, ValueError) as exc:
                out[i] = exc
        return out

    def _linear_loop(self, values, Jn, J_constant: bool):
        """The linear loop at ``values``: small models through the per-structure
        :class:`~phsym.simulation.engines.linear.template.LinearTemplate` (dense numpy), others through scipy.sparse."""
        S, scheme = self.model.structure, get_scheme(self.scheme)
        n, u0 = S.size, S.block("u").start
        tpl = self._template()
        if tpl is not None:
            loop = tpl.loops([values], lambda v: Jn, J_constant, self.h, scheme, INPUT_CODE[scheme.inputs])[0]
            if isinstance(loop, Exception):
                raise loop
            return loop
        d = descriptor_matrices(S, values, sparse=True)
        import scipy.sparse as sps      # here: a nonlinear circuit's run needs no scipy
        Ce = sps.csr_matrix((np.ones(len(d.kept)), (d.kept, np.arange(len(d.kept)))), shape=(n, len(d.kept)))
        Cu = sps.csr_matrix((np.ones(S.n_u), (np.arange(u0, n), np.arange(S.n_u))), shape=(n, S.n_u))
        return LinearEngine(d.E, d.J, d.R, d.Q, d.B, self.h, scheme, self.linear_solver,
                            efforts=(Ce @ d.Q, Cu), feedthrough=(d.S, d.N)).loop()

    def _numeric_plan(self, params) -> RunPlan:
        lin: LinearPHS = self.model
        if params:
            raise SimulationInputError("a LinearPHS has no named parameters to override")
        eng = LinearEngine(lin.E, lin.J, lin.R, lin.Q, lin.B, self.h, get_scheme(self.scheme), self.linear_solver,
                           feedthrough=(lin.S, lin.N))
        diff = self._differential = eng.step.differential
        names = [lin.states[i] for i in diff]
        summary = ModelSummary(repr(lin), names, lin.inputs, lin.outputs, [], None)
        return RunPlan(summary, self.fs, self.scheme, eng.loop(), [None] * lin.n_inputs, np.zeros(diff.size),
                     "zero", {}, False, model=lin)
