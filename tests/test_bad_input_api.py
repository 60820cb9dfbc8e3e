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
    sim = phsym.Simulator(rlc, 48000, method="midpoint")
    with pytest.raises(phsym.SimulationError) as info:
        sim.run(u=np.array([0.0, 0.5, np.nan, 1.0]))
    e = info.value
    assert e.quantity == "V1" and e.step == 1 and "non-finite" in str(e) and "sample 2" in str(e)


def test_non_positive_duration(rlc):
    with pytest.raises(phsym.SimulationError, match="duration must be positive"):
        phsym.Simulator(rlc, 48000, method="midpoint").run(duration=-1.0)


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


@pytest.mark.parametrize("fs", [0, -48000, float("inf"), float("nan"), "abc", None])
def test_bad_sample_rate(rlc, fs):
    with pytest.raises(phsym.SimulationError, match="sample rate"):
        phsym.Simulator(rlc, fs)
    with pytest.raises(phsym.SimulationError, match="sample rate"):
        phsym.simulate(NET / "rlc.cir", fs, duration=1e-3)


@pytest.mark.parametrize("opts,msg", [({"tol": 0.0}, "tol"), ({"tol": -1e-9}, "tol"), ({"maxit": 0}, "maxit"),
                                      ({"method": None}, "method must be a string")])
def test_bad_simulator_options(rlc, opts, msg):
    opts = dict(opts)
    method = opts.pop("method", "auto")
    with pytest.raises(phsym.SimulationError, match=msg):
        phsym.Simulator(rlc, 48000, method, **opts)


@pytest.mark.parametrize("kw,msg", [
    ({"duration": float("inf")}, "positive and finite"),
    ({"duration": "1s"}, "number of seconds"),
    ({"duration": 1e9}, "too many to store"),
    ({"u": {"V1": np.zeros((5, 2))}, "duration": 4 / 48000}, r"shape \(5, 2\)"),
    ({"u": {"V1": lambda t: np.zeros(3)}, "duration": 4 / 48000}, "function returned shape"),
    ({"u": {"V1": "abc"}, "duration": 4 / 48000}, "not numeric"),
    ({"u": np.zeros((2, 2, 2))}, r"shape \(2, 2, 2\)"),
    ({"duration": 1e-3, "x0": [np.nan, 0.0]}, "non-finite"),
    ({"duration": 1e-3, "x0": ["a", "b"]}, "not numeric"),
    ({"duration": 1e-3, "x0": {"q_C1": "a"}}, "not a number"),
])
def test_bad_run_arguments(rlc, kw, msg):
    with pytest.raises(phsym.SimulationError, match=msg):
        phsym.Simulator(rlc, 48000).run(**kw)


def test_unknown_signal_is_a_phsym_error_and_a_key_error(rlc):
    res = phsym.Simulator(rlc, 48000).run(duration=1e-3)
    for get in (lambda: res["nonsense"], lambda: res.to_wav("/tmp/never.wav", "nonsense")):
        with pytest.raises(KeyError) as info:
            get()
        assert isinstance(info.value, phsym.SimulationError)
        assert "known: phi_L1, q_C1, V1, y(V1)" in str(info.value) and not str(info.value).startswith("'\"")


def test_chunked_newton_run_steps_exactly_like_one_call():
    """Progress bars split the compiled loop into chunks: the predictor's
    history must carry over, or the Newton iterates (and iteration counts) differ."""
    sim = phsym.Simulator(phsym.load(NET / "diode_clipper.cir"), 48000)
    whole = sim.run(duration=0.02)
    calls = []
    for kw in ({"chunk": 7}, {"progress": lambda done, total: calls.append(done)}):
        part = sim.run(duration=0.02, **kw)
        for f in ("x", "y", "H", "P_diss", "iterations"):
            assert np.array_equal(getattr(whole, f), getattr(part, f)), (kw, f)
    assert calls[-1] == 960 and len(calls) >= 50
