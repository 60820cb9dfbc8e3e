"""Law kernels compiled from C (phsym.codegen.laws.native) against numba's kernels of the same text."""
import ctypes
import shutil
from pathlib import Path

import numpy as np
import pytest

from phsym.codegen.laws import build, native
from phsym.model import parse
from phsym.simulation import Simulator

HAVE_CC = shutil.which("cc") is not None or shutil.which("gcc") is not None

#: A diode with junction charge (its step kernel has a step preparation and a lazily computed start
#: energy; its depletion charge has two branches at FC*VJ), and a bipolar transistor.
DECK = """native kernels
.model DQ D(IS=2.52n N=1.752 RS=0.568 CJO=4p M=0.4 VJ=0.6 FC=0.5 TT=5n)
.model QN NPN(IS=1e-14 BF=100 CJE=2p CJC=1p)
V1 in 0 SIN(0 1 1k)
R1 in a 1k
D1 a 0 DQ
VCC vcc 0 5
RC vcc c 2k
RB a b 10k
Q1 c b 0 QN
"""

_ABI = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.POINTER(ctypes.c_double)] * 4)


def _call(address, P, IN, OUT, W):
    dbl = ctypes.POINTER(ctypes.c_double)
    _ABI(address)(P.shape[0], P.ctypes.data_as(dbl), IN.ctypes.data_as(dbl), OUT.ctypes.data_as(dbl),
                  W.ctypes.data_as(dbl))


def _loaded_kernels(monkeypatch, tmp_path, c: bool):
    """The kernels the deck's run loads, all compiled from C or all by numba (a fresh cache and memo)."""
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path / ("c" if c else "numba")))
    monkeypatch.setenv(native.ENV, "1" if c else "0")
    monkeypatch.setattr(build, "_SPECS", {})
    monkeypatch.setattr(build, "_LOADED", {})
    monkeypatch.setattr(build.library, "fetch", lambda name: False)     # nothing from the package
    res = Simulator(parse(DECK), 48000.0, engine="numeric").run(duration=20 / 48000.0)
    return dict(build._LOADED), res


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
def test_c_kernels_equal_numba_kernels(monkeypatch, tmp_path):
    numba_k, res_n = _loaded_kernels(monkeypatch, tmp_path, c=False)
    c_k, res_c = _loaded_kernels(monkeypatch, tmp_path, c=True)
    assert set(numba_k) == set(c_k) and len(c_k) >= 6
    assert all(isinstance(k.module, ctypes.CDLL) for k in c_k.values())
    assert not any(isinstance(k.module, ctypes.CDLL) for k in numba_k.values())
    rng = np.random.default_rng(7)
    branches = 0
    for key, kn in numba_k.items():
        kc = c_k[key]
        assert (kc.n_pre, kc.width, kc.in_width) == (kn.n_pre, kn.width, kn.in_width)
        text = Path(kn.module.__file__).read_text()
        n = 400
        # placeholders of a junction: positive; inputs from femto-scale charges to volts, both signs
        npar = max(len(text.split("Placeholders P[i, :] = ")[1].split(";")[0].split(",")), 1)
        P = np.abs(rng.normal(1.0, 0.5, (n, npar))) * 10.0 ** rng.uniform(-3, 0, (n, npar))
        IN = rng.uniform(-1.5, 1.5, (n, kn.in_width)) * 10.0 ** rng.integers(-15, 1, (n, kn.in_width))
        outs = []
        for k in (kn, kc):
            W = np.full((n, max(k.n_pre, 1)), np.nan)
            OUT = np.zeros((n, k.width))
            if k.n_pre:
                _call(k.prepare, P, IN, OUT, W)
            _call(k.address, P, IN, OUT, W)
            outs.append((OUT, W))
        (On, Wn), (Oc, Wc) = outs
        assert np.isfinite(Oc).mean() > 0.5
        np.testing.assert_allclose(Oc, On, rtol=1e-14, atol=0, equal_nan=True)
        np.testing.assert_allclose(Wc, Wn, rtol=1e-14, atol=0, equal_nan=True)
        if ") if (" in text:      # a depletion charge: a branch at FC*VJ
            branches += 1
    assert branches >= 1
    # the runs on either kind of kernel step the same
    np.testing.assert_array_equal(res_c.x, res_n.x)


