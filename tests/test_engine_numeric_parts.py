"""The numeric engine's parts: sparse LU, law forms, one compiled engine, sub-steps, DC, streams, sweeps."""
import subprocess
import sys

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sps
import sympy as sp

import phsym
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
from phsym.simulation.engines.numeric.sparse import PIVOT_TOL, column_order, lu_factor, lu_refactor, lu_solve
from phsym.structure.circuit.canonical import canonical, placeholder_values
from tests.child_support import COMPILE_RECORDER


def _lu(A, cap=None):
    A = sps.csc_matrix(A)
    A.sort_indices()
    n = A.shape[0]
    cap = cap or 40 * A.nnz + 4 * n
    i64 = np.int64
    F = dict(Lp=np.zeros(n + 1, i64), Li=np.zeros(cap, i64), Lx=np.zeros(cap), Up=np.zeros(n + 1, i64),
             Ui=np.zeros(cap, i64), Ux=np.zeros(cap), pinv=np.zeros(n, i64), x=np.zeros(n), xi=np.zeros(2 * n, i64),
             mark=np.zeros(n, i64))
    q = column_order(A)
    Ap, Ai = A.indptr.astype(i64), A.indices.astype(i64)
    st = lu_factor(n, Ap, Ai, A.data, q, PIVOT_TOL, F["Lp"], F["Li"], F["Lx"], F["Up"], F["Ui"], F["Ux"], F["pinv"],
                   F["x"], F["xi"], F["mark"])
    return st, F, q, Ap, Ai, n


def _solve(F, q, n, b):
    z = np.array(b, dtype=float)
    lu_solve(n, q, F["Lp"], F["Li"], F["Lx"], F["Up"], F["Ui"], F["Ux"], F["pinv"], z, np.zeros(n))
    return z


def test_sparse_lu_pivots_refactors_and_reports():
    rng = np.random.default_rng(3)
    n = 60
    # an MNA-like matrix: zero diagonal in the source rows, entries of very different sizes
    A = sps.random(n, n, density=0.06, random_state=4, format="lil") * 1e-3
    for i in range(n):
        A[i, i] = 0.0 if i % 7 == 0 else rng.uniform(1e-6, 1.0)
        A[i, (i + 1) % n] = 1.0
    A = sps.csc_matrix(A)
    st, F, q, Ap, Ai, n = _lu(A)
    assert st == 0
    b = rng.standard_normal(n)
    np.testing.assert_allclose(A @ _solve(F, q, n, b), b, atol=1e-10)
    A2 = A.copy()
    A2.data = A2.data * (1 + 0.2 * rng.standard_normal(A2.data.size))
    assert lu_refactor(n, Ap, Ai, A2.data, q, PIVOT_TOL, F["Lp"], F["Li"], F["Lx"], F["Up"], F["Ui"], F["Ux"],
                       F["pinv"], F["x"]) == 0
    np.testing.assert_allclose(A2 @ _solve(F, q, n, b), b, atol=1e-9)
    # a pivot that vanished asks for a new factorization instead of dividing by it
    A3 = A.copy()
    A3.data[:] = 0.0
    assert lu_refactor(n, Ap, Ai, A3.data, q, PIVOT_TOL, F["Lp"], F["Li"], F["Lx"], F["Up"], F["Ui"], F["Ux"],
                       F["pinv"], F["x"]) < 0
    # singular: a zero column; too little room: the caller grows the arrays
    S = sps.csc_matrix(A.toarray() * (np.arange(n) != 5))
    assert _lu(S)[0] < 0
    assert _lu(A, cap=n)[0] == -(n + 2)


def test_two_diodes_of_different_models_share_one_form():
    v, IS = sp.symbols("v IS", real=True)
    a, pa = canonical([1e-14 * (sp.exp(v / 0.0517) - 1) + 1e-12 * v], [v])
    b, pb = canonical([2.5e-9 * (sp.exp(v / 0.045) - 1) + 1e-12 * v], [v])
    c, pc = canonical([IS * (sp.exp(v / 0.0517) - 1) + 1e-12 * v], [v])
    assert a.key == b.key and a.key != c.key
    P = placeholder_values([pa, pb], {})
    np.testing.assert_allclose(P[:, 1], [1e-14, 2.5e-9])
    assert placeholder_values([pc], {IS: 3e-15})[0, 1] == 3e-15


def test_values_in_a_piecewise_default_branch_become_placeholders():
    # a switch: v/RON above VT, v/ROFF otherwise; (1/ROFF, True) reads no variable and is no Expr
    v, c, VT, RON, ROFF = sp.symbols("v c VT SW.Ron SW.Roff", real=True)
    form, ph = canonical([v * sp.Piecewise((1 / RON, VT < c), (1 / ROFF, True))], [v, c])
    assert not (form.exprs[0].free_symbols & {VT, RON, ROFF}) and set(ph) == {1 / RON, VT, 1 / ROFF}


