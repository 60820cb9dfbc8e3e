"""What the tests of the exported C99 library share (tests/test_export_c*.py): its compile with
the system C compiler (warnings are errors), a ctypes wrapper of one instance, and a module-scoped
fixture factory that exports and compiles each deck once per test module."""
from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from phsym.simulation.export import export_c, exported_simulator

ROOT = Path(__file__).resolve().parents[1]
CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")
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


def make_build(tmp_path_factory):
    """``build(deck, inputs=None, outputs=None) -> (lib, so, sim, x0)``: one export and one -O0 compile
    per deck and choice (a test module's ``build`` fixture; each test makes its own instance)."""
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


def instance(build, deck, inputs=None, outputs=None, params=None):
    """A fresh C instance and a fresh simulator stream of the same export."""
    lib, so, sim, x0 = build(deck, inputs, outputs)
    return lib, CLib(lib, so), sim.stream(x0=x0, params=params, signals=lib.outputs)


def sine(n, amp, f=1000.0):
    return amp * np.sin(2 * np.pi * f * np.arange(n) / FS)
