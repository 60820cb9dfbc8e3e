"""Diode junction charge as a storage (CJO, VJ, M, FC; TT) and reverse breakdown (BV, IBV).

The energy H(q) of :mod:`phsym.components.junction` is checked against SPICE's
charge law q(v) written independently here: dH/dq (by central differences of
H) must be the voltage whose SPICE charge is q.  Waveforms against ngspice
are in the deck corpus (zener_limiter_bv, diode_switching_cjo, diode_recovery_tt).
"""
import warnings

import numpy as np
import pytest
import sympy as sp

import phsym
from phsym.components.junction import (JunctionEnergy, JunctionVoltage, breakdown_current, charge_energy,
                                       charge_energy_from, charge_voltage, depletion_charge, depletion_energy)
from phsym.errors import NetlistError, NetlistWarning, StructureError
from phsym.netlist import parse_netlist


def spice_charge(v, cjo, vj, m, fc):
    """SPICE level-1 depletion charge (the formula of SPICE's diode load routine)."""
    if v < fc * vj:
        return vj * cjo * (1 - (1 - v / vj) ** (1 - m)) / (1 - m)
    f1 = vj * (1 - (1 - fc) ** (1 - m)) / (1 - m)
    f2, f3 = (1 - fc) ** (1 + m), 1 - fc * (1 + m)
    vf = fc * vj
    return cjo * f1 + cjo / f2 * (f3 * (v - vf) + m / (2 * vj) * (v * v - vf * vf))


@pytest.mark.parametrize("cjo, vj, m, fc", [(2e-12, 0.7, 0.5, 0.5), (50e-12, 0.75, 0.33, 0.5),
                                            (1e-9, 1.0, 0.0, 0.5), (5e-12, 0.6, 0.9, 0.95)])
def test_energy_gradient_inverts_spice_charge(cjo, vj, m, fc):
    q = sp.Symbol("q", real=True)
    H = sp.lambdify(q, depletion_energy(q, *(sp.Float(a) for a in (cjo, vj, m, fc))), "math")
    assert H(0.0) == 0.0
    for v in np.concatenate([np.linspace(-20, fc * vj * 0.999, 23), np.linspace(fc * vj * 1.001, 2.0, 9)]):
        qv = spice_charge(v, cjo, vj, m, fc)
        d = 1e-6 * max(abs(qv), cjo * vj * 1e-3)
        grad = (H(qv + d) - H(qv - d)) / (2 * d)
        assert grad == pytest.approx(v, rel=1e-6, abs=1e-6), v
        assert H(qv) >= 0.0
    # the symbolic charge law used in the docs is SPICE's
    vs = sp.Symbol("v", real=True)
    qs = sp.lambdify(vs, depletion_charge(vs, cjo, vj, m, fc), "math")
    for v in (-5.0, 0.1, fc * vj + 0.2):
        assert qs(v) == pytest.approx(spice_charge(v, cjo, vj, m, fc), rel=1e-12)


def test_energy_is_continuous_at_the_forward_bias_knee():
    cjo, vj, m, fc = 2e-12, 0.7, 0.5, 0.5
    q = sp.Symbol("q", real=True)
    H = sp.lambdify(q, depletion_energy(q, cjo, vj, m, fc), "math")
    q_fc = spice_charge(fc * vj, cjo, vj, m, fc)
    assert H(q_fc * (1 - 1e-12)) == pytest.approx(H(q_fc * (1 + 1e-12)), rel=1e-9)


def test_breakdown_term_is_passive_and_passes_through_ibv():
    v = sp.Symbol("v", real=True)
    f = sp.lambdify(v, breakdown_current(v, 5.1, 1e-3, 0.02585), "math")
    assert f(-5.1) == pytest.approx(-1e-3, rel=1e-9) and abs(f(0.0)) < 1e-90
    grid = np.concatenate([-np.logspace(-6, np.log10(5.5), 200), np.logspace(-6, 1, 200)])
    assert all(x * f(x) >= 0 for x in grid)


