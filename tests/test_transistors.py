"""Transistors (BJT, MOSFET, JFET) as multiport dissipations.

Independent references: DC operating points solved here by scipy from the
device equations written out in this file (SPICE level 1), the mirror
symmetry of n- and p-type circuits, the order of convergence of the scheme
and the discrete energy balance.  The ngspice transients of four amplifier
stages are in the deck corpus (tests/decks/bjt_*.cir, mosfet_*.cir,
jfet_*.cir, checked by tests/test_spice_corpus.py).
"""
import math
from pathlib import Path
import warnings

import numpy as np
import pytest
import scipy.optimize as so

import phsym
from phsym.simulation import operating_point
from phsym.errors import NetlistError, StructureError
from phsym.structure.checks import check_structure

VT = 0.02585
GMIN = 1e-12


def _op(text, **kw):
    return operating_point(phsym.parse(text), **kw)


# ------------------------------------------------------------------- BJT
def _gp(vbe, vbc, Is, bf, br, vaf):
    ibe = Is * math.expm1(vbe / VT) + GMIN * vbe
    ibc = Is * math.expm1(vbc / VT) + GMIN * vbc
    ic = (ibe - ibc) * (1 - vbc / vaf) - ibc / br
    ib = ibe / bf + ibc / br
    return ic, ib


@pytest.mark.parametrize("vb, rc", [(5.0, 1e3), (5.0, 20e3)], ids=["active", "saturated"])
def test_bjt_dc_point_matches_the_ebers_moll_equations(vb, rc):
    Is, bf, br, vaf, rb, vcc = 1e-15, 120.0, 2.0, 60.0, 100e3, 5.0
    op = _op(f".model QN NPN(IS={Is} BF={bf} BR={br} VAF={vaf})\nVCC vcc 0 {vcc}\nVB vb 0 {vb}\n"
             f"RB vb b {rb}\nRC vcc c {rc}\nQ1 c b 0 QN\n")

    def eqs(z):
        vbe, vc = z
        ic, ib = _gp(vbe, vbe - vc, Is, bf, br, vaf)
        return [(vb - vbe) / rb - ib, (vcc - vc) / rc - ic]
    vbe, vc = so.fsolve(eqs, [op.nodes["b"], op.nodes["c"]], xtol=1e-14)
    assert np.max(np.abs(eqs([vbe, vc]))) < 1e-15
    assert op.nodes["b"] == pytest.approx(vbe, rel=1e-9)
    assert op.nodes["c"] == pytest.approx(vc, rel=1e-7, abs=1e-9)
    if rc > 1e4:
        assert op.nodes["c"] < 0.2          # saturated: both junctions forward


def test_npn_and_pnp_circuits_are_mirror_images():
    card = "IS=1e-14 BF=150 BR=3 VAF=80 RB=50 CJE=5p CJC=3p TF=400p"
    base = ("VCC vcc 0 {s}9\nVIN in 0 SIN(0 {s}0.05 1k)\nC1 in b 1u\nR1 vcc b 68k\nR2 b 0 12k\n"
            "RC vcc c 3.3k\nRE e 0 680\nQ1 c b e Q\n")
    n = phsym.parse(f".model Q NPN({card})\n" + base.format(s=""))
    p = phsym.parse(f".model Q PNP({card})\n" + base.format(s="-"))
    rn = phsym.simulate(n, 48000, duration=2e-3, x0="dc")
    rp = phsym.simulate(p, 48000, duration=2e-3, x0="dc")
    for node in ("b", "c", "e"):
        assert np.allclose(rp[f"v({node})"], -rn[f"v({node})"], rtol=1e-9, atol=1e-12)
    assert rn.max_balance_error < 1e-9 and rp.max_balance_error < 1e-9


def test_bjt_structure_is_skew_balanced_and_passive():
    m = phsym.parse(".model QN NPN(IS=1e-14 BF=100 VAF=50 IKF=20m ISE=1e-13 NE=1.5 CJE=2p CJC=1p)\n"
                    "VCC vcc 0 9\nVB b 0 0.65\nRC vcc c 1k\nQ1 c b 0 QN\n")
    checks = check_structure(m.structure, m.parameter_values())
    assert checks["J skew"] and checks["Tellegen"] and checks["power balance"]
    assert checks["dissipation passive"]
    ports = [d for d in m.structure.dissipative if d.element.startswith("Q1.b")]
    assert [d.element for d in ports] == ["Q1.be", "Q1.bc"]
    assert ports[0].coupled == (m.structure.dissipative.index(ports[1]),)


