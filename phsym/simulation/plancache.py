"""The parts of a run plan that no parameter changes, computed once per model.

A parameter sweep or a fit builds a :class:`~phsym.simulation.plan.RunPlan`
per parameter set; most of what a plan holds does not depend on the
parameters in most models: the numeric ``J`` (constant unless a two-port's
ratio is a parameter), the probe vectors built from it, and waveforms
written with numbers.  :class:`FixedParts` keeps those, so a new plan only
recomputes what the parameters reach (bit-identical results: the cached
numbers are the ones a fresh computation gives).
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional

import numpy as np
import sympy as sp

from ..errors import NetlistError
from ..netlist.waveforms import waveform_arguments
from ..structure.dirac import Structure
from ..structure.probes import probe_map
from .probes import probe_vector

__all__ = ["FixedParts"]


class FixedParts:
    """Parameter-free parts of the plans of one structure.

    Parameters
    ----------
    S : Structure
        The model's structure.
    """

    def __init__(self, S: Structure):
        self.S = S
        self.J_constant = not any(sp.sympify(v).free_symbols for v in S.J.values())
        self._Jn = None
        self._probes: Dict[str, np.ndarray] = {}
        #: no storage has a netlist IC: every set starts from zero (initial_from_ic's answer, without its work)
        self.no_ic = not any(ic is not None for st in S.storages for ic in st.initial)
        self._waves: List[Optional[tuple]] = []
        for port in S.ports:
            wf = port.waveform
            fixed = wf is not None and not any(sp.sympify(a).free_symbols for a in wf.args)
            self._waves.append(self.wave(wf, {}) if fixed else None)

    @staticmethod
    def wave(wf, values: Mapping[sp.Symbol, float]):
        """``(shape, numeric arguments)`` of a waveform at ``values``, or its error (raised when used).

        Parameters
        ----------
        wf : Waveform
            A netlist waveform.
        values : mapping of sympy.Symbol to float
            Parameter values.
        """
        try:
            return (wf.shape.lower(), waveform_arguments(wf, values))
        except NetlistError as exc:      # reported when the waveform is used, not before
            return exc

    def J(self, values: Mapping[sp.Symbol, float]):
        """``J`` at ``values`` (computed once when it has no parameter).

        Parameters
        ----------
        values : mapping of sympy.Symbol to float
            Parameter values.
        """
        if not self.J_constant:
            return self.S.J_numeric(values)
        if self._Jn is None:
            self._Jn = self.S.J_numeric(values)
        return self._Jn

    def waveforms(self, values: Mapping[sp.Symbol, float]) -> list:
        """Per port: ``None``, ``(shape, numeric arguments)`` or the error of an invalid waveform.

        Parameters
        ----------
        values : mapping of sympy.Symbol to float
            Parameter values.
        """
        out = []
        for port, cached in zip(self.S.ports, self._waves):
            if port.waveform is None:
                out.append(None)
            elif cached is not None:
                out.append(cached)
            else:
                out.append(self.wave(port.waveform, values))
        return out

    def probe_is_fixed(self, label: str) -> bool:
        """Whether the vector of ``label`` is the same for every parameter set (kept once computed).

        Parameters
        ----------
        label : str
            Signal label.
        """
        return label in self._probes

    def probe(self, label: str, values: Mapping[sp.Symbol, float], Jn) -> np.ndarray:
        """:func:`~phsym.simulation.probes.probe_vector`, kept when nothing in it is a parameter.

        Parameters
        ----------
        label : str
            Signal label.
        values : mapping of sympy.Symbol to float
            Parameter values.
        Jn : scipy.sparse matrix
            ``J`` at ``values``.
        """
        hit = self._probes.get(label)
        if hit is not None:
            return hit
        vec = probe_vector(self.S, label, values, Jn)
        if self.J_constant and not any(sp.sympify(c).free_symbols for c in probe_map(self.S, label).values()):
            vec.setflags(write=False)
            self._probes[label] = vec
        return vec
