"""Generated loops run as Python (``PHSYM_JIT=0``, phsym.codegen.interpret): the same steps, iterations,
balance and sensitivities as the compiled loop, numba's numpy error model on the edge cases, and a
module pdb can step through."""
import math
import re

import numpy as np
import pytest
from numba import njit

import phsym
from phsym.codegen import interpret
from phsym.codegen.cache import cache_dir

from tests.test_codegen_schur import JUNCTION

CLIPPER = """Diode clipper
.model DX D(IS=2.52n N=1.752)
V1 in 0 SIN(0 3 1k)
R1 in a 2.2k
C1 a 0 10n
D1 a 0 DX
D2 0 a DX
"""


def _run(text, jit, monkeypatch, **kw):
    monkeypatch.setenv("PHSYM_JIT", jit)
    sim = phsym.Simulator(phsym.parse(text), 48000.0, "discrete_gradient", engine="generated")
    return sim, sim.run(duration=0.01, **kw)


@pytest.mark.compiled
def test_interpreted_junction_loop_takes_the_compiled_steps(monkeypatch):
    """A junction charge (solved through its voltage, limited, stepped to the end; Schur direction
    written out; step constants hoisted; guarded subexpressions): the interpreted loop's trajectory, Newton iterations, energy and balance are the compiled loop's, bit for bit."""
    sim_c, comp = _run(JUNCTION, "1", monkeypatch)
    sim_i, intr = _run(JUNCTION, "0", monkeypatch)
    assert not getattr(sim_c._gen.module, "INTERPRETED", False) and sim_i._gen.module.INTERPRETED
    assert comp.info["compiled"] == "numba cache" and intr.info["compiled"] == "interpreted"
    # the generator's features compiled here, each run interpreted by its own tests: the junction
    # charge solved through its voltage, stepped to the end (stiff rule), the Schur direction written
    # out, step constants hoisted, guarded common subexpressions
    src = sim_c._gen.source
    assert src == sim_i._gen.source and comp.info["stiff"] == "backward_euler" and comp.P_num.max() > 0
    assert "junction_voltage(" in src and "sdet = " in src and "kc = (" in src
    assert re.search(r"^\s+_c\d+ = \(.*\) if .+ else 0\.0$", src, re.M)
    for name in comp.names.states:
        assert np.array_equal(comp[name], intr[name]), name
    assert np.array_equal(comp.iterations, intr.iterations) and comp.iterations.sum() > 0
    for name in ("H", "P_diss", "P_supplied"):
        assert np.array_equal(getattr(comp, name), getattr(intr, name)), name
    assert comp.max_balance_error < 1e-9 and intr.max_balance_error == comp.max_balance_error
    # PHSYM_JIT=loop (the suite's default): the loop as Python, the kernels it calls compiled
    sim_k, kern = _run(JUNCTION, "loop", monkeypatch)
    assert sim_k._gen.module.INTERPRETED and sim_k._gen.module.junction_voltage is not sim_i._gen.module.junction_voltage
    for name in ("x", "iterations", "H", "P_diss"):
        assert np.array_equal(getattr(comp, name), getattr(kern, name)), name


@pytest.mark.compiled
def test_interpreted_sensitivities_are_the_compiled_ones(monkeypatch):
    """The grey-box sensitivity module of a diode clipper, run interpreted and compiled: the same
    outputs and sensitivities to 1e-12 relative."""
    from phsym.identify import ParameterEstimator
    from phsym.simulation.initial import state_scales
    m = phsym.parse(CLIPPER)
    fs, n = 48000.0, 200
    u = 3 * np.sin(2 * np.pi * 1e3 * np.arange(n) / fs)
    got = {}
    for jit in ("1", "0"):
        monkeypatch.setenv("PHSYM_JIT", jit)
        est = ParameterEstimator(m, ["R1", "DX.IS"], ["v(a)"], method="discrete_gradient", engine="generated")
        step = est._sensitivity(m, ["R1", "DX.IS"], ["v(a)"], 1 / fs)
        assert bool(getattr(step.module, "INTERPRETED", False)) == (jit == "0")
        Y, DY, bad, _ = est._simulate(m, step, {"R1": 2.2e3, "DX.IS": 2.52e-9}, u[:, None], 1 / fs, None,
                                      state_scales(m.structure, m.parameter_values()))
        assert bad < 0
        got[jit] = Y, DY
    (Yc, DYc), (Yi, DYi) = got["1"], got["0"]
    assert np.abs(DYc).max() > 0
    np.testing.assert_allclose(Yi, Yc, rtol=1e-12, atol=1e-12 * np.abs(Yc).max())
    for c in range(DYc.shape[2]):
        np.testing.assert_allclose(DYi[..., c], DYc[..., c], rtol=1e-12, atol=1e-12 * np.abs(DYc[..., c]).max())


@njit(cache=False, error_model="numpy")
def _edges(a, b):
    out = np.empty(12)
    out[0] = a / b
    out[1] = math.exp(a * 1000.0)
    out[2] = math.log(b)
    out[3] = math.sqrt(b - a)
    out[4] = (b - a) ** 0.5
    out[5] = 1.0 / (a * 0.0)
    out[6] = b ** -1.0
    out[7] = math.log1p(-a)
    out[8] = math.cosh(a * 1000.0)
    x = a
    x /= b
    out[9] = x
    out[10] = math.pow(b, -2.0)
    out[11] = -a % b
    return out


