"""A learned storage law runs inside a netlist: learn the nonlinear capacitor
of the seed's RC circuit from data (scipy-integrated) on the netlist's own
descriptor structure (EffortGP.from_model), write it as the capacitor's
H={...} law, simulate with a new input and compare with the circuit that has
the true law."""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import phsym
from phsym.errors import IdentificationError
from phsym.identify import EffortGP
from phsym.identify.gp.laws import hamiltonian_expression, law_text
from phsym.simulation import simulate

NET = """* RC with a capacitor law
V1 in 0 SIN(2 0.7 0.25)
R1 in c 1
C1 c 0 {law}
.probe v(c)
.end
"""


def _learn(n_train=8):
    """Learn C1's law from the structure of the netlist (its own law unused) and samples of
    xi = (q_C1, e_R1) (charge and resistor current) along a scipy-integrated trajectory."""
    # training input u = 2 + sin t keeps u_C = sqrt(2 q) away from its singular point 0
    t = np.linspace(0.0, 10 * np.pi, 1000)
    u = 2.0 + np.sin(t)
    sol = solve_ivp(lambda s, q: 2.0 + np.sin(s) - np.sqrt(2 * q), (0, t[-1]), [2.0], t_eval=t,
                    rtol=1e-12, atol=1e-12)
    q = sol.y[0]
    i_r = u - np.sqrt(2 * q)
    X = np.column_stack([q, i_r])
    Xdot = np.column_stack([i_r, np.zeros_like(t)])
    model = phsym.parse(NET.format(law="H=learn"))         # C1's law is to be learned
    tr = np.argsort(q)[np.linspace(0, len(t) - 1, n_train).astype(int)]     # spread over the charges
    # exact derivatives: the noise may stay small (else 8 samples are explained as a quadratic H plus noise)
    gp = EffortGP.from_model(model, noise_bounds=(1e-10, 1e-6))             # learn: the H=learn elements
    assert gp.names == ["q_C1", "e_R1"] and gp.storage == [0]
    return gp.fit(X[tr], u[tr, None], Xdot=Xdot[tr]), q


def test_learned_capacitor_law_simulates_like_the_true_circuit():
    gp, q = _learn()
    s = sp.Symbol("x", real=True)
    H = hamiltonian_expression(gp, [s])
    qs = np.linspace(1.0, 3.3, 9)
    assert np.abs(sp.lambdify(s, sp.diff(H, s))(qs) - np.sqrt(2 * qs)).max() < 2e-3
    assert np.allclose(sp.lambdify(s, H)(qs), gp.hamiltonian(np.column_stack([qs, 0 * qs])), atol=1e-9)
    assert gp.law("q_C1", "q") == law_text(H, "q")
    learned = phsym.parse(NET.format(law=gp.law("q_C1", "q")))
    truth = phsym.parse(NET.format(law="H={2*sqrt(2)/3*q**(3/2)}"))
    a = simulate(learned, fs=50, duration=12.0, x0={"q_C1": 2.0})
    b = simulate(truth, fs=50, duration=12.0, x0={"q_C1": 2.0})
    # new input (other frequency and amplitude): the states stay inside the charges learned
    assert q.min() < a["q_C1"].min() and a["q_C1"].max() < q.max()
    assert np.abs(a["v(c)"] - b["v(c)"]).max() < 2e-3
    scale = np.abs(a.H).max() * 50
    assert np.abs(a.balance).max() < 1e-6 * scale


def test_law_needs_the_energy_variant_and_a_storage():
    gp, _ = _learn(6)
    with pytest.raises(IdentificationError, match="alone"):
        gp.law("e_R1", "q")
    gp.set_params(variant="direct")
    with pytest.raises(IdentificationError, match="energy"):
        hamiltonian_expression(gp, [sp.Symbol("q")])
    with pytest.raises(IdentificationError, match="not a storage"):
        EffortGP.from_model(phsym.parse(NET.format(law="H={q**2/2}")), learn=["R1"])
    with pytest.raises(IdentificationError, match="no element to learn"):
        EffortGP.from_model(phsym.parse(NET.format(law="H={q**2/2}")))


