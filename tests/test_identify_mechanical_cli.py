"""phsym identify-mech on a CSV written here from the midpoint recursion of the seed's 3-DOF system."""
import json

import numpy as np

import phsym
from phsym.cli import main
from tests.test_identify_mechanical import D3, K3, M3, midpoint_recursion, prbs


def _csv(path, h=0.1, N=1200):
    u = prbs(N, 3, 4, 21)
    q = midpoint_recursion(M3, D3, K3, np.eye(3), u, h)
    t = np.arange(N) * h
    header = "t,f1,f2,f3,q1,q2,q3"
    np.savetxt(path, np.column_stack([t, u, q]), delimiter=",", header=header, comments="")
    return t, u, q


def test_identify_mech_cli_writes_model_netlist_and_plot(tmp_path, capsys):
    data = tmp_path / "data.csv"
    _csv(data)
    out, net, png = tmp_path / "m.json", tmp_path / "m.cir", tmp_path / "fit.png"
    code = main(["identify-mech", str(data), "--inputs", "f1,f2,f3", "--positions", "q1,q2,q3",
                 "--discretisation", "midpoint", "--out", str(out), "--netlist", str(net),
                 "--netlist-tol", "1e-6", "--plot", str(png)])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(summary["K"], K3, rtol=1e-7, atol=1e-9)
    assert summary["r2"] > 1 - 1e-12 and summary["discretisation"] == "midpoint"
    lin = phsym.load(out)                         # the saved LinearPHS
    s = 0.7j
    np.testing.assert_allclose(lin.transfer(s), s * np.linalg.inv(M3 * s * s + D3 * s + K3), rtol=1e-6)
    mdk = json.loads(out.with_name("m.json.mdk.json").read_text())
    np.testing.assert_allclose(mdk["M"], M3, rtol=1e-7, atol=1e-9)
    assert " mass " in net.read_text() and png.stat().st_size > 0


def test_identify_mech_cli_errors(tmp_path, capsys):
    data = tmp_path / "data.csv"
    _csv(data, N=200)
    assert main(["identify-mech", str(data), "--inputs", "f1,f2,f3", "--positions", "q1,q9"]) == 2
    assert "q9" in capsys.readouterr().err
    # two forces for three positions without an input matrix: refused with the reason
    assert main(["identify-mech", str(data), "--inputs", "f1,f2", "--positions", "q1,q2,q3"]) == 1
    assert "input_matrix" in capsys.readouterr().err
