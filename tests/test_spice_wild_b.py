"""Decks as they exist in the wild (tests/decks/wild), second half: each runs unmodified as the CLI
runs it and matches its ngspice-39 reference (tests/decks/wild_corpus.py says what and how)."""
import pytest

from tests.decks import wild_corpus as wild

DECKS = wild.group(1, 2)


@pytest.mark.parametrize("path", [p for p in DECKS if "tran" in wild.analysis_cards(p)],
                         ids=lambda p: p.stem)
def test_transient_matches_ngspice(path):
    wild.check_tran(path)
