"""``phsym sweep``: value specs, grid / zip / Monte Carlo, outputs, progress bar, errors."""
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.cli import main as phsym_main
from phsym.errors import SimulationInputError
from phsym.simulation.cli.sweep import main, parse_values

NET = Path(__file__).resolve().parents[1] / "netlists"
RLC = str(NET / "rlc.cir")
CLIPPER = str(NET / "diode_clipper.cir")


def test_value_specs():
    assert np.allclose(parse_values("1k:10k:10"), np.linspace(1e3, 1e4, 10))
    assert np.allclose(parse_values("1k:100k:3log"), [1e3, 1e4, 1e5])
    assert parse_values("1k, 2.2k,4.7k").tolist() == [1e3, 2.2e3, 4.7e3]
    assert parse_values("10n").tolist() == [1e-8]
    for bad, word in (("1k:2k", "START:STOP"), ("1k:2k:x", "integer"), ("0:1:3log", "positive"),
                      ("1k:2k:0", "at least"), ("abc", "not a number")):
        with pytest.raises(SimulationInputError, match=word):
            parse_values(bad)


def test_grid_sweep_writes_the_runs(tmp_path, capsys):
    out, png = tmp_path / "s.npz", tmp_path / "s.png"
    rc = main([RLC, "--param", "R=5:20:3", "--param", "C=1u,2u", "--fs", "48k", "--duration", "2m",
               "--signal", "v(b)", "--out", str(out), "--plot", str(png)])
    assert rc == 0 and png.stat().st_size > 0
    cap = capsys.readouterr()
    assert "grid: 6 runs (0 failed)" in cap.out and "6/6 runs" in cap.err      # progress bar on stderr
    z = np.load(out)
    assert z["names"].tolist() == ["R", "C"] and z["signal:v(b)"].shape == (6, 97)
    ref = phsym.sweep(RLC, 48000, phsym.grid({"R": [5, 12.5, 20], "C": [1e-6, 2e-6]}), duration=2e-3,
                      outputs=["v(b)"])
    assert np.array_equal(z["signal:v(b)"], ref["v(b)"], equal_nan=True)


def test_zip_and_monte_carlo(tmp_path, capsys):
    csv = tmp_path / "z.csv"
    assert phsym_main(["sweep", RLC, "--zip", "--param", "R=5,10,20", "--param", "L=1m:3m:3", "--fs", "48k",
                       "--duration", "1m", "--out", str(csv), "--quiet"]) == 0
    lines = csv.read_text().splitlines()
    assert len(lines) == 4 and lines[0].startswith("run,R,L,") and lines[3].startswith("2,20,0.003")
    assert "zipped: 3 runs" in capsys.readouterr().out
    nc = tmp_path / "mc.nc"
    assert main([CLIPPER, "--monte-carlo", "5", "--tol", "10%", "--param", "Rs", "--param", "C=2%",
                 "--seed", "4", "--fs", "48k", "--duration", "1m", "--out", str(nc), "--quiet"]) == 0
    xr = pytest.importorskip("xarray")
    ds = xr.open_dataset(nc)
    want = phsym.sampling(CLIPPER, 5, {"Rs": 0.1, "C": 0.02}, seed=4)
    assert np.array_equal(ds["Rs"].values, want["Rs"]) and np.array_equal(ds["C"].values, want["C"])
    assert ds["v(out)"].dims == ("run", "time")
    ds.close()


def test_errors(tmp_path, capsys):
    assert phsym_main(["sweep", RLC, "--param", "R1=1:2:2", "--fs", "48k", "--duration", "1m"]) == 1
    assert "sweep R instead" in capsys.readouterr().err
    assert phsym_main(["sweep", RLC, "--param", "R", "--fs", "48k", "--duration", "1m"]) == 1
    assert "has no values" in capsys.readouterr().err
    assert phsym_main(["sweep", RLC, "--param", "R=1", "--fs", "48k", "--duration", "1m",
                       "--out", str(tmp_path / "x.wav")]) == 1
    assert "use .nc, .npz, .csv" in capsys.readouterr().err
    # every run failing is exit status 1, with the reasons
    assert main([RLC, "--param", "C=-1u,-2u", "--fs", "48k", "--duration", "1m", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "run 0 (C=-1e-06) failed: StructureError" in err and "run 1" in err
    # no --param: the message says what to give and lists the netlist's parameters
    assert phsym_main(["sweep", RLC, "--monte-carlo", "10", "--fs", "48k", "--duration", "1m"]) == 1
    err = capsys.readouterr().err
    assert "--param NAME (or NAME=TOL%)" in err and "parameters: R, L, C" in err
