"""``phsym simulate`` and ``phsym cache`` subcommands."""
import argparse
import os
from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile

from phsym.simulation.cli import cache as cli_cache
from phsym.errors import NetlistError
from phsym.simulation.cli import simulate as cli_simulate

NET = Path(__file__).resolve().parents[1] / "netlists"


def _run(module, argv):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers()
    module.add_parser(sub)
    args = p.parse_args(argv)
    return args.func(args)


def test_simulate_expression_param_csv(tmp_path, capsys):
    out = tmp_path / "r.csv"
    rc = _run(cli_simulate, ["simulate", str(NET / "rlc.cir"), "--fs", "48k", "--duration", "2m",
                             "--input", "V1=sin(2*pi*1k*t)", "--param", "R=22", "--out", str(out),
                             "--plot", str(tmp_path / "r.png")])
    assert rc == 0
    line = capsys.readouterr().out
    assert "96 steps" in line and "power-balance" in line
    data = np.genfromtxt(out, delimiter=",", names=True)
    np.testing.assert_allclose(data["V1"], np.sin(2 * np.pi * 1000 * data["t"]), atol=1e-12)
    assert (tmp_path / "r.png").exists()
    # the override took effect: the charge follows the series RLC with R = 22 (closed-form
    # state-space, bilinear transform = midpoint rule with averaged inputs), not R = 10
    from scipy.signal import cont2discrete
    R, L, C, h = 22.0, 1e-3, 1e-6, 1 / 48000
    A = np.array([[-R / L, -1 / C], [1 / L, 0.0]])          # x = (phi_L1, q_C1)
    Ad, Bd, _, _, _ = cont2discrete((A, np.array([[1.0], [0.0]]), np.eye(2), np.zeros((2, 1))), h, "bilinear")
    x = np.zeros(2)
    q = [0.0]
    u = data["V1"]
    M = np.linalg.inv(np.eye(2) - h / 2 * A)
    for k in range(len(u) - 1):        # midpoint: (I - hA/2) x+ = (I + hA/2) x + h B (u_k + u_k+1)/2
        x = M @ ((np.eye(2) + h / 2 * A) @ x + h * np.array([1.0, 0.0]) * 0.5 * (u[k] + u[k + 1]))
        q.append(x[1])
    np.testing.assert_allclose(data["q_C1"], q, rtol=1e-9, atol=1e-18)
    np.testing.assert_allclose(Ad, M @ (np.eye(2) + h / 2 * A), rtol=1e-12)   # same map as scipy's Tustin


def test_simulate_wav_and_csv_inputs(tmp_path, capsys):
    fs = 48000
    t = np.arange(481) / fs
    wavfile.write(tmp_path / "in.wav", fs, (0.5 * np.sin(2 * np.pi * 500 * t)).astype(np.float32))
    np.savetxt(tmp_path / "in.csv", np.column_stack([t, 0.5 * np.sin(2 * np.pi * 500 * t)]),
               delimiter=",", header="t,vin", comments="")
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    assert _run(cli_simulate, ["simulate", str(NET / "rlc.cir"), "--fs", "48k", "--input",
                               f"V1={tmp_path / 'in.wav'}", "--out", str(a)]) == 0
    assert _run(cli_simulate, ["simulate", str(NET / "rlc.cir"), "--fs", "48k", "--input",
                               f"V1={tmp_path / 'in.csv'}:vin", "--out", str(b)]) == 0
    ra, rb = np.load(a), np.load(b)
    assert len(ra["t"]) == 482 and len(ra["y(V1)"]) == 481     # one step per file sample, grid from -1/fs
    assert ra["t"][1] == 0.0
    np.testing.assert_allclose(ra["q_C1"], rb["q_C1"], rtol=1e-6, atol=1e-12)


def test_simulate_rejects_unsafe_expression():
    with pytest.raises(NetlistError):
        _run(cli_simulate, ["simulate", str(NET / "rlc.cir"), "--fs", "48k", "--duration", "1m",
                            "--input", "V1=__import__('os')"])


