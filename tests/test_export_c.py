"""The exported C99 library (phsym.codegen.c) against the simulator it was exported from.

Each library is compiled once per module by the system C compiler with -Wall -Wextra -std=c99
-pedantic -Werror (-O0: these tests check the arithmetic; one test builds with -O2) and loaded with
ctypes; its outputs are compared with :class:`phsym.simulation.stream.Stream` (the
simulator's block processing, the same generated loop run by numba) on the bundled audio netlists:
the arithmetic is the same statement for statement, so the samples are equal bit for bit.  The
DC point the library solves itself (after set_param, or for a nonzero first sample) is the
simulator's to Newton's tolerance.
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from phsym.errors import ExportError
from phsym.simulation.export import export_c, exported_simulator

ROOT = Path(__file__).resolve().parents[1]
CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")
FS = 48000.0
DBL = ctypes.POINTER(ctypes.c_double)


def compile_library(lib, tmp: Path, defines=(), opt: str = "-O0") -> Path:
    """The shared object of an export (warnings are errors)."""
    so = tmp / f"lib{lib.name}{'_'.join(defines)}{opt}.so"
    cmd = [CC, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", opt, "-shared", "-fPIC",
           *[f"-D{d}" for d in defines], "-o", str(so), str(lib.source), "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return so


class CLib:
    """A compiled export loaded with ctypes: one instance of its state."""

    def __init__(self, lib, so: Path):
        self.dll, self.n = ctypes.CDLL(str(so)), lib.name
        self.f("state_size").restype = ctypes.c_ulong
        self.buf = ctypes.create_string_buffer(self.f("state_size")())
        self.f("init").argtypes = [ctypes.c_void_p, ctypes.c_double]
        self.f("set_param").argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_double]
        self.f("failures").restype = ctypes.c_long
        self.f("get_state").argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.f("process_double").argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        self.n_in, self.n_out, self.n_x = len(lib.inputs), len(lib.outputs), len(lib.spec.x0)
        assert self.f("init")(self.buf, FS) == 0

    def f(self, name):
        return getattr(self.dll, f"{self.n}_{name}")

    def state(self) -> np.ndarray:
        x = np.zeros(self.n_x)
        self.f("get_state")(self.buf, x.ctypes.data)
        return x

    def process(self, x: np.ndarray, calls=(64,)) -> np.ndarray:
        """Outputs for the input samples ``x`` (n, n_in), in calls of the given sizes (cycled)."""
        x = np.ascontiguousarray(np.asarray(x, dtype=float).reshape(len(x), -1).T)
        y = np.zeros((self.n_out, x.shape[1]))
        at, j = 0, 0
        while at < x.shape[1]:
            m = min(calls[j % len(calls)], x.shape[1] - at)
            ins = (DBL * max(self.n_in, 1))(*[x[i, at:].ctypes.data_as(DBL) for i in range(self.n_in)])
            outs = (DBL * self.n_out)(*[y[i, at:].ctypes.data_as(DBL) for i in range(self.n_out)])
            self.f("process_double")(self.buf, ins, outs, m)
            at, j = at + m, j + 1
        return y.T


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """``build(deck, inputs=None, outputs=None) -> (lib, so, sim, x0)``: one export and one -O0 compile
    per deck and choice for the whole module (each test makes its own instance)."""
    built: dict = {}

    def get(deck, inputs=None, outputs=None):
        key = (deck, tuple(inputs or ()), tuple(outputs or ()))
        if key not in built:
            tmp = tmp_path_factory.mktemp("export")
            lib = export_c(ROOT / deck, tmp, fs=FS, inputs=inputs, outputs=outputs)
            _, sim, x0 = exported_simulator(ROOT / deck, FS)
            built[key] = (lib, compile_library(lib, tmp), sim, x0)
        return built[key]
    return get


def _instance(build, deck, inputs=None, outputs=None, params=None):
    """A fresh C instance and a fresh simulator stream of the same export."""
    lib, so, sim, x0 = build(deck, inputs, outputs)
    return lib, CLib(lib, so), sim.stream(x0=x0, params=params, signals=lib.outputs)


def _sine(n, amp, f=1000.0):
    return amp * np.sin(2 * np.pi * f * np.arange(n) / FS)


@pytest.mark.parametrize("deck, out, amp", [
    ("netlists/diode_clipper.cir", "v(out)", 1.5),
    ("netlists/overdrive.cir", "v(out)", 0.3),
    ("tests/decks/opamp_diode_clipper.cir", "v(o)", 0.3),
])
def test_library_matches_simulator(build, deck, out, amp):
    # the triode stage is netlists/triode_volume.cir's (the pot and DC tests below): one compile fewer
    lib, c, stream = _instance(build, deck, outputs=[out])
    x = _sine(700, amp)
    x[350:] *= 3.0      # a jump into harder clipping
    y = c.process(x, calls=(1, 63, 64, 65, 200))
    ref = np.concatenate([stream.process({lib.inputs[0]: x[:300]}), stream.process({lib.inputs[0]: x[300:]})])
    assert np.all(np.isfinite(ref)) and np.ptp(ref) > 0.1
    np.testing.assert_array_equal(y[:, 0], ref)     # the same floats
    assert c.f("failures")(c.buf) == 0


@pytest.mark.parametrize("inputs", [None, ["Vb"]])
def test_netlist_waveforms(build, inputs):
    """Sources that are not inputs keep their netlist waveform (PULSE, PWL, EXP, SFFM, a delayed,
    damped, phased SIN; with --inputs Vb the default input's SIN too), sampled at the simulator's
    times k / fs: the same floats.  Without --inputs the input is the first time-varying source."""
    deck = "tests/decks/export/export_waves.cir"
    lib, c, stream = _instance(build, deck, inputs)
    assert lib.inputs == (inputs or ["Vin"])
    assert sorted(lib.spec.waves) == ([1, 2, 3, 4, 5] if inputs is None else [0, 2, 3, 4, 5])
    x = _sine(480, 0.7) if inputs is None else _sine(480, 0.3, 300.0)
    y = c.process(x, calls=(1, 63, 64, 65, 200))
    ref = stream.process({lib.inputs[0]: x})
    assert np.ptp(ref) > 0.1
    np.testing.assert_array_equal(y[:, 0], ref)


def test_pot_turning(build):
    """The volume pot of the triode stage turned during the run: one set_param per sample (each
    reached at its sample) is the simulator's sampled control signal."""
    lib, c, stream = _instance(build, "netlists/triode_volume.cir")
    assert [ct.name for ct in lib.spec.controls] == ["vol"] and lib.spec.controls[0].maximum == 1.0
    n = 400
    x, vol = _sine(n, 0.5), np.linspace(0.5, 0.9, n)
    y = np.zeros(n)
    for k in range(n):
        assert c.f("set_param")(c.buf, 0, vol[k]) == 0
        y[k] = c.process(x[k:k + 1])[0, 0]
    ref = stream.process({"VIN": x}, controls={"vol": vol})
    np.testing.assert_array_equal(y, ref)
    assert c.f("set_param")(c.buf, 1, 0.5) == -1       # no second parameter


@pytest.mark.parametrize("deck, values", [("netlists/triode_volume.cir", (0.8, 0.1)),
                                          ("tests/decks/export/export_waves.cir", (0.9, 0.05))])
def test_reset_solves_dc(build, deck, values):
    """NAME_reset after set_param: the DC point solved in C for the new value is the simulator's
    (its stream's start with that value) to Newton's tolerance (measured: 1e-15 relative), and the
    samples that follow are those of the simulator run with that value (measured: 5e-13 of the peak)."""
    lib, c, _ = _instance(build, deck)
    _, _, sim, x0 = build(deck)
    assert lib.spec.dc is not None and c.f("dc_status")(c.buf) == 1
    name = lib.spec.controls[0].name
    moved = []
    for v in values:
        assert c.f("set_param")(c.buf, 0, v) == 0
        c.f("reset")(c.buf)
        assert c.f("dc_status")(c.buf) == 1
        xc = c.state()
        stream = sim.stream(x0=x0, params={name: v}, signals=lib.outputs)
        x = _sine(200, 0.5)
        ref = stream.process({lib.inputs[0]: x})
        xr = stream.last.x[0]
        np.testing.assert_allclose(xc, xr, rtol=1e-12, atol=1e-14 * np.abs(xr).max())
        moved.append(xc)
        np.testing.assert_allclose(c.process(x)[:, 0], ref, rtol=0, atol=1e-11 * np.abs(ref).max())
    if deck.endswith("export_waves.cir"):
        assert np.abs(moved[0] - moved[1]).max() > 1e-3 * np.abs(moved[0]).max()   # the point did move


def test_first_sample_dc(build):
    """A run whose first input sample is not zero starts, as the simulator's stream, from the DC point
    of that sample (solved in C at the first sample)."""
    lib, c, stream = _instance(build, "tests/decks/export/export_waves.cir")
    x = 0.4 * np.cos(2 * np.pi * 1000.0 * np.arange(200) / FS)
    y = c.process(x)
    ref = stream.process({lib.inputs[0]: x})
    np.testing.assert_allclose(c.state(), stream.state, rtol=1e-12, atol=1e-14 * np.abs(stream.state).max())
    np.testing.assert_allclose(y[:, 0], ref, rtol=0, atol=1e-11 * np.abs(ref).max())
    c.f("reset")(c.buf)
    np.testing.assert_allclose(c.process(x)[:, 0], y[:, 0], rtol=0, atol=1e-12 * np.abs(ref).max())


def test_record_energy_and_failures(build, tmp_path):
    """OVERDRIVE_RECORD_ENERGY=1 books the energy as the simulator does (the same outputs, the same
    final H, a balance at round-off); a NaN input fails its steps, which are held and counted.  The
    library without the record is built with -O2 here (the other tests use -O0): the same floats."""
    lib, _, sim, x0 = build("netlists/overdrive.cir")
    stream = sim.stream(x0=x0, signals=lib.outputs)
    fast = CLib(lib, compile_library(lib, tmp_path, opt="-O2"))
    rec = CLib(lib, compile_library(lib, tmp_path, ["OVERDRIVE_RECORD_ENERGY=1"]))
    x = _sine(400, 0.3)
    ref0 = fast.process(x)
    np.testing.assert_array_equal(ref0, rec.process(x))
    np.testing.assert_array_equal(ref0[:, 0], stream.process({"VIN": x}))
    e = [ctypes.c_double() for _ in range(4)]
    rec.f("energy")(rec.buf, *[ctypes.byref(v) for v in e])
    H = stream.last["H"]
    assert e[0].value == H[-1] and e[1].value == stream.last["P_diss"][-1]
    assert 0.0 < e[3].value <= 1e-12 * np.abs(H).max()      # the balance of every step at round-off
    bad = _sine(100, 0.3)
    bad[40:45] = np.nan
    y = fast.process(bad)
    assert np.all(np.isfinite(y))
    # NaN at samples 40..44: the steps ending there and the one from 44 to 45
    assert fast.f("failures")(fast.buf) == 6
    np.testing.assert_array_equal(y[40:46, 0], y[39, 0])         # held at the last good output
    fast.f("reset")(fast.buf)                                      # back to the simulator's start
    assert fast.f("failures")(fast.buf) == 0
    np.testing.assert_array_equal(fast.process(x), ref0)


def test_export_errors(tmp_path):
    with pytest.raises(ExportError, match="no input source"):
        export_c(ROOT / "netlists/diode_clipper.cir", tmp_path, fs=FS, inputs=["VX"])
    with pytest.raises(ExportError, match="block"):
        export_c(ROOT / "netlists/diode_clipper.cir", tmp_path, fs=FS, block=0)


def test_cli_errors(tmp_path, capsys):
    from phsym.cli import main
    deck = str(ROOT / "netlists/diode_clipper.cir")
    assert main(["export", deck, "--c", str(tmp_path), "--fs", "48k", "--inputs", "VX"]) == 1
    assert "no input source 'VX'; sources: Vin" in capsys.readouterr().err
    assert main(["export", deck, "--c", str(tmp_path), "--fs", "48k", "--outputs", "v(nowhere)"]) == 1
    assert "nowhere" in capsys.readouterr().err


def test_learned_law_exports_bit_for_bit(tmp_path):
    # a learn(...) element with given weights (issue 37) is an ordinary law of its parameters in the export
    deck = tmp_path / "learned_clipper.cir"
    deck.write_text("* clipper whose diode pair is a learned law\nVin in 0\nR1 in out 2.2k\nC1 out 0 10n\n"
                    "D1 out 0 learn(knots=4, range=-0.6..0.6, a=1e-3, l=0.02, r=0.03, w1=0.05, w2=1e-3, w3=2e-3, "
                    "w4=0.04)\n.end\n")
    lib = export_c(deck, tmp_path, fs=FS, outputs=["v(out)"])
    assert "tanh(" in lib.source.read_text()      # the learned steps, weights folded in as numbers
    _, sim, x0 = exported_simulator(deck, FS)
    c = CLib(lib, compile_library(lib, tmp_path))
    stream = sim.stream(x0=x0, signals=lib.outputs)
    x = _sine(600, 1.5)
    x[300:] *= 2.0
    y = c.process(x, calls=(1, 64, 97))
    ref = stream.process({lib.inputs[0]: x})
    assert np.ptp(ref) > 0.5 and np.max(np.abs(ref)) < 1.0       # clipped by the learned law
    np.testing.assert_array_equal(y[:, 0], ref)
    assert c.f("failures")(c.buf) == 0
