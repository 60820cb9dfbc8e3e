"""SPICE-style numbers: ``2.2k``, ``10uF``, ``1meg``, ``4.7nH``, ``1e-3s``.

A number is a decimal literal (optional sign, optional exponent) followed by
an optional scale suffix and optional unit letters, which are ignored.
Suffixes are case-insensitive, as in SPICE:

=======  ==========  =======  ==========
suffix   scale       suffix   scale
=======  ==========  =======  ==========
``f``    1e-15       ``k``    1e3
``p``    1e-12       ``meg``  1e6
``n``    1e-9        ``g``    1e9
``u``/µ  1e-6        ``t``    1e12
``m``    1e-3        ``mil``  25.4e-6
=======  ==========  =======  ==========

An uppercase ``M`` alone (``1M``, ``4.7MOhm``) still means milli, but a
:class:`~phsym.errors.NetlistWarning` is issued because ``1meg`` was probably
meant (not on a line in upper case only, nor for times and control cards).

>>> parse_number("2.2k")
2200.0
>>> parse_number("10uF")
1e-05
>>> parse_number("1meg")
1000000.0
"""
from __future__ import annotations

import decimal
import math
import re
import warnings
from typing import Optional, Tuple

from ..errors import Location, NetlistError, NetlistWarning

__all__ = ["parse_number", "split_number", "SUFFIXES", "looks_numeric"]

#: Single-letter scale suffixes (lower case) and their factors.
SUFFIXES = {
    "f": 1e-15, "p": 1e-12, "n": 1e-9, "u": 1e-6, "\u00b5": 1e-6, "\u03bc": 1e-6,
    "m": 1e-3, "k": 1e3, "g": 1e9, "t": 1e12,
}

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_UNIT = re.compile(r"[^\W\d_]*")  # letters only (any alphabet, e.g. Ω, µ)
_HINT = ("write a number such as 1.5, 2.2k, 10u, 1e-3 or 4.7meg "
         "(suffixes f p n u m k meg g t mil; trailing unit letters are ignored)")


def looks_numeric(text: str) -> bool:
    """Return True when ``text`` starts like a number (digit, ``.digit``, or a sign)."""
    return bool(re.match(r"[+-]?\.?\d", text))


def split_number(text: str) -> Optional[Tuple[str, str, int]]:
    """Split ``text`` at the end of its numeric literal.

    Returns ``(literal, letters, end)`` where ``letters`` are the suffix/unit
    letters following the literal and ``end`` the index after them, or
    ``None`` when ``text`` does not start with a number.
    """
    m = _NUMBER.match(text)
    if not m:
        return None
    u = _UNIT.match(text, m.end())
    return m.group(0), u.group(0), u.end()


def _scale(letters: str) -> Tuple[float, bool]:
    """Return (factor, suspicious_uppercase_M) for suffix/unit letters."""
    if not letters:
        return 1.0, False
    low = letters.lower()
    if low.startswith("meg"):
        return 1e6, False
    if low.startswith("mil"):
        return 25.4e-6, False
    factor = SUFFIXES.get(low[0])
    if factor is None:
        return 1.0, False  # unit letters only, e.g. "5V", "3Ohm"
    return factor, letters[0] == "M"


def parse_number(text: str, location: Optional[Location] = None, warn: bool = True) -> float:
    """Parse a SPICE number with optional scale suffix and unit letters.

    Parameters
    ----------
    text : str
        The token, e.g. ``"2.2k"``, ``"10uF"``, ``"-1.5e-3"``, ``"1meg"``.
    location : Location, optional
        Where the token is (used in errors and warnings).
    warn : bool
        Warn about an upper-case ``M`` (not for times and control cards,
        where milli is meant, nor on a line written in upper case only, the
        style of classic SPICE decks, where ``M`` is milli by habit).

    Returns
    -------
    float

    Raises
    ------
    NetlistError
        When ``text`` is not a number, has characters after the unit letters,
        or is not finite.
    """
    text = text.strip()
    parts = split_number(text)
    if parts is None:
        raise NetlistError(f"expected a number, got '{text}'", location, hint=_HINT)
    literal, letters, end = parts
    if end != len(text):
        raise NetlistError(f"malformed number '{text}' (unexpected '{text[end]}')",
                           location, hint=_HINT)
    factor, suspicious = _scale(letters)
    if factor == 1.0:
        value = float(literal)          # correctly rounded already (and a tenth of the decimal product's cost)
    else:
        # exact decimal product, rounded once: 10u -> 1e-05 (not 9.999999999999999e-06)
        try:
            value = float(decimal.Decimal(literal) * decimal.Decimal(repr(factor)))
        except (decimal.InvalidOperation, OverflowError):
            value = float(literal) * factor
    if not math.isfinite(value):
        raise NetlistError(f"number '{text}' is out of range", location,
                           hint="use a finite value")
    if suspicious and warn and (location is None or any(c.islower() for c in location.text)):
        where = location.describe() + ": " if location else ""
        warnings.warn(f"{where}'{text}' means {value:g} (M = milli, as in SPICE); "
                      f"did you mean '{literal}meg'?", NetlistWarning, stacklevel=2)
    return value
