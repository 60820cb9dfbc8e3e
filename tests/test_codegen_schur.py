"""Newton directions through the Jacobian's constant columns (phsym.codegen.newton.schur, kernels.schur_*):
the direction is the linear solve's to round-off, singular Jacobians are found, and a generated loop
that uses it steps like one that factors the whole Jacobian."""
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.codegen.newton import module as newton, schur
from phsym.codegen.kernels.generic import schur_direction, schur_setup

ROOT = Path(__file__).resolve().parent.parent
CE = """Common-emitter stage
.model QN NPN(IS=1e-15 BF=200 BR=2)
VCC vcc 0 DC 9
VIN in 0 SIN(0 10m 1k)
C1 in b 10u
R1 vcc b 82k
R2 b 0 15k
RC vcc c 3.9k
RE e 0 820
CE e 0 100u
Q1 c b e QN
C2 c out 1u
RL out 0 100k
"""
#: The smallest circuit whose loop writes a Schur direction out: a diode's junction charge and a node
#: voltage vary (the BJT stage's loop, which the comparison with other factorisations took before, is
#: three times as long to compile, three times per comparison).
JUNCTION = """Diode with junction charge, and one without
.model DA D(IS=1e-14 N=1.5 CJO=4p TT=5n)
.model DB D(IS=1e-14 N=1.5)
VIN in 0 SIN(0 2 1k)
R1 in a 1k
C1 a 0 100n
D1 a b DA
R2 b 0 10k
C2 b 0 10n
D2 b 0 DB
"""


def _direction(A, F, L, N):
    n = A.shape[0]
    Jm = np.zeros((n, 3 * n))
    Jm[:, :n] = A
    piv = np.zeros(n, np.int64)
    SL, SN = np.array(L, np.int64), np.array(N, np.int64)
    if not schur_setup(Jm, n, SL, piv):
        return None
    d, b = np.zeros(n), np.zeros(n)
    return d if schur_direction(Jm, n, SL, SN, F.copy(), d, b) else None


@pytest.mark.parametrize("n,nn", [(2, 1), (5, 0), (5, 2), (7, 2), (8, 3), (12, 5)])
def test_direction_is_the_linear_solve(n, nn):
    rng = np.random.default_rng(n * 10 + nn)
    for trial in range(20):
        A = rng.normal(size=(n, n)) * rng.choice([1e-6, 1.0, 1e4], size=(n, 1))     # rows of mixed units
        A[rng.random((n, n)) < 0.3] = 0.0
        A += np.diag(rng.uniform(1, 2, n))
        F = rng.normal(size=n)
        cols = rng.permutation(n)
        N, L = sorted(cols[:nn]), sorted(cols[nn:])
        d = _direction(A, F, L, N)
        ref = np.linalg.solve(A, -F)
        assert d is not None
        assert np.allclose(d, ref, rtol=1e-8, atol=1e-10 * np.abs(ref).max()), (trial, d, ref)


def test_singular_jacobians_are_found():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    A[:, 2] = 2.0 * A[:, 0]          # dependent constant columns: setup refuses
    assert _direction(A, rng.normal(size=6), [0, 1, 2, 3], [4, 5]) is None
    B = rng.normal(size=(6, 6))
    B[:, 5] = B[:, 4]                # dependent varying columns: the small system is singular
    assert _direction(B, rng.normal(size=6), [0, 1, 2, 3], [4, 5]) is None
    C = rng.normal(size=(6, 6))
    C[:, 4] = C[:, 0] + C[:, 1]      # in the span of the constant ones: singular to round-off, as LU finds it
    d = _direction(C, rng.normal(size=6), [0, 1, 2, 3], [4, 5])
    assert d is None or np.abs(d).max() > 1e12


def test_split_of_the_common_emitter_stage():
    """Seven unknowns: the three charge increments and two resistor currents have constant columns,
    the two junction voltages vary; the generated loop writes the direction out."""
    model = phsym.parse(CE)
    sim = phsym.Simulator(model, 48000.0, engine="generated")
    src = sim._gen.source
    assert "SL = np.array([0, 1, 2, 3, 6]" in src and "SN = np.array([4, 5]" in src
    assert "schur_setup(Jm, 7, SL, piv)" in src and "sdet = " in src and "lu_factor" not in src