def test_learn_syntax():
    from phsym.errors import NetlistError, SimulationInputError
    model = phsym.parse(NET.format(law="H=LEARN"))
    law = model.netlist.element("C1").law
    assert law.learn and law.expr == law.variable ** 2 / 2
    with pytest.raises(SimulationInputError, match="C1 is to be learned"):
        simulate(model, fs=10, duration=1.0)
    resistive = phsym.parse(NET.format(law="H={q**2/2}").replace("R1 in c 1", "R1 in c I=learn"))
    law = resistive.netlist.element("R1").law
    assert law.learn and law.key == "I" and law.expr == law.variable       # unit-conductance placeholder
    with pytest.raises(IdentificationError, match="DissipativeLawGP"):
        EffortGP.from_model(resistive)
    # a storage and a dissipative law to learn together: refused, with the two-step route
    joint = NET.format(law="H=learn").replace("R1 in c 1", "R1 in c I=learn")
    for net, learn in ((joint, None), (joint.replace("H=learn", "H={q**2/2}"), ["C1"])):
        with pytest.raises(IdentificationError, match=r"C1 and the dissipative law of R1 cannot be learned jointly"
                                                      r".*current source.*DissipativeLawGP"):
            EffortGP.from_model(phsym.parse(net), learn=learn)
    with pytest.raises(NetlistError):          # a value and a law
        phsym.parse(NET.format(law="1u H=learn"))


