"""DC transfer function (SPICE's ``.tf OUTVAR INSRC``): small-signal gain, input and output resistance.

At the DC operating point (:mod:`.point`) the small-signal model
(:func:`phsym.structure.smallsignal.small_signal`) at zero frequency gives,
as ngspice computes them:

* the transfer function: ``OUTVAR`` per unit of ``INSRC``;
* the input resistance seen by ``INSRC``: ``dv / di`` of a current source,
  ``-1 / (di / dv)`` of a voltage source (its SPICE current ``i``; 1e20
  when no current flows);
* the output resistance: for ``V(a,b)`` the voltage a unit current drawn
  from ``a`` into ``b`` makes (a test current source ``TF#out`` added to the
  netlist, 0 A at DC), for ``I(VX)`` ngspice's ``1 / max(1e-20, di/dv)``
  of ``VX`` itself (1e20 when its current falls as its voltage rises).

>>> import phsym
>>> m = phsym.parse("VIN 1 0 DC 1\\nR1 1 2 1k\\nR2 2 0 3k\\n")
>>> r = transfer_function(m, "v(2)", "VIN")
>>> [round(v, 9) for v in (r.gain, r.input_resistance, r.output_resistance)]
[0.75, 4000.0, 750.0]
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Mapping, Optional

import numpy as np
import sympy as sp

from ...errors import SignalError, SimulationError
from ...structure.probes import parse_probe

__all__ = ["TfResult", "transfer_function", "TEST_SOURCE"]

#: the test current source an output voltage's resistance is measured with
TEST_SOURCE = "TF#out"


@dataclass
class TfResult:
    """The three numbers of ``.tf``, with the names ngspice prints them under.

    Attributes
    ----------
    output, source : str
        ``OUTVAR`` and ``INSRC``.
    gain, input_resistance, output_resistance : float
    """

    output: str
    source: str
    gain: float
    input_resistance: float
    output_resistance: float

    def as_dict(self) -> Dict[str, float]:
        """``{"transfer_function": ..., "vin#input_impedance": ..., "output_impedance_at_v(5)": ...}``
        (``vx#output_impedance`` for a current output), ngspice's names."""
        p = parse_probe(self.output)
        out = (f"{p.first.lower()}#output_impedance" if p.quantity == "i"
               else f"output_impedance_at_{self.output.lower()}")
        return {"transfer_function": self.gain, f"{self.source.lower()}#input_impedance": self.input_resistance,
                out: self.output_resistance}

    def to_text(self) -> str:
        """The three lines as ngspice prints them (``name = value``)."""
        return "\n".join(f"{k} = {v:.6e}" for k, v in self.as_dict().items())


def _with_test_source(model, nodes):
    """The model with a 0 A current source from ``nodes[0]`` to ``nodes[1]`` (the test current)."""
    from ...components import ElementSpec, Waveform
    from ...model import Model
    spec = ElementSpec(TEST_SOURCE, "isource", tuple(nodes), {}, waveform=Waveform("dc", (sp.Integer(0),)))
    return Model(dataclasses.replace(model.netlist, elements=list(model.netlist.elements) + [spec]))


def transfer_function(model, output: str, source: str, params: Optional[Mapping[str, float]] = None,
                      engine: str = "auto") -> TfResult:
    """SPICE's ``.tf OUTPUT SOURCE`` (see the module docstring).

    Parameters
    ----------
    model : Model, str or pathlib.Path
        A model or a netlist file.
    output : str
        ``v(a)``, ``v(a,b)`` or ``i(VX)`` (``VX`` a voltage source).
    source : str
        The input source (voltage or current).
    params : mapping of str to float, optional
        Parameter overrides by name.
    engine : str
        ``"symbolic"``, ``"numeric"`` (the numeric engine's sparse small-signal equations) or
        ``"auto"`` (numeric above :data:`~phsym.model.SYMBOLIC_LIMIT` branches).

    Raises
    ------
    SignalError
        An unknown source, output or node.
    SimulationError
        No DC solution, or a singular small-signal system (a node without a DC path).
    """
    from ...model import load
    from ...structure.smallsignal import small_signal
    from .point import dc_inputs, dc_point, numeric_small_signal, signal_vectors, use_numeric
    if isinstance(model, (str, Path)):
        model = load(model)
    probe = parse_probe(output)
    if probe.quantity not in ("v", "i"):
        raise SignalError(f".tf output {output!r}: write V(node), V(n1,n2) or I(Vsource)")
    voltage = probe.quantity == "v"
    if voltage:
        model = _with_test_source(model, (probe.first, probe.second or "0"))
    names = [str(u).lower() for u in model.inputs]
    for what, name in (("input", source), ("output", probe.first if not voltage else source)):
        if name.lower() not in names:
            raise SignalError(f".tf {what} {name!r} is not a source; sources: "
                              + ", ".join(str(u) for u in model.inputs if str(u) != TEST_SOURCE))
    values = model.parameter_values(params)
    if use_numeric(model, engine):
        ns, probe_of = numeric_small_signal(model, values)

        def response(col: int, labels):
            du = np.zeros(len(names))
            du[col] = 1.0
            vec = ns.step_vectors(np.zeros(1), du)[0].real
            return [float(vec @ probe_of(k)) for k in labels]
        return _result(model, output, source, names, response)
    pt = dc_point(model, values, dc_inputs(model, values))
    ss = small_signal(model.structure, values, pt.x, pt.w, pt.lam, pt.u)
    n = ss.A.shape[0]

    def response(col: int, labels):
        du = np.zeros(len(names))
        du[col] = 1.0
        try:
            xi = np.linalg.solve(-ss.A, ss.B @ du)
        except np.linalg.LinAlgError:
            raise SimulationError("the small-signal system is singular at DC (a node without a DC path?)",
                                  step=0, time=0.0) from None
        e = ss.M @ xi
        return [float(c[:n] @ e + c[n:] @ du) for c in signal_vectors(model, values, labels).values()]
    return _result(model, output, source, names, response)


def _result(model, output: str, source: str, names, response) -> TfResult:
    """The three numbers from ``response(input column, labels)`` (signals for a unit input)."""
    probe = parse_probe(output)
    voltage = probe.quantity == "v"
    j = names.index(source.lower())
    src = str(model.inputs[j])
    current_source = model.netlist.element(src).kind == "isource"
    gain, dy = response(j, [output, f"y({src})"])
    rin = dy if current_source else (1e20 if abs(dy) < 1e-20 else 1.0 / dy)
    if voltage:
        (rout,) = response(names.index(TEST_SOURCE.lower()), [f"v({probe.second or '0'},{probe.first})"])
    elif probe.first.lower() == source.lower():
        rout = rin
    else:
        k = names.index(probe.first.lower())
        (y,) = response(k, [f"y({model.inputs[k]})"])
        rout = 1.0 / max(1e-20, -y)         # SPICE's current of the source is -y
    return TfResult(output, source, gain, rin, rout)
