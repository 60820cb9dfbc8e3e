"""Decks as they exist in the wild (tests/decks/wild), second half: each runs unmodified as the CLI
runs it and matches its ngspice-39 reference (tests/decks/wild_corpus.py says what and how)."""
from tests.decks import wild_corpus as wild

globals().update(wild.deck_tests(wild.group(1, 2)))
