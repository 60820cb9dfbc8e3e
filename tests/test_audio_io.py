"""Audio I/O as audio users expect it: WAV in gives WAV out of the same length
and rate, sample-aligned, at physical levels; multichannel files map to
several sources; block processing gives exactly the samples of one long run."""
import warnings

import numpy as np
import pytest
from scipy.io import wavfile

import phsym
from phsym.errors import ClippingWarning, DataFileError, SimulationError, SimulationInputError
from phsym.simulation.cli import simulate as cli_simulate
from phsym.simulation.io.audio import read_wav, write_wav

from pathlib import Path

NET = Path(__file__).resolve().parent.parent / "netlists"
DIVIDER = "V1 in 0\nR1 in out 1k\nR2 out 0 3k\n.probe v(out)\n"
STEREO = "VL l 0\nRL l a 1k\nRL2 a 0 1k\nVR r 0\nRR r b 1k\nRR2 b 0 3k\n.probe v(a) v(b)\n"


def _cli(argv):
    parser = cli_simulate.argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cli_simulate.add_parser(sub)
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.mark.parametrize("method,expected", [
    ("backward_euler", lambda u: 0.75 * u),                                      # end-of-step values
    ("midpoint", lambda u: 0.75 * 0.5 * (np.concatenate([u[:1], u[:-1]]) + u)),  # step averages
])
def test_samples_alignment_by_hand(method, expected):
    """Output sample k is the step ending at input sample k; the first
    sample is held for the step before t = 0 (hand-derived for a divider)."""
    u = np.random.default_rng(1).standard_normal(50)
    res = phsym.Simulator(phsym.parse(DIVIDER), 48000, method=method).run(u={"V1": u}, align="samples")
    assert res["v(out)"].shape == (50,) and res.t.shape == (51,)
    np.testing.assert_array_equal(res.t_step, np.arange(50) * (1 / 48000))
    np.testing.assert_allclose(res["v(out)"], expected(u), rtol=1e-13, atol=1e-15)
    with pytest.raises(SimulationInputError, match="align"):
        phsym.Simulator(phsym.parse(DIVIDER), 48000).run(u={"V1": u}, align="sample")


def test_wav_in_wav_out_same_length_rate_level(tmp_path):
    """48000 samples in, 48000 out, at the file's rate (no --fs), in volts."""
    fs = 44100
    n = 48000
    u = 1.6 * np.sin(2 * np.pi * 440 * np.arange(n) / fs)
    wavfile.write(tmp_path / "in.wav", fs, u.astype(np.float32))
    net = tmp_path / "div.cir"
    net.write_text(DIVIDER)
    out = tmp_path / "out.wav"
    assert _cli(["simulate", str(net), "--input", f"V1={tmp_path / 'in.wav'}", "--method", "backward_euler",
                 "--out", str(out), "--quiet"]) == 0
    rate, y = wavfile.read(out)
    assert rate == fs and y.dtype == np.float32 and y.shape == (n,)
    # physical level: 0.75 of the input, sample by sample (peak 1.2 V > 1: not clipped, not normalised)
    np.testing.assert_allclose(y, 0.75 * u.astype(np.float32), rtol=2e-7, atol=1e-7)
    assert np.max(np.abs(y)) > 1.0
    out2 = tmp_path / "norm.wav"
    _cli(["simulate", str(net), "--input", f"V1={tmp_path / 'in.wav'}", "--out", str(out2), "--normalize",
          "--quiet"])
    assert np.max(np.abs(wavfile.read(out2)[1])) == pytest.approx(1.0, abs=1e-7)


def test_two_drive_settings_compare_by_level(tmp_path):
    """The clipper's output level grows with the drive (peak normalisation would hide it)."""
    fs = 48000
    u = np.sin(2 * np.pi * 220 * np.arange(4800) / fs)
    peaks = []
    for gain in (0.2, 2.0):
        wavfile.write(tmp_path / "in.wav", fs, (gain * u).astype(np.float32))
        _cli(["simulate", str(NET / "diode_clipper.cir"), "--input", f"Vin={tmp_path / 'in.wav'}",
              "--out", str(tmp_path / "o.wav"), "--quiet"])
        rate, y = wavfile.read(tmp_path / "o.wav")
        assert rate == fs and y.size == u.size
        peaks.append(np.max(np.abs(y)))
    assert peaks[0] < 0.2 and 0.45 < peaks[1] < 0.8      # linear at low drive, clipped at ~0.6 V


def test_multichannel_maps_to_sources(tmp_path):
    fs = 8000
    rng = np.random.default_rng(2)
    st = rng.uniform(-0.9, 0.9, (300, 2))
    wavfile.write(tmp_path / "st.wav", fs, st.astype(np.float32))
    net = tmp_path / "st.cir"
    net.write_text(STEREO)
    out = tmp_path / "o.wav"
    assert _cli(["simulate", str(net), "--input", f"VL,VR={tmp_path / 'st.wav'}", "--method", "backward_euler",
                 "--out", str(out), "--signal", "v(a),v(b)", "--quiet"]) == 0
    rate, y = wavfile.read(out)
    assert rate == fs and y.shape == (300, 2)
    np.testing.assert_allclose(y, st.astype(np.float32) * [0.5, 0.75], rtol=2e-7, atol=1e-7)
    # one channel picked by number (1-based); a stereo file for one source is an error naming the fix
    assert _cli(["simulate", str(net), "--input", f"VR={tmp_path / 'st.wav'}:2", "--method", "backward_euler",
                 "--out", str(out), "--signal", "v(b)", "--quiet"]) == 0
    np.testing.assert_allclose(wavfile.read(out)[1], st[:, 1].astype(np.float32) * 0.75, rtol=2e-7, atol=1e-7)
    with pytest.raises(SimulationError, match="2 channel.*A,B=FILE.wav"):
        _cli(["simulate", str(net), "--input", f"VL={tmp_path / 'st.wav'}", "--quiet"])
    with pytest.raises(SimulationError, match="channel 3 does not exist"):
        _cli(["simulate", str(net), "--input", f"VL={tmp_path / 'st.wav'}:3", "--quiet"])
    with pytest.raises(SimulationError, match="sample rate 8000"):
        _cli(["simulate", str(net), "--fs", "48k", "--input", f"VL,VR={tmp_path / 'st.wav'}", "--quiet"])


