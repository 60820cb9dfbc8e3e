"""Controlled sources (E, G) and the op-amp: active ports closed by a static law.

References: closed-form gains of the amplifiers with a finite open-loop
gain, an ideal Sallen-Key low-pass integrated by scipy at tight tolerance,
the exact discrete energy balance with the injected power as its own term.
The ngspice transient of an op-amp overdrive stage is in the deck corpus
(tests/decks/opamp_diode_clipper.cir).
"""
import numpy as np
import pytest
import scipy.integrate as si

import phsym
from phsym.errors import StructureError
from phsym.report import describe, describe_text


def _run(text, fs=48000, T=2e-3, **kw):
    m = phsym.parse(text)
    return m, phsym.simulate(m, fs, duration=T, **kw)


@pytest.mark.parametrize("kind", ["inverting", "non-inverting"])
def test_opamp_amplifiers_have_the_finite_gain_closed_form(kind):
    A, r1, r2 = 2e5, 1e3, 22e3
    if kind == "inverting":
        text = f"V1 a 0 SIN(0 0.1 1k)\nR1 a n {r1}\nR2 n out {r2}\nU1 0 n out opamp gain={A}\nRL out 0 10k\n"
        gain = -(r2 / r1) / (1 + (1 + r2 / r1) / A)
    else:
        text = f"V1 a 0 SIN(0 0.1 1k)\nR1 n 0 {r1}\nR2 n out {r2}\nU1 a n out opamp gain={A}\nRL out 0 10k\n"
        gain = (1 + r2 / r1) / (1 + (1 + r2 / r1) / A)
    m, r = _run(text)
    assert np.allclose(r["v(out)"], gain * r["v(a)"], rtol=1e-10, atol=1e-13)
    assert r.max_balance_error < 1e-12
    # the op-amp delivers the load's power: injected, not dissipated
    assert np.all(r.P_diss >= 0)
    assert np.allclose(r.P_supplied - r.P_active, r.y[:, 0] * 0.5 * (r.u[1:, 0] + r.u[:-1, 0]), atol=1e-15)
    assert np.max(r.P_active) > 10 * np.max(np.abs(r.P_supplied - r.P_active))


def test_vcvs_and_vccs_follow_spice_conventions():
    _, r = _run("V1 a 0 SIN(0 1 1k)\nR1 a 0 1k\nE1 b 0 a 0 -3\nR2 b 0 1k\n")
    assert np.allclose(r["v(b)"], -3 * r["v(a)"], rtol=1e-12, atol=1e-15)
    # G: the current gm v(nc+, nc-) flows from n+ through the source to n-
    _, r = _run("V1 a 0 SIN(0 1 1k)\nR1 a 0 1k\nG1 b 0 a 0 2m\nR2 b 0 1k\n")
    assert np.allclose(r["v(b)"], -2.0 * r["v(a)"], rtol=1e-12, atol=1e-15)
    assert r.max_balance_error < 1e-12


@pytest.mark.parametrize("kind", ["inverting", "non-inverting"])
def test_ideal_opamp_amplifiers_have_the_exact_gain(kind):
    r1, r2 = 1e3, 22e3
    if kind == "inverting":
        text = f"V1 a 0 SIN(0 0.1 1k)\nR1 a n {r1}\nR2 n out {r2}\nU1 0 n out opamp type=ideal\nRL out 0 10k\n"
        gain = -r2 / r1
    else:
        text = f"V1 a 0 SIN(0 0.1 1k)\nR1 n 0 {r1}\nR2 n out {r2}\nU1 a n out opamp type=ideal\nRL out 0 10k\n"
        gain = 1 + r2 / r1
    m, r = _run(text)
    assert all(m.check().values())
    assert np.allclose(r["v(out)"], gain * r["v(a)"], rtol=1e-13, atol=1e-15)
    assert np.max(np.abs(r["v(n)"] - (0.0 if kind == "inverting" else r["v(a)"]))) < 1e-15   # virtual short
    assert r.max_balance_error < 1e-12
    vo, vn = r["v(out)"], r["v(n)"]
    P_out = vo * (vo / 10e3 + (vo - vn) / r2)        # v(out) times the current into RL and R2
    assert np.allclose(r.P_active, P_out, rtol=1e-10, atol=1e-18)       # the norator's power, injected
    # the operating point (x0="dc") sees the nullor too
    _, dc = _run(text.replace("SIN(0 0.1 1k)", "DC 0.1"), x0="dc")
    assert dc["v(out)"][0] == pytest.approx(0.1 * gain, rel=1e-13)


