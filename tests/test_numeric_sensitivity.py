"""Sensitivities of the numeric engine's steps and fits on them (issue 34).

Checked against central finite differences of the numeric simulator, against the generated
loop's sensitivity module, and a fit on a circuit above the generated loop's limit against data
from an independent backward-Euler solution (scipy sparse Newton).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sps
import scipy.sparse.linalg as spla

import phsym
from phsym.benchmarks import rc_mesh
from phsym.codegen.newton.sensitivity import build_sensitivity
from phsym.errors import IdentificationError
from phsym.identify import ParameterEstimator
from phsym.identify.fit_engines import fit_engine
from phsym.simulation.engines.choice import GENERATED_LIMIT
from phsym.simulation.engines.numeric.dc_sensitivity import dc_point_sensitivity
from phsym.simulation.engines.numeric.operating import dc_point
from phsym.simulation.engines.numeric.sensitivity import NumericSensitivity
from phsym.simulation.initial import state_scales

NET = Path(__file__).resolve().parent.parent / "netlists"

BJT = """* CE stage with junction charges, free Is and RC
.param Is=6.734f Rc=4.7k
.model QN NPN(IS={Is} BF=416.4 BR=0.7371 VAF=74.03 CJE=4.493p MJE=0.2593 VJE=0.75 CJC=3.638p MJC=0.3085 VJC=0.75)
VCC vcc 0 DC 9
VIN in 0 SIN(0 10m 1k)
C1 in b 1u
R1 vcc b 47k
R2 b 0 10k
RC vcc c {Rc}
RE e 0 1k
Q1 c b e QN
.end
"""


def _runner(model, free, outputs, scheme, stiff="scheme"):
    ns = NumericSensitivity(model, free, outputs, scheme, stiff)
    base = model.parameter_values()
    pv = {f: float(base[model.netlist.parameters[f].symbol]) for f in free}
    xs = ns.scales(base)
    return ns, pv, xs, (lambda d: model.parameter_values(dict(d)))


def _fd(ns, values_of, pv, x0, U, xs, h, rel=1e-6):
    """Central differences of the simulated outputs (the numeric engine, no sensitivities)."""
    cols = []
    for f in ns.free:
        d = rel * abs(pv[f])
        Yp = ns.run(values_of, {**pv, f: pv[f] + d}, x0, np.zeros((ns.n_x, 0)), U, xs, h, want=False)[0]
        Ym = ns.run(values_of, {**pv, f: pv[f] - d}, x0, np.zeros((ns.n_x, 0)), U, xs, h, want=False)[0]
        cols.append((Yp - Ym) / (2 * d))
    return np.stack(cols, axis=-1)


def _close(a, b, rtol):
    """Agreement relative to each output's and column's largest sensitivity."""
    scale = np.max(np.abs(b), axis=0, keepdims=True)
    assert np.all(np.abs(a - b) <= rtol * scale + 1e-300), np.max(np.abs(a - b) / scale)


@pytest.fixture(scope="module")
def clipper():
    return phsym.load(NET / "diode_clipper.cir")


@pytest.fixture(scope="module")
def bjt(tmp_path_factory):
    path = tmp_path_factory.mktemp("bjt") / "ce.cir"
    path.write_text(BJT)
    return phsym.load(path)


# the generated module of tests/test_identify_params.py's clipper fit: built once per session
CLIP_FREE, CLIP_OUT = ["DMOD.Is", "DMOD.N"], ["v(out)"]


def test_clipper_matches_the_generated_loop_and_finite_differences(clipper):
    fs, N = 48000.0, 100
    t = np.arange(N + 1) / fs
    U = (4.0 * np.sin(2 * np.pi * 1000 * t))[:, None]
    free, outs = CLIP_FREE, CLIP_OUT
    ns, pv, xs, vo = _runner(clipper, free, outs, "discrete_gradient", "backward_euler")
    x0 = np.array([2e-9])                 # a charged capacitor; its column is an initial-state unknown
    S0 = np.hstack([np.zeros((1, 2)), np.eye(1)])
    Y, DY, bad = ns.run(vo, pv, x0, S0, U, xs, 1 / fs)
    assert bad == -1 and DY.shape == (N, 1, 3)
    step = build_sensitivity(clipper, free, outs, "discrete_gradient", "backward_euler")   # the fit's below
    vals = clipper.parameter_values()
    p = np.array([vals[s] for s in step.parameters])
    Yg, DYg, badg = step.run(x0, S0, U, p, state_scales(clipper.structure, vals), 1 / fs)
    assert badg == -1
    np.testing.assert_allclose(Y, Yg, rtol=0, atol=1e-10 * np.abs(Yg).max())
    _close(DY, DYg, 1e-8)                   # measured ~3e-12
    _close(DY[:, :, :2], _fd(ns, vo, pv, x0, U, xs, 1 / fs), 1e-5)


@pytest.mark.parametrize("stiff", ["backward_euler", "scheme"])
def test_bjt_stage_with_junction_charges_matches_finite_differences(bjt, stiff):
    fs, N = 48000.0, 60
    t = np.arange(N + 1) / fs
    U = np.column_stack([np.full(N + 1, 9.0), 0.01 * np.sin(2 * np.pi * 1000 * t)])
    ns, pv, xs, vo = _runner(bjt, ["Is", "Rc"], ["v(c)", "i(RC)", "q_C1"], "discrete_gradient", stiff)
    vals = bjt.parameter_values()
    x0 = dc_point(bjt.circuit, vals, U[0], ns.initial(vals), xs).x      # biased: the junction charges move
    Y, DY, bad = ns.run(vo, pv, x0, np.zeros((3, 2)), U, xs, 1 / fs)
    assert bad == -1 and np.ptp(Y[:, 0]) > 1e-3
    _close(DY, _fd(ns, vo, pv, x0, U, xs, 1 / fs), 2e-5)


def test_steps_taken_in_sub_steps_are_differentiated(clipper):
    fs, N = 12000.0, 40         # a Newton capped at 3 iterations: the engine subdivides steps
    t = np.arange(N + 1) / fs
    U = (4.0 * np.sin(2 * np.pi * 1000 * t))[:, None]
    # the state named three ways: the simulator's name, x(ELEMENT) and by its quantity
    ns, pv, xs, vo = _runner(clipper, CLIP_FREE, ["v(out)", "i(R1)", "q_C1", "x(C1)", "q(C1)"], "discrete_gradient",
                             "backward_euler")
    x0 = np.zeros(1)
    Y, DY, bad = ns.run(vo, pv, x0, np.zeros((1, 2)), U, xs, 1 / fs, maxit=3)
    np.testing.assert_array_equal(Y[:, 3], Y[:, 2])
    np.testing.assert_array_equal(DY[:, 4], DY[:, 2])
    assert bad == -1 and len(ns.subdivided) >= 5
    fd = []
    for f in CLIP_FREE:
        d = 1e-6 * pv[f]
        Yp = ns.run(vo, {**pv, f: pv[f] + d}, x0, np.zeros((1, 0)), U, xs, 1 / fs, maxit=3, want=False)[0]
        Ym = ns.run(vo, {**pv, f: pv[f] - d}, x0, np.zeros((1, 0)), U, xs, 1 / fs, maxit=3, want=False)[0]
        fd.append((Yp - Ym) / (2 * d))
    _close(DY, np.stack(fd, axis=-1), 1e-6)      # measured 7e-9


def test_dc_point_sensitivity_matches_finite_differences(bjt):
    ns, pv, xs, vo = _runner(bjt, ["Is", "Rc"], ["v(c)"], "backward_euler")
    u0 = np.array([9.0, 0.0])
    x_ic = ns.initial(bjt.parameter_values())
    _, dx = dc_point_sensitivity(bjt.circuit, vo, pv, ["Is", "Rc"], u0, x_ic, xs)
    for j, f in enumerate(["Is", "Rc"]):
        d = 1e-6 * pv[f]
        xp = dc_point(bjt.circuit, vo({**pv, f: pv[f] + d}), u0, x_ic, xs).x
        xm = dc_point(bjt.circuit, vo({**pv, f: pv[f] - d}), u0, x_ic, xs).x
        np.testing.assert_allclose(dx[:, j], (xp - xm) / (2 * d), rtol=1e-5, atol=1e-6 * np.abs(dx[:, j]).max())


def test_same_fit_on_both_engines(clipper):
    fs = 48000.0
    t = np.arange(161) / fs
    u = 4.0 * np.sin(2 * np.pi * 1000 * t)
    data = phsym.Simulator(clipper, fs, "discrete_gradient", engine="numeric").run(u={"Vin": u})
    fits = {}
    for engine in ("generated", "numeric"):
        est = ParameterEstimator(clipper, CLIP_FREE, CLIP_OUT, initial={"DMOD.Is": 1e-8, "DMOD.N": 1.5},
                                 engine=engine).fit(data)
        assert est.engine_ == engine
        fits[engine] = est
        np.testing.assert_allclose([est.params_[f] for f in CLIP_FREE], [2.52e-9, 1.752], rtol=1e-6)
    g, n = fits["generated"], fits["numeric"]
    for f in CLIP_FREE:
        assert n.params_[f] == pytest.approx(g.params_[f], rel=1e-9)
    assert n.score(data) == pytest.approx(1.0, abs=1e-9)
    assert n.predict(t, {"Vin": u}).info["engine"] == "numeric"


def test_auto_engine_and_bad_engine(clipper):
    assert clipper.size["branches"] <= GENERATED_LIMIT
    assert fit_engine("auto", clipper, "discrete_gradient", "scheme") == "generated"
    assert fit_engine("Numeric", clipper, "discrete_gradient", "scheme") == "numeric"
    with pytest.raises(IdentificationError, match="unknown engine"):
        ParameterEstimator(clipper, "Rs", engine="spice")._checked()


def _mesh_deck(n):
    """``rc_mesh(n)`` with one free mesh resistor ``Rf`` (n0_0 - n0_1) and a diode (free ``Is``) at n0_1."""
    deck = rc_mesh(n, steps=10).replace("RH0_0 n0_0 n0_1 1000", "RH0_0 n0_0 n0_1 {Rf}")
    head, rest = deck.split("\n", 1)
    return f"{head}\n.param Rf=1.5k Is=1e-9\n.model DX D(IS={{Is}} N=1)\nD1 n0_1 0 DX\n{rest}"


def _mesh_reference(n, Rf, Is, u, h, r=1e3, c=1e-9, rs=100.0, vt=0.02585, gmin=1e-12):
    """Backward Euler of the mesh's nodal equations ``C dv/dt = -G v + b u - i_D``, Newton by scipy."""
    idx = lambda i, j: i * n + j    # noqa: E731  (a local name for the grid index)
    rows, cols, vals = [], [], []

    def conductance(a, b, g):
        rows.extend([a, b, a, b])
        cols.extend([a, b, b, a])
        vals.extend([g, g, -g, -g])
    for i in range(n):
        for j in range(n):
            if j + 1 < n:
                conductance(idx(i, j), idx(i, j + 1), (1.0 / Rf) if (i, j) == (0, 0) else 1.0 / r)
            if i + 1 < n:
                conductance(idx(i, j), idx(i + 1, j), 1.0 / r)
    m = n * n
    G = sps.csr_matrix((vals, (rows, cols)), shape=(m, m)).tolil()
    G[0, 0] += 1.0 / rs
    A = (sps.identity(m) * (c / h) + G).tocsc()
    d = idx(0, 1)
    v = np.zeros(m)
    out = []
    for k in range(1, len(u)):
        vk = v.copy()
        for _ in range(100):
            F = c / h * (v - vk) + G @ v
            F[0] -= u[k] / rs
            F[d] += Is * np.expm1(v[d] / vt) + gmin * v[d]
            J = A.copy().tolil()
            J[d, d] += Is / vt * np.exp(v[d] / vt) + gmin
            dv = spla.spsolve(J.tocsc(), -F)
            v += dv
            if np.max(np.abs(dv)) < 1e-13:
                break
        out.append([v[d], v[idx(n // 2, n // 2)]])
    return np.array(out)


def test_fit_above_the_generated_limit_recovers_r_and_is(tmp_path):
    n, h, N = 10, 0.2e-6, 80
    path = tmp_path / "mesh.cir"
    path.write_text(_mesh_deck(n))
    model = phsym.load(path)
    assert model.size["branches"] > GENERATED_LIMIT
    t = np.arange(N + 1) * h
    u = np.minimum(t / 1e-6, 1.0) * 2.0
    y = _mesh_reference(n, 1500.0, 1e-9, u, h)
    est = ParameterEstimator(model, ["Rf", "Is"], ["v(n0_1)", "v(n5_5)"], method="backward_euler",
                             initial={"Rf": 2500.0, "Is": 1e-8}).fit(t, {"V1": u}, {"v(n0_1)": y[:, 0],
                                                                                     "v(n5_5)": y[:, 1]})
    assert est.engine_ == "numeric"
    assert est.params_["Rf"] == pytest.approx(1500.0, rel=1e-6)
    assert est.params_["Is"] == pytest.approx(1e-9, rel=1e-5)


def test_fit_from_the_dc_point_on_the_numeric_engine(bjt):
    fs, N = 48000.0, 40
    t = np.arange(N + 1) / fs
    u = {"VCC": np.full(N + 1, 9.0), "VIN": 0.01 * np.sin(2 * np.pi * 1000 * t)}
    data = phsym.Simulator(bjt, fs, "discrete_gradient", engine="numeric").run(u=u, x0="dc")
    est = ParameterEstimator(bjt, ["Rc", "Is"], ["v(c)"], x0="dc", engine="numeric",
                             initial={"Rc": 5500.0, "Is": 1e-14}).fit(data)
    assert est.params_["Rc"] == pytest.approx(4700.0, rel=1e-6)
    assert est.params_["Is"] == pytest.approx(6.734e-15, rel=1e-6)
