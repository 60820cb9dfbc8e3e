"""The suite's schedule under xdist (``conftest.py``): its lists name real files, the measured
seconds are read as written, and a file wrongly listed as simulating nothing fails its test."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
conftest = sys.modules["conftest"]      # the root conftest.py, as pytest imported it

sys.path.insert(0, str(ROOT / "tests"))
try:
    from file_seconds import file_seconds
finally:
    sys.path.pop(0)


def test_listed_files_exist():
    seconds = json.loads(Path(conftest.FILE_SECONDS).read_text())["seconds"]
    missing = [f for f in list(conftest.ENGINE_FREE) + list(seconds) if not (ROOT / f).is_file()]
    assert not missing, f"conftest's lists name files that do not exist (renamed or removed): {missing}"


def test_costs_are_measured_seconds_or_counted_tests(monkeypatch, tmp_path):
    table = tmp_path / "file_seconds.json"
    table.write_text(json.dumps({"seconds": {"tests/a.py": 12.5}}))
    monkeypatch.setattr(conftest, "FILE_SECONDS", str(table))
    cost = conftest.file_costs(["tests/a.py", "tests/b.py", "tests/b.py", "tests/b.py"])
    assert cost == {"tests/a.py": 12.5, "tests/b.py": 3 * conftest.SECONDS_PER_TEST}


def test_durations_report_is_summed_by_file():
    report = ["============ slowest durations ============",
              "12.50s call     tests/test_a.py::test_x[p-1]",
              "1.25s setup    tests/test_a.py::test_x[p-1]",
              "0.40s teardown tests/test_b.py::test_y",
              "3.00s call     phsym/netlist/parser.py::phsym.netlist.parser.parse",
              "(1 durations < 0.005s hidden.  Use -vv to show these durations.)"]
    assert file_seconds(report) == {"phsym/netlist/parser.py": 3.0, "tests/test_a.py": 13.8, "tests/test_b.py": 0.4}


def test_an_engine_free_file_that_needs_the_engine_fails(monkeypatch, tmp_path):
    """What the other workers' hooks call where a test would compile or ask for the numeric engine
    (or start a Python child) fails a test of a file listed in ENGINE_FREE, before any wait."""
    monkeypatch.setenv("PYTEST_CURRENT_TEST", f"{conftest.ENGINE_FREE[0]}::test_something (call)")
    with pytest.raises(pytest.fail.Exception, match="take it off the list"):
        conftest._wait_for_compiler(str(tmp_path / "never-opened.lock"))
