"""Hostile input: expression bombs, complex and overflowing laws, large models.

Every case of issue 38's measurements ends in a PhsymError that names the
element or the line and the expression, fast and in bounded memory (the
bombs run in a child process with an address-space limit and a timeout).
"""
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import phsym
from phsym.common import bounded
from phsym.common import deadline as bounded_deadline
from phsym.errors import NetlistError, PhsymError, SimulationError, StructureError

ROOT = Path(__file__).resolve().parents[1]
RC = "V1 a 0 DC 1\nR1 a o 1k\n"


def _refused(text, error=PhsymError, match=None):
    with pytest.raises(error, match=match) as info:
        phsym.parse(text)
    return info.value


# ------------------------------------------------ bombs: in a child with limits
BOMBS = {
    "power 2^64 in a law": RC + "C1 o 0 H={(q+1)^(2^64)}\n",
    "trinomial^300 in a value": ".param a=1\n" + RC.replace("1k", "{(a+a^2+3)^300}") + "C1 o 0 1u\n",
    "trinomial^300 in a law": RC + "C1 o 0 H={(q+q^2+1)^300}\n",
    "trinomial^300 in a waveform": ".param a=2\nV1 a 0 SIN(0 {(a+a^2+1)^300} 1k)\nR1 a 0 1k\n",
    "sum of 20000 powers": RC + "C1 o 0 H={" + "+".join(f"q^{k}" for k in range(2, 20002)) + "}\n",
    "q^1000": RC + "C1 o 0 H={q**1000}\n",
    "(q+1)^64": RC + "C1 o 0 H={(q+1)^64}\n",
    "sin of a huge constant": RC + "C1 o 0 H={q^2*sin(exp(exp(100)))}\n",
    "exp(exp(exp(a))) in a law": ".param a=10\n" + RC + "R2 o 0 I={v*exp(exp(exp(a)))}\n",
}

_CHILD = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))
import phsym
out = {}
for name, text in json.loads(sys.stdin.read()).items():
    t = time.perf_counter()
    try:
        phsym.parse(text).check()
        out[name] = ["passed", time.perf_counter() - t, ""]
    except phsym.PhsymError as exc:
        out[name] = [type(exc).__name__, time.perf_counter() - t, str(exc)]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def bombs():
    res = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(BOMBS), capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_expression_bomb_is_refused_with_line_and_expression(bombs, name):
    kind, seconds, message = bombs[name]
    assert kind == "NetlistError", (name, kind, message)
    assert "<netlist>:" in message and "hint:" in message
    assert seconds < 60, seconds        # a bound, not a benchmark: the budgets cut long before


def test_sum_of_many_terms_parses_in_linear_time():
    from phsym.netlist.expressions import parse_expression
    x = sp.Symbol("x")
    text = "+".join(f"{k}*x" for k in range(1, 5001))
    t = time.perf_counter()
    assert parse_expression(text, {"x": x}) == sum(range(1, 5001)) * x
    assert time.perf_counter() - t < 30


# ------------------------------------------------------------- size measures
def test_size_measures_count_without_expanding():
    q, a = sp.symbols("q a")
    assert bounded.expansion_terms((q + 1) ** 10) == 11
    assert bounded.expansion_terms((q + a + 1) ** 10) == 66     # binomial(12, 2)
    assert bounded.expansion_terms((q + 1) ** 2 ** 64) == bounded.MAX_TERMS + 1
    assert bounded.polynomial_degree((q ** 2 + 1) ** 5 * q) == 11
    assert bounded.size_problem(q ** 4 / 4 + a * q ** 2) is None
    assert "at most 64" in bounded.size_problem(q ** 65)
    assert "discrete gradient" in bounded.size_problem((q + 1) ** 64)


@pytest.mark.parametrize("expr,value", [("sqrt(2)*exp(1)", np.sqrt(2) * np.e), ("atan2(1, 2) + pi", np.arctan2(1, 2) + np.pi),
                                        ("Max(1, 3) - Abs(-2)", 1.0), ("log(10)/log(2)", np.log2(10))])
def test_real_value_agrees_with_numpy(expr, value):
    assert bounded.real_value(sp.sympify(expr)) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("expr,domain", [("sqrt(-1)", True), ("log(-2)", True), ("asin(2)", True),
                                         ("exp(exp(exp(10)))", False), ("sin(exp(exp(100)))", False),
                                         ("10**400", False)])
def test_real_value_reports_domain_and_overflow(expr, domain):
    with pytest.raises(bounded.NotReal) as info:
        bounded.real_value(sp.sympify(expr))
    assert info.value.domain == domain


