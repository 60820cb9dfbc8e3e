"""Both mechanical analogies: the same mechanism gives the same transfer
function in the mobility and the impedance analogy (and through a gyrator of
ratio 1 between them); bundled netlists against closed forms; options are
checked."""
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.errors import NetlistError, StructureError

NET = Path(__file__).resolve().parent.parent / "netlists"
S = 2j * np.pi * np.logspace(-1, 3, 13)


def _tf(model, s):
    return np.array([complex(model.linearize().transfer(sk)[0, 0]) for sk in s])


def test_both_analogies_give_the_mobility_of_the_mechanism():
    m, k, c = 0.05, 2e3, 1.5
    ref = 1 / (m * S + c + k / S)                     # velocity per force
    for f in ("msd_mobility.cir", "msd_impedance.cir"):
        np.testing.assert_allclose(_tf(phsym.load(NET / f), S), ref, rtol=1e-11)


def test_transients_of_both_analogies_agree():
    a = phsym.simulate(NET / "msd_mobility.cir", warm_start=False)
    b = phsym.simulate(NET / "msd_impedance.cir", warm_start=False)
    np.testing.assert_allclose(a["v(v)"], b["i(M1)"], rtol=1e-9, atol=1e-12)     # the velocity
    np.testing.assert_allclose(a["i(K1)"], b["v(b,c)"], rtol=1e-9, atol=1e-12)   # the spring force
    for r in (a, b):
        assert np.abs(r.balance).max() <= 1e-10 * r.power_scale
    # the closed-form step response of the spring's elongation (1 N at t0; the 10 us ramp as a 5 us delay)
    m, k, c, t0 = 0.05, 2e3, 1.5, 1e-3 + 5e-6
    w0, z = np.sqrt(k / m), c / (2 * np.sqrt(k * m))
    wd, t = w0 * np.sqrt(1 - z ** 2), b.t - t0
    x = np.where(t > 0, (1 - np.exp(-z * w0 * t) * (np.cos(wd * t) + z / np.sqrt(1 - z ** 2) * np.sin(wd * t))) / k, 0)
    late = b.t > 1.02e-3
    assert np.max(np.abs(b["x_K1"][late] - x[late])) < 2e-3 * np.max(np.abs(x))


def test_a_unit_gyrator_joins_the_analogies():
    """Mass on the mobility side, spring and damper on the impedance side."""
    whole = phsym.parse("F1 v 0 force\nM1 v 0 mass m=2\nK1 v 0 spring k=50\nB1 v 0 damper c=3\n")
    mixed = phsym.parse("F1 v 0 force\nM1 v 0 mass m=2\nGY1 v 0 a 0 1\n"
                        "K1 a b spring k=50 analogy=impedance\nB1 b 0 damper c=3 analogy=impedance\n")
    np.testing.assert_allclose(_tf(mixed, S), _tf(whole, S), rtol=1e-11)


def test_loudspeaker_input_impedance():
    Re, Le, Bl, M, C, R = 6, 0.5e-3, 7, 15e-3, 0.8e-3, 1.2
    Z = Re + S * Le + Bl ** 2 / (S * M + R + 1 / (S * C))
    np.testing.assert_allclose(1 / _tf(phsym.load(NET / "loudspeaker_impedance.cir"), S), Z, rtol=1e-11)


def test_rotational_impedance_analogy():
    mob = phsym.parse("T1 w 0 torque\nJ1 w 0 inertia J=0.1\nB1 w 0 rdamper c=0.4\n")
    imp = phsym.parse("T1 a 0 torque analogy=impedance\nJ1 a b inertia J=0.1 analogy=impedance\n"
                      "B1 b 0 rdamper c=0.4 analogy=impedance\n")
    np.testing.assert_allclose(_tf(imp, S), _tf(mob, S), rtol=1e-11)
    np.testing.assert_allclose(_tf(mob, S), 1 / (0.1 * S + 0.4), rtol=1e-11)


@pytest.mark.parametrize("text,exc,msg", [
    ("F1 a 0 force analogy=dual\nM1 a 0 mass m=1\n", NetlistError, "analogy= must be one of mobility, impedance"),
    ("F1 a 0 force\nM1 a b mass m=1\nR1 b 0 1\n", NetlistError, "must have one node at the datum"),
    ("F1 a 0 force\nM1 a 0 mass m=1\nK1 a 0 spring k=1 analogy=impedance\n", StructureError, "mixes domains"),
    ("R1 a 0 1k analogy=impedance\nV1 a 0\n", NetlistError, "unknown keyword 'analogy'"),
])
def test_analogy_errors(text, exc, msg):
    with pytest.raises(exc, match=msg):
        phsym.parse("* analogy errors\n" + text)