def test_ideal_opamp_errors():
    with pytest.raises(phsym.errors.NetlistError, match="no rails") as info:
        phsym.parse("V1 a 0 1\nU1 a 0 out opamp type=ideal vsat=9\nRL out 0 1k\n")
    assert info.value.location.column == 29
    # without negative feedback an ideal op-amp has no solution: a clear failure naming it
    for engine in ("generated", "numeric"):
        with pytest.raises(phsym.errors.SimulationError, match=r"singular Newton Jacobian at .*\bU1\b"):
            _run("V1 a 0 SIN(0 1 1k)\nU1 a 0 out opamp type=ideal\nRL out 0 1k\n", T=1e-4, engine=engine)


@pytest.mark.parametrize("opamp", ["gain=1e7", "type=ideal"])
def test_sallen_key_lowpass_matches_the_ideal_circuit(opamp):
    r1, r2, c1, c2 = 10e3, 10e3, 22e-9, 10e-9        # unity-gain Sallen-Key, f0 about 1.1 kHz
    text = (f"V1 in 0 SIN(0 1 2k)\nR1 in a {r1}\nR2 a b {r2}\nC1 a out {c1}\nC2 b 0 {c2}\n"
            f"U1 b out out opamp {opamp}\n")
    T = 2e-3
    m, r = _run(text, fs=400e3, T=T, method="midpoint")

    def ideal(t, z):           # states: v(C1) = v(a) - v(out), v(C2) = v(b) = v(out)
        vc1, vout = z
        u = np.sin(2 * np.pi * 2e3 * t)
        va = vc1 + vout
        i1, i2 = (u - va) / r1, (va - vout) / r2
        return [(i1 - i2) / c1, i2 / c2]
    sol = si.solve_ivp(ideal, (0, T), [0.0, 0.0], method="Radau", rtol=1e-11, atol=1e-14, dense_output=True,
                       max_step=1e-6)
    ref = sol.sol(r.t)[1]
    vout = r.x[:, m.states.index("q_C2")] / c2
    assert np.max(np.abs(vout - ref)) < 2e-4
    assert 0.27 < np.max(vout[r.t > 1e-3]) < 0.30       # |H(2 kHz)| = 0.284 (f0 = 1.07 kHz, Q = 0.74)
    assert r.max_balance_error < 1e-11


def test_opamp_rails_limit_the_output():
    _, r = _run("V1 a 0 SIN(0 1 1k)\nR1 n 0 1k\nR2 n out 100k\nU1 a n out opamp gain=1e4 vsat=9\nRL out 0 10k\n")
    out = r["v(out)"]
    assert np.max(np.abs(out)) <= 9.0 and np.max(np.abs(out)) > 8.9
    assert r.max_balance_error < 1e-12


def test_active_elements_are_named_and_the_passive_part_is_checked():
    m = phsym.parse("V1 a 0 1\nR1 a n 1k\nR2 n out 10k\nU1 0 n out opamp\nRL out 0 10k\n")
    assert all(m.check().values())
    info = describe(m)
    assert info["active"] == ["U1"]
    assert "Active elements" in describe_text(m) and "U1" in describe_text(m)
    with pytest.raises(StructureError, match="multiport"):
        m.linearize()