def test_deadline_interrupts_and_nests():
    q, a, b = sp.symbols("q a b")

    def err(seconds):
        return StructureError(f"over {seconds} s")
    t = time.perf_counter()
    with pytest.raises(StructureError, match="over 0.5 s"):
        with bounded.deadline(err, 0.5):
            sp.expand((q + a + b + 1) ** 40)
    assert time.perf_counter() - t < 20
    with bounded.deadline(err, 30):                 # an inner, shorter deadline, then the outer goes on
        with pytest.raises(StructureError, match="over 0.2 s"):
            with bounded.deadline(err, 0.2):
                sp.expand((q + a + b + 1) ** 40)
        assert sp.expand((q + 1) ** 2) == q ** 2 + 2 * q + 1


# ---------------------------------------------------- values that overflow
@pytest.mark.parametrize("text,error", [
    (RC.replace("1k", "{exp(exp(exp(10)))}") + "C1 o 0 1u\n", NetlistError),
    (".param a=10\n" + RC.replace("1k", "{exp(exp(exp(a)))}") + "C1 o 0 1u\n", StructureError),
    (RC + "C1 o 0 H={q^2*exp(exp(exp(10)))}\n", NetlistError),
    (".param a=10\n" + RC + "C1 o 0 H={q^2*exp(exp(exp(a)))}\n", NetlistError),
    ("* line 1 is a title when it is no valid element\nV1 a 0 SIN(0 {exp(exp(exp(10)))} 1k)\nR1 a 0 1k\n",
     NetlistError),
    (RC + "L1 o 0 1m\nL2 b 0 1m\nR2 b 0 1k\nK1 L1 L2 {exp(exp(exp(10)))}\n", NetlistError),
    (".param a=10\n" + RC + "L1 o 0 1m\nL2 b 0 1m\nR2 b 0 1k\nK1 L1 L2 {exp(-exp(exp(a)))}\n", StructureError),
], ids=["value", "value-param", "law", "law-param", "waveform", "coupling", "coupling-param"])
def test_overflowing_constant_is_a_phsym_error(text, error):
    e = _refused(text, error)
    assert "overflows" in str(e) or "finite" in str(e)


def test_singular_coupling_matrix_is_a_structure_error():
    # three equal inductors coupled pairwise at k = -1/2: L has the null vector (1, 1, 1)
    text = (RC + "L1 o 0 1m\nL2 b 0 1m\nL3 c 0 1m\nR2 b 0 1k\nR3 c 0 1k\n"
            "K1 L1 L2 -0.5\nK2 L2 L3 -0.5\nK3 L1 L3 -0.5\n")
    e = _refused(text, StructureError, match="singular or indefinite")
    assert {"K1", "K2", "K3"} <= set(e.elements)


def test_overflowing_coefficient_at_a_parameter_set_is_a_phsym_error():
    m = phsym.parse(".param a=1\nV1 a 0 DC 1\nR1 a o 1k\nR2 o 0 I={v*exp(a)}\nC1 o 0 1u\n")
    sim = phsym.Simulator(m, 48000, engine="linear")
    with pytest.raises(PhsymError, match="finite"):
        sim.run(duration=1e-4, params={"a": 1e3})


def test_numba_compile_error_becomes_a_simulation_error():
    import numba
    from phsym.simulation.engines.arrays import plain_call

    @numba.njit
    def bad(x):
        return x.no_such_attribute
    with pytest.raises(SimulationError, match="does not compile"):
        plain_call(bad, None, 1.0)


# ----------------------------------------------------------- complex laws
@pytest.mark.parametrize("law", ["H={sqrt(-1)}", "H={q^2/2 + sqrt(-1)}", "H={q^2*log(-2)}", "H={asin(2)*q^2}"])
def test_complex_constant_in_a_law_is_refused_at_load(law):
    e = _refused(RC + f"C1 o 0 {law}\n", NetlistError, match="finite real")
    assert e.line == 3 and "C1" in str(e)


def test_law_real_nowhere_is_refused_at_load():
    e = _refused(RC + "C1 o 0 H={sqrt(-q^2-1)}\n", NetlistError, match="not a real number for any real q")
    assert "C1" in str(e) and e.line == 3
    _refused(".param a=-1\n" + RC + "C1 o 0 H={q^2/2*sqrt(a)}\n", NetlistError, match="sqrt.a. is not a finite real")


def test_law_complex_on_part_of_its_range_fails_check():
    m = phsym.parse(RC + "R2 o 0 I={log(v)}\nC1 o 0 1u\n")
    checks = m.check()
    assert checks["laws real"] is False and not all(checks.values())
    assert set(m.complex_laws()) == {"R2"} and all(x < 0 for x in m.complex_laws()["R2"])


def test_real_laws_pass():
    m = phsym.parse(RC + "C1 o 0 H={q^2/2 + q^4}\nR2 o 0 I={1e-12*(exp(v/0.025)-1)}\n")
    assert m.check()["laws real"] is True and not m.complex_laws()


