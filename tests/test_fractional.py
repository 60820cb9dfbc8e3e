"""Fractional-order elements (diffusive representation): the impedance
matches s**-alpha / s**alpha over the band within the reported fit error,
the step response of the fractional integrator its closed form
I t**alpha / (C Gamma(1 + alpha)), and the energy balance holds per step."""
from math import gamma
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.components.fractional import diffusive_fit
from phsym.errors import NetlistError

NET = Path(__file__).resolve().parent.parent / "netlists"


@pytest.mark.parametrize("alpha", [0.3, 0.5, 0.8])
def test_impedances_over_the_band(alpha):
    f = np.logspace(np.log10(20), np.log10(20e3), 25)
    s = 2j * np.pi * f
    cap = phsym.parse(f"I1 0 a\nZ1 a 0 fcapacitor C=2m alpha={alpha}\n")
    ind = phsym.parse(f"V1 a 0\nZ2 a 0 finductor L=3m alpha={alpha}\n")
    zc = np.array([complex(cap.linearize().transfer(sk)[0, 0]) for sk in s])        # y = v for u = i
    yl = np.array([complex(ind.linearize().transfer(sk)[0, 0]) for sk in s])        # y = i for u = v
    err_c = diffusive_fit(alpha, 20.0, 20e3, 12).error
    err_l = diffusive_fit(1 - alpha, 20.0, 20e3, 12).error
    assert err_c < 1e-2 and err_l < 1e-2
    np.testing.assert_allclose(zc, 1 / (2e-3 * s ** alpha), rtol=err_c * 1.01 + 1e-12)
    np.testing.assert_allclose(1 / yl, 3e-3 * s ** alpha, rtol=err_l * 1.01 + 1e-12)


def test_fractional_integrator_step_response():
    res = phsym.simulate(NET / "fractional_integrator.cir", 1e6, duration=4e-3, warm_start=False)
    assert np.abs(res.balance).max() <= 1e-10 * res.power_scale
    t = res.t_step - (1e-3 + 0.5e-6)                       # the step at 1 ms (1 us ramp)
    v = res["v(a)"]
    ref = 1e-3 * np.clip(t, 0, None) ** 0.5 / (1e-3 * gamma(1.5))
    window = (t > 2e-4) & (t < 3e-3)                         # well inside 1 Hz .. 100 kHz
    np.testing.assert_allclose(v[window], ref[window], rtol=1e-2)
    assert np.all(np.abs(v[t < -1e-5]) < 1e-12)              # nothing before the step


def test_structural_values_are_numbers_not_parameters():
    m = phsym.parse("I1 0 a\n.param a0=0.4\nZ1 a 0 fcapacitor C=1 alpha={a0} cells=6\n")
    assert "Z1.alpha" not in m.parameter_symbols and "Z1" in m.parameter_symbols
    assert len(m.states) == 6
    with pytest.raises(phsym.PhsymError, match="unknown parameter .Z1.alpha"):
        phsym.Simulator(m, 1000).run(duration=0.01, params={"Z1.alpha": 0.3})
    with pytest.raises(NetlistError, match="alpha"):
        phsym.parse("* bad\nI1 0 a\nZ1 a 0 fcapacitor C=1 alpha=1.5\n")
