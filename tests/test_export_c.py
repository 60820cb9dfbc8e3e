"""The exported C99 library (phsym.codegen.c) against the simulator it was exported from.

Each library is compiled by the system C compiler with -Wall -Wextra -std=c99 -pedantic -Werror and
loaded with ctypes; its outputs are compared with :class:`phsym.simulation.stream.Stream` (the
simulator's block processing, the same generated loop run by numba) on the bundled audio netlists:
the arithmetic is the same statement for statement, so the samples are equal bit for bit.
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


class CLib:
    """A compiled export loaded with ctypes: one instance of its state."""

    def __init__(self, lib, tmp: Path, defines=(), opt: str = "-O2"):
        so = tmp / f"lib{lib.name}{'_'.join(defines)}.so"
        cmd = [CC, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", opt, "-shared", "-fPIC",
               *[f"-D{d}" for d in defines], "-o", str(so), str(lib.source), "-lm"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr     # warnings are errors
        self.dll, self.n = ctypes.CDLL(str(so)), lib.name
        self.f("state_size").restype = ctypes.c_ulong
        self.buf = ctypes.create_string_buffer(self.f("state_size")())
        self.f("init").argtypes = [ctypes.c_void_p, ctypes.c_double]
        self.f("set_param").argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_double]
        self.f("failures").restype = ctypes.c_long
        self.f("process_double").argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        self.n_in, self.n_out = len(lib.inputs), len(lib.outputs)
        assert self.f("init")(self.buf, FS) == 0

    def f(self, name):
        return getattr(self.dll, f"{self.n}_{name}")

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


def _export(deck, tmp, outputs=None):
    lib = export_c(ROOT / deck, tmp, fs=FS, outputs=outputs)
    _, sim, x0 = exported_simulator(ROOT / deck, FS)
    return lib, sim.stream(x0=x0, signals=lib.outputs)


def _sine(n, amp, f=1000.0):
    return amp * np.sin(2 * np.pi * f * np.arange(n) / FS)


@pytest.mark.parametrize("deck, out, amp", [
    ("netlists/diode_clipper.cir", "v(out)", 1.5),
    ("netlists/overdrive.cir", "v(out)", 0.3),
    ("netlists/triode_preamp.cir", "v(out)", 0.5),
    ("tests/decks/opamp_diode_clipper.cir", "v(o)", 0.3),
])
def test_library_matches_simulator(deck, out, amp, tmp_path):
    lib, stream = _export(deck, tmp_path, [out])
    c = CLib(lib, tmp_path)
    x = _sine(1200, amp)
    x[600:] *= 3.0      # a jump into harder clipping
    y = c.process(x, calls=(1, 63, 64, 65, 200))
    ref = np.concatenate([stream.process({lib.inputs[0]: x[:500]}), stream.process({lib.inputs[0]: x[500:]})])
    assert np.all(np.isfinite(ref)) and np.ptp(ref) > 0.1
    np.testing.assert_array_equal(y[:, 0], ref)     # the same floats
    assert c.f("failures")(c.buf) == 0


def test_pot_turning(tmp_path):
    """The volume pot of the triode stage turned during the run: one set_param per sample (each
    reached at its sample) is the simulator's sampled control signal."""
    lib, stream = _export("netlists/triode_volume.cir", tmp_path)
    assert [ct.name for ct in lib.spec.controls] == ["vol"] and lib.spec.controls[0].maximum == 1.0
    c = CLib(lib, tmp_path)
    n = 600
    x, vol = _sine(n, 0.5), np.linspace(0.5, 0.9, n)
    y = np.zeros(n)
    for k in range(n):
        assert c.f("set_param")(c.buf, 0, vol[k]) == 0
        y[k] = c.process(x[k:k + 1])[0, 0]
    ref = stream.process({"VIN": x}, controls={"vol": vol})
    np.testing.assert_array_equal(y, ref)
    assert c.f("set_param")(c.buf, 1, 0.5) == -1       # no second parameter


def test_record_energy_and_failures(tmp_path):
    """OVERDRIVE_RECORD_ENERGY=1 books the energy as the simulator does (the same outputs, the same
    final H, a balance at round-off); a NaN input fails its steps, which are held and counted."""
    lib, stream = _export("netlists/overdrive.cir", tmp_path)
    fast, rec = CLib(lib, tmp_path), CLib(lib, tmp_path, ["OVERDRIVE_RECORD_ENERGY=1"])
    x = _sine(400, 0.3)
    ref0 = fast.process(x)
    np.testing.assert_array_equal(ref0, rec.process(x))
    stream.process({"VIN": x})
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