def test_cccs_and_ccvs_follow_spice_conventions():
    """F pushes GAIN i(Vsense) from n+ through itself to n-; H sets v(n+) - v(n-) = R i(Vsense);
    the sense current flows from the 0 V source's n+ to its n- (SPICE).  Closed forms: a mirror of
    gain -2 into 1k and a transimpedance of 500 ohm, with a sine input; the sensed source's current
    stays a probe and the injected power is the active elements'."""
    text = ("V1 in 0 SIN(0 1 1k)\nR1 in a 1k\nVs a 0 0\nF1 b 0 Vs 2\nR2 b 0 1k\nH1 c 0 Vs 500\nR3 c 0 1k\n"
            ".probe v(b) v(c) i(Vs)\n")
    m, r = _run(text)
    i_s = r["i(Vs)"]
    np.testing.assert_allclose(i_s, 0.5 * (r.u[1:, 0] + r.u[:-1, 0]) / 1e3, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r["v(b)"], -2 * i_s * 1e3, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r["v(c)"], 500 * i_s, rtol=1e-9, atol=1e-12)
    assert r.max_balance_error < 1e-12
    assert [d.element for d in m.structure.dissipative if d.active] == ["F1", "H1"]
    np.testing.assert_allclose(r.P_active, (r["v(b)"] ** 2 + r["v(c)"] ** 2) / 1e3, rtol=1e-9, atol=1e-15)


def test_current_sense_of_sources():
    # a source of non-zero value keeps its port and is read through an ammeter in series (SPICE reads
    # any voltage source's current): 3 V - 1 V across 1k is 2 mA, twice that into 1k is 4 V
    m = phsym.parse("V1 a 0 3\nVs a b 1\nR1 b 0 1k\nF1 0 c Vs 2\nR2 c 0 1k\n.probe v(c) i(Vs)\n")
    assert [str(u) for u in m.inputs] == ["V1", "Vs"]
    r = phsym.simulate(m, 1e3, duration=2e-3)
    assert r["v(c)"][-1] == pytest.approx(4.0, rel=1e-9) and r["i(Vs)"][-1] == pytest.approx(2e-3, rel=1e-9)
    assert r.max_balance_error < 1e-12
    with pytest.raises(phsym.errors.NetlistError, match="is a resistor, not a vsource"):
        phsym.parse("V1 a 0 1\nR1 a 0 1k\nF1 0 c R1 2\nR2 c 0 1k\n")
    # two readers of one ammeter, and an ammeter written as such
    m = phsym.parse("I1 0 a DC 1m\nVs a 0 0\nF1 0 b Vs 1\nR2 b 0 1k\nF2 0 c Vs 2\n"
                    "AM c d ammeter\nR3 d 0 1k\n.probe v(b) v(c) i(AM)\n")
    r = phsym.simulate(m, 1e3, duration=2e-3)
    assert r["v(b)"][-1] == pytest.approx(1.0, rel=1e-9) and r["v(c)"][-1] == pytest.approx(2.0, rel=1e-9)
    assert r["i(AM)"][-1] == pytest.approx(2e-3, rel=1e-9)


def test_opamp_output_resistance_against_nodal_analysis():
    """Inverting amplifier with finite gain and an output resistance into a load: the output from
    the two nodal equations solved here; the output resistance dissipates (balance exact)."""
    A, r1, r2, ro, rl, va = 1e3, 1e3, 10e3, 200.0, 1e3, 0.1
    G = np.array([[-1 / r1 - 1 / r2, 1 / r2],                           # node n
                  [1 / r2 - A / ro, -1 / r2 - 1 / ro - 1 / rl]])       # node out, e = -A v_n
    vn, vout = np.linalg.solve(G, [-va / r1, 0.0])
    m, r = _run(f"V1 a 0 DC {va}\nR1 a n {r1}\nR2 n out {r2}\nU1 0 n out opamp gain={A} rout={ro}\n"
                f"RL out 0 {rl}\n.probe v(out) v(n)\n", fs=1e3, T=3e-3)
    assert r["v(out)"][-1] == pytest.approx(vout, rel=1e-10)
    assert r["v(n)"][-1] == pytest.approx(vn, rel=1e-10)
    assert abs(vout) < 0.995 * va * r2 / r1                              # loaded: below the ideal gain
    assert r.max_balance_error < 1e-12
    i_ro = r["i(U1.ro)"][-1]
    assert r.P_diss[-1] >= ro * i_ro ** 2 * (1 - 1e-12)                 # the output resistance dissipates