def _received_power(m, lo=-0.8, hi=0.9, n=61):
    import sympy as sp
    S = m.structure
    ports = [d for d in S.dissipative if d.coupled]
    W = [d.w for d in ports]
    P = sp.lambdify(W, sp.Add(*[d.w * d.z for d in ports]).subs(m.parameter_values()), "numpy")
    g = np.linspace(lo, hi, n)
    a, b = np.meshgrid(g, g)
    return P(a, b)


def test_bjt_received_power_is_nonnegative_iff_nf_equals_nr():
    same = phsym.parse(".model Q NPN(IS=1e-14 BF=80 BR=2 VAF=40)\nV1 c 0 1\nV2 b 0 0.6\nQ1 c b 0 Q\n")
    assert np.min(_received_power(same)) >= -1e-18
    other = phsym.parse(".model Q NPN(IS=1e-14 BF=80 BR=2 NR=1.5)\nV1 c 0 1\nV2 b 0 0.6\nQ1 c b 0 Q\n")
    assert np.min(_received_power(other)) < 0       # documented: NF != NR is not passive near v_be = v_bc


def test_bjt_transient_converges_at_second_order_and_balances_energy():
    text = (".model QN NPN(IS=1e-15 BF=200 VAF=100 CJE=4p CJC=2p)\nVCC vcc 0 9\nVIN in 0 SIN(0 0.02 2k)\n"
            "C1 in b 1u\nR1 vcc b 82k\nR2 b 0 15k\nRC vcc c 3.9k\nRE e 0 820\nQ1 c b e QN\n")
    m = phsym.parse(text)
    T = 5e-4
    # states on the grid at t = T (step values such as v(c) sit at t_k + h/2)
    # the scheme's order: junction charges stepped as the scheme says (stiff="scheme"); by default
    # they step to the end at these rates, which settles their nanosecond modes
    ref = phsym.simulate(m, 8 * 96000, duration=T, x0="dc", stiff="scheme").x[-1]
    errs = []
    for fs in (48000, 96000, 192000):
        r = phsym.simulate(m, fs, duration=T, x0="dc", stiff="scheme")
        assert r.max_balance_error < 1e-9
        errs.append(abs(r.x[-1][0] - ref[0]))       # q_C1 (the junction charges sit at Newton's tolerance)
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(orders > 1.7), (errs, orders)
    # stepped to the end, the coupling capacitor's charge is no further from the reference
    end = phsym.simulate(m, 48000, duration=T, x0="dc")
    assert end.max_balance_error < 1e-9 and np.all(end.P_num >= 0) and end.P_num.max() > 0
    assert abs(end.x[-1][0] - ref[0]) <= errs[0]


