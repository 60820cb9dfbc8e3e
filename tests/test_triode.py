"""The Koren triode: a common-cathode preamp stage against ngspice (the same
circuit with the triode as B-sources, tests/models/triode_preamp_ngspice.cir),
the stage with a volume potentiometer turned during the run (its halves as
B-sources of time, tests/models/triode_volume_ngspice.cir),
its DC point against the law evaluated here, passivity and the exact discrete
energy balance of the discrete-gradient scheme."""
from pathlib import Path

import numpy as np
import pytest
import scipy.optimize as so

import phsym
from phsym.simulation import operating_point
from tests.decks.corpus import node_waveforms

MODELS = Path(__file__).resolve().parent / "models"
NETLIST = MODELS / "triode_preamp.cir"


def koren(vgk, vpk, mu=100.0, ex=1.4, kg1=1060.0, kp=600.0, kvb=300.0):
    a = kp * (1.0 / mu + vgk / np.sqrt(kvb + vpk ** 2))
    e1 = vpk / kp * np.logaddexp(0.0, a)
    return np.where(vpk > 0, np.abs(e1) ** ex / kg1, 0.0)


def _assert_matches(res, ref):
    """Every node of the ngspice reference within 0.5 % of its swing; returns the node names."""
    names = [str(n) for n in ref["names"]]
    got = node_waveforms(res, names, ref["t"])
    for i, n in enumerate(names):
        inside = np.isfinite(got[n])
        swing = max(np.ptp(ref["v"][i]), 0.1)
        assert np.max(np.abs(got[n][inside] - ref["v"][i][inside])) <= 5e-3 * swing, n
    return names


def test_triode_preamp_matches_ngspice():
    ref = np.load(MODELS / "triode_preamp_ngspice.npz")
    res = phsym.simulate(NETLIST, 48000, duration=10e-3, x0="dc")   # index 2: backward Euler
    assert res.info["scheme"] == "backward_euler" and not res.flags.any()
    names = _assert_matches(res, ref)
    assert np.ptp(ref["v"][names.index("p")]) > 40          # a gain of about 48 on 1 V peak to peak


def test_triode_stage_with_a_turning_volume_pot_matches_ngspice():
    ref = np.load(MODELS / "triode_volume_ngspice.npz")
    net = Path(__file__).resolve().parents[1] / "netlists" / "triode_volume.cir"
    res = phsym.simulate(net, 48000, duration=10e-3, x0="dc", controls={"vol": lambda t: 0.1 + 80 * t})
    assert not res.flags.any() and np.allclose(res.controls["vol"], 0.1 + 80 * res.t)
    _assert_matches(res, ref)
    out = res["v(out)"]
    assert np.ptp(out[-96:]) > 15 * np.ptp(out[:96])        # the log pot from 0.1 to 0.9: about 22x


def test_triode_dc_point_follows_the_koren_law():
    op = operating_point(phsym.load(NETLIST))
    vp, vg, vk = op.nodes["p"], op.nodes["g"], op.nodes["k"]
    ip = (250.0 - vp) / 100e3
    assert ip == pytest.approx(float(koren(vg - vk, vp - vk)) + 1e-12 * (vp - vk), rel=1e-9)
    # and the self-bias point solved here from the law alone
    vk_ref = so.brentq(lambda k: k / 1.5e3 - float(koren(-k, 250.0 - 100e3 * k / 1.5e3 - k)), 1e-6, 5.0,
                       xtol=1e-14)
    assert vk == pytest.approx(vk_ref, rel=1e-6)


def test_triode_is_passive_and_the_discrete_gradient_balances_energy():
    m = phsym.parse("VB b 0 250\nVIN in 0 SIN(0 2 1k)\nRG in g 10k\nRP b p 100k\nRK k 0 1.5k\nCK k 0 22u\n"
                    "U1 p g k triode\nC2 p out 22n\nRL out 0 1Meg\n")
    assert all(m.check().values())
    res = phsym.simulate(m, 48000, duration=5e-3, x0="dc", method="discrete_gradient")
    assert res.max_balance_error < 1e-10
    g = res["v(g)"]
    assert g.max() > 0.33            # the grid conducts on the positive peaks: the clipping is there
    # the power the tube's two ports receive, from the model's own laws
    import sympy as sp
    ports = [d for d in m.structure.dissipative if d.element.startswith("U1.")]
    power = sp.lambdify([d.w for d in ports], sp.Add(*[d.w * d.z for d in ports]).subs(m.parameter_values()))
    vgk, vpk = np.meshgrid(np.linspace(-20, 5, 101), np.linspace(-50, 400, 101))
    P = np.vectorize(lambda a, b: float(power(a, b)))(vgk, vpk)
    assert np.all(P >= 0) and P.max() > 0


def test_pyphs_triodeamp_dc_point_follows_the_koren_law():
    op = operating_point(phsym.load(Path(__file__).resolve().parents[1] / "netlists" / "triodeamp.cir"))
    # grid at 0 V through the potentiometer; cathode 100k, plate 100k from 300 V
    vk = so.brentq(lambda k: k / 100e3 - float(koren(-k, 300.0 - 2 * k, mu=88.0)), 1e-6, 100.0, xtol=1e-14)
    assert op.nodes["vk"] == pytest.approx(vk, rel=1e-6)
    assert op.nodes["vp"] == pytest.approx(300.0 - vk, rel=1e-7)      # up to GMIN across the tube
