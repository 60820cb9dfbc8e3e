"""A deck's settings without the card readers: :func:`phsym.netlist.deckfile.settings_of` equals
:func:`phsym.netlist.cards.deck_settings` on every deck we ship or test, and on the edge cases of how a
card is spelled; a deck without control cards is known to have none from its text alone."""
from __future__ import annotations

from pathlib import Path

import pytest

from phsym.errors import NetlistError
from phsym.netlist.cards import deck_settings
from phsym.netlist.settings import DeckSettings, has_control_cards
from phsym.netlist.deckfile import settings_of

ROOT = Path(__file__).resolve().parent.parent
DECKS = sorted([*ROOT.glob("netlists/*.cir"), *ROOT.glob("tests/decks/*.cir"), *ROOT.glob("tests/decks/wild/*.cir"),
                *ROOT.glob("tests/decks/engines/*.cir")])


def test_every_shipped_and_tested_deck_has_the_settings_the_card_readers_give():
    assert len(DECKS) > 60
    plain = 0
    for path in DECKS:
        assert settings_of(path) == deck_settings(path), path
        plain += not has_control_cards(path.read_text(encoding="utf-8-sig"))
    assert 0 < plain < len(DECKS)      # both branches are exercised


@pytest.mark.parametrize("card", [
    ".tran 1u 1m", ".TRAN 1u 1m UIC", "  .tran 1u 1m", "\t.Tran 1u 1m ; a comment", ".tran;x\n+ 1u 1m",
    ".options reltol=1e-4", ".OPT itl4=50", ".opts gmin=1e-10", ".temp 50", ".temp 0 27 50", ".op",
    ".ac dec 10 1 1meg", ".dc V1 0 1 0.1", ".tf v(out) V1", ".four 1k v(out)", ".meas tran m max v(out)",
    ".save all", ".print tran v(out)", ".step param R 1k 2k 500",
])
def test_a_control_card_in_any_spelling_is_seen(tmp_path, card):
    deck = tmp_path / "d.cir"
    deck.write_text(f"title\nV1 in 0 SIN(0 1 1k)\nR1 in out 1k\nC1 out 0 1u\n{card}\n.end\n")
    assert has_control_cards(deck.read_text())
    assert settings_of(deck) == deck_settings(deck)
    assert settings_of(deck) != DeckSettings() or card.lower().lstrip().startswith((".save", ".print"))


@pytest.mark.parametrize("line", ["* .tran 1u 1m", "R1 a b 1k ; .tran 1u 1m", ".tranx 1u", ".title .tran 1u"])
def test_text_that_is_not_a_control_card_leaves_the_defaults(tmp_path, line):
    deck = tmp_path / "d.cir"
    deck.write_text(f"title\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n{line}\n.end\n")
    assert not has_control_cards(deck.read_text())
    assert settings_of(deck) == deck_settings(deck) == DeckSettings()


def test_a_card_in_an_included_file_is_read(tmp_path):
    (tmp_path / "opts.inc").write_text(".tran 10u 5m\n.options reltol=1e-5\n")
    deck = tmp_path / "d.cir"
    deck.write_text("title\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n.include opts.inc\n.end\n")
    got = settings_of(deck)
    assert got == deck_settings(deck) and got.tran.stop == 5e-3 and got.simulator_options() == {"tol": 1e-5}


def test_an_unreadable_or_malformed_deck_is_reported_as_the_card_readers_report_it(tmp_path):
    with pytest.raises(NetlistError, match="cannot read netlist"):
        settings_of(tmp_path / "missing.cir")
    bad = tmp_path / "bad.cir"
    bad.write_bytes(b"title\nR1 a 0 1k\xff\n.end\n")
    with pytest.raises(NetlistError, match="cannot read netlist"):
        settings_of(bad)
    bad.write_text("title\nR1 a 0 1k\n.tran 1u\n")
    with pytest.raises(NetlistError):
        settings_of(bad)