def test_bjt_switch_with_pulses_saturates_cuts_off_and_balances_energy():
    # Newton needs many iterations (and sub-steps with the junction charges)
    # at the edges, where a junction turns off; the run must still be exact.
    # The junction capacitances against RC (ns) are stiff at 1 us steps: the
    # discrete gradient (trapezoidal-like, not L-stable) keeps their mode
    # ringing at the Nyquist rate after an edge, so the levels are compared
    # with backward Euler, which damps it.
    text = (".model QS NPN(IS=1e-14 BF=100 BR=1 CJE=5p CJC=2p TF=1n TR=50n)\nVCC vcc 0 5\n"
            "VIN in 0 PULSE(0 5 0 10n 10n 20u 40u)\nRB in b 10k\nRC vcc c 1k\nQ1 c b 0 QS\n")
    m = phsym.parse(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", phsym.errors.SimulationWarning)
        dg = phsym.simulate(m, 1e6, duration=80e-6, x0="dc")
        r = phsym.simulate(m, 1e6, duration=80e-6, x0="dc", method="backward_euler")
        fine = phsym.simulate(m, 4e6, duration=80e-6, x0="dc", method="backward_euler")
    assert dg.max_balance_error < 1e-9       # backward Euler dissipates numerically: no exact balance
    for res in (dg, r, fine):
        assert not res.flags.any() and np.all(np.isfinite(res.x))
    vc, vf = r["v(c)"], fine["v(c)"]
    for t, level in ((10e-6, 0.0704), (30e-6, 5.0), (50e-6, 0.0704), (70e-6, 5.0)):   # ngspice: 0.0704, 5.0
        assert np.interp(t, r.t_step, vc) == pytest.approx(level, abs=2e-3)
        assert np.interp(t, r.t_step, vc) == pytest.approx(np.interp(t, fine.t_step, vf), abs=2e-4)


# ----------------------------------------------------------------- MOSFET
def _sh(vgs, vds, beta, vto, lam):
    vov = vgs - vto
    if vov <= 0:
        return 0.0
    if vds >= vov:
        return beta / 2 * vov ** 2 * (1 + lam * vds)
    return beta * vds * (vov - vds / 2) * (1 + lam * vds)


@pytest.mark.parametrize("rd", [2e3, 20e3], ids=["saturation", "triode"])
def test_mosfet_dc_point_matches_the_square_law(rd):
    kp, w, l, vto, lam, vdd, vg = 2e-4, 50e-6, 5e-6, 0.8, 0.03, 10.0, 2.0
    op = _op(f".model N1 NMOS(VTO={vto} KP={kp} LAMBDA={lam})\nVDD vdd 0 {vdd}\nVG g 0 {vg}\n"
             f"RD vdd d {rd}\nM1 d g 0 0 N1 W={w} L={l}\n")
    beta = kp * w / l

    def f(vd):     # drain current balance, with the bulk-drain diode (reverse biased) and GMIN
        ibd = 1e-14 * math.expm1(-vd / VT) + GMIN * (-vd)
        return (vdd - vd) / rd - _sh(vg, vd, beta, vto, lam) + ibd
    vd = so.brentq(f, 0.0, vdd, xtol=1e-15)
    assert op.nodes["d"] == pytest.approx(vd, rel=1e-8)
    sat = vd >= vg - vto
    assert sat == (rd < 1e4)


def test_nmos_and_pmos_are_mirror_images_with_body_effect():
    card = "VTO={v} KP=1m LAMBDA=0.02 GAMMA=0.4 PHI=0.65 CGSO=1n CGDO=0.3n"
    base = ("VDD vdd 0 {s}9\nVB sub 0 {b}1\nVIN in 0 SIN(0 {s}0.1 1k)\nC1 in g 1u\nR1 vdd g 2Meg\n"
            "R2 g 0 1Meg\nRD vdd d 3k\nRS s 0 1k\nM1 d g s sub N W=20u L=2u\n")
    n = phsym.parse(f".model N NMOS({card.format(v=1.0)})\n" + base.format(s="", b="-"))
    p = phsym.parse(f".model N PMOS({card.format(v=-1.0)})\n" + base.format(s="-", b=""))
    assert [d.element for d in n.structure.dissipative][-3:] == ["M1.gs", "M1.ds", "M1.bs"]
    rn = phsym.simulate(n, 48000, duration=2e-3, x0="dc")
    rp = phsym.simulate(p, 48000, duration=2e-3, x0="dc")
    for node in ("g", "d", "s"):
        assert np.allclose(rp[f"v({node})"], -rn[f"v({node})"], rtol=1e-9, atol=1e-12)
    assert rn.max_balance_error < 1e-9


def test_mosfet_reverse_mode_swaps_drain_and_source():
    # the same transistor driven from either end conducts the same current
    fwd = _op(".model N1 NMOS(VTO=1 KP=1m)\nV1 a 0 0.5\nVG g 0 3\nM1 a g 0 0 N1\n")
    rev = _op(".model N1 NMOS(VTO=1 KP=1m)\nV1 a 0 -0.5\nVG g 0 2.5\nM1 0 g a a N1\n")
    # opposite through V1 (it sits at the drain, then at the source); equal up to
    # the gate's GMIN current, which flows through V1 only in the second circuit
    assert fwd.currents["V1"] == pytest.approx(-rev.currents["V1"], rel=1e-8)


# ------------------------------------------------------------------- JFET
def test_jfet_self_bias_matches_the_square_law():
    beta, vto, lam, rs, vdd = 1.3e-3, -2.0, 0.01, 1e3, 9.0
    op = _op(f".model JN NJF(VTO={vto} BETA={beta} LAMBDA={lam})\nVDD vdd 0 {vdd}\nRG g 0 1Meg\n"
             f"J1 vdd g s JN\nRS s 0 {rs}\n")

    def junction(v):
        return 1e-14 * math.expm1(v / VT) + GMIN * v

    def eqs(z):      # gate and source currents, gate junctions included
        vg, vs = z
        vgs, vds = vg - vs, vdd - vs
        ich = beta * (vgs - vto) ** 2 * (1 + lam * vds)
        igs, igd = junction(vgs), junction(vg - vdd)
        return [vg / 1e6 + igs + igd, vs / rs - ich - igs]
    vg, vs = so.fsolve(eqs, [0.0, 1.0], xtol=1e-14)
    assert op.nodes["s"] == pytest.approx(vs, rel=1e-9)
    assert op.nodes["g"] == pytest.approx(vg, rel=1e-6)


# ------------------------------------------------------------------ input
def test_transistor_cards_and_errors():
    with pytest.raises(NetlistError, match="unknown bjt model parameter 'FOO'"):
        phsym.parse(".model Q NPN(FOO=1)\nV1 c 0 1\nQ1 c c 0 Q\n")
    with pytest.raises(NetlistError, match="contradicts model 'Q' of type PNP"):
        phsym.parse(".model Q PNP(BF=50)\nV1 c 0 1\nQ1 c c 0 Q polarity=npn\n")
    with pytest.raises(NetlistError, match="needs NPN or PNP"):
        phsym.parse(".model D1N D(IS=1n)\nV1 c 0 1\nQ1 c c 0 D1N\n")
    m = phsym.parse(".model Q NPN(BF=50)\nV1 c 0 1\nV2 b 0 0.7\nQ1 c b 0 Q\n")
    with pytest.raises(StructureError, match="multiport") as exc:
        m.linearize()
    assert "Q1.be" in str(exc.value)


def test_pyphs_bjtamp_dc_point_matches_the_device_equations():
    op = operating_point(phsym.load(Path(__file__).resolve().parents[1] / "netlists" / "bjtamp.cir"))
    Is, bf, br, n, vt, rb, rc, re = 2.39e-14, 294.3, 7.946, 1.006, 0.026, 1.0, 0.85, 0.4683

    def eqs(z):
        vb, vc, bi, ci, ei = z
        ibe = Is * math.expm1((bi - ei) / (n * vt)) + GMIN * (bi - ei)
        ibc = Is * math.expm1((bi - ci) / (n * vt)) + GMIN * (bi - ci)
        ic, ib = (ibe - ibc) - ibc / br, ibe / bf + ibc / br
        return [(vc - vb) / 270e3 - (vb - bi) / rb, (vb - bi) / rb - ib, (vc - ci) / rc - ic,
                ei / re - ic - ib, (9.0 - vc) / 1e3 - (vc - vb) / 270e3 - ic]
    z0 = [op.nodes[k] for k in ("n2", "n3", "Q1#b", "Q1#c", "Q1#e")]
    z = so.fsolve(eqs, z0, xtol=1e-14)
    assert np.max(np.abs(eqs(z))) < 1e-15
    assert np.allclose(z0, z, rtol=1e-8, atol=1e-10)


def test_fet_gate_capacitances_are_linear_storages_and_shorted_ports_read_zero():
    import sympy as sp
    m = phsym.parse(".model JN NJF(VTO=-2 BETA=1m CGS=3p CGD=1p)\nVD d 0 9\nRG g 0 1Meg\nJ1 d g 0 JN\n")
    S = m.structure
    assert [str(x) for x in S.states] == ["q_J1.cgs", "q_J1.cgd"]
    q = S.states[0]
    H = S.storages[0].hamiltonian.subs(m.parameter_values())
    assert sp.simplify(H - q ** 2 / (2 * 3e-12)) == 0
    # a gate tied to the source is carried as SPICE carries it: v_gs = 0, no gate-source charge
    m = phsym.parse(".model N1 NMOS(VTO=1 CGSO=1n)\nVD d 0 5\nVG g 0 3\nM1 d g g 0 N1\n.probe i(VD)\n")
    assert not any("cgs" in x for x in m.states)
    r = phsym.simulate(m, 1e6, duration=5e-6)
    assert np.max(np.abs(r["i(VD)"])) < 1e-9           # off below VTO: only GMIN's leakage


def test_mosfet_level1_parameters_derived_as_ngspice_does():
    # ngspice-39 (`ngspice -b`, `showmod m1 : kp vto phi gamma` after `op`) on
    #   .model mm nmos(level=1 tox=1e-7 uo=550 nsub=1e15)
    #   .model mp pmos(level=1 tox=1e-7 uo=250 nsub=3e15 nss=1e10 tpg=-1)
    # prints kp 1.89923e-05 vto 0.131182 phi 0.576341 gamma 0.527623 and
    #        kp 8.63286e-06 vto -1.64771 phi 0.633172 gamma 0.913869
    from phsym.components.fets import level1_parameters
    for given, sign, want in ((dict(Tox=1e-7, Uo=550, Nsub=1e15), 1, (1.89923e-05, 0.131182, 0.576341, 0.527623)),
                              (dict(Tox=1e-7, Uo=250, Nsub=3e15, Nss=1e10, Tpg=-1), -1,
                               (8.63286e-06, -1.64771, 0.633172, 0.913869))):
        p = level1_parameters(given, sign, float)
        got = [float(p[k]) for k in ("Kp", "Vto", "Phi", "Gamma")]
        np.testing.assert_allclose(got, want, rtol=1e-5)
    # without TOX nothing is derived: SPICE's defaults
    p = level1_parameters(dict(Nsub=1e15, Uo=550), 1, float)
    assert [float(p[k]) for k in ("Kp", "Vto", "Phi", "Gamma")] == [2e-5, 0.0, 0.6, 0.0]


def test_bjt_base_resistance_modulation_and_temperature_against_ngspice():
    # ngspice-39 `.op` of this deck (`print v(c1) v(c2) i(vb1) i(vb2)` in a control block):
    #   v(c1) = 4.463529e+00, v(c2) = 4.522154e+00, i(vb1) = -2.80814e-05, i(vb2) = -2.46780e-05
    # .temp 27 sets the transistors' Vt as SPICE does (kT/q at 27 C), RBM with IRB the current-crowding
    # law, RBM alone RBM + (RB - RBM) / q_b
    deck = """bjt rbm irb
.model QN NPN(IS=1e-15 BF=100 RB=500 RBM=20 IRB=50u VAF=50 IKF=20m)
.model QM NPN(IS=1e-15 BF=100 RB=500 RBM=20 VAF=50 IKF=20m)
.temp 27
VCC vcc 0 5
VB1 b1 0 0.75
VB2 b2 0 0.75
RC1 vcc c1 200
RC2 vcc c2 200
Q1 c1 b1 0 QN
Q2 c2 b2 0 QM
"""
    op = operating_point(phsym.parse(deck))
    got = [op.nodes["c1"], op.nodes["c2"], op.currents["VB1"], op.currents["VB2"]]
    np.testing.assert_allclose(got, [4.463529, 4.522154, -2.80814e-05, -2.46780e-05], rtol=1e-4)


def test_bjt_substrate_node_and_charge():
    # Q c b e s MODEL: the fourth node is the substrate; CJS stores the collector-substrate
    # depletion charge (MJS = 0: a linear capacitance CJS)
    m = phsym.parse(".model QN NPN(CJS=2p)\nV1 c 0 5\nV2 b 0 0.6\nQ1 c b 0 sub QN\nR1 sub 0 1k\n")
    assert m.states == ["q_Q1.cjs"] and m.netlist.element("Q1").nodes == ("c", "b", "0", "sub")
    r = phsym.simulate(m, 1e9, duration=50e-9, x0="dc")
    assert r.x[-1, 0] == pytest.approx(-2e-12 * 5, rel=1e-9)       # v(sub) - v(c) = -5 V at DC


def test_p_channel_jfet_threshold_is_not_mirrored():
    # ngspice-39 `.op` (print i(vd) i(vs)) of a PJF with VTO=-1 at v_gs = 0, v_ds = -5 V: a depletion
    # device conducts BETA VTO**2: i(vd) = 7.433000e-04, i(vs) = -7.43300e-04
    op = operating_point(phsym.parse(".model JX PJF(IS=12.50E-12 BETA=743.3E-6 VTO=-1)\nVS s 0 0\nVG g 0 0\n"
                                     "VD d 0 -5\nJ1 d g s JX\n"))
    assert op.currents["VD"] == pytest.approx(7.433e-4, rel=1e-6)
    assert op.currents["VS"] == pytest.approx(-7.433e-4, rel=1e-6)
