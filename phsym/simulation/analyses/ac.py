"""Small-signal frequency response at the DC operating point (SPICE's ``.ac``).

The model's small-signal form at its DC operating point
(:func:`phsym.structure.smallsignal.small_signal`: ``E xi' = A xi + B u`` in
deviations, every law linearised, transistors and controlled sources
included) is solved at each frequency, and every requested signal is read
off the efforts with the same probe vectors the simulator records, so
``v(node)``, ``v(a,b)``, ``i(R1)``, ``v(C1)`` all work.  The excitation is
SPICE's: every source with an ``AC mag [phase]`` specification, superposed;
without any, one source with unit amplitude.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np

import sympy as sp

from ...errors import SignalError, SimulationError

__all__ = ["AcResult", "ac_analysis", "frequency_grid", "excitation"]


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
    measures : dict of str to float
        ``.meas ac`` results (:meth:`measure`).
    """

    f: np.ndarray
    source: str
    response: Dict[str, np.ndarray] = field(default_factory=dict)
    measures: Dict[str, float] = field(default_factory=dict)

    def measure(self, cards) -> Dict[str, float]:
        """Evaluate a deck's ``.meas ac`` cards on this response (kept in :attr:`measures`).

        Parameters
        ----------
        cards : sequence of phsym.netlist.analyses.Measure
            The deck's cards (others than ``ac`` are left out).
        """
        from ..measure import measure_cards
        table = {k.lower(): v for k, v in self.response.items()}

        def signal(label: str) -> np.ndarray:
            if label.lower().replace(" ", "") not in table:
                raise SignalError(f"{label!r} is not in the response (signals: {', '.join(self.response)})")
            return table[label.lower().replace(" ", "")]
        self.measures.update(measure_cards(cards, "ac", self.f, signal))
        return self.measures

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
        from ...clitools import pyplot
        plt = pyplot("the Bode plot")
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


def excitation(model, values, source: Optional[str] = None) -> tuple:
    """``(du, description)``: the inputs' complex amplitudes of an AC analysis.

    SPICE excites every source with an ``AC mag [phase]`` specification at
    once (superposed); ``source`` names one to excite alone with unit
    amplitude; a deck without AC specifications excites its first source.

    Parameters
    ----------
    model : Model
        The model.
    values : mapping of sympy.Symbol to float
        Parameter values.
    source : str, optional
        The one source to excite.

    Raises
    ------
    SignalError
        An unknown source, or a model without sources.
    """
    names = [str(u) for u in model.inputs]
    if not names:
        raise SignalError("the model has no source to excite")
    du = np.zeros(len(names), dtype=complex)
    lower = [n.lower() for n in names]
    if source is None:
        for j, name in enumerate(names):
            spec = model.netlist.element(name).ac
            if spec is not None:
                mag, phase = (float(sp.sympify(a).xreplace(values)) for a in spec)
                du[j] = mag * np.exp(1j * np.radians(phase))
        if np.any(du):
            return du, ", ".join(f"{n} (AC)" for n, d in zip(names, du) if d != 0)
        source = names[0]
    if source.lower() not in lower:
        raise SignalError(f"unknown source {source!r}; inputs: {', '.join(names)}")
    du[lower.index(source.lower())] = 1.0
    return du, names[lower.index(source.lower())]


def ac_analysis(model, f, source: Optional[str] = None, signals: Optional[List[str]] = None,
                params: Optional[Mapping[str, float]] = None, engine: str = "auto") -> AcResult:
    """Small-signal response at the DC operating point (SPICE's ``.ac``).

    The point is SPICE's (sources at their DC values, :mod:`.point`); the
    small-signal model holds every law, transistors and controlled sources
    included: the structure's (:func:`phsym.structure.smallsignal.small_signal`)
    or, on the numeric engine, the sparse linearisation of its equations
    (:mod:`phsym.simulation.engines.numeric.smallsignal`; one sparse LU per
    frequency, for circuits of any size).

    Parameters
    ----------
    model : Model, str or pathlib.Path
        A model or a netlist file.
    f : array_like
        Frequencies in Hz (see :func:`frequency_grid`).
    source : str, optional
        The one source excited with unit amplitude; default: every source
        with an ``AC`` specification, superposed (SPICE), else the first input.
    signals : list of str, optional
        Signal labels (default: every node voltage and voltage-source current).
    params : mapping of str to float, optional
        Parameter overrides by name.
    engine : str
        ``"symbolic"`` (the structure's small-signal model), ``"numeric"`` or
        ``"auto"``: symbolic when the model builds its structure at load (at
        most :data:`~phsym.model.SYMBOLIC_LIMIT` branches), numeric above.

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
    from ...structure.smallsignal import small_signal
    from .point import dc_inputs, dc_point, default_signals, signal_vectors, use_numeric
    if isinstance(model, (str, Path)):
        model = load(model)
    values = model.parameter_values(params)
    du, what = excitation(model, values, source)
    signals = list(signals) if signals is not None else default_signals(model)
    f = np.asarray(f, dtype=float)
    if use_numeric(model, engine):
        return AcResult(f=f, source=what, response=_numeric_response(model, values, f, du, signals))
    pt = dc_point(model, values, dc_inputs(model, values))
    ss = small_signal(model.structure, values, pt.x, pt.w, pt.lam, pt.u)
    vecs = signal_vectors(model, values, signals)
    n = ss.A.shape[0]
    out = {k: np.empty(f.size, dtype=complex) for k in signals}
    b = ss.B @ du
    for i, fk in enumerate(f):
        try:
            xi = np.linalg.solve(2j * np.pi * fk * ss.E - ss.A, b)
        except np.linalg.LinAlgError:
            raise SimulationError(f"the small-signal system is singular at {fk:g} Hz (a node without a DC path?)",
                                  step=i, time=0.0) from None
        e = ss.M @ xi
        for k, c in vecs.items():
            out[k][i] = c[:n] @ e + c[n:] @ du
    return AcResult(f=f, source=what, response=out)



def _numeric_response(model, values, f: np.ndarray, du: np.ndarray, signals: List[str]) -> Dict[str, np.ndarray]:
    """Each signal's response on the numeric engine's small-signal equations."""
    from .point import numeric_small_signal
    ss, probe = numeric_small_signal(model, values)
    vectors = ss.step_vectors(f, du)
    return {k: vectors @ probe(k) for k in signals}