CHILD = """
import json, sys, warnings
from pathlib import Path
import phsym
from phsym.codegen.laws import library
from phsym.simulation.engines.numeric import freshness
# the user's caches alone: not the engine and kernels compiled into the package (tests/test_cold_start.py)
freshness.package_cache = lambda: Path("/nonexistent/phsym-package-engine")
library.LIBRARY = Path("/nonexistent/phsym-law-library")
warnings.simplefilter("ignore")
texts = sys.argv[1:]
""" + COMPILE_RECORDER + """for text in texts:
    phsym.Simulator(phsym.parse(text), 48000, engine="numeric").run(duration=1e-3)
from phsym.simulation.engines.numeric.stepping import run
print(json.dumps({"compiled": compiled, "signatures": len(run.signatures)}))
"""

A = "* a\\nV1 a 0 SIN(0 1 1k)\\nR1 a b 1k\\nD1 b 0 IS=1e-14\\nC1 b 0 1u\\n"
B = "* b\\nV1 a 0 SIN(0 2 2k)\\nR1 a b 470\\nR2 b c 2k\\nD1 b 0 IS=3e-15 N=1.8\\nD2 0 c IS=3e-15 N=1.8\\nC1 c 0 10n\\nL1 c 0 1m\\n"


def _child(tmp_path, *texts):
    import json
    import os
    # the engine's numba cache is the session's (compiled once per machine by the conftest warm-up,
    # as for a user); the law kernels go to an empty PHSYM_CACHE_DIR
    env = dict(os.environ, PHSYM_CACHE_DIR=str(tmp_path / "phsym"), PHSYM_AOT="0")
    out = subprocess.run([sys.executable, "-c", CHILD, *[t.replace("\\n", "\n") for t in texts]], env=env,
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _files(root):
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def test_a_new_circuit_compiles_nothing(tmp_path):
    # the first circuit compiles its diode's law kernel (files in the empty cache), not the engine
    first = _child(tmp_path, A)
    kernels = _files(tmp_path / "phsym")
    assert first["compiled"] == [] and first["signatures"] == 1
    # the kernel: a C library where there is a compiler, else a numba module (phsym.codegen.laws.native)
    assert any(name.startswith(("phsym_gen_", "phsym_law_c")) for name in kernels)
    # another circuit of the same kinds (other values, other topology): everything loads from the cache
    second = _child(tmp_path, B, A)
    assert second["compiled"] == [] and second["signatures"] == 1
    # (an element of a signature the first had not holds a new description: recorded, not compiled)
    assert {k: v for k, v in _files(tmp_path / "phsym").items() if not k.startswith("phsym_kind_")} == \
        {k: v for k, v in kernels.items() if not k.startswith("phsym_kind_")}


def test_hard_step_is_subdivided_and_keeps_the_balance():
    m = phsym.parse("* hard\nV1 a 0 PWL(0 0 1u 0 1.1u 100)\nR1 a b 10\nD1 b 0 IS=1e-14\nD2 0 b IS=1e-14\n"
                    "C1 b 0 1n\n")
    res = phsym.Simulator(m, 1e6, engine="numeric", method="discrete_gradient").run(duration=4e-6)
    assert res.info["engine"] == "numeric" and not np.any(res.flags)
    power = np.abs(res.P_supplied).max()
    assert np.max(np.abs(res.balance)) <= 1e-10 * power


def test_dc_point_keeps_the_conserved_charge_and_flux():
    par = phsym.Simulator(phsym.parse("* par\nV1 a 0 DC 1\nR1 a b 1\nL1 b 0 1m\nL2 b 0 3m\n"), 48000,
                          engine="numeric")
    x = par.run(duration=1e-3, x0="dc").x[0]
    np.testing.assert_allclose(x / [1e-3, 3e-3], [0.75, 0.25], rtol=1e-10)
    ser = phsym.Simulator(phsym.parse("* ser\nV1 a 0 DC 3\nR1 a b 1k\nC1 b c 1u\nC2 c 0 2u\n"), 48000,
                          engine="numeric")
    q1, q2 = ser.run(duration=1e-3, x0="dc").x[0]
    q = 3 / (1 / 1e-6 + 1 / 2e-6)
    assert q1 == pytest.approx(q, rel=1e-10) and q2 == pytest.approx(q, rel=1e-10)


def test_stream_in_blocks_is_one_run():
    m = phsym.load("netlists/diode_clipper.cir")
    sim = phsym.Simulator(m, 48000, engine="numeric")
    u = 2.0 * np.sin(2 * np.pi * 1e3 * np.arange(600) / 48000)
    whole = sim.run(u={"Vin": u}, align="samples")
    s = sim.stream(signals=["v(out)"])
    parts = np.concatenate([s.process(u[:250]), s.process(u[250:])])
    np.testing.assert_array_equal(parts, whole["v(out)"])


def test_sweep_on_the_numeric_engine():
    m = phsym.load("netlists/diode_clipper.cir")
    res = phsym.sweep(m, 48000, {"Rs": [1e3, 2.2e3, 4.7e3]}, duration=2e-3, engine="numeric",
                      outputs=["v(out)"], executor="serial")
    assert res.info.get("engine", "numeric") == "numeric" and res.ok.all()
    one = phsym.Simulator(m, 48000, engine="numeric").run(duration=2e-3, params={"Rs": 2.2e3})
    np.testing.assert_allclose(res["v(out)"][1][1:], one["v(out)"], rtol=0, atol=1e-12)    # (grid: t0 is NaN)


def test_a_known_law_form_is_loaded_without_deriving_its_formulas(monkeypatch, tmp_path):
    """The disk index maps a kernel's tag to its compiled module: a new process loads a junction's
    step kernel without sympy deriving its divided differences again (seconds per form)."""
    from phsym.codegen.laws import build
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    m = phsym.parse(".model DX D(IS=1e-14 CJO=2p TT=1n)\nV1 a 0 1\nR1 a b 1k\nD1 b 0 DX\n")
    st = next(s for s in m.circuit.storages if not s.linear)
    first = build.step_kernel(st.form, 1, "discrete_gradient")
    assert list(tmp_path.glob(build.INDEX_PREFIX + "*.json"))
    monkeypatch.setattr(build, "_SPECS", {})           # as in a new process
    monkeypatch.setattr(build, "kernel_source", lambda *a: pytest.fail("formulas derived again"))
    again = build.step_kernel(st.form, 1, "discrete_gradient")
    assert again.key == first.key and again.address == first.address
    assert (again.n_var, again.n_const, again.n_out, again.width) == (first.n_var, first.n_const, first.n_out,
                                                                      first.width)
    for f in tmp_path.glob(build.INDEX_PREFIX + "*.json"):     # a damaged index entry: derived again
        f.write_text("{not json")
    monkeypatch.setattr(build, "_SPECS", {})
    monkeypatch.undo()
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "_SPECS", {})
    assert build.step_kernel(st.form, 1, "discrete_gradient").key == first.key


