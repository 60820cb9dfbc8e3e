"""The safe expression parser: arithmetic, functions, errors, security."""
import os

import pytest
import sympy as sp

from phsym.errors import Location, NetlistError
from phsym.netlist import parse_netlist
from phsym.netlist.expressions import parse_expression

a, b, t = (sp.Symbol(n, real=True) for n in "abt")
SYMS = {"a": a, "b": b, "t": t}


@pytest.mark.parametrize("text, expected", [
    ("1 + 2*3", 7),
    ("(1 + 2)*3", 9),
    ("2^3^2", 512),
    ("2**3**2", 512),
    ("-2^2", -4),
    ("-2**2", -4),
    ("2^-1", sp.Rational(1, 2)),
    ("8/4/2", 1),
    ("1 - 2 - 3", -4),
    ("+3", 3),
    ("--3", 3),
    ("2.2k", 2200.0),
    ("10u*1k", 0.01),
])
def test_numeric(text, expected):
    assert float(parse_expression(text, {})) == pytest.approx(float(expected))


def test_symbols_and_precedence():
    assert parse_expression("a + b*t", SYMS) == a + b * t
    assert parse_expression("a^2/b", SYMS) == a ** 2 / b
    assert parse_expression("-a^2", SYMS) == -(a ** 2)


def test_functions():
    e = parse_expression("exp(a) + log(b) + sqrt(t) + sin(a)*cos(b)*tan(t)", SYMS)
    assert e == sp.exp(a) + sp.log(b) + sp.sqrt(t) + sp.sin(a) * sp.cos(b) * sp.tan(t)
    e = parse_expression("sinh(a)+cosh(a)+tanh(a)+asin(a)+acos(a)+atan(a)", SYMS)
    assert e == sp.sinh(a) + sp.cosh(a) + sp.tanh(a) + sp.asin(a) + sp.acos(a) + sp.atan(a)
    assert parse_expression("atan2(a, b)", SYMS) == sp.atan2(a, b)
    assert parse_expression("abs(a) + sign(b)", SYMS) == sp.Abs(a) + sp.sign(b)
    assert parse_expression("min(a, b, 1) + max(a, b)", SYMS) == sp.Min(a, b, 1) + sp.Max(a, b)


def test_pi_and_sine_input():
    e = parse_expression("sin(2*pi*1k*t)", SYMS)
    assert float(e.subs(t, 0.25e-3)) == pytest.approx(1.0)
    assert parse_expression("pi", {}) == sp.pi


def test_e_is_not_a_constant():
    with pytest.raises(NetlistError) as exc:
        parse_expression("2*e", {})
    assert "exp(1)" in exc.value.hint


def test_no_suffixes_mode():
    assert float(parse_expression("2e3", {}, allow_suffixes=False)) == 2000.0
    with pytest.raises(NetlistError):
        parse_expression("2k", {}, allow_suffixes=False)


def test_undefined_name_location():
    loc = Location("x.cir", 4, 9, "R1 a b {1 + foo}", 7)
    with pytest.raises(NetlistError) as exc:
        parse_expression("1 + foo", SYMS, loc)
    err = exc.value
    assert "undefined parameter 'foo'" in err.message
    assert (err.line, err.column) == (4, 13)
    assert err.text == "foo"


@pytest.mark.parametrize("text, column", [
    ("1 +", 4), ("(1", 3), ("1)", 2), ("1 2", 3), ("foo(1)", 1), ("sin", 1),
    ("sin(1, 2)", 1), ("atan2(1)", 1), ("a.b", 2), ("a[0]", 2), ("'s'", 1), ("1, 2", 2),
    ("", 1), ("1/0", 2), ("9^9^9^9", 4), ("a ; b", 3),
])
def test_errors(text, column):
    with pytest.raises(NetlistError) as exc:
        parse_expression(text, SYMS)
    assert exc.value.column == column


def test_deep_nesting_is_an_error_not_a_crash():
    with pytest.raises(NetlistError):
        parse_expression("(" * 5000 + "1" + ")" * 5000, {})
    with pytest.raises(NetlistError):
        parse_expression("-" * 5000 + "1", {})


ATTACKS = [
    "__import__('os').system('touch /tmp/pwned_phsym')",
    "().__class__",
    "eval('1')",
    "exec('x=1')",
    "lambda: 1",
    "open('/etc/passwd')",
    "a.__class__.__mro__",
    "[x for x in ()]",
    "getattr(a, 'real')",
    "__builtins__",
    "globals()",
    "Symbol('x')",
    "sympify('1')",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_attacks_in_expression(attack):
    with pytest.raises(NetlistError):
        parse_expression(attack, SYMS)


@pytest.mark.parametrize("attack", [s for s in ATTACKS if "{" not in s and "}" not in s])
@pytest.mark.parametrize("template", [
    "R1 a 0 {{{x}}}\n",
    ".param p={{{x}}}\nR1 a 0 p\n",
    "C1 a 0 H={{{x}}}\n",
    "R1 a 0 I={{{x}}}\n",
    "V1 a 0 SIN(0 {{{x}}} 1k)\n",
    "C1 a 0 1u IC={{{x}}}\n",
])
def test_attacks_in_netlists(template, attack):
    marker = "/tmp/pwned_phsym"
    if os.path.exists(marker):
        os.remove(marker)
    with pytest.raises(NetlistError):
        parse_netlist(template.format(x=attack))
    assert not os.path.exists(marker)
