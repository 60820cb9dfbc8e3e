"""Stiff storages (junction charges) step to the end of the step: L-stable, with the numerical
dissipation booked as P_num; checked against an independent quadrature of the SPICE charge.
(The op-amp clipper's two junctions: tests/test_stiff_clipper.py.)"""
from __future__ import annotations

import argparse
import warnings

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import quad

import phsym
from phsym.errors import SimulationInputError
from phsym.simulation.cli import simulate as cli_simulate
# SPICE's junction charge written out in numpy by the tests (independent of phsym's laws)
from tests.test_diode_charge import tt_charge
from tests.test_codegen_effort import DECK

def _run(model, stiff, duration, fs=48000, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return phsym.Simulator(model, fs=fs, stiff=stiff, record_efforts=True, engine="generated").run(duration=duration, **kw)


def test_numerical_dissipation_is_the_integral_of_the_charge_over_the_step():
    # a junction stepped to its end voltage v1 from v0 dissipates D = v1 dQ - (H(Q1) - H(Q0)), which
    # integration by parts writes as the integral of Q(v) - Q(v0) from v0 to v1 (>= 0): quadrature of
    # the tests' own SPICE charge against the loop's P_num, step by step
    m = phsym.parse(DECK)
    r = _run(m, "backward_euler", 1e-3)
    i = m.states.index("q_D1.cj")
    st = m.structure.storages[[s.states[0] for s in m.structure.storages].index(m.structure.states[i])]
    syms = [p.symbol for p in m.netlist.parameters.values()]
    values = {p.symbol: float(p.default) for p in m.netlist.parameters.values()}
    P = [float(sp.sympify(a).xreplace(values)) for a in st.hamiltonian.args[1:]]
    assert len(syms) and np.all(r.P_num >= 0) and r.P_num.max() > 0
    v1 = r.efforts[:, i]                   # the gradient the step used: the end voltage
    v0 = np.concatenate([[0.0], v1[:-1]])  # the run starts at rest
    h = 1 / 48000
    D = [quad(lambda v, a=a: tt_charge(v, *P) - tt_charge(a, *P), a, b, epsabs=0, epsrel=1e-12)[0]
         for a, b in zip(v0, v1)]
    np.testing.assert_allclose(r.P_num * h, D, rtol=1e-6, atol=1e-9 * max(D))
    assert r.max_balance_error < 1e-10
    # the recorded energy (the junction's from its charge law's own terms at the step's end):
    # H(Q) = Q v - int_0^v Q(s) ds of the tests' charge, plus the capacitor's
    Q, q = r.x[1:, i], r.x[1:, m.states.index("q_C1")]
    Phi = [quad(lambda v: tt_charge(v, *P), 0.0, b, epsabs=0, epsrel=1e-12)[0] for b in v1]
    np.testing.assert_allclose(r.H[1:], Q * v1 - Phi + q ** 2 / (2 * 10e-9), rtol=1e-9, atol=1e-9 * r.H.max())
    # P_num is part of P_diss, and only with stiff storages stepped to the end
    assert "P_num" in r.labels() and "P_num" not in _run(m, "scheme", 1e-3).labels()


def test_stiff_option_is_checked_and_reaches_the_scheme():
    m = phsym.parse(DECK)
    with pytest.raises(SimulationInputError, match="stiff"):
        phsym.Simulator(m, fs=48000, stiff="trapezoidal", engine="generated")
    # midpoint: the charge stepped to the end is solved through its voltage too; as the scheme, through the charge
    assert "v_D1.cj" in phsym.Simulator(m, fs=48000, method="midpoint", engine="generated")._gen.unknowns
    assert "q_D1.cj" in phsym.Simulator(m, fs=48000, method="midpoint", stiff="scheme", engine="generated")._gen.unknowns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = phsym.Simulator(m, fs=48000, method="midpoint", engine="generated").run(duration=2e-3)
        be = phsym.Simulator(m, fs=48000, method="backward_euler", engine="generated").run(duration=2e-3)
    # the midpoint rule (not exact for a non-quadratic H) is exact here: the only non-quadratic
    # storage steps to the end and books its dissipation
    assert r.max_balance_error < 1e-10 and np.all(r.P_num >= 0) and r.P_num.max() > 0
    # under backward Euler every storage's numerical dissipation stays in the balance: no P_num
    assert "P_num" not in be.labels() and np.all(be.balance <= 1e-12 * be.power_scale)


def test_cli_stiff(tmp_path, capsys):
    deck = tmp_path / "d.cir"
    deck.write_text(DECK)
    out = tmp_path / "r.npz"

    def cli(*argv):
        p = argparse.ArgumentParser()
        cli_simulate.add_parser(p.add_subparsers())
        args = p.parse_args(["simulate", str(deck), *argv])
        return args.func(args)
    for st, fs in (("auto", "48k"), ("backward_euler", "48k"), ("scheme", "48k"), ("auto", "2G")):
        assert cli("--fs", fs, "--duration", "20u", "--stiff", st, "--out", str(out), "--quiet") == 0
        with np.load(out) as z:
            assert ("P_num" in z.files) == (st == "backward_euler" or (st == "auto" and fs == "48k")), (st, fs)
    with pytest.raises(SystemExit):
        cli("--stiff", "gear")
    assert "--stiff" in capsys.readouterr().err


def test_grey_box_sensitivities_step_junction_charges_as_the_simulator():
    # the estimator's sensitivity module takes the simulator's rule at the data's step: at 48 kHz the
    # junction charge steps to the end in both (through the charge there, through the voltage here)
    from phsym.identify import ParameterEstimator
    from phsym.simulation.initial import state_scales
    m = phsym.parse(DECK)
    fs, n = 48000.0, 97
    u = 2 * np.sin(2 * np.pi * 1e3 * np.arange(n) / fs)
    sim = _run(m, "auto", None, u={"V1": u})
    # (the sensitivities solve through the charge: its first step from rest needs more than the
    # default 200 iterations, with either rule)
    est = ParameterEstimator(m, ["R1"], ["v(a)"], method="discrete_gradient", maxit=2000)
    step = est._sensitivity(m, ["R1"], ["v(a)"], 1 / fs)
    Y, DY, bad, _ = est._simulate(m, step, {"R1": 1e3}, u[:, None], 1 / fs, None,
                                  state_scales(m.structure, m.parameter_values()))
    assert bad < 0 and np.any(sim.P_num > 0)
    np.testing.assert_allclose(Y[:, 0], sim["v(a)"], rtol=0, atol=1e-9 * np.ptp(sim["v(a)"]))


def test_results_record_the_stiff_rule_and_the_estimator_compares_it():
    from phsym.errors import IdentificationError
    from phsym.identify import ParameterEstimator, SchemeMismatchWarning
    from phsym.identify.warnings import check_scheme
    m = phsym.parse(DECK)
    end, sch = _run(m, "auto", 1e-3), _run(m, "scheme", 1e-3)
    assert end.info["stiff"] == "backward_euler" and sch.info["stiff"] == "scheme"
    assert _run(m, "auto", 2e-7, fs=1e8).info["stiff"] == "scheme"       # steps below 1 us: as the scheme
    # a model without stiff storages records none; a stream records its rule as a run does
    rc = phsym.Simulator(phsym.parse("RC\nV1 in 0 DC 1\nR1 in a 1k\nC1 a 0 1u\n"), fs=48000)
    assert "stiff" not in rc.run(duration=1e-4).info
    stream = phsym.Simulator(m, fs=48000, stiff="scheme").stream()
    stream.process(np.zeros(8))
    assert stream.last.info["stiff"] == "scheme"
    # the estimator: data stepped by another rule than the fit's give a SchemeMismatchWarning (raised
    # here as an error, before any sensitivity module is built)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemeMismatchWarning)
        with pytest.raises(SchemeMismatchWarning, match="stiff='scheme'"):
            ParameterEstimator(m, free="DX.IS", method="discrete_gradient", stiff="backward_euler").fit(sch)
        with pytest.raises(IdentificationError, match="stiff must be one of"):
            ParameterEstimator(m, free="DX.IS", method="discrete_gradient", stiff="trapezoidal").fit(sch)
        check_scheme(sch.info, "discrete_gradient", "scheme")       # the same rule: nothing to say
        # under backward Euler both rules step stiff storages alike
        check_scheme({"scheme": "backward_euler", "stiff": "scheme"}, "backward_euler", "backward_euler")
    with pytest.warns(SchemeMismatchWarning, match="method='midpoint'"):
        check_scheme({"scheme": "midpoint", "stiff": "scheme"}, "discrete_gradient", "scheme")
    # predict (and score, which calls it) steps by the fit's rules
    est = ParameterEstimator(m, free="DX.IS", method="discrete_gradient", stiff="scheme")
    est.model_, est.params_ = m, {"DX.IS": 2.52e-9}         # the fitted attributes predict reads
    est.method_, est.stiff_ = "discrete_gradient", "scheme"
    t = np.arange(49) / 48000
    assert est.predict(t, {"V1": np.sin(2e3 * np.pi * t)}).info["stiff"] == "scheme"