def test_auto_takes_a_small_circuits_own_loop_until_the_engine_is_compiled(monkeypatch, tmp_path):
    """A first run on a machine compiles the clipper's loop in seconds rather than the engine in a
    minute (and the engine then in a detached process); from then on new circuits run numeric."""
    from phsym.simulation.engines import choice
    from phsym.simulation import simulator
    started = []
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))       # the clipper's own loop not compiled here
    monkeypatch.setattr(simulator, "start_numeric_warmup", lambda: started.append(True))
    m = phsym.load(ROOT / "netlists" / "diode_clipper.cir")
    monkeypatch.setattr(choice, "numeric_ready", lambda: False)
    monkeypatch.setattr(simulator, "numeric_ready", lambda: False)
    assert phsym.Simulator(m, 48000).engine == "generated" and started == [True]
    assert phsym.Simulator(m, 48000, engine="numeric").engine == "numeric" and started == [True]
    monkeypatch.setattr(choice, "numeric_ready", lambda: True)
    monkeypatch.setattr(simulator, "numeric_ready", lambda: True)
    assert phsym.Simulator(m, 48000).engine == "numeric" and started == [True]


def test_cache_build_without_a_netlist_compiles_the_engine(capsys):
    from phsym.cli import main
    from phsym.simulation.engines.choice import numeric_ready
    assert main(["cache", "build"]) == 0
    assert "numeric engine compiled" in capsys.readouterr().out and numeric_ready()


def test_one_background_warm_up_at_a_time(monkeypatch, tmp_path):
    from phsym.simulation.engines import choice
    spawned = []
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PHSYM_AOT", "background")
    monkeypatch.setattr(choice, "subprocess", SimpleNamespace(   # (not subprocess.Popen itself: C kernels compile)
        Popen=lambda *a, **k: spawned.append(a), DEVNULL=subprocess.DEVNULL))
    assert choice.start_numeric_warmup() and not choice.start_numeric_warmup()
    assert len(spawned) == 1 and "phsym.simulation.engines.numeric.warmup" in spawned[0][0]
    monkeypatch.setenv("PHSYM_AOT", "0")
    monkeypatch.setattr(choice, "WARMUP_WINDOW", 0.0)
    assert not choice.start_numeric_warmup() and len(spawned) == 1       # background builds off
