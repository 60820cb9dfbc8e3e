"""Learnable elements (learn(...)): syntax, passivity for every parameter value, fitting from I/O data."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sp

import phsym
from phsym.components.learnable import MonotoneFamily
from phsym.errors import IdentificationError, NetlistError
from phsym.identify.learned import LearnedCurve, LearnedLawEstimator, prior_law

CLIPPER = """* clipper whose diode pair is unknown
Vin in 0 SIN(0 1 1k)
R1 in out 2.2k
C1 out 0 10n
D1 out 0 learn(kind=monotone, knots={K}, range=-0.7..0.7, scale=1m)
.end
"""


# ------------------------------------------------------------ the family
@pytest.mark.parametrize("seed", range(5))
def test_law_is_passive_and_monotone_for_random_parameters(seed):
    rng = np.random.default_rng(seed)
    fam = MonotoneFamily(*sorted(rng.uniform(-3, 3, 2)), int(rng.integers(2, 20)))
    p = rng.standard_normal(fam.knots + 3) * 10.0 ** rng.uniform(-3, 3)
    v = np.concatenate([np.linspace(-50, 50, 2001), rng.uniform(-5, 5, 500)])
    f = fam.law(v, p)
    assert np.all(v * f >= 0)
    order = np.argsort(v)
    assert np.all(np.diff(f[order]) >= -1e-12 * np.max(np.abs(f)))
    assert fam.law(np.array([0.0]), p)[0] == 0.0
    H = fam.energy_basis(v) @ p ** 2          # a convex storage: H >= 0
    assert np.all(H >= -1e-12 * np.max(np.abs(H)))


def test_energy_is_the_integral_of_the_law_symbolically():
    fam = MonotoneFamily(-0.5, 1.5, 4)
    x = sp.Symbol("x", real=True)
    ps = sp.symbols("p0:7", real=True)
    H, f = fam.expression(x, ps, energy=True), fam.expression(x, ps)
    rng = np.random.default_rng(3)
    for _ in range(3):
        sub = dict(zip(ps, rng.standard_normal(7)))
        for xv in (-3.0, -0.2, 0.7, 4.0):
            d = float(sp.diff(H, x).subs(sub).subs(x, xv))
            assert d == pytest.approx(float(f.subs(sub).subs(x, xv)), rel=1e-10, abs=1e-14)
    assert H.subs(x, 0) == 0


# ------------------------------------------------------------ netlist syntax
def test_learn_line_makes_parameters_and_a_dissipation():
    m = phsym.parse(CLIPPER.format(K=4))
    names = [p for p in m.parameters if p.startswith("D1.")]
    assert names == ["D1.a", "D1.l", "D1.r", "D1.w1", "D1.w2", "D1.w3", "D1.w4"]
    d = next(d for d in m.structure.dissipative if d.element == "D1")
    assert d.effort_out is False or d.effort_out is True
    assert sp.simplify(d.z.subs(d.w, 0)) == 0


def test_convex_storage_in_a_mechanical_netlist():
    m = phsym.parse("F1 v 0 force\nM1 v 0 mass m=1\nK1 v 0 learn(kind=convex, knots=3, range=-10m..10m, "
                    "scale=1k)\nB1 v 0 damper c=2\n")
    assert m.states == ["p_M1", "x_K1"]
    res = phsym.Simulator(m, 1000.0, "discrete_gradient").run(u={"F1": np.sin(np.arange(401) * 0.05)})
    assert np.all(np.asarray(res["H"]) >= 0) and abs(np.max(np.abs(res["balance"]))) < 1e-9


@pytest.mark.parametrize("line, message", [
    ("D1 out 0 learn(kind=monotone, knots=1, range=-1..1)", "knots"),
    ("D1 out 0 learn(kind=monotone, range=1..-1)", "LO < HI"),
    ("D1 out 0 learn(kind=monotone, range=-1)", "LO..HI"),
    ("D1 out 0 learn(kind=wiggly)", "kind= must be one of"),
    ("D1 out 0 learn(knots=3, w7=1)", "unknown keyword 'w7'"),
])
def test_bad_learn_lines_are_netlist_errors(line, message):
    with pytest.raises(NetlistError, match=message) as err:
        phsym.parse("V1 in 0\nR1 in out 1k\n" + line + "\n")
    assert err.value.line == 3


def test_fitted_values_on_the_line_set_the_law():
    m = phsym.parse("V1 in 0\nR1 in out 1k\nD1 out 0 learn(knots=2, range=-1..1, a=0.5, w2=2)\n")
    assert m.parameters["D1.a"] == 0.5 and m.parameters["D1.w2"] == 2.0


# ------------------------------------------------------------ fitting
TRUE_LINE = "D1 out 0 learn(knots=4, range=-0.6..0.6, a=1e-3, l=0.02, r=0.03, w1=0.05, w2=1e-3, w3=2e-3, w4=0.04)"


@pytest.fixture(scope="module")
def clipper_data():
    """A clipper whose diode-like law is a known member of the family (the truth to recover)."""
    truth = phsym.parse(CLIPPER.format(K=4).replace(
        "D1 out 0 learn(kind=monotone, knots=4, range=-0.7..0.7, scale=1m)", TRUE_LINE).replace("10n", "12n"))
    fs = 48000.0
    t = np.arange(601) / fs
    u = 1.5 * np.sin(2 * np.pi * 800 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 90 * t))
    y = np.asarray(phsym.Simulator(truth, fs, "backward_euler").run(u={"Vin": u})["v(out)"])
    return t, u, y, truth


def test_recovers_a_law_and_a_capacitor_jointly_from_input_output_data(clipper_data):
    t, u, y, truth = clipper_data
    net = CLIPPER.format(K=4).replace("range=-0.7..0.7", "range=-0.6..0.6")
    est = LearnedLawEstimator(phsym.parse(net), ["C1"], outputs=["v(out)"], max_nfev=60)
    assert est.fit(t, {"Vin": u}, {"v(out)": y}) is est
    assert est.params_["C1"] == pytest.approx(12e-9, rel=1e-4)
    curve = est.laws_["D1"]
    lo, hi = est.excited_["D1"]
    true_p = np.array([1e-3, 0.02, 0.03, 0.05, 1e-3, 2e-3, 0.04])
    v = np.linspace(lo, hi, 201)
    ref = MonotoneFamily(-0.6, 0.6, 4).law(v, true_p)
    assert np.max(np.abs(curve(v) - ref)) < 1e-3 * np.max(np.abs(ref))
    a, b = curve.band(v)
    assert np.all(a <= curve(v) + 1e-15) and np.all(curve(v) <= b + 1e-15)
    assert "trusted for" in est.report()
    val = est.validate(t, {"Vin": 0.5 * u}, {"v(out)": np.asarray(
        phsym.Simulator(truth, 48000.0, "backward_euler").run(u={"Vin": 0.5 * u})["v(out)"])})
    assert val["rms_of_swing"]["v(out)"] < 1e-3 and val["outside"]["D1"] == 0.0
    # the closed form and a .table card of the curve
    f = sp.lambdify(sp.Symbol("v", real=True), curve.expression(), "numpy")
    assert np.allclose(f(v), curve(v), rtol=1e-9, atol=1e-15)
    m3 = phsym.parse("V1 in 0\nR1 in out 1k\n" + curve.table_card(points=21) + "\nRD out 0 I={D1_law(v)}\n")
    assert "RD" in [d.element for d in m3.structure.dissipative]
    # the fitted line simulates as the fit
    text = est.netlist_text(net)
    assert "w4=" in text
    y2 = np.asarray(phsym.Simulator(phsym.parse(text), 48000.0, "backward_euler").run(
        u={"Vin": u}, params={"C1": est.params_["C1"]})["v(out)"])
    assert np.max(np.abs(y2 - est.y_fit_[:, 0])) < 1e-8
    # the saved netlist carries the band: its .covariance card gives the same curve, band and excited range
    assert text.count(".covariance D1") == 1
    saved = LearnedCurve.from_model(phsym.parse(text), "d1")
    np.testing.assert_allclose(saved(v), curve(v), rtol=1e-9)
    np.testing.assert_allclose(saved.std(v), curve.std(v), rtol=1e-6)     # the line keeps 10 digits
    assert (saved.excited, saved.dof, saved.confidence) == (curve.excited, curve.dof, curve.confidence)
    assert est.netlist_text(text).count(".covariance D1") == 1       # a refit replaces the old card


def test_prior_and_smoothness_penalties_have_exact_jacobians(clipper_data):
    m = phsym.parse(CLIPPER.format(K=5))
    est = LearnedLawEstimator(m, ["C1"], ["v(out)"], smoothness=0.1,
                              prior=("shockley_pair", {"Is": 1e-9, "N": 2.0}), prior_weight=0.5)
    free = est._free_names(m)
    assert free[0] == "C1" and len(free) == 1 + 8
    rng = np.random.default_rng(0)
    params = {f: float(rng.uniform(0.1, 1.0)) for f in free}
    r, J = est._penalty(params, 100)
    for j, f in enumerate(free):
        pp, pm = dict(params), dict(params)
        pp[f] += 1e-7
        pm[f] -= 1e-7
        fd = (est._penalty(pp, 100)[0] - est._penalty(pm, 100)[0]) / 2e-7
        assert np.allclose(fd, J[:, j], rtol=1e-5, atol=1e-6 * np.max(np.abs(J))), f
    starts = est._start_values()          # the prior's non-negative least-squares fit is the start
    fam = MonotoneFamily(-0.7, 0.7, 5)
    p0 = np.array([starts[f"D1.{k}"] for k in fam.names])
    v = np.linspace(-0.7, 0.7, 50)
    f0 = prior_law(("shockley_pair", {"Is": 1e-9, "N": 2.0}))(v)
    from scipy.optimize import nnls
    best = fam.basis(v) @ nnls(fam.basis(v), f0)[0]       # the best non-negative fit on this grid
    err = np.max(np.abs(fam.law(v, p0) - f0))
    assert err < 0.3 * np.max(np.abs(f0)) and err < 1.2 * np.max(np.abs(best - f0))


def test_estimator_errors():
    with pytest.raises(IdentificationError, match="no learnable element"):
        LearnedLawEstimator(phsym.parse("V1 a 0\nR1 a 0 1k\n"), outputs=["y(V1)"])._free_names(
            phsym.parse("V1 a 0\nR1 a 0 1k\n"))
    m = phsym.parse(CLIPPER.format(K=3))
    with pytest.raises(IdentificationError, match="not learnable"):
        LearnedLawEstimator(m, laws=["R1"])._free_names(m)
    with pytest.raises(IdentificationError, match="unknown prior"):
        prior_law("tunnel")


def test_cli_fits_a_learned_law_from_wav_recordings(clipper_data, tmp_path, capsys):
    from phsym.identify.cli_fit import main
    from phsym.simulation.io.audio import write_wav
    t, u, y, truth = clipper_data
    # WAV recordings: input and output sampled at the same instants t_k = k / fs (output 0 at rest at t_0;
    # a backward-Euler step ends on the grid, so its values are the samples t_1 .. t_N)
    res = phsym.Simulator(truth, 48000.0, "backward_euler").run(u={"Vin": u})
    write_wav(tmp_path / "in.wav", u, 48000)
    write_wav(tmp_path / "out.wav", np.r_[0.0, np.asarray(res["v(out)"])], 48000)
    net = tmp_path / "clipper.cir"
    net.write_text(CLIPPER.format(K=4).replace("range=-0.7..0.7", "range=-0.6..0.6").replace("10n", "12n"))
    code = main([str(net), str(tmp_path / "in.wav"), "--wav-out", str(tmp_path / "out.wav"), "--inputs", "Vin",
                 "--outputs", "v(out)", "--quiet", "--max-nfev", "60", "--save", str(tmp_path / "fitted.cir"),
                 "--plot-laws", str(tmp_path / "laws.png")])
    out = capsys.readouterr().out
    assert code == 0 and "D1: learned monotone law" in out and "trusted for" in out
    assert (tmp_path / "laws.png").stat().st_size > 1000
    fitted = phsym.load(tmp_path / "fitted.cir")
    from phsym.cli import main as phsym_main          # the saved law shows with its band
    assert phsym_main(["show", str(tmp_path / "fitted.cir")]) == 0
    shown = capsys.readouterr().out
    assert "data excited" in shown and "upper" in shown and fitted.netlist.covariances["D1"].dof > 0
    true_p = np.array([1e-3, 0.02, 0.03, 0.05, 1e-3, 2e-3, 0.04])
    fam = MonotoneFamily(-0.6, 0.6, 4)
    got = np.array([fitted.parameters[f"D1.{k}"] for k in fam.names])
    v = np.linspace(-0.45, 0.45, 50)
    assert np.max(np.abs(fam.law(v, got) - fam.law(v, true_p))) < 1e-3 * np.max(np.abs(fam.law(v, true_p)))
    assert main([str(net), str(tmp_path / "in.wav"), "--inputs", "Vin", "--outputs", "v(out)", "--quiet"]) == 2
    assert "--wav-out" in capsys.readouterr().err


def test_learned_laws_run_on_the_numeric_engine_as_on_the_generated_loop():
    m = phsym.parse(CLIPPER.format(K=4).replace(
        "D1 out 0 learn(kind=monotone, knots=4, range=-0.7..0.7, scale=1m)", TRUE_LINE))
    u = 1.5 * np.sin(2 * np.pi * 800 * np.arange(801) / 48000)
    a = phsym.Simulator(m, 48000.0, "midpoint", engine="generated").run(u={"Vin": u})
    b = phsym.Simulator(m, 48000.0, "midpoint", engine="numeric").run(u={"Vin": u})
    assert b.info["engine"] == "numeric"
    assert np.max(np.abs(np.asarray(a["v(out)"]) - np.asarray(b["v(out)"]))) < 1e-12
    assert np.all(np.asarray(b["P_diss"]) >= 0)


def test_a_sweep_varies_a_learned_weight_like_any_parameter():
    m = phsym.parse(CLIPPER.format(K=4).replace(
        "D1 out 0 learn(kind=monotone, knots=4, range=-0.7..0.7, scale=1m)", TRUE_LINE))
    u = 1.5 * np.sin(2 * np.pi * 800 * np.arange(401) / 48000)
    res = phsym.sweep(m, 48000.0, phsym.grid({"D1.w4": [0.04, 0.2]}), u={"Vin": u}, outputs=["v(out)"],
                      method="midpoint")
    peaks = np.nanmax(np.asarray(res["v(out)"]), axis=1)
    assert np.all(res.balance < 1e-9) and peaks[1] < peaks[0]     # a larger top-knot weight clips harder


def test_a_heavy_prior_weight_pulls_the_fit_onto_the_named_law(clipper_data):
    t, u, y, _ = clipper_data
    net = CLIPPER.format(K=4).replace("range=-0.7..0.7", "range=-0.6..0.6")
    est = LearnedLawEstimator(phsym.parse(net), outputs=["v(out)"], max_nfev=40,
                              prior=("linear", {"g": 2e-3}), prior_weight=1e4)
    est.fit(t, {"Vin": u}, {"v(out)": y})
    v = np.linspace(-0.6, 0.6, 41)
    assert np.max(np.abs(est.laws_["D1"](v) - 2e-3 * v)) < 0.05 * 2e-3 * 0.6


@pytest.mark.compiled      # a fit of 90,000 steps: their compiled sensitivity module costs less than Python
def test_a_position_output_recovers_a_spring_law(tmp_path):
    # a measured position is a state output (x_K1): its step value and exact sensitivity come from the loop
    spring = "K1 v 0 learn(kind=convex, knots=3, range=-20m..20m, scale=1k{W})"
    net = "F1 v 0 force\nM1 v 0 mass m=1\nB1 v 0 damper c=10\n" + spring + "\n"
    truth = phsym.parse(net.format(W=", a=20, l=15, r=15, w1=20, w2=10, w3=25"))
    fs = 1000.0
    t = np.arange(801) / fs
    f = 15 * np.sin(2 * np.pi * 6 * t) + 8 * np.sin(2 * np.pi * 17 * t + 1)
    res = phsym.Simulator(truth, fs, "midpoint").run(u={"F1": f})
    x = np.asarray(res["x_K1"])
    assert x.shape == t.shape
    est = LearnedLawEstimator(phsym.parse(net.format(W="")), outputs=["x_K1"], method="midpoint",
                              max_nfev=300, ftol=1e-14, xtol=1e-14, gtol=1e-14)
    est.fit(t, {"F1": f}, {"x_K1": x})
    lo, hi = est.excited_["K1"]
    assert hi - lo > 0.05            # beyond both end knots: every weight is excited
    v = np.linspace(lo, hi, 201)
    ref = MonotoneFamily(-0.02, 0.02, 3).law(v, np.array([20.0, 15, 15, 20, 10, 25]))
    assert np.max(np.abs(est.laws_["K1"](v) - ref)) < 1e-9 * np.max(np.abs(ref))    # exact data, exact gradient
    f2 = 0.7 * np.roll(f, 100)
    x2 = np.asarray(phsym.Simulator(truth, fs, "midpoint").run(u={"F1": f2})["x_K1"])
    assert est.validate(t, {"F1": f2}, {"x_K1": x2})["rms_of_swing"]["x_K1"] < 1e-9
    # phsym fit reads a saved run's state on the grid, a probe as step values after an empty first row
    from phsym.identify.cli_fit import _as_table_column
    from phsym.simulation import load_result
    res.save(tmp_path / "run.npz")
    saved = load_result(tmp_path / "run.npz")
    np.testing.assert_array_equal(_as_table_column(saved, "x_K1"), x)
    assert np.isnan(_as_table_column(saved, "v(v)")[0]) and _as_table_column(saved, "v(v)").shape == t.shape
    with pytest.raises(IdentificationError, match="or a state: p_M1, x_K1"):
        LearnedLawEstimator(phsym.parse(net.format(W="")), outputs=["x_M1"]).fit(t, {"F1": f}, {"x_M1": x})


# ------------------------------------------------------------ saved laws: .covariance cards, phsym show
def _saved_clipper(cov_lines: str) -> str:
    return CLIPPER.format(K=2).replace("knots=2, range=-0.7..0.7, scale=1m", "knots=2, range=-0.5..0.5, "
                                       "a=0.01, l=0.02, r=0.03, w1=0.04, w2=0.05").replace(".end", cov_lines + "\n.end")


def test_show_prints_and_plots_a_saved_law_with_its_band(tmp_path, capsys):
    from phsym.cli import main
    from phsym.netlist.covariance import covariance_card_text
    C = np.diag([1e-8, 2e-8, 3e-8, 4e-8, 5e-8]) + 1e-9
    path = tmp_path / "fitted.cir"
    path.write_text(_saved_clipper(covariance_card_text("D1", C, 0.9, 500, (-0.3, 0.4))))
    m = phsym.load(path)
    np.testing.assert_allclose(m.netlist.covariances["D1"].covariance, C, rtol=1e-15)
    curve = LearnedCurve.from_model(m, "D1")
    # the band by hand: delta method through f = B(v) p**2, Student t with 500 degrees of freedom
    from scipy import stats
    v = np.array([-0.2, 0.1, 0.45])
    p = np.array([0.01, 0.02, 0.03, 0.04, 0.05])
    G = MonotoneFamily(-0.5, 0.5, 2).basis(v) * 2 * p
    half = stats.t.ppf(0.95, 500) * np.sqrt(np.einsum("ij,jk,ik->i", G, C, G))
    np.testing.assert_allclose(curve.band(v)[1] - curve(v), half, rtol=1e-12)
    assert main(["show", str(path), "--plot", str(tmp_path / "laws.png")]) == 0
    out = capsys.readouterr().out
    assert "data excited -0.3..0.4" in out and "90% band" in out and "lower" in out and "(not excited)" in out
    row = next(line for line in out.splitlines() if line.split()[:1] == ["0.5"])     # the knot range's end
    vals = [float(x) for x in row.split()[:4]]
    lo, hi = curve.band(np.array([0.5]))
    np.testing.assert_allclose(vals, [0.5, curve(0.5), lo[0], hi[0]], rtol=1e-4)
    assert (tmp_path / "laws.png").stat().st_size > 1000
    # without a card: the curve, no band
    path.write_text(_saved_clipper(""))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "no record of its fit" in out and "lower" not in out


@pytest.mark.parametrize("card, message", [
    (".covariance R1 level=0.95 dof=10 excited=-1..1 1", "not a learn"),
    (".covariance D1 level=0.95 dof=10 excited=-1..1 1 2 3", "has 3 numbers; its 5 coefficients need 15"),
    (".covariance D1 dof=10 excited=-1..1", "lacks level="),
    (".covariance D1 level=2 dof=10 excited=-1..1", "level must lie in"),
    (".covariance D1 level=0.9 dof=10 excited=-1..1 " + " ".join(["-1"] * 15), "not positive semidefinite"),
])
def test_bad_covariance_cards_are_netlist_errors(card, message):
    with pytest.raises(NetlistError, match=message) as err:
        phsym.parse(_saved_clipper(card))
    assert err.value.line == 6 and err.value.hint
