"""The Rhodes-like chain (hammer, contact felt, modal tine, pickup, RC load):
exact energy balance across four domains, the tine sounds at its first
cantilever mode (beam theory), and the lossless contact returns the hammer."""
from pathlib import Path

import numpy as np
import pytest

import phsym

NET = Path(__file__).resolve().parents[1] / "netlists" / "rhodes.cir"


def test_rhodes_chain():
    res = phsym.simulate(NET, warm_start=False)
    assert np.abs(res.balance).max() <= 1e-10 * res.power_scale
    v = res["v(e)"][res.t_step > 10e-3]                      # after the strike
    f = np.fft.rfftfreq(v.size, res.info["h"])
    peak = f[np.argmax(np.abs(np.fft.rfft(v * np.hanning(v.size))))]
    E, I, rho, A, L = 200e9, 785e-15, 7850.0, 3.14e-6, 0.06
    f1 = 1.8751040687 ** 2 * np.sqrt(E * I / (rho * A)) / L ** 2 / (2 * np.pi)    # 392 Hz
    assert peak == pytest.approx(f1, abs=2 / 0.09)           # within two FFT bins
    vh = res["v(hammer)"]
    assert vh[0] == pytest.approx(0.5) and vh[-1] < -0.45   # thrown at 0.5 m/s, back at nearly the same speed