def test_cache_info_and_clear(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))
    (tmp_path / "phsym_gen_abc.py").write_text("x = 1\n")
    assert _run(cli_cache, ["cache", "info"]) == 0
    assert "generated modules: 1" in capsys.readouterr().out
    assert _run(cli_cache, ["cache", "clear"]) == 0
    assert not (tmp_path / "phsym_gen_abc.py").exists()


def test_simulate_twice_is_warm_and_identical(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PHSYM_ENGINE", "generated")     # warm starts store the generated loop's plans
    net = tmp_path / "clip.cir"
    net.write_text((NET / "diode_clipper.cir").read_text())
    outs = [tmp_path / "a.csv", tmp_path / "b.csv"]
    for out in outs:
        assert _run(cli_simulate, ["simulate", str(net), "--fs", "48k", "--duration", "1m", "--out", str(out),
                                   "--quiet"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "warm start" not in lines[0] and "warm start" in lines[1]
    assert outs[0].read_text() == outs[1].read_text()


def test_cache_build_compiles_ahead_of_time(tmp_path, capsys, monkeypatch):
    from phsym.simulation.examples import chain_netlist
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PHSYM_AOT", "background")
    net = tmp_path / "rlc.cir"
    net.write_text((NET / "rlc.cir").read_text())
    assert _run(cli_cache, ["cache", "build", str(net), "--fs", "48k"]) == 0
    assert "compiled ahead of time" in capsys.readouterr().out
    # it builds in this process, not in the background, and leaves the caller's setting as it was
    assert os.environ["PHSYM_AOT"] == "background"
    chain = tmp_path / "chain.cir"
    chain.write_text(chain_netlist(20))          # sparse linear path: nothing to compile
    assert _run(cli_cache, ["cache", "build", str(chain), "--fs", "1k"]) == 0
    assert "no generated loop" in capsys.readouterr().out
    assert _run(cli_cache, ["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "warm-start snapshots: 2" in out and "ahead-of-time extensions: 1" in out   # chain: sparse plan
    assert _run(cli_cache, ["cache", "build"]) == 0          # without a netlist: the numeric engine
    assert "numeric engine compiled" in capsys.readouterr().out


@pytest.mark.parametrize("dtype,scale,tol", [(np.uint8, None, 1 / 127), (np.int16, 32768, 1 / 32768),
                                             (np.int32, 2 ** 31, 1e-9), (np.float32, None, 1e-7)])
def test_wav_input_scaling(tmp_path, dtype, scale, tol):
    """Integer WAVs map to [-1, 1): 8-bit is unsigned with 128 as zero (RIFF convention)."""
    fs = 8000
    x = 0.9 * np.sin(2 * np.pi * 440 * np.arange(400) / fs)
    if dtype == np.uint8:
        raw = np.round(x * 128 + 128).astype(np.uint8)
    elif scale:
        raw = np.round(x * scale).astype(dtype)
    else:
        raw = x.astype(dtype)
    wavfile.write(tmp_path / "in.wav", fs, raw)
    got = cli_simulate.input_source(str(tmp_path / "in.wav"), fs)
    np.testing.assert_allclose(got, x, rtol=0, atol=tol)


def test_output_path_checked_before_running(tmp_path, capsys):
    for out, msg in ((tmp_path / "r.xyz", "unsupported file type"), (tmp_path / "no" / "r.csv", "does not exist")):
        with pytest.raises(Exception, match=msg):
            _run(cli_simulate, ["simulate", str(NET / "rlc.cir"), "--fs", "48k", "--duration", "1m",
                                "--out", str(out)])
    assert "steps" not in capsys.readouterr().out          # nothing was simulated


def test_progress_bar_text():
    import io
    from phsym.clitools import ProgressBar
    out = io.StringIO()
    bar = ProgressBar(200, unit="evaluations (max)", stream=out, width=10, eta=False)
    bar(50, cost=1.5e-3)
    bar.close()
    bar.close()                        # ends the line once
    text = out.getvalue()
    assert "[##........] 50/200 evaluations (max), cost 1.5000e-03" in text and "eta" not in text
    assert text.endswith("s\n") and text.count("\n") == 1
    out = io.StringIO()
    ProgressBar(stream=out, width=4)(3, 4)
    assert "[###.] 3/4 steps" in out.getvalue() and "eta" in out.getvalue()
