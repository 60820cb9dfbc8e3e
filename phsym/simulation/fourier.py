"""SPICE's ``.four FREQ OV ...``: harmonics of a transient's last period, and its THD.

As ngspice: the last period ``[TSTOP - 1/FREQ, TSTOP]`` of the signal,
interpolated on 200 uniform points, gives the DC component and the
harmonics 1 to 9 (magnitude ``A_k`` and phase ``p_k`` in degrees of ``A_k
sin(2 pi k f t + p_k)``, ``t`` from the period's start, as ngspice prints
them) and the total harmonic distortion ``sqrt(sum_k>=2 A_k**2) / A_1`` in
percent: how audio designers read a clipper.

>>> import numpy as np
>>> t = np.linspace(0, 2e-3, 2001)
>>> f = fourier(t, 1 + np.cos(2 * np.pi * 1e3 * t) + 0.1 * np.sin(2 * np.pi * 3e3 * t), 1e3)
>>> np.round(f.magnitude[:4], 6).tolist(), np.round(f.phase[[1, 3]], 6).tolist(), round(f.thd, 6)
([1.0, 1.0, 0.0, 0.1], [90.0, 0.0], 10.0)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import SimulationError

__all__ = ["Fourier", "fourier", "GRID", "HARMONICS"]

#: points of the last period (ngspice's fourgridsize) and harmonics with the DC term (its nfreqs)
GRID, HARMONICS = 200, 10


@dataclass
class Fourier:
    """The harmonics of one signal.

    Attributes
    ----------
    freq : float
        The fundamental [Hz].
    magnitude, phase : ndarray
        Per harmonic 0 (DC) to 9: amplitude and phase [degrees].
    thd : float
        Total harmonic distortion [percent].
    """

    freq: float
    magnitude: np.ndarray
    phase: np.ndarray
    thd: float

    def to_text(self, label: str) -> str:
        """The table as ngspice prints it."""
        lines = [f"Fourier analysis for {label}:", f"  No. Harmonics: {HARMONICS}, THD: {self.thd:g} %",
                 "Harmonic Frequency   Magnitude   Phase       Norm. Mag   Norm. Phase"]
        a1, p1 = self.magnitude[1], self.phase[1]
        for k in range(HARMONICS):
            norm = self.magnitude[k] / a1 if a1 else 0.0
            lines.append(f"{k:<8d} {k * self.freq:<11.5g} {self.magnitude[k]:<11.5g} {self.phase[k]:<11.5g} "
                         f"{norm:<11.5g} {(self.phase[k] - p1) if k else 0.0:<11.5g}")
        return "\n".join(lines)


def fourier(t: np.ndarray, y: np.ndarray, freq: float, end: Optional[float] = None) -> Fourier:
    """Harmonics of ``y(t)`` over its last period of ``1 / freq``.

    Parameters
    ----------
    t : ndarray
        Increasing times.
    y : ndarray
        Signal values at ``t``.
    freq : float
        Fundamental frequency [Hz].
    end : float, optional
        Where the last period ends (the run's end; default ``t[-1]``).

    Raises
    ------
    SimulationError
        When the run is shorter than one period.
    """
    t, y = np.asarray(t, float), np.asarray(y, float)
    period = 1.0 / freq
    end = t[-1] if end is None else float(end)
    if end - t[0] < period * (1 - 1e-9):
        raise SimulationError(f".four {freq:g} Hz needs a run of one period at least ({period:g} s); "
                              f"this one lasts {end - t[0]:g} s")
    grid = end - period + period * np.arange(GRID) / GRID
    samples = np.interp(grid, t, y)
    k = np.arange(HARMONICS)
    arg = 2 * np.pi * np.outer(k, grid - grid[0]) / period
    re = samples @ np.cos(arg).T * 2 / GRID
    im = samples @ np.sin(arg).T * 2 / GRID
    magnitude = np.hypot(re, im)
    magnitude[0] = samples.mean()
    phase = np.degrees(np.arctan2(re, im))          # of A sin(2 pi k f t + phase), as ngspice
    phase[0] = 0.0
    thd = float(np.sqrt(np.sum(magnitude[2:] ** 2)) / magnitude[1] * 100) if magnitude[1] else 0.0
    return Fourier(float(freq), magnitude, phase, thd)