def test_cli_learn(tmp_path, capsys):
    from phsym.cli import main
    t = np.linspace(0.0, 10 * np.pi, 800)
    u = 2.0 + np.sin(t)
    q = solve_ivp(lambda s, x: 2.0 + np.sin(s) - np.sqrt(2 * x), (0, t[-1]), [2.0], t_eval=t,
                  rtol=1e-12, atol=1e-12).y[0]
    data = tmp_path / "rc.csv"
    np.savetxt(data, np.column_stack([t, q, u - np.sqrt(2 * q), u]), delimiter=",",
               header="t,q_C1,e_R1,V1", comments="")
    net = tmp_path / "rc.cir"
    net.write_text(NET.format(law="H=learn"))
    out = tmp_path / "law.txt"
    code = main(["learn", str(net), str(data), "--samples", "24", "--out", str(out), "--quiet"])
    assert code == 0
    law = out.read_text().strip()
    assert law.startswith("H={") and law in capsys.readouterr().out
    model = phsym.parse(NET.format(law=law))
    assert not model.netlist.element("C1").law.learn
    grad = sp.lambdify(model.structure.states[0], model.structure.gradients[0].subs(
        {s: v for s, v in model.parameter_values().items()}))
    qs = np.linspace(1.0, 3.3, 7)
    assert np.abs(grad(qs) - np.sqrt(2 * qs)).max() < 1e-2     # central differences of 800 samples
    # the starts ran at the same time; one after the other they give the same law, to the last digit
    assert main(["learn", str(net), str(data), "--samples", "24", "--out", str(out), "--quiet", "--serial"]) == 0
    assert out.read_text().strip() == law
    capsys.readouterr()
    assert main(["learn", str(net), str(data), "--element", "R1", "--quiet"]) == 2
    # --out law.npz: the numbers, and the two netlist lines that use them
    assert main(["learn", str(net), str(data), "--samples", "24", "--out", str(tmp_path / "c1.npz"), "--quiet"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [f".table C1_LAW {tmp_path / 'c1.npz'}", "C1: H={C1_LAW(q)}"]
    from phsym.common.learned import LearnedLaw
    saved = LearnedLaw.load(tmp_path / "c1.npz")
    assert saved.meta["element"] == "C1" and saved.meta["inputs"] == "q_C1"
    assert np.abs(saved.gradient(qs[:, None])[:, 0] - grad(qs)).max() < 1e-9      # the same fit as the text


# ---------------------------------------------------------------- numeric laws (.npz)

def _random_law(n=2, N=5, seed=0):
    from phsym.common.learned import LearnedLaw
    rng = np.random.default_rng(seed)
    return LearnedLaw(rng.normal(size=(N, n)), rng.normal(size=N), rng.normal(size=(N, n)),
                      rng.uniform(0.5, 1.5, n), offset=rng.normal(size=n), scale=rng.uniform(0.5, 2, n),
                      linear=rng.normal(size=n), quadratic=np.eye(n) + 0.1, constant=0.3, kind="H")


def test_bump_sum_derivatives_by_finite_differences_and_compiled():
    """Every derivative order of the bump sum: numpy, plain loops and the compiled kernel agree, and
    each order is the central difference of the one below (hand-written sum of the bumps for order 0)."""
    from phsym.codegen.kernels.learned import learned_bumps
    from phsym.common.learned import bump_sum
    law = _random_law()
    x = np.array([0.3, -0.4])
    C, V, W, L = law.centers, law.values, law.slopes, law.lengths
    direct = sum((V[b] + W[b] @ (x - C[b])) * np.exp(-0.5 * np.sum(((x - C[b]) / L) ** 2)) for b in range(len(C)))
    assert law.bumps(x[None])[0] == pytest.approx(direct, rel=1e-13)
    h = 1e-5
    for a in [(0, 0), (1, 0), (0, 1), (2, 1), (1, 3), (4, 0)]:
        value = law.bumps(x[None], a)[0]
        assert bump_sum(tuple(x), a, C, V, W, L) == pytest.approx(value, rel=1e-12, abs=1e-12)
        assert learned_bumps(tuple(x), a, C, V, W, L) == pytest.approx(value, rel=1e-12, abs=1e-12)
        for j in range(2):
            up = list(a)
            up[j] += 1
            e = np.eye(2)[j] * h
            fd = (law.bumps((x + e)[None], a)[0] - law.bumps((x - e)[None], a)[0]) / (2 * h)
            assert law.bumps(x[None], up)[0] == pytest.approx(fd, rel=1e-6, abs=1e-6)


def test_learned_law_sympy_function_and_file(tmp_path):
    from phsym.common.learned import LearnedLaw
    law = _random_law()
    a, b = sp.symbols("a b", real=True)
    expr = law(a, b)
    pts = np.array([[0.1, 0.2], [-1.0, 0.7]])
    f = sp.lambdify((a, b), expr)
    assert np.allclose(f(pts[:, 0], pts[:, 1]), law.evaluate(pts), rtol=1e-12)
    g = sp.lambdify((a, b), [sp.diff(expr, a), sp.diff(expr, b)])
    assert np.allclose(np.array(g(pts[:, 0], pts[:, 1])).T, law.gradient(pts), rtol=1e-12)
    h = 1e-6
    fd = (law.evaluate(pts + [h, 0]) - law.evaluate(pts - [h, 0])) / (2 * h)
    assert np.allclose(law.gradient(pts)[:, 0], fd, rtol=1e-7, atol=1e-8)
    assert float(sp.diff(expr, a, 2, b).subs({a: 0.1, b: 0.2})) == pytest.approx(
        law.bumps(pts[:1], (2, 1))[0], rel=1e-12)
    path = law.save(tmp_path / "law.npz")
    back = LearnedLaw.load(path)
    assert back.key == law.key and np.array_equal(back.evaluate(pts), law.evaluate(pts))
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    from phsym.errors import DataFileError
    with pytest.raises(DataFileError, match="cannot read"):
        LearnedLaw.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(DataFileError, match="not a phsym learned law"):
        LearnedLaw.load(tmp_path / "other.npz")
    with pytest.raises(ValueError, match="positive"):
        LearnedLaw([[0.0]], [1.0], [[0.0]], [-1.0])


def test_saved_law_simulates_like_the_true_circuit(tmp_path):
    """The learned capacitor saved as numbers (.npz), read by `.table`, simulated with a new input."""
    from phsym.errors import NetlistError
    from phsym.identify.gp.laws import numeric_law, save_law
    gp, q = _learn()
    law = numeric_law(gp)
    qs = np.linspace(1.0, 3.3, 9)
    assert np.allclose(law.evaluate(qs[:, None]), gp.hamiltonian(np.column_stack([qs, 0 * qs])), atol=1e-9)
    assert np.abs(law.gradient(qs[:, None])[:, 0] - np.sqrt(2 * qs)).max() < 2e-3
    assert law.meta["inputs"] == "q_C1"
    save_law(gp, tmp_path / "c1.npz")
    net = tmp_path / "rc.cir"
    net.write_text(NET.format(law="H={C1LAW(q)}").replace(".probe", ".table C1LAW c1.npz\n.probe"))
    learned = phsym.load(net)
    assert "LearnedBumps" in str(learned.structure.storages[0].hamiltonian)
    truth = phsym.parse(NET.format(law="H={2*sqrt(2)/3*q**(3/2)}"))
    a = simulate(learned, fs=50, duration=12.0, x0={"q_C1": 2.0})
    b = simulate(truth, fs=50, duration=12.0, x0={"q_C1": 2.0})
    assert q.min() < a["q_C1"].min() and a["q_C1"].max() < q.max()
    assert np.abs(a["v(c)"] - b["v(c)"]).max() < 2e-3
    scale = np.abs(a.H).max() * 50
    assert np.abs(a.balance).max() < 1e-6 * scale
    # one compiled kernel for every derivative order (integer literals would compile one per order)
    from phsym.codegen.kernels.learned import learned_bumps
    assert not any("Literal" in str(sig) for sig in learned_bumps.signatures)
    # the stored energy is the learned H along the trajectory (up to the constant of H)
    H = law.evaluate(a["q_C1"][:, None])
    assert np.allclose(a.H - a.H[0], H - H[0], atol=1e-9)
    with pytest.raises(NetlistError, match="takes 1 argument"):
        phsym.parse(net.read_text().replace("C1LAW(q)", "C1LAW(q, q)"), file=str(net))
    with pytest.raises(NetlistError, match="cannot read learned law"):
        phsym.parse(NET.format(law="H={C1LAW(q)}").replace(".probe", ".table C1LAW missing.npz\n.probe"))
