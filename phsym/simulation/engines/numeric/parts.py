"""What a numeric run needs besides its loop: waveforms, initial state, state scales, signals.

The symbolic plans read these from the Dirac structure
(:mod:`phsym.simulation.plancache`, :mod:`phsym.simulation.initial`,
:mod:`phsym.simulation.probes`); :class:`NumericParts` computes the same
numbers from the circuit data, per element and without sympy matrices:

* a state's scale is where its own gradient first reaches 1 in magnitude
  (:func:`phsym.simulation.initial.state_scales`): ``1 / |Q_ii|`` for a linear
  storage, the crossing of its gradient kernel for a nonlinear one, ``min
  |x(+-1)|`` for a law solved through its effort;
* the netlist's ``IC=`` values are gradients: a linear storage's state is
  ``Q^-1 ic``, a nonlinear one's is found by Newton on its gradient kernel;
* every signal label (``v(node)``, ``v(a,b)``, ``i(R1)``, ``v(R1)``, ``y(V1)``)
  is one entry or a difference of entries of the recorded step vector
  ``[potentials, branch currents, inputs]``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, List, Mapping, Tuple

import numpy as np

from ....common.crossing import crossing
from ....common.names import NameTable
from ....errors import SignalError, SimulationError, StructureError
from ....structure.circuit.values import linear_hessians, placeholder_values
from ....structure.labels import names_node, node_domains, parse_probe, probe_domain, settle
from .kernels_py import call

if TYPE_CHECKING:       # a circuit described by numbers is planned without sympy
    import sympy as sp

    from ....structure.circuit.data import CircuitData

__all__ = ["NumericParts"]


def _ic_value(ic, values):
    """An ``IC=`` value at ``values``: a number as it is (a circuit described by numbers), an
    expression evaluated (``None`` when it is not a finite real number)."""
    if isinstance(ic, (int, float)):
        return float(ic) if np.isfinite(ic) else None
    import sympy as sp

    from ....netlist.params import finite_value
    return finite_value(sp.sympify(ic), values)


class NumericParts:
    """Parameter-dependent numbers of a circuit's plans (see the module docstring).

    Parameters
    ----------
    c : CircuitData
        The circuit.
    """

    def __init__(self, c: CircuitData):
        self.c = c
        self.no_ic = not any(ic is not None for s in c.storages for ic in s.record.initial)
        self._branches = NameTable(((b.name, k) for k, b in enumerate(c.branches)), what="branch")
        for k, b in enumerate(c.branches):      # an element's name means its first branch
            if b.element not in self._branches:
                self._branches.set(b.element, k)
        self._nodes = NameTable(((n, k) for k, n in enumerate(c.nodes)), what="node")
        self._node_domains = None
        self._inputs = NameTable(((n, k) for k, n in enumerate(c.inputs)), what="source")

    # ---------------------------------------------------------------- waveforms
    def waveforms(self, values: Mapping[sp.Symbol, float]) -> list:
        """Per source: ``None``, ``(shape, numeric arguments)`` or the error of an invalid waveform (a
        circuit described by numbers holds the pair already)."""
        def numbers(w):
            return None if w is None else (w[0], np.asarray(w[1], dtype=float))
        waves = [p.record.waveform for p in self.c.ports]
        if all(w is None or isinstance(w, tuple) for w in waves):     # none, or numbers already
            return [numbers(w) for w in waves]
        from ...plancache import FixedParts
        return [numbers(w) if w is None or isinstance(w, tuple) else FixedParts.wave(w, values) for w in waves]

    # ---------------------------------------------------------------- states
    def scales(self, values: Mapping[sp.Symbol, float]) -> np.ndarray:
        """The state scales (see the module docstring)."""
        from ....codegen.laws.build import effort_state_kernel, gradient_kernel
        out = np.ones(self.c.n_x)
        hessians = linear_hessians(self.c.storages, values)
        for s, Q in zip(self.c.storages, hessians):
            if s.linear:
                for a, i in enumerate(s.states):
                    if Q[a, a] != 0.0:
                        out[i] = 1.0 / abs(Q[a, a])
                continue
            P = placeholder_values([s.placeholders], values, [s.element])
            if s.by_effort:
                k = effort_state_kernel(s.form, s.element)
                xs = [abs(call(k, P, np.array([[e]]))[0, 0]) for e in (1.0, -1.0)]
                xs = [v for v in xs if np.isfinite(v) and v > 0]
                if xs:
                    out[s.states[0]] = min(xs)
                continue
            k = gradient_kernel(s.form, len(s.states), s.element)
            n = len(s.states)
            for a, i in enumerate(s.states):
                def g(zz, a=a):
                    x = np.zeros(n)
                    x[a] = zz
                    return float(call(k, P, x[None, :])[0, a])
                found = [z for z in (crossing(lambda zz: g(zz) - 1.0), crossing(lambda zz: -g(-zz) - 1.0))
                         if z is not None and np.isfinite(z) and z > 0]
                if found:
                    out[i] = min(found)
        return out

    def _hessian(self, s, values) -> np.ndarray:
        return linear_hessians([s], values)[0]

    def initial(self, values: Mapping[sp.Symbol, float]) -> Tuple[np.ndarray, List[str]]:
        """States whose gradient is the netlist's ``IC=`` (zero elsewhere), and the elements set."""
        from ....codegen.laws.build import effort_state_kernel, gradient_kernel
        x0 = np.zeros(self.c.n_x)
        done: List[str] = []
        for s in self.c.storages:
            ics = s.record.initial
            if all(ic is None for ic in ics):
                continue
            target = np.zeros(len(ics))
            for a, ic in enumerate(ics):
                if ic is not None:
                    v = _ic_value(ic, values)
                    if v is None:
                        raise SimulationError(f"initial condition IC={ic} of {s.element} is not a finite real "
                                              "number with these parameter values", quantity=s.element)
                    target[a] = v
            idx = list(s.states)
            if s.linear:
                x0[idx] = np.linalg.solve(self._hessian(s, values), target)
            elif s.by_effort:
                P = placeholder_values([s.placeholders], values, [s.element])
                x0[idx[0]] = call(effort_state_kernel(s.form, s.element), P, np.array([[target[0]]]))[0, 0]
            else:
                x0[idx] = self._invert(s, gradient_kernel(s.form, len(idx), s.element), values, target)
            done += list(s.record.elements)
        return x0, done

    @staticmethod
    def _invert(s, k, values, target: np.ndarray) -> np.ndarray:
        """Newton (damped) on ``grad H(x) = target`` through the gradient kernel."""
        P = placeholder_values([s.placeholders], values, [s.element])
        n = target.size
        x = np.sign(target + 1e-300) * np.maximum(np.abs(target), 1.0) * 1e-3
        for _ in range(200):
            out = call(k, P, x[None, :])[0]
            g, H = out[:n], out[n:].reshape(n, n)
            r = g - target
            if np.all(np.abs(r) <= 1e-12 * (np.abs(target) + 1e-12)):
                return x
            try:
                dx = np.linalg.solve(H, -r)
            except np.linalg.LinAlgError:
                break
            lam = 1.0
            while lam > 1e-6:
                xn = x + lam * dx
                gn = call(k, P, xn[None, :])[0, :n]
                if np.all(np.isfinite(gn)) and np.linalg.norm(gn - target) < np.linalg.norm(r):
                    break
                lam *= 0.5
            x = xn
        raise SimulationError(f"cannot invert the initial condition of {s.element}", quantity=s.element)

    # ---------------------------------------------------------------- signals
    def _probe_domain(self, p):
        """Domain of what a probe names (a quantity's name, ``T(t1)``, is read on it)."""
        if self._node_domains is None:
            self._node_domains = node_domains(self.c.branches)
        return probe_domain(self._node_domains, self.c.branches, p)

    def probe(self, label: str, n_nodes: int) -> np.ndarray:
        """Vector ``c`` with ``signal = step_vector @ c`` (the step vector ``[potentials, branch
        currents, inputs]`` of :mod:`.stepping`).

        Parameters
        ----------
        label : str
            ``v(out)``, ``v(a,b)``, ``i(R1)``, ``v(R1)`` or ``y(V1)``.
        n_nodes : int
            Number of node potentials (the circuit's non-datum nodes).
        """
        c = self.c
        nb = len(c.branches)
        out = np.zeros(n_nodes + nb + len(c.ports))
        try:
            p = settle(parse_probe(label), label, self._probe_domain)
            if p.quantity == "y":
                j = self._inputs.lookup(p.first, SignalError, hint=f"signal {label!r}")
                port = c.ports[j]
                if port.across:
                    out[n_nodes + port.branch] = -1.0
                else:
                    self._branch_voltage(port.branch, out, -1.0)
                return out
            if p.second is None and p.first in self._branches and not names_node(p, self._nodes):
                b = self._branches[p.first]
                if p.quantity == "i":
                    out[n_nodes + b] = 1.0
                else:
                    self._branch_voltage(b, out, 1.0)
                return out
            if p.quantity == "i":
                raise SignalError(f"signal {label!r}: no element {p.first!r}")
            for name, sign in ((p.first, 1.0), (p.second, -1.0)):
                if name is None or name == "0":
                    continue
                if name not in self._nodes:
                    raise SignalError(f"unknown node {name!r}")
                out[self._nodes[name]] += sign
            return out
        except StructureError as exc:
            raise SignalError(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None

    def _branch_voltage(self, b: int, out: np.ndarray, sign: float) -> None:
        if self.c.b_from[b] >= 0:
            out[self.c.b_from[b]] += sign
        if self.c.b_to[b] >= 0:
            out[self.c.b_to[b]] -= sign
