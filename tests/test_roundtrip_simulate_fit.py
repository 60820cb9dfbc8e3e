"""A user's round trip: `phsym simulate` writes a CSV, `phsym fit` recovers the parameters (with the scheme the
CSV says made it: the simulator's default, midpoint here)."""
import csv
from pathlib import Path

import numpy as np

from phsym.cli import main

NET = Path(__file__).resolve().parent.parent / "netlists"


def test_simulate_csv_then_fit_recovers_parameters(tmp_path, capsys):
    data = tmp_path / "dc.csv"
    assert main(["simulate", str(NET / "dc_network.cir"), "--fs", "200", "--duration", "8",
                 "--quiet",
                 "--input", "VG=sin(2*pi*0.1*t)+0.5*sin(2*pi*0.7*t+1)+0.3*sin(2*pi*2.3*t)",
                 "--out", str(data)]) == 0
    rows = [r for r in csv.DictReader(data.open()) if not r["t"].startswith("#")]   # the '# scheme:' line
    assert float(rows[0]["t"]) == 0.0 and rows[0]["y(VG)"] == ""   # no step ends at the initial instant
    out = tmp_path / "fit.json"
    capsys.readouterr()
    assert main(["fit", str(NET / "dc_network.cir"), str(data), "--free", "L,C1,R_G",
                 "--inputs", "VG", "--outputs", "y(VG),v(n1)", "--init", "L=1.5,C1=0.02,R_G=4",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    import json
    fit = json.loads(out.read_text())
    params = fit.get("params") or fit.get("params_") or fit
    assert np.isclose(params["L"], 2.0, rtol=1e-9)
    assert np.isclose(params["C1"], 0.01, rtol=1e-9)
    assert np.isclose(params["R_G"], 6.0, rtol=1e-9)
    assert "NRMS" in text
