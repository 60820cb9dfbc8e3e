"""`phsym show` on every bundled netlist, and CLI error handling."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from phsym.cli import main

NET = Path(__file__).resolve().parent.parent / "netlists"


@pytest.mark.parametrize("path", sorted(NET.glob("*.cir")), ids=lambda p: p.stem)
def test_show_every_netlist(path, capsys, monkeypatch):
    # the three formats of one model: load it (structure, explicit form,
    # checks: seconds for the op-amp stage) once
    import phsym.model
    model = phsym.model.load(path)
    monkeypatch.setattr(phsym.model, "load", lambda file: model)
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Checks:" in out and "FAIL" not in out
    assert main(["show", "--json", str(path)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert all(info["checks"].values())
    assert main(["show", "--latex", str(path)]) == 0
    assert "H = " in capsys.readouterr().out


def test_show_reports_netlist_error_with_position(tmp_path, capsys):
    bad = tmp_path / "bad.cir"
    bad.write_text("V1 a 0 1\nR1 a 0 1k Q=3\n")
    assert main(["show", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.cir:2:" in err and "Q" in err


def test_show_reports_structure_error(tmp_path, capsys):
    bad = tmp_path / "loop.cir"
    bad.write_text("V1 a 0 1\nV2 a 0 2\nR1 a 0 1\n")
    assert main(["show", str(bad)]) == 1
    assert "V1" in capsys.readouterr().err


def test_console_entry_point_help():
    r = subprocess.run([sys.executable, "-m", "phsym.cli", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "show" in r.stdout


def test_show_and_simulate_a_saved_linear_model(tmp_path, capsys):
    """phsym.load of a saved LinearPHS gives what show and simulate accept."""
    import numpy as np
    import phsym
    path = tmp_path / "rlc.json"
    lin = phsym.load(NET / "rlc.cir").linearize()
    lin.save(path)
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "pH-DAE (descriptor)" in out and "J =" in out and "ok   R PSD" in out
    assert main(["show", "--json", str(path)]) == 0
    assert '"poles"' in capsys.readouterr().out
    a = phsym.simulate(path, 48000, u={"V1": 1.0}, duration=1e-3)
    b = phsym.simulate(NET / "rlc.cir", 48000, u={"V1": 1.0}, duration=1e-3, warm_start=False)
    np.testing.assert_allclose(a.y, b.y, rtol=1e-9, atol=1e-12 * np.abs(b.y).max())
    assert a.max_balance_error < 1e-10


@pytest.mark.parametrize("text", ["", "* only a comment\n", ".param a=1\n.end\n"])
def test_show_on_a_netlist_without_elements(tmp_path, capsys, text):
    path = tmp_path / "empty.cir"
    path.write_text(text)
    assert main(["show", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1:1: the netlist has no elements" in err and "hint:" in err