# ------------------------------------------------------------- large models
def _series(n):
    return ("V1 n0 0 DC 1\nR1 n0 n1 1k\n" + "".join(f"C{k} n{k} n{k + 1} 1u\n" for k in range(1, n + 1))
            + f"R2 n{n + 1} 0 1k\n")


def test_chain_of_1000_series_capacitors_checks_numerically():
    m = phsym.parse(_series(1000))
    t = time.perf_counter()
    checks = m.check()
    assert time.perf_counter() - t < 30
    assert all(checks.values()) and set(checks) >= {"J skew", "Tellegen", "power balance", "R PSD",
                                                    "Q^T E PSD", "dissipation passive", "laws real"}
    assert "structure" not in vars(m)


def test_numeric_checks_agree_with_symbolic_and_can_fail(monkeypatch):
    from phsym.graph import branches_of, loop_matrix
    from phsym.structure import numeric_checks as nc
    m = phsym.parse(_series(20) + "L1 n3 0 1m\nR3 n5 0 I={v^3 + v}\n")
    branches, in_tree = branches_of(m.graph)
    num = nc.numeric_checks(branches, in_tree, m._records, m.defaults)
    sym = m.check()
    assert {k: sym[k] for k in num} == num and all(num.values())

    def wrong(*args):           # one sign of the loop matrix flipped: Kirchhoff's laws no longer hold
        M, paths = loop_matrix(*args)
        M = M.tolil()
        r, c = M.nonzero()
        M[r[0], c[0]] = -M[r[0], c[0]]
        return M.tocsr(), paths
    monkeypatch.setattr(nc, "loop_matrix", wrong)
    bad = nc.numeric_checks(branches, in_tree, m._records, m.defaults)
    assert not bad["Tellegen"] and not bad["power balance"]


# ---------------------------------------------------------------- warnings
def test_linearising_a_piecewise_law_leaks_no_runtime_warning():
    m = phsym.load(ROOT / "netlists" / "rhodes.cir")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        m.linearize()


def test_a_swallowed_interruption_is_followed_up():
    """The deadline's interruption lands where Python code runs; in a finaliser or under a bare
    ``except`` it is lost.  The watchdog interrupts again (BACKUP_GRACE after the deadline, then
    every REFIRE seconds) instead of letting the block run unbounded."""
    q, a, b = sp.symbols("q a b")
    lost = []

    def swallowing_work():
        for _ in range(2):          # the first interruptions land here and are lost
            try:
                t = time.perf_counter()
                while time.perf_counter() - t < 30:
                    pass
            except BaseException as exc:        # noqa: B036 - what a careless library does
                lost.append(type(exc).__name__)
        sp.expand((q + a + b + 1) ** 40)        # 6-7 s here: interrupted again
    t = time.perf_counter()
    with pytest.raises(StructureError, match="over 0.2 s"):
        with bounded.deadline(lambda s: StructureError(f"over {s} s"), 0.2):
            swallowing_work()
    took = time.perf_counter() - t
    assert lost == ["_Expired", "_Expired"]
    grace, refire = bounded_deadline.BACKUP_GRACE, bounded_deadline.REFIRE
    assert 0.2 + grace + refire - 0.05 < took < 0.2 + grace + 2 * refire + 3, took
    t = time.perf_counter()
    while time.perf_counter() - t < 2 * refire:     # nothing arrives after the block
        pass


def test_deadline_interrupts_in_other_threads():
    """A worker thread (no SIGALRM there) is interrupted by the watchdog; a block that ends in time
    leaves nothing pending behind it."""
    import threading
    q, a, b = sp.symbols("q a b")

    def err(seconds):
        return StructureError(f"over {seconds} s")
    seen = {}

    def work():
        t = time.perf_counter()
        try:
            with bounded.deadline(err, 0.3):
                sp.expand((q + a + b + 1) ** 40)
        except StructureError as exc:
            seen["error"], seen["took"] = str(exc), time.perf_counter() - t
        with bounded.deadline(err, 30):             # nested: the inner fires, the outer goes on
            try:
                with bounded.deadline(err, 0.2):
                    sp.expand((q + a + b + 1) ** 40)
            except StructureError as exc:
                seen["inner"] = str(exc)
            seen["after"] = sp.expand((q + 1) ** 2)
        for _ in range(200):                        # quick blocks: no interruption arrives later
            with bounded.deadline(err, 0.01):
                pass
        t = time.perf_counter()
        while time.perf_counter() - t < 0.1:
            pass
        seen["done"] = True
    th = threading.Thread(target=work)
    th.start()
    th.join(60)
    assert seen.get("error") == "over 0.3 s" and seen["took"] < 20
    assert seen.get("inner") == "over 0.2 s" and seen["after"] == q ** 2 + 2 * q + 1
    assert seen.get("done")
