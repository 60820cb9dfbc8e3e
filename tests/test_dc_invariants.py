"""DC operating points keep the structure's conserved combinations of states
at their initial values (as every transient does): parallel inductors split a
DC current as 1/L, series capacitors hold equal charges, and the pickup's
string sits at the same displacement in its spring and in the air gap."""
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.common.physics import MU0

NET = Path(__file__).resolve().parent.parent / "netlists"


def test_parallel_inductors_split_as_a_transient_does():
    sim = phsym.Simulator(phsym.parse("* par\nV1 a 0 DC 1\nR1 a b 1\nL1 b 0 1m\nL2 b 0 3m\n"), 48000)
    x_dc = sim.run(duration=1e-3, x0="dc").x[0]
    np.testing.assert_allclose(x_dc / [1e-3, 3e-3], [0.75, 0.25], rtol=1e-10)      # i = phi / L, phi1 = phi2
    settled = sim.run(duration=0.05).x[-1]                                         # from zero flux
    np.testing.assert_allclose(settled, x_dc, rtol=1e-9)


def test_series_capacitors_hold_equal_charges():
    sim = phsym.Simulator(phsym.parse("* ser\nV1 a 0 DC 3\nR1 a b 1k\nC1 b c 1u\nC2 c 0 2u\nR2 c 0 1e12\n"),
                          48000)
    q1, q2 = sim.run(duration=1e-3, x0="dc").x[0]
    # R2 (1 Tohm) makes the DC point unique: it empties C2, and C1 holds the source
    assert q1 == pytest.approx(3 * 1e-6, rel=1e-9) and abs(q2) < 1e-15
    sim = phsym.Simulator(phsym.parse("* ser\nV1 a 0 DC 3\nR1 a b 1k\nC1 b c 1u\nC2 c 0 2u\n"), 48000)
    q1, q2 = sim.run(duration=1e-3, x0="dc").x[0]
    q = 3 / (1 / 1e-6 + 1 / 2e-6)                     # one charge through both: q1 = q2
    assert q1 == pytest.approx(q, rel=1e-10) and q2 == pytest.approx(q, rel=1e-10)


def test_pickup_rests_in_its_gap():
    Um, g0, A, Rc, k = 50, 2e-3, 100e-6, 2e6, 1.2e3
    m = phsym.load(NET / "pickup.cir")
    res = phsym.Simulator(m, 48000).run(duration=4e-3, x0="dc")          # before the pluck at 5 ms
    phi, x_gap, p, x_spring = res.x[0]
    assert x_gap == pytest.approx(x_spring, rel=1e-12)                    # one string
    assert phi * (Rc + (g0 - x_gap) / (MU0 * A)) == pytest.approx(Um, rel=1e-10)     # the magnet's mmf
    assert k * x_spring == pytest.approx(phi ** 2 / (2 * MU0 * A), rel=1e-10)        # forces balance
    assert np.ptp(res.x[:, 1]) < 1e-12 * abs(x_gap)                       # and it stays there