def test_numba_kernels_without_a_compiler(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    assert native.compiler() is None
    monkeypatch.setattr(build, "_SPECS", {})
    monkeypatch.setattr(build, "_LOADED", {})
    monkeypatch.setattr(build.library, "fetch", lambda name: False)
    res = Simulator(parse(DECK), 48000.0, engine="numeric").run(duration=4 / 48000.0)
    assert build._LOADED and not any(isinstance(k.module, ctypes.CDLL) for k in build._LOADED.values())
    assert np.isfinite(res.x).all()


def test_a_hung_compiler_times_out_to_the_numba_kernel(monkeypatch, tmp_path):
    """A compiler that never returns must not hang the run: past the timeout, numba's kernel."""
    import time
    hung = tmp_path / "hung-cc"
    hung.write_text("#!/bin/sh\nsleep 30\n")
    hung.chmod(0o755)
    monkeypatch.setenv("CC", str(hung))
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native, "COMPILE_TIMEOUT", 0.2)      # (a sleeping compiler: the core idles meanwhile)
    monkeypatch.setattr(build, "_SPECS", {})
    monkeypatch.setattr(build, "_LOADED", {})
    monkeypatch.setattr(build.library, "fetch", lambda name: False)
    t0 = time.monotonic()
    res = Simulator(parse(DECK), 48000.0, engine="numeric").run(duration=4 / 48000.0)
    assert build._LOADED and not any(isinstance(k.module, ctypes.CDLL) for k in build._LOADED.values())
    assert np.isfinite(res.x).all() and time.monotonic() - t0 < 25 * len(build._LOADED)
    assert not list(tmp_path.glob(native.NATIVE_PREFIX + "*" + native.SUFFIX))


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
def test_damaged_c_kernel_is_rebuilt(monkeypatch, tmp_path):
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    text = ('"""k."""\nimport math\nKIND = "law"\nWIDTH = 2\nN_PRE = 0\n\n\n'
            "def kernel(n, P, IN, OUT, W):\n    for i in range(n):\n        v = IN[i]\n"
            "        OUT[2 * i] = P[i] * math.exp(v) - v ** 2\n        OUT[2 * i + 1] = P[i] * math.exp(v) - 2 * v\n")
    lib = native.build("t0", text)
    assert lib is not None
    lib.write_bytes(lib.read_bytes()[:100])     # (before any load: a loaded library is mapped)
    from phsym.errors import CacheWarning
    with pytest.warns(CacheWarning):
        assert native.load("t0") is None
    assert native.build("t0", text) == lib
    k, _ = native.addresses(native.load("t0"))
    P, IN = np.array([2.0, 3.0]), np.array([0.5, -1.0])
    OUT, W = np.zeros(4), np.zeros(1)
    _call(k, P, IN, OUT, W)
    np.testing.assert_array_equal(OUT, [2 * np.exp(0.5) - 0.25, 2 * np.exp(0.5) - 1.0,
                                        3 * np.exp(-1.0) - 1.0, 3 * np.exp(-1.0) + 2.0])


def test_library_names_follow_the_translated_sources(monkeypatch):
    """A C library's name carries a fingerprint of the translator and of the junction functions it
    translates into kernels (``junction_energy_q`` and the others): every one of those files exists
    and a change of one gives other names."""
    root = Path(native.__file__).resolve().parents[2]
    assert all((root / f).is_file() for f in native._SOURCES)
    assert "components/junction_charge.py" in native._SOURCES
    monkeypatch.setattr(native, "_FP", [])
    first = native._fingerprint()
    monkeypatch.setattr(native, "_FP", [])
    monkeypatch.setattr(native, "_SOURCES", native._SOURCES[:-1])
    assert native._fingerprint() != first
