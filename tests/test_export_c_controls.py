"""The exported C99 library's sources, controls and DC point against the simulator (netlist
waveforms, a pot turned per sample, reset after set_param, a first sample off zero); split from
tests/test_export_c.py by deck (export_waves.cir, triode_volume.cir) so that each deck's loop is
compiled in one module."""
from __future__ import annotations

import numpy as np
import pytest

from tests.export_c_support import FS, instance as _instance, make_build, needs_cc, sine as _sine

pytestmark = needs_cc


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """One export and compile per deck for this module (:func:`export_c_support.make_build`)."""
    return make_build(tmp_path_factory)


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
