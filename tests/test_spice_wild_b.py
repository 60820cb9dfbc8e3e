"""Decks as they exist in the wild (tests/decks/wild), second half: each runs unmodified as the CLI
runs it and matches its ngspice-39 reference (tests/decks/wild_corpus.py says what and how)."""
import pytest

from tests.decks import wild_corpus as wild

DECKS = wild.group(1, 2)


def _with(analysis):
    return [p for p in DECKS if analysis in wild.analysis_cards(p)]


@pytest.mark.parametrize("path", [p for p in _with("tran") if p not in _with("step")], ids=lambda p: p.stem)
def test_transient_matches_ngspice(path):
    wild.check_tran(path)


@pytest.mark.parametrize("path", _with("step"), ids=lambda p: p.stem)
def test_each_step_matches_ngspice_run_at_its_values(path):
    wild.check_steps(path)


@pytest.mark.parametrize("path", _with("ac"), ids=lambda p: p.stem)
def test_ac_matches_ngspice_within_a_tenth_of_a_db(path):
    wild.check_ac(path)


@pytest.mark.parametrize("path", _with("dc"), ids=lambda p: p.stem)
def test_dc_sweep_matches_ngspice_within_one_percent(path):
    wild.check_dc(path)


@pytest.mark.parametrize("path", _with("tf"), ids=lambda p: p.stem)
def test_transfer_function_matches_ngspice(path):
    wild.check_tf(path)


@pytest.mark.parametrize("path", _with("op"), ids=lambda p: p.stem)
def test_operating_point_matches_ngspice(path):
    wild.check_op(path)


@pytest.mark.parametrize("path", [p for p in DECKS if "tran" in wild.analysis_cards(p)
                                  and wild.has_tran_measures(p)], ids=lambda p: p.stem)
def test_meas_and_four_match_ngspice(path):
    wild.check_meas_four(path)