def test_model_card_names_aliases_and_checks():
    text = ("T\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DA\nD2 b 0 CJO=3p MJ=0.4\n"
            ".model DA D(IS=1e-14 CJ0=2p PB=0.7 M=0.5 FC=0.5 BV=10 IB=1u)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # nothing of these is ignored any more
        nl = parse_netlist(text)
    p = nl.parameters
    assert p["DA.Cjo"].default == 2e-12 and p["DA.Vj"].default == 0.7 and p["DA.Mj"].default == 0.5
    assert p["DA.Ibv"].default == 1e-6 and p["D2.Mj"].default == 0.4
    m = phsym.parse(text)
    assert m.states == ["q_D1.cj", "q_D2.cj"]
    assert "exp" in str(m.structure.dissipative[1].z) and "DA.Bv" in str(m.structure.dissipative[1].z)
    with pytest.warns(NetlistWarning, match="DA: NBV"):
        parse_netlist("T\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DA\n.model DA D(CJO=1p TT=5n NBV=2)\n")
    with pytest.raises((NetlistError, StructureError), match="Fc of D1 must be in"):
        phsym.parse("T\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DA\n.model DA D(CJO=1p FC=1)\n")


def test_depletion_capacitance_small_signal(tmp_path):
    # DC -3 V through 10k on a reverse-biased junction: small-signal, the
    # junction is the capacitor C(-3) = CJO (1 + 3/VJ)**-M (the Hessian 1/C
    # of H), in parallel with GMIN and the diode's reverse conductance, both
    # about 1e-12 S (R g = 1e-8, below the tolerance)
    from phsym.simulation import ac_analysis
    cjo, vj, m, R = 10e-12, 0.7, 0.5, 1e4
    deck = tmp_path / "cj.cir"
    deck.write_text(f"Reverse-biased junction\nV1 in 0 DC -3\nR1 in a {R}\nD1 a 0 CJO={cjo} VJ={vj} MJ={m}\n")
    f = np.array([1e5, 1e6, 1e7])
    r = ac_analysis(deck, f, signals=["v(a)"])
    c = cjo * (1 + 3 / vj) ** -m
    np.testing.assert_allclose(r.response["v(a)"], 1 / (1 + 2j * np.pi * f * R * c), rtol=1e-6)


TT_PARAMS = (2e-12, 0.7, 0.4, 0.5, 10e-9, 1e-14, 0.02585, 1e-12, 5.1, 1e-3)


def tt_charge(v, cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv):
    """SPICE's junction charge with transit time: depletion + TT * (diode current with GMIN and breakdown)."""
    i = i_s * np.expm1(v / nvt) + gmin * v - ibv * (np.exp(-(v + bv) / nvt) - np.exp(-bv / nvt))
    return spice_charge(v, cjo, vj, m, fc) + tt * i


@pytest.mark.parametrize("params", [TT_PARAMS, (0.0,) + TT_PARAMS[1:], TT_PARAMS[:9] + (0.0,)])
def test_transit_time_charge_inverse_and_energy(params):
    for v in (-5.4, -5.1, -2.0, -0.1, 0.0, 1e-3, 0.3, 0.36, 0.6, 0.75, 0.9):
        Q = tt_charge(v, *params)
        assert charge_voltage(Q, *params) == pytest.approx(v, rel=1e-12, abs=1e-12), v
        assert charge_energy(Q, v, *params) >= 0.0
        if Q == 0.0:
            continue
        d = 1e-6 * abs(Q)
        H = [charge_energy(q, charge_voltage(q, *params), *params) for q in (Q - d, Q + d)]
        assert (H[1] - H[0]) / (2 * d) == pytest.approx(v, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("params", [TT_PARAMS, (0.0,) + TT_PARAMS[1:], TT_PARAMS[:4] + (0.0,) + TT_PARAMS[5:],
                                    (50e-12, 0.75, 0.33, 0.5, 0.0, 1e-14, 0.02585, 1e-12, 1.0, 0.0)])
def test_energy_from_the_charge_laws_terms_is_the_energy(params):
    # the loops' end-of-step energy reads the depletion charge and exp(v / N Vt) the charge law computed
    cjo, vj, m, fc, tt, i_s, nvt = params[:7]
    for v in (-5.4, -2.0, -0.1, -1e-4, 0.0, 1e-3, 0.3, 0.36, 0.6, 0.75, 0.9):
        Q = tt_charge(v, *params)
        got = charge_energy_from(Q, v, spice_charge(v, cjo, vj, m, fc), np.exp(v / nvt), (1 - fc) ** (1 - m),
                                 (1 - fc) ** (-1 - m), *params)
        scale = abs(Q * v) + cjo * vj * vj + tt * i_s * nvt * np.exp(v / nvt)
        assert got == pytest.approx(charge_energy(Q, v, *params), abs=1e-13 * scale), v


def test_transit_time_sympy_functions_differentiate_exactly():
    q = sp.Symbol("q", real=True)
    P = [sp.Float(a) for a in TT_PARAMS]
    Q = 3e-11
    H = JunctionEnergy(q, *P)
    assert float(sp.diff(H, q).subs(q, Q).evalf()) == pytest.approx(charge_voltage(Q, *TT_PARAMS), rel=1e-14)
    # dv/dQ = 1/C(v) and d2H/dQ2 against central differences
    g2 = float(sp.diff(H, q, 2).subs(q, Q).evalf())
    d = 1e-6 * Q
    fd = (charge_voltage(Q + d, *TT_PARAMS) - charge_voltage(Q - d, *TT_PARAMS)) / (2 * d)
    assert g2 == pytest.approx(fd, rel=1e-6)
    # a parameter derivative (the grey-box fit's sensitivities): dv/dTT at fixed Q
    t = sp.Symbol("tt", positive=True)
    Pt = list(P)
    Pt[4] = t
    dv = float(sp.diff(JunctionVoltage(q, *Pt), t).subs({q: Q, t: TT_PARAMS[4]}).evalf())
    e = 1e-6 * TT_PARAMS[4]
    args = list(TT_PARAMS)
    vals = []
    for s in (-1, 1):
        args[4] = TT_PARAMS[4] + s * e
        vals.append(charge_voltage(Q, *args))
    assert dv == pytest.approx((vals[1] - vals[0]) / (2 * e), rel=1e-6)
    # the same for the energy: dH/dTT at fixed Q
    dH = float(sp.diff(JunctionEnergy(q, *Pt), t).subs({q: Q, t: TT_PARAMS[4]}).evalf())
    Hs = []
    for s in (-1, 1):
        args[4] = TT_PARAMS[4] + s * e
        Hs.append(charge_energy(Q, charge_voltage(Q, *args), *args))
    assert dH == pytest.approx((Hs[1] - Hs[0]) / (2 * e), rel=1e-5)


def test_transit_time_storage_replaces_the_depletion_storage():
    m = phsym.parse("V1 a 0 1\nR1 a b 1k\nD1 b 0 CJO=2p TT=5n\n")
    assert m.states == ["q_D1.cj"]
    assert isinstance(m.structure.storages[0].hamiltonian, JunctionEnergy)


# ngspice-39: `ngspice -b` on this deck with `V1 in 0 DC 5 AC 1`, `.options
# reltol=1e-9 abstol=1e-15 vntol=1e-12` and a control block `op; print v(a);
# ac dec 1 1meg 1g; print vm(a) vp(a)`
TT_DECK = ("Diode small-signal with transit time\n.temp 27\n"
           ".model DRR D(IS=1e-14 N=1 RS=2 CJO=2p VJ=0.7 M=0.4 TT=10n)\n"
           "V1 in 0 DC 5\nR1 in a 1k\nD1 a 0 DRR\n.end\n")
NGSPICE_TT_VA = 7.014334e-01
NGSPICE_TT_AC = [(1e6, 7.938784e-03, -4.68055e-02), (1e7, 6.824220e-03, -4.03463e-01),
                 (1e8, 2.336484e-03, -4.08460e-01), (1e9, 1.999793e-03, -4.75972e-02)]


def test_transit_time_operating_point_and_ac_agree_with_ngspice(tmp_path):
    # the AC response needs the junction's small-signal capacitance, the
    # Hessian of H: 1/C(v) with C = C_dep(v) + TT di/dv (about 1.7 nF here)
    from phsym.simulation import ac_analysis, operating_point
    deck = tmp_path / "tt.cir"
    deck.write_text(TT_DECK)
    assert operating_point(deck).nodes["a"] == pytest.approx(NGSPICE_TT_VA, rel=1e-6)
    ref = np.array(NGSPICE_TT_AC)
    r = ac_analysis(deck, ref[:, 0], signals=["v(a)"])
    np.testing.assert_allclose(np.abs(r.response["v(a)"]), ref[:, 1], rtol=2e-6)
    np.testing.assert_allclose(np.angle(r.response["v(a)"]), ref[:, 2], rtol=2e-5)


def test_depletion_kernel_is_the_closed_form_energy():
    # without TT the model's storage (JunctionEnergy, compiled kernels) is the
    # closed-form depletion energy: same H and same dH/dq on both pieces
    q = sp.Symbol("q", real=True)
    cjo, vj, m, fc = 50e-12, 0.7, 0.5, 0.5
    closed = sp.lambdify(q, depletion_energy(q, cjo, vj, m, fc), "math")
    P = (cjo, vj, m, fc, 0.0, 1e-14, 0.02585, 1e-12, 1.0, 0.0)
    for v in (-8.0, -1.0, -1e-3, 0.2, 0.349, 0.351, 0.6, 1.0):
        Q = spice_charge(v, cjo, vj, m, fc)
        assert charge_voltage(Q, *P) == pytest.approx(v, rel=1e-13, abs=1e-15)
        # both forms are differences of terms ~ Q VJ (H ~ Q v / 2): near 0 V
        # they lose about VJ/v digits each, differently
        assert charge_energy(Q, charge_voltage(Q, *P), *P) == pytest.approx(closed(Q), rel=1e-9)
    m_ = phsym.parse(f"V1 a 0 1\nR1 a b 1k\nD1 b 0 CJO={cjo} VJ={vj} MJ={m}\n")
    assert isinstance(m_.structure.storages[0].hamiltonian, JunctionEnergy)
