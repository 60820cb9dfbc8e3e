"""The exported C99 library (phsym.codegen.c) against the simulator it was exported from: audio
stages bit for bit, the energy record, failures, errors (sources, controls and the DC point:
tests/test_export_c_controls.py; shared set-up: tests/export_c_support.py).

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

import numpy as np
import pytest

from phsym.errors import ExportError
from phsym.simulation.export import export_c, exported_simulator

from tests.export_c_support import FS, ROOT, CLib, compile_library, instance as _instance, make_build, needs_cc, sine as _sine

pytestmark = needs_cc


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """One export and compile per deck for this module (:func:`export_c_support.make_build`)."""
    return make_build(tmp_path_factory)


@pytest.mark.parametrize("deck, out, amp", [
    # the compiled loop as the reference once (the others compare the C with the loop run as Python)
    pytest.param("netlists/diode_clipper.cir", "v(out)", 1.5, marks=pytest.mark.compiled),
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