@pytest.mark.parametrize("variant", ["lu", "kernel"])
def test_generated_loop_steps_like_the_full_factorisation(monkeypatch, variant):
    """The same step equations solved by an LU of the whole Jacobian (no constant columns used) and by
    the kernel's loops (no written-out direction) give the written-out loop's trajectory to round-off;
    the discrete energy balance holds step by step (on :data:`JUNCTION`: two of its four unknowns vary)."""
    fast_sim = phsym.Simulator(phsym.parse(JUNCTION), 48000.0, "discrete_gradient", engine="generated")
    assert "SN = np.array([0, 1]" in fast_sim._gen.source and "sdet = " in fast_sim._gen.source
    fast = fast_sim.run(duration=0.01)
    if variant == "lu":
        monkeypatch.setattr(newton, "split", lambda *a, **k: None)
    else:
        monkeypatch.setattr(schur, "WRITTEN", 0)
    other_sim = phsym.Simulator(phsym.parse(JUNCTION), 48000.0, "discrete_gradient", engine="generated")
    src = other_sim._gen.source
    assert ("lu_factor" in src) == (variant == "lu") and ("schur_direction(Jm" in src) == (variant == "kernel")
    other = other_sim.run(duration=0.01)
    for name in fast.names.states:
        a, b = fast[name], other[name]
        assert np.allclose(a, b, rtol=1e-9, atol=1e-9 * np.abs(b).max()), name
    assert np.abs(fast.iterations.astype(float).mean() - other.iterations.mean()) < 0.05
    assert fast.max_balance_error < 1e-9 and other.max_balance_error < 1e-9


def test_split_keeps_controls_states_and_inputs_out_of_the_constant_columns():
    """A column is constant only when every entry reads parameters that are not controls, and h."""
    import sympy as sp
    p0, p1, h, x0, ub0, v0, v1 = sp.symbols("p_0 p_1 h x_0 ub_0 v_0 v_1", real=True)
    entries = {(0, 0): 1 + h / p0, (1, 0): h * p1, (0, 1): h, (1, 1): sp.exp(v1)}
    jac = sorted(entries.items())
    got = schur.split(jac, 2, [p0, p1], h)
    assert got.constant == [0] and got.varying == [1] and [rc for rc, _ in got.entries] == [(0, 0), (0, 1), (1, 0)]
    assert schur.split(jac, 2, [p0, p1], h, controls=[1]) is None     # p_1 driven: column 0 varies too
    for reads in (x0, ub0):
        assert schur.split([((0, 0), reads), ((1, 1), h)], 2, [p0, p1], h).constant == [1]
    assert schur.split([((0, 0), h)], 1, [p0], h) is None              # one unknown: a division
    # a column that reads controls (and parameters, h) alone is held: constant within a step
    p2, v2, x1 = sp.symbols("p_2 v_2 x_1", real=True)
    jac = [((0, 0), 1 + h / p0), ((1, 1), h * p1 + p0), ((2, 1), -h * p1), ((1, 2), sp.exp(v2)), ((2, 2), x1 * h)]
    got = schur.split(jac, 3, [p0, p1, p2], h, controls=[1])
    assert got.constant == [0] and got.varying == [1, 2] and got.held == [1]
    assert schur.split(jac, 3, [p0, p1, p2], h).held == []             # not a control: a constant column


def test_rows_of_very_different_units_keep_the_direction_accurate():
    """Rows scaled by 1e-12 .. 1e12 (a step mixes charges, currents and voltages): the direction is the
    linear solve's to round-off of the scaled problem."""
    rng = np.random.default_rng(21)
    n = 7
    for trial in range(20):
        base = rng.normal(size=(n, n)) + np.diag(rng.uniform(2, 3, n))
        scale = 10.0 ** rng.uniform(-12, 12, n)
        A, F = scale[:, None] * base, scale * rng.normal(size=n)
        d = _direction(A, F, [0, 1, 2, 3, 6], [4, 5])
        ref = np.linalg.solve(base, F / scale * -1.0)
        assert d is not None and np.allclose(d, ref, rtol=1e-9, atol=1e-12 * np.abs(ref).max()), trial


