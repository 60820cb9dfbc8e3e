"""A deck file's run settings, read as cheaply as its text allows (:func:`settings_of`).

Kept apart from :mod:`.cards` (the card readers) and :mod:`.settings` (the
data) so that neither imports the other's side: a deck without control
cards is answered from :mod:`.settings` alone, and only a deck with them
imports the readers (and lark's statement grammar).
"""
from __future__ import annotations

from pathlib import Path

from .settings import DeckSettings, has_control_cards

__all__ = ["settings_of"]


def settings_of(path) -> DeckSettings:
    """:func:`phsym.netlist.cards.deck_settings` of a deck file, without importing the card readers
    when the deck has no control card (:func:`~phsym.netlist.settings.has_control_cards`).

    Parameters
    ----------
    path : str or pathlib.Path
        The deck; unreadable files and malformed cards raise as ``deck_settings`` does.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        text = None         # deck_settings says what is wrong with it
    if text is not None and not has_control_cards(text):
        return DeckSettings()
    from .cards import deck_settings
    return deck_settings(path)
