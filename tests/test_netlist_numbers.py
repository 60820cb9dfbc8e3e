"""SPICE number parsing: suffixes, case, units, the 1M warning."""
import warnings

import pytest

from phsym.errors import Location, NetlistError, NetlistWarning
from phsym.netlist.numbers import parse_number


@pytest.mark.parametrize("text, value", [
    ("1", 1.0), ("-2.5", -2.5), ("+.5", 0.5), ("1e3", 1e3), ("1.5E-3", 1.5e-3),
    ("1f", 1e-15), ("1F", 1e-15), ("2p", 2e-12), ("3n", 3e-9), ("4u", 4e-6),
    ("4U", 4e-6), ("4\u00b5", 4e-6), ("5m", 5e-3), ("6k", 6e3), ("6K", 6e3),
    ("7meg", 7e6), ("7MEG", 7e6), ("7Meg", 7e6), ("8g", 8e9), ("9t", 9e12),
    ("2mil", 50.8e-6), ("10uF", 10e-6), ("1kOhm", 1e3), ("2.2k\u03a9", 2.2e3),
    ("5V", 5.0), ("1e-3s", 1e-3), ("100nH", 100e-9), ("3.3megohm", 3.3e6),
])
def test_values(text, value):
    assert parse_number(text) == pytest.approx(value, rel=1e-12)


def test_meg_is_not_milli():
    assert parse_number("1meg") == 1e6
    assert parse_number("1m") == 1e-3


@pytest.mark.parametrize("text", ["1M", "4.7MOhm"])
def test_uppercase_m_warns_and_means_milli(text):
    loc = Location("amp.cir", 3, 9, "R1 a b " + text, len(text))
    with pytest.warns(NetlistWarning) as rec:
        value = parse_number(text, loc)
    assert value == pytest.approx(float(text.rstrip("MOhm")) * 1e-3)
    msg = str(rec[0].message)
    assert "amp.cir:3:9" in msg and "meg" in msg


def test_lowercase_m_and_meg_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_number("1m")
        parse_number("1MEG")
        parse_number("1Mil")


@pytest.mark.parametrize("text", ["", "abc", "k1", "1k5", "1.2.3", "--1", "1e999", "1_0", "0x10"])
def test_rejects(text):
    with pytest.raises(NetlistError):
        parse_number(text)


def test_error_has_location():
    loc = Location("f.cir", 2, 5, "R1 a b 1x2", 3)
    with pytest.raises(NetlistError) as exc:
        parse_number("1x2", loc)
    assert exc.value.line == 2 and exc.value.column == 5 and "f.cir" in str(exc.value)


def test_suffix_scaling_is_correctly_rounded():
    from phsym.netlist.numbers import parse_number
    assert parse_number("10uF") == 1e-05
    assert parse_number("4.7n") == 4.7e-09
    assert parse_number("0.1p") == 1e-13
    assert parse_number("2.2k") == 2200.0