def test_pivots_are_chosen_on_rows_scaled_to_unit_maximum():
    """A row of large units but a small relative entry must not be taken as pivot: on the unscaled
    rows partial pivoting would pivot on 1e-10 of that row and lose six digits."""
    base = np.array([[1e-10, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    A = np.diag([1e12, 1.0, 1.0]) @ base
    F = A @ np.array([1.0, 2.0, 3.0])
    d = _direction(A, F, [0, 1, 2], [])
    assert np.allclose(d, [-1.0, -2.0, -3.0], rtol=1e-12), d


LADDER = """Three diodes down a resistor ladder: three varying columns
.model DX D(IS=1e-14 N=1.5)
V1 in 0 SIN(0 3 1k)
R1 in a 1k
D1 a 0 DX
R2 a b 1k
D2 b 0 DX
R3 b c 1k
D3 c 0 DX
C1 c 0 10n
"""


POT = """Antiparallel diodes behind a potentiometer whose position is a control
.param pos=0.5 control
.model DX D(IS=1e-14 N=1.5)
V1 in 0 SIN(0 3 1k)
R1 in a 1k
D1 a 0 DX
D2 0 a DX
P1 a b 0 R=10k pos={pos}
C1 b 0 10n
"""


def test_held_columns_are_rotated_once_per_step_and_step_like_the_small_system(monkeypatch):
    """A control's columns (the pot's ports) are held: the small system's rows rotated once per step
    where they changed, then Cramer's rule on the diodes' two columns and the triangle for the pot's;
    the same steps as the pot's columns in the pivoted small system at every iteration, held still and
    swept at every step."""
    held = phsym.Simulator(phsym.parse(POT), 48000.0, engine="generated")
    src = held._gen.source
    assert "held_ok = " in src and "math.hypot(" in src and "small_solve(Jm, " not in src
    monkeypatch.setattr(schur, "holds", lambda *a: False)
    every = phsym.Simulator(phsym.parse(POT), 48000.0, engine="generated")
    assert "held_ok" not in every._gen.source and "small_solve(Jm, " in every._gen.source
    for controls in (None, {"pos": lambda t: 0.05 + 200 * t}):
        a, b = held.run(duration=0.004, controls=controls), every.run(duration=0.004, controls=controls)
        for name in a.names.states:
            assert np.allclose(a[name], b[name], rtol=1e-9, atol=1e-9 * np.abs(b[name]).max()), name
        assert np.abs(a.iterations.mean() - b.iterations.mean()) < 0.05
        assert a.max_balance_error < 1e-9


def test_three_varying_columns_are_written_out_and_step_like_the_kernel(monkeypatch):
    """More than two varying unknowns: the products written out and the small system solved by
    ``small_solve`` give the kernel's trajectory (its loops over whole rows) to round-off."""
    written = phsym.Simulator(phsym.parse(LADDER), 48000.0, engine="generated")
    src = written._gen.source
    assert "SN = np.array([" in src and "small_solve(Jm, " in src and "schur_direction(Jm" not in src
    assert src.count("sz_2_2 = ") == 1
    monkeypatch.setattr(schur, "WRITTEN", 0)
    kernel = phsym.Simulator(phsym.parse(LADDER), 48000.0, engine="generated")
    assert "schur_direction(Jm" in kernel._gen.source
    a, b = written.run(duration=0.004), kernel.run(duration=0.004)
    for name in a.names.states:
        assert np.allclose(a[name], b[name], rtol=1e-9, atol=1e-9 * np.abs(b[name]).max()), name
    assert np.array_equal(a.iterations, b.iterations)
    assert a.max_balance_error < 1e-9


def _held_solver(sp_, n):
    """The generated prologue, held-column rotation and direction of ``sp_`` as a plain Python function
    ``solve(Jm, F, d, piv, held)``: for each step ``k`` the held columns' entries ``held[k]`` are written
    into ``Jm``, the rotation runs where they changed, and the direction of ``F[k]`` goes to ``d[k]``
    (NaN where the generated code reports a singular system)."""
    body = schur.prologue_lines(sp_, n, {}, "    ") + [
        "    for k in range(F.shape[0]):",
        "        for m in range(held.shape[1]):",
        "            Jm[HR[m], HC[m]] = held[k, m]",
        "        for i in range(F.shape[1]):",
        "            Fk[i] = F[k, i]",
        "        while True:"] + schur.step_lines(sp_, n, " " * 12) + \
        schur.direction_lines(n, " " * 12, sp_) + [
        "            for i in range(F.shape[1]):",
        "                out[k, i] = d[i]",
        "            break",
        "        else:",
        "            pass"]
    # a failed direction breaks out of the while loop before writing out[k]: NaN stays
    # the generated lines read the step's residual as F[r]: here Fk, one row of the steps' F
    src = "def solve(Jm, F, d, piv, held, HR, HC, out, Fk):\n" + "\n".join(body).replace("F[", "Fk[") \
        .replace("Fk[k, i]", "F[k, i]") + "\n    return out\n"
    import math
    from phsym.codegen.kernels.generic import small_solve
    ns = {"math": math, "np": np, "schur_setup": schur_setup, "small_solve": small_solve,
          "SL": np.array(sp_.constant, np.int64), "SN": np.array(sp_.varying, np.int64)}
    exec(compile(src, "<generated held direction>", "exec"), ns)
    return ns["solve"]


@pytest.mark.parametrize("n,free,held", [(5, 1, 1), (6, 2, 1), (7, 2, 2), (8, 1, 3), (9, 0, 2)])
def test_generated_held_direction_is_the_linear_solve(n, free, held):
    """The written-out held path (rotation once per step where the held entries changed, Cramer's rule
    on the free columns, back-substitution of the held ones) against ``np.linalg.solve`` on random
    sparse systems (structural zeros in every column) whose held entries change, all at once or one
    alone; a held column that vanishes is reported singular (NaN left), one that repeats a constant
    column gets no answer of sensible size."""
    rng = np.random.default_rng(n * 10 + held)
    N = list(range(n - free - held, n))
    H = N[free:]
    L = [c for c in range(n) if c not in N]
    K = 6
    for trial in range(15):
        A = rng.normal(size=(n, n)) * (rng.uniform(size=(n, n)) < 0.6) + np.diag(rng.uniform(2, 3, n))
        zeros = [(r, c) for r in range(n) for c in range(n) if A[r, c] == 0.0]
        hr = [(r, c) for c in H for r in range(n) if (r, c) not in zeros]
        sp_ = schur.Split(L, N, [], zeros, held=H)
        assert schur.holds(sp_, n)
        vals = np.array([[A[r, c] for r, c in hr]] * K)
        vals[2:4] *= rng.uniform(0.5, 2.0, size=len(hr))      # the control moved: new held entries
        vals[4:] = vals[0]
        vals[5, rng.integers(len(hr))] *= 1.5                  # one entry alone
        F = rng.normal(size=(K, n))
        Jm = np.zeros((n, 3 * n))
        Jm[:, :n] = A
        out = np.full((K, n), np.nan)
        _held_solver(sp_, n)(Jm, F, np.zeros(n), np.zeros(n, np.int64), vals,
                             np.array([r for r, _ in hr]), np.array([c for _, c in hr]), out, np.zeros(n))
        for k in range(K):
            Ak = A.copy()
            for (r, c), v in zip(hr, vals[k]):
                Ak[r, c] = v
            ref = np.linalg.solve(Ak, -F[k])
            assert np.allclose(out[k], ref, rtol=1e-10, atol=1e-11 * np.abs(ref).max()), (trial, k)
    # degenerate held columns (numerically, not structurally): all zero, or a copy of a constant column
    for bad in ("zero", "copy"):
        A = rng.normal(size=(n, n)) + np.diag(rng.uniform(2, 3, n))
        A[:, H[-1]] = 0.0 if bad == "zero" else A[:, L[0]]
        hr = [(r, c) for c in H for r in range(n)]
        sp_ = schur.Split(L, N, [], [], held=H)
        Jm = np.zeros((n, 3 * n))
        Jm[:, :n] = A
        out = np.full((1, n), np.nan)
        _held_solver(sp_, n)(Jm, rng.normal(size=(1, n)), np.zeros(n), np.zeros(n, np.int64),
                             np.array([[A[r, c] for r, c in hr]]), np.array([r for r, _ in hr], dtype=np.int64),
                             np.array([c for _, c in hr], dtype=np.int64), out, np.zeros(n))
        assert np.isnan(out).all() if bad == "zero" else not (np.abs(out).max() < 1e12), bad


def test_held_columns_step_alike_in_chunks():
    """The held rotation is redone at the first step of every call (its triangle lives in the call):
    a run in chunks of 7 steps is the single call's, bit for bit, with the pot still, stepped once
    and swept at every step."""
    sim = phsym.Simulator(phsym.parse(POT), 48000.0, engine="generated")
    for controls in (None, {"pos": lambda t: np.where(t < 0.001, 0.3, 0.7)}, {"pos": lambda t: 0.05 + 200 * t}):
        one = sim.run(duration=0.002, controls=controls)
        chunked = sim.run(duration=0.002, controls=controls, chunk=7)
        for name in one.names.states:
            assert np.array_equal(one[name], chunked[name]), (controls, name)
        assert np.array_equal(one.iterations, chunked.iterations)