def test_integer_wav_clips_with_warning(tmp_path):
    x = np.array([0.0, 0.5, -1.5, 2.0, -0.25])
    with pytest.warns(ClippingWarning, match="2 sample"):
        write_wav(tmp_path / "a.wav", x, 8000, format="int16")
    rate, y = wavfile.read(tmp_path / "a.wav")
    assert y.dtype == np.int16
    np.testing.assert_array_equal(y, [0, 16384, -32768, 32767, -8192])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_wav(tmp_path / "b.wav", x, 8000)           # float: kept as is
    np.testing.assert_array_equal(read_wav(tmp_path / "b.wav")[1][:, 0], x)
    with pytest.raises(SimulationError, match="not finite"):
        write_wav(tmp_path / "c.wav", [0.0, np.nan], 8000)
    assert not (tmp_path / "c.wav").exists()
    (tmp_path / "bad.wav").write_bytes(b"RIFF0000WAVEjunk")
    with pytest.raises(DataFileError, match="bad.wav"):
        read_wav(tmp_path / "bad.wav")
    with pytest.raises(DataFileError, match="no such file"):
        read_wav(tmp_path / "missing.wav")


def _blocks(u, sizes):
    k, out = 0, []
    for b in sizes:
        out.append(u[k:k + b])
        k += b
    out.append(u[k:])
    return out


@pytest.mark.parametrize("netlist,method", [("diode_clipper.cir", "discrete_gradient"),
                                            ("diode_clipper.cir", "backward_euler"),
                                            ("rlc.cir", "midpoint")])
def test_stream_equals_one_long_run(netlist, method):
    """Blocks of any size give bit-identical samples (Newton's predictor history is carried)."""
    model = phsym.load(NET / netlist)
    sim = phsym.Simulator(model, 48000, method=method)
    name = model.inputs[0]
    rng = np.random.default_rng(3)
    u = 3 * np.sin(2 * np.pi * 440 * np.arange(2000) / 48000) + 0.2 * rng.standard_normal(2000)
    signal = "v(out)" if netlist == "diode_clipper.cir" else model.outputs[0]
    full = sim.run(u={name: u}, align="samples")
    for sizes in ([1, 1, 5, 64], [999], list(rng.integers(1, 300, 12))):
        s = sim.stream(signals=[signal])
        y = np.concatenate([s.process(b) for b in _blocks(u, sizes)])
        np.testing.assert_array_equal(y, full[signal])
        assert s.samples == u.size and s.time == pytest.approx(u.size / 48000)
        np.testing.assert_array_equal(s.state, full.x[-1])
    assert abs(s.last.balance).max() <= 1e-12 * s.last.power_scale + 1e-300 or method == "backward_euler"


def test_stream_inputs_waveforms_dc_and_reset():
    """Inputs missing from a dict block follow their netlist waveform at the stream's time."""
    model = phsym.parse(STEREO.replace("VL l 0", "VL l 0 SIN(0 1 1k)"))
    sim = phsym.Simulator(model, 48000, method="backward_euler")
    vr = np.random.default_rng(4).standard_normal(960)
    full = sim.run(u={"VR": vr}, align="samples")                  # VL: netlist waveform at t = 0, h, ...
    s = sim.stream(signals=["v(a)", "v(b)"])
    y = np.concatenate([s.process({"VR": vr[k:k + 96]}) for k in range(0, 960, 96)])
    np.testing.assert_array_equal(y, np.column_stack([full["v(a)"], full["v(b)"]]))
    np.testing.assert_allclose(y[:, 0], 0.5 * np.sin(2 * np.pi * 1000 * np.arange(960) / 48000), atol=1e-12)
    s.reset()
    np.testing.assert_array_equal(s.process({"VR": vr}), y)
    with pytest.raises(SimulationInputError, match="one input"):
        s.process(np.zeros(4))
    # "dc": the operating point for the first sample of the first block
    clip = phsym.Simulator(phsym.load(NET / "diode_clipper.cir"), 48000)
    dc = clip.stream(x0="dc", signals=["q_C1", "v(out)"])
    out = dc.process(np.full(10, 0.3))
    assert out.shape == (10, 2)
    np.testing.assert_allclose(out[:, 1], out[0, 1], rtol=1e-9)     # at rest from the first sample
    assert 0.2 < out[0, 1] < 0.3


def test_stream_failure_names_the_sample_and_needs_reset():
    sim = phsym.Simulator(phsym.load(NET / "diode_clipper.cir"), 48000, maxit=2)
    u = np.concatenate([np.zeros(100), np.full(100, 40.0)])
    with pytest.raises(SimulationError) as long_run:
        sim.run(u={"Vin": u}, align="samples")
    s = sim.stream()
    s.process(u[:150] if long_run.value.step >= 150 else u[:50])
    with pytest.raises(SimulationError) as streamed:
        while True:
            s.process(u[s.samples:s.samples + 30])
    assert streamed.value.step == long_run.value.step
    assert streamed.value.time == pytest.approx(long_run.value.step / 48000)
    with pytest.raises(SimulationError, match="reset"):
        s.process(np.zeros(3))
    s.reset()
    assert s.process(np.zeros(3)).shape == (3,)
