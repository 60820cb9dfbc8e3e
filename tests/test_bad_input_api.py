"""Bad run-time input gives a phsym error that says what and where."""
from pathlib import Path

import numpy as np
import pytest

import phsym

NET = Path(__file__).resolve().parent.parent / "netlists"


@pytest.fixture(scope="module")
def rlc():
    return phsym.load(NET / "rlc.cir")


def test_non_finite_input_named_with_sample(rlc):
    sim = rlc.simulator(48000, method="midpoint")
    with pytest.raises(phsym.SimulationError) as info:
        sim.run(u=np.array([0.0, 0.5, np.nan, 1.0]))
    e = info.value
    assert e.quantity == "V1" and e.step == 1 and "non-finite" in str(e) and "sample 2" in str(e)


def test_non_positive_duration(rlc):
    with pytest.raises(phsym.SimulationError, match="duration must be positive"):
        rlc.simulator(48000, method="midpoint").run(duration=-1.0)


@pytest.mark.parametrize("kw,msg", [({"x0": [1.0]}, "x0 has 1 entries"),
                                    ({"u0": [1.0, 2.0]}, "u0 has 2 entries"),
                                    ({"x0": [np.nan, 0.0]}, "non-finite")])
def test_linearize_operating_point_is_checked(rlc, kw, msg):
    with pytest.raises(phsym.StructureError, match=msg):
        rlc.linearize(**kw)


def test_simulate_csv_input_with_a_bad_cell_names_file_and_line(tmp_path, capsys):
    from phsym.cli import main
    data = tmp_path / "in.csv"
    data.write_text("t,u\n0,0.1\n1,abc\n")
    rc = main(["simulate", str(NET / "rlc.cir"), "--fs", "1k", "--input", f"V1={data}:u", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1 and f"{data}:3" in err and "cannot read a number" in err
