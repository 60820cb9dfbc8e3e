"""A ``.csv`` result says which scheme made it: ``# scheme: ...`` after the header row (issue 38)."""
import csv

import numpy as np
import pytest

import phsym
from phsym.clitools import read_csv_columns
from phsym.errors import DataFileError
from phsym.identify.data import fit_method, fit_stiff
from phsym.netlist.tables import read_table_file
from phsym.simulation import load_result
from phsym.simulation.io.saved import csv_comment, csv_info

RC = """rc
V1 in 0 SIN(0 1 1k)
R1 in out 1k
C1 out 0 100n
"""


@pytest.fixture(scope="module")
def result():
    return phsym.simulate(phsym.parse(RC), 48000.0, duration=2e-3, method="midpoint")


def test_csv_round_trip_keeps_scheme_step_and_signals(result, tmp_path):
    path = result.save(tmp_path / "run.csv")
    lines = path.read_text().splitlines()
    assert lines[0].startswith("t,")
    assert lines[1] == "# scheme: midpoint, h: " + repr(result.info["h"]) + ", inputs: V1, outputs: y(V1)"
    back = load_result(path)
    assert back.info["scheme"] == "midpoint" and back.info["h"] == result.info["h"]
    assert back.inputs == ["V1"] and back.outputs == ["y(V1)"]
    np.testing.assert_array_equal(back.t, result.t)
    np.testing.assert_array_equal(back["q_C1"], result["q_C1"])
    np.testing.assert_array_equal(back.y[:, 0], result.y[:, 0])       # step values: the empty first cell dropped
    # an estimator's "auto" follows the file as it follows the result
    assert fit_method("auto", back, "backward_euler", ("backward_euler", "midpoint")) == "midpoint"
    assert fit_method("auto", back.t, "backward_euler", ("backward_euler", "midpoint")) == "backward_euler"


def test_stiff_rule_written_and_read(tmp_path):
    line = csv_comment({"scheme": "discrete_gradient", "stiff": "backward_euler", "h": 1e-5}, ["Vin"], ["y(Vin)"])
    info = csv_info(["t,x\n", line])
    assert info == {"scheme": "discrete_gradient", "stiff": "backward_euler", "h": 1e-5, "inputs": ["Vin"],
                    "outputs": ["y(Vin)"]}

    class Saved:                # what fit_stiff reads of a result
        t_step, labels = None, None
    s = Saved()
    s.info = info
    assert fit_stiff("auto", s) == "backward_euler"
    assert csv_comment({"h": 1e-5}, [], []) == ""       # no scheme, no line


def test_readers_skip_the_comment(result, tmp_path):
    path = result.save(tmp_path / "run.csv")
    cols = read_csv_columns(str(path), ["t", "V1"])
    np.testing.assert_array_equal(cols["t"], result.t)
    data = np.genfromtxt(path, delimiter=",", names=True)       # numpy's reader takes '#' lines as comments
    np.testing.assert_array_equal(data["t"], result.t)
    x, y = read_table_file(path)            # a .table card reading a saved run: first two columns
    np.testing.assert_array_equal(x, result.t)
    rows = [r for r in csv.DictReader(path.open()) if not r["t"].startswith("#")]
    assert len(rows) == result.t.size


def test_a_table_without_the_line_is_refused_by_load_result(tmp_path):
    path = tmp_path / "measured.csv"
    path.write_text("t,V1\n0,0\n1,1\n")
    with pytest.raises(DataFileError, match="holds no scheme"):
        load_result(path)
