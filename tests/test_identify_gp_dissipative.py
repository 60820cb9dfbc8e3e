"""Learned dissipative laws: a nonlinear resistor (``I=learn``) of an RC circuit
learned from a scipy-integrated trajectory (DissipativeLawGP on the port samples
of the netlist's structure), saved as numbers, simulated with a new input by
the generated simulator and compared with an independent scipy solution."""
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import phsym
from phsym.errors import IdentificationError
from phsym.identify import DissipativeLawGP
from phsym.identify.gp import NonPassiveLawWarning, port_samples
from phsym.simulation import simulate

NET = """* RC with a resistor law
{table}V1 in 0 {source}
R1 in c {law}
C1 c 0 1
.probe v(c)
.end
"""


def f_true(v):
    return 0.5 * np.tanh(2 * v) + 0.1 * v


def _data():
    t = np.linspace(0.0, 20.0, 2000)

    def u(s):
        return 1.5 * np.sin(2 * np.pi * 0.3 * s) + 0.5 * np.sin(2 * np.pi * 0.11 * s)

    q = solve_ivp(lambda s, x: f_true(u(s) - x), (0, t[-1]), [0.0], t_eval=t, rtol=1e-12, atol=1e-12).y[0]
    return t, u(t), q


def test_port_samples_are_the_resistor_voltage_and_current():
    t, u, q = _data()
    model = phsym.parse(NET.format(table="", source="SIN(0 1 1)", law="I=learn"))
    i = f_true(u - q)
    w, z = port_samples(model, "R1", np.column_stack([q, i]), u[:, None])
    assert np.allclose(w, u - q, atol=1e-12) and np.allclose(z, i, atol=1e-12)
    # flow-out port (V=learn): w is the current, z the voltage
    model_v = phsym.parse(NET.format(table="", source="SIN(0 1 1)", law="V=learn"))
    w, z = port_samples(model_v, "r1", np.column_stack([i, q]), u[:, None], names=["e_R1", "q_C1"])
    assert np.allclose(w, i, atol=1e-12) and np.allclose(z, u - q, atol=1e-12)
    with pytest.raises(IdentificationError, match="one-port dissipative"):
        port_samples(model, "C1", np.column_stack([q, i]), u[:, None])
    with pytest.raises(IdentificationError, match="columns"):
        port_samples(model, "R1", np.column_stack([q, i]), u[:, None], names=["a", "b"])


def test_learned_resistor_simulates_like_the_true_circuit(tmp_path):
    t, u, q = _data()
    i = f_true(u - q)
    model = phsym.parse(NET.format(table="", source="SIN(0 1 1)", law="I=learn"))
    w, z = port_samples(model, "R1", np.column_stack([q, i]), u[:, None])
    tr = np.argsort(w)[np.linspace(0, len(w) - 1, 24).astype(int)]      # spread over the voltages
    gp = DissipativeLawGP().fit(w[tr], z[tr])
    assert gp.passive_ and gp.far_slope_ > 0
    vs = np.linspace(w.min(), w.max(), 301)
    assert np.abs(gp.predict(vs) - f_true(vs)).max() < 2e-3
    assert abs(gp.predict([0.0])[0]) < 1e-6       # through the origin (up to the jitter)
    assert gp.score(w, z) > 0.9999
    law = gp.numeric_law()
    assert np.allclose(law.evaluate(vs[:, None]), gp.predict(vs), atol=1e-10)
    h = 1e-4
    fd = (gp.predict(vs + h) - gp.predict(vs - h)) / (2 * h)
    assert np.allclose(law.gradient(vs[:, None])[:, 0], fd, atol=1e-6)
    gp.save_law(tmp_path / "r1.npz")
    net = tmp_path / "rc.cir"
    # new input: other amplitude and frequency, inside the voltages learned
    net.write_text(NET.format(table=".table R1LAW r1.npz\n", source="SIN(0 1.2 0.2)", law="I={R1LAW(v)}"))
    res = simulate(phsym.load(net), fs=100, duration=10.0)
    ref = solve_ivp(lambda s, x: f_true(1.2 * np.sin(2 * np.pi * 0.2 * s) - x), (0, 10.0), [0.0],
                    t_eval=res.t, rtol=1e-11, atol=1e-12).y[0]
    # v_C = q_C1 (1 F) on the state grid; the scheme's own error with the true law is 4.5e-6
    assert np.abs(res["q_C1"] - ref).max() < 2e-5        # law error plus the scheme's O(h^2)
    assert np.abs(res.balance).max() < 1e-9 * np.abs(res.H).max() * 100
    assert res["v(c)"].max() > 0.3        # the run is not trivially near zero


def test_non_passive_law_warns():
    w = np.linspace(-1, 1, 15)
    with pytest.warns(NonPassiveLawWarning, match="not passive"):
        gp = DissipativeLawGP().fit(w, -0.5 * w + 0.2 * w ** 3)
    assert not gp.passive_ and gp.min_power_ < 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert DissipativeLawGP().fit(w, w ** 3 + w).passive_
    with pytest.raises(IdentificationError, match="finite"):
        DissipativeLawGP().fit([0.0, 1.0, np.nan], [0.0, 1.0, 2.0])
    with pytest.raises(IdentificationError, match="same length"):
        DissipativeLawGP().fit([0.0, 1.0, 2.0], [0.0, 1.0])


def test_clone_and_params():
    from sklearn.base import clone
    gp = DissipativeLawGP(restarts=2)
    assert clone(gp).get_params() == gp.get_params()
    assert "restarts=2" in repr(gp)


def test_cli_learns_a_resistor(tmp_path, capsys):
    from phsym.cli import main
    from phsym.common.learned import LearnedLaw
    t, u, q = _data()
    data = tmp_path / "rc.csv"
    np.savetxt(data, np.column_stack([t, q, f_true(u - q), u]), delimiter=",", header="t,q_C1,e_R1,V1",
               comments="")
    net = tmp_path / "rc.cir"
    net.write_text(NET.format(table="", source="SIN(0 1 1)", law="I=learn"))
    assert main(["learn", str(net), str(data), "--samples", "20", "--out", str(tmp_path / "r1.npz"),
                 "--quiet"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "R1: I={R1_LAW(v)}"
    vs = np.linspace(-1.5, 1.5, 50)
    assert np.abs(LearnedLaw.load(tmp_path / "r1.npz").evaluate(vs[:, None]) - f_true(vs)).max() < 1e-2
    assert main(["learn", str(net), str(data), "--samples", "12", "--quiet"]) == 0
    text = capsys.readouterr().out.strip()
    assert text.startswith("R1: I={") and "exp(" in text