@pytest.mark.compiled
@pytest.mark.parametrize("a,b", [(1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (2.0, -3.0), (1.5, 2.5)])
def test_interpreted_arithmetic_follows_numbas_numpy_error_model(a, b):
    """Division by zero, overflow, logs and roots out of their domain: inf and nan where Python
    would raise, as the compiled code gives them."""
    compiled = _edges(a, b)
    interpreted = interpret.plain(_edges)(a, b)
    np.testing.assert_array_equal(interpreted, compiled)


@njit(cache=False, error_model="numpy")
def _powers(x):
    return np.array([x ** 2, x ** 3, x ** 5, x ** -3, x ** 7, math.pow(x, 3), x ** 1.5, x ** -0.5, math.exp(x)])


@pytest.mark.compiled
def test_interpreted_powers_round_as_compiled():
    """Integer powers are multiplied out as numba does (Python's ``**`` would call libm's pow, one ulp
    off in a quarter of the cases), float powers and exp go to libm in both."""
    py = interpret.plain(_powers)
    with np.errstate(invalid="ignore"):     # negative bases to 1.5: nan, as compiled
        for x in np.random.default_rng(5).uniform(-10.0, 10.0, 2000):
            np.testing.assert_array_equal(py(float(x)), _powers(x))
            np.testing.assert_array_equal(py(x), _powers(x))


def test_interpreted_module_is_the_cached_file_and_compiles_nothing(monkeypatch):
    """The loop's functions are plain Python whose code is the cached file (pdb and tracebacks show
    its lines); its compiled helpers are their Python functions."""
    sim, res = _run(CLIPPER, "0", monkeypatch)
    mod = sim._gen.module
    path = cache_dir() / f"phsym_gen_{sim._gen.key}.py"
    assert mod.__file__ == str(path) and path.read_text().split("\n", 1)[1] == sim._gen.source
    for fn in (mod.run, mod.resjac):
        assert not hasattr(fn, "signatures")
    assert mod.run.__wrapped__.__code__.co_filename == str(path)
    line = path.read_text().splitlines()[mod.resjac.__code__.co_firstlineno - 1]
    assert line.startswith("def resjac(")
    assert res.info["compiled"] == "interpreted" and np.all(np.isfinite(res["v(a)"]))


def test_jit_setting(monkeypatch):
    for text, off in (("0", True), ("interpret", True), ("OFF", True), ("loop", True), ("1", False), ("", False)):
        monkeypatch.setenv("PHSYM_JIT", text)
        assert interpret.enabled() is off and interpret.compiled_kernels() is (text == "loop"), text
    monkeypatch.delenv("PHSYM_JIT")
    assert not interpret.enabled()


def test_an_interpreted_run_does_not_mark_its_loop_compiled(monkeypatch, tmp_path):
    """``engine="auto"`` takes a generated loop recorded as compiled; an interpreted run compiled
    nothing, so a later process without ``PHSYM_JIT`` must not take its loop for a ready one."""
    from phsym.simulation.engines import choice
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    sim, res = _run(CLIPPER, "0", monkeypatch)
    assert res.info["compiled"] == "interpreted"
    assert choice.ready_module(choice.fingerprint(sim.model, sim.scheme, sim.stiff)) is None
    assert not list(tmp_path.glob(choice.READY_PREFIX + "*"))


@pytest.mark.compiled
@pytest.mark.parametrize("scheme", ["midpoint", "backward_euler"])
def test_interpreted_unrolled_linear_loop_takes_the_compiled_steps(monkeypatch, scheme):
    """The unrolled linear loop (phsym.codegen.linear_gen, shared by every model of one size), run as
    Python and compiled: the same states, outputs, energy and powers, bit for bit."""
    from pathlib import Path
    m = phsym.load(Path(__file__).resolve().parent.parent / "netlists" / "dc_network.cir")
    u = {"VG": np.sin(np.arange(201) * 0.3)}
    got = {}
    for jit in ("1", "loop"):
        monkeypatch.setenv("PHSYM_JIT", jit)
        sim = phsym.Simulator(m, 1000.0, scheme, engine="linear")
        got[jit] = sim.run(u=u, x0=[0.01, 0.2, -0.01])
        assert got[jit].info["compiled"] == ("numba cache" if jit == "1" else "interpreted")
    comp, intr = got["1"], got["loop"]
    assert np.abs(comp.x).max() > 0.1
    for name in ("x", "y", "H", "P_diss", "P_supplied", "balance"):
        assert np.array_equal(getattr(comp, name), getattr(intr, name)), name


def test_interpreted_division_by_zero_gives_numpys_bits():
    """Python numbers divided by zero (signed zeros, ints, infinities, nans): the bits of numpy's
    float64 quotient, which is numba's with error_model='numpy' (the edge cases compiled above)."""
    import itertools
    import struct
    bits = lambda v: struct.pack("<d", float(v)).hex()      # noqa: E731
    nums = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan, -math.nan, 3, 0, -4, 1e308]
    for a, b in itertools.product(nums, [0.0, -0.0, 0]):
        with np.errstate(all="ignore"):
            ref = (np.int64(a) if type(a) is int else np.float64(a)) / (np.int64(b) if type(b) is int else np.float64(b))
        assert bits(interpret._div(a, b)) == bits(ref), (a, b)
