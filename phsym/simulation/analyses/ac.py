"""Small-signal frequency response at the DC operating point (SPICE's ``.ac``).

The model is linearised at its DC operating point
(:meth:`phsym.Model.linearize`: descriptor form ``E xi' = (J - R) Q xi + B u``
in deviations) and every requested signal is read off the efforts
``(Q xi, u)`` with the same probe vectors the simulator records, so
``v(node)``, ``v(a,b)``, ``i(R1)``, ``v(C1)`` all work.  The excitation is
one input (a source) with unit amplitude, as ``AC 1`` on one source in SPICE.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np

from ...errors import SignalError, SimulationError

__all__ = ["AcResult", "ac_analysis", "frequency_grid"]


def frequency_grid(sweep: str, points: int, fstart: float, fstop: float) -> np.ndarray:
    """Frequencies of a SPICE sweep ``DEC|OCT|LIN N FSTART FSTOP``.

    Parameters
    ----------
    sweep : str
        ``dec`` (N points per decade), ``oct`` (per octave) or ``lin`` (N in all).
    points : int
        N.
    fstart, fstop : float
        First and last frequency in Hz (``0 < fstart <= fstop``).
    """
    kind = sweep.strip().lower()
    if points < 1 or not (0 < fstart <= fstop) or not np.isfinite(fstop):
        raise SimulationError(f"bad sweep: {points} points from {fstart} to {fstop} Hz (need 0 < FSTART <= FSTOP)")
    if kind == "lin":
        return np.linspace(fstart, fstop, points)
    if kind not in ("dec", "oct"):
        raise SimulationError(f"unknown sweep {sweep!r}: use dec, oct or lin")
    per = np.log10(fstop / fstart) * points / (1.0 if kind == "dec" else np.log10(2.0))
    n = int(np.floor(per + 1e-9)) + 1
    return fstart * (fstop / fstart) ** (np.arange(n) / max(per, 1e-300))


@dataclass
class AcResult:
    """Frequency response of signals to one source.

    Attributes
    ----------
    f : ndarray
        Frequencies [Hz].
    source : str
        The excited input.
    response : dict of str to ndarray
        Complex response of each signal per unit of the source.
    """

    f: np.ndarray
    source: str
    response: Dict[str, np.ndarray] = field(default_factory=dict)

    def save(self, path) -> None:
        """Write a CSV table: ``f``, then per signal magnitude [dB] and phase [deg].

        Parameters
        ----------
        path : str or pathlib.Path
            Output file.
        """
        cols, head = [self.f], ["f"]
        for k, h in self.response.items():
            cols += [20 * np.log10(np.maximum(np.abs(h), 1e-300)), np.degrees(np.angle(h))]
            head += [f"dB {k}", f"phase {k}"]
        np.savetxt(path, np.column_stack(cols), delimiter=",", header=",".join(head), comments="")

    def plot(self, path=None, signals: Optional[Sequence[str]] = None):
        """Bode plot (needs matplotlib); returns the figure.

        Parameters
        ----------
        path : str or pathlib.Path, optional
            Image file to write.
        signals : sequence of str, optional
            Signals to draw (default: all).
        """
        from ...errors import MissingDependencyError
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise MissingDependencyError("the Bode plot needs matplotlib (pip install matplotlib)") from None
        fig, (a1, a2) = plt.subplots(2, 1, sharex=True)
        for k in signals or list(self.response):
            h = self.response[k]
            a1.semilogx(self.f, 20 * np.log10(np.maximum(np.abs(h), 1e-300)), label=k)
            a2.semilogx(self.f, np.degrees(np.angle(h)), label=k)
        a1.set_ylabel("magnitude [dB]")
        a2.set_ylabel("phase [deg]")
        a2.set_xlabel("f [Hz]")
        a1.legend()
        a1.set_title(f"response to {self.source}")
        if path is not None:
            fig.savefig(path)
        return fig


def _inputs_at_zero(model, values) -> np.ndarray:
    from ...netlist.waveforms import evaluate_waveform
    u0 = []
    for name in model.inputs:
        wf = model.netlist.element(str(name)).waveform
        u0.append(0.0 if wf is None else float(evaluate_waveform(wf, np.array([0.0]), values)[0]))
    return np.array(u0)


def ac_analysis(model, f, source: Optional[str] = None, signals: Optional[List[str]] = None,
                params: Optional[Mapping[str, float]] = None) -> AcResult:
    """Small-signal response at the DC operating point.

    Parameters
    ----------
    model : Model, str or pathlib.Path
        A model or a netlist file.
    f : array_like
        Frequencies in Hz (see :func:`frequency_grid`).
    source : str, optional
        The excited input (a source name); default: the first input.
    signals : list of str, optional
        Signal labels (default: every node of the netlist, ``v(node)``).
    params : mapping of str to float, optional
        Parameter overrides by name.

    Returns
    -------
    AcResult

    Raises
    ------
    SignalError
        For an unknown source or signal.
    SimulationError
        When the DC problem has no solution.
    """
    from ...model import load
    from ..probes import probe_vector
    from .op import dc_state
    if isinstance(model, (str, Path)):
        model = load(model)
    names = [str(u) for u in model.inputs]
    if not names:
        raise SignalError("the model has no source to excite")
    src = source if source is not None else names[0]
    lower = [n.lower() for n in names]
    if src.lower() not in lower:
        raise SignalError(f"unknown source {src!r}; inputs: {', '.join(names)}")
    j = lower.index(src.lower())
    values = model.parameter_values(params)
    u0 = _inputs_at_zero(model, values)
    x0 = dc_state(model, u0, params)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # a Piecewise law (a diode's junction charge) is evaluated on every
        # branch by numpy; only the selected one is used
        lin = model.linearize(x0=x0, u0=u0, params=params)
    S = model.structure
    if signals is None:
        signals = []
        for el in model.netlist.elements:
            signals += [f"v({n})" for n in el.nodes if n != "0" and f"v({n})" not in signals]
    Jn = S.J_numeric(values)
    vecs = {k: probe_vector(S, k, values, Jn) for k in signals}
    n = lin.n_states
    f = np.asarray(f, dtype=float)
    out = {k: np.empty(f.size, dtype=complex) for k in signals}
    Q = np.asarray(lin.Q)
    for i, fk in enumerate(f):
        xi = np.linalg.solve(2j * np.pi * fk * lin.E - lin.A, lin.B[:, j])
        e = np.concatenate([Q @ xi, np.eye(len(names))[j]])
        for k, c in vecs.items():
            out[k][i] = c[:n] @ e[:n] + c[n:] @ e[n:]
    return AcResult(f=f, source=names[j], response=out)
