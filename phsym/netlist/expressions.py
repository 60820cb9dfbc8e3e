"""A small, safe expression language that builds sympy objects directly.

Netlist text is never handed to ``sympify``, ``eval`` or similar: this module
tokenises and parses it itself (recursive descent) and only creates sympy
numbers, the symbols it is given, arithmetic, and a fixed list of functions.

Grammar (``^`` and ``**`` are both power, right associative, binding tighter
than unary minus, as in Python: ``-2**2 == -4``; comparisons and ``c ? a : b``
as in ngspice's behavioural sources, a comparison worth 1 or 0)::

    top    := or ('?' top ':' top)?
    or     := and ('||' and)*
    and    := cmp ('&&' cmp)*
    cmp    := expr (('<' | '>' | '<=' | '>=' | '==' | '!=') expr)?
    expr   := term (('+' | '-') term)*
    term   := unary (('*' | '/') unary)*
    unary  := ('+' | '-') unary | power
    power  := atom (('**' | '^') unary)?
    atom   := NUMBER | NAME | NAME '(' top (',' top)* ')' | '(' top ')'

A caller that reads circuit quantities (a behavioural source) passes
``probes``: ``v(...)`` and ``i(...)`` then keep their raw argument text
(node names such as ``net.1``) and become what ``probes`` returns.

>>> import sympy as sp
>>> x = sp.Symbol("x", real=True)
>>> parse_expression("2*x^2 + 1k", {"x": x})
2*x**2 + 1000.0
"""
from __future__ import annotations

import math
import re
from typing import Callable, List, Mapping, Optional

import sympy as sp

from ..common.bounded import constant_problem, size_problem
from ..errors import Location, NetlistError
from .numbers import parse_number, split_number
from .tables import PwlTable, pwl_function

__all__ = ["parse_expression", "parse_expression_at", "FUNCTIONS"]

#: Whitelisted functions: name -> (sympy callable, min args, max args).
FUNCTIONS = {
    "exp": (sp.exp, 1, 1), "log": (sp.log, 1, 1), "sqrt": (sp.sqrt, 1, 1),
    "sin": (sp.sin, 1, 1), "cos": (sp.cos, 1, 1), "tan": (sp.tan, 1, 1),
    "sinh": (sp.sinh, 1, 1), "cosh": (sp.cosh, 1, 1), "tanh": (sp.tanh, 1, 1),
    "asin": (sp.asin, 1, 1), "acos": (sp.acos, 1, 1), "atan": (sp.atan, 1, 1),
    "atan2": (sp.atan2, 2, 2), "abs": (sp.Abs, 1, 1), "sign": (sp.sign, 1, 1),
    "min": (sp.Min, 2, 64), "max": (sp.Max, 2, 64),
    "pwl": (pwl_function, 5, 20001),
    # ngspice's behavioural-source functions
    "ln": (sp.log, 1, 1), "log10": (lambda x: sp.log(x, 10), 1, 1),
    "asinh": (sp.asinh, 1, 1), "acosh": (sp.acosh, 1, 1), "atanh": (sp.atanh, 1, 1),
    "sgn": (sp.sign, 1, 1), "pow": (lambda x, y: x ** y, 2, 2), "pwr": (lambda x, y: sp.Abs(x) ** y, 2, 2),
    "pwrs": (lambda x, y: sp.sign(x) * sp.Abs(x) ** y, 2, 2),
    "u": (lambda x: sp.Piecewise((1, x > 0), (0, True)), 1, 1),
    "uramp": (lambda x: sp.Piecewise((x, x > 0), (0, True)), 1, 1),
    "limit": (lambda x, a, b: sp.Min(sp.Max(x, a), b), 3, 3),
}
_CONSTANTS = {"pi": sp.pi}
_MAX_DEPTH = 100
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPS = ("**", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "^", "(", ")", ",", "<", ">", "?", ":")
_RELATIONS = {"<": sp.StrictLessThan, ">": sp.StrictGreaterThan, "<=": sp.LessThan, ">=": sp.GreaterThan,
              "==": sp.Eq, "!=": sp.Ne}

#: ``probes(quantity, args, location)``: a circuit quantity ``v(args)`` or ``i(args)`` as an expression
Probes = Callable[[str, str, Optional[Location]], sp.Expr]

Locator = Callable[[int, int], Optional[Location]]


class _Tok:
    __slots__ = ("kind", "text", "pos", "value")

    def __init__(self, kind: str, text: str, pos: int, value=None):
        self.kind, self.text, self.pos, self.value = kind, text, pos, value


_PROBE = re.compile(r"([vViI])\s*\(([^()]*)\)")


def _tokenize(text: str, locate: Locator, allow_suffixes: bool, probes: bool = False) -> List[_Tok]:
    toks: List[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        m = _PROBE.match(text, i) if probes and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) \
            else None
        if m:       # v(net.1, 0), i(Vsense): raw names, not expressions
            toks.append(_Tok("probe", m.group(0), i, (m.group(1).lower(), m.group(2), m.start(2))))
            i = m.end()
            continue
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            literal, letters, end = split_number(text[i:])
            if letters and not allow_suffixes:
                end = len(literal)
            tok_text = text[i:i + end]
            if end < n - i and (text[i + end].isalnum() or text[i + end] in "_."):
                bad = i + end
                raise NetlistError(f"malformed number '{text[i:bad + 1]}'", locate(i, bad + 1 - i),
                                   hint="numbers look like 2, 1.5e-3 or 2.2k")
            value = parse_number(tok_text, locate(i, end))
            if re.fullmatch(r"\d{1,15}", tok_text):
                toks.append(_Tok("num", tok_text, i, sp.Integer(int(tok_text))))
            else:
                toks.append(_Tok("num", tok_text, i, sp.Float(value)))
            i += end
            continue
        m = _NAME.match(text, i)
        if m:
            name = m.group(0)
            if name.startswith("__"):
                raise NetlistError(f"'{name}' is not allowed in an expression",
                                   locate(i, len(name)),
                                   hint="names starting with '__' are reserved")
            toks.append(_Tok("name", name, i))
            i = m.end()
            continue
        for op in _OPS:
            if text.startswith(op, i):
                toks.append(_Tok("op", op, i))
                i += len(op)
                break
        else:
            raise NetlistError(f"unexpected character '{c}' in expression", locate(i, 1),
                               hint="expressions may use numbers, parameter names, "
                                    "+ - * / ^ **, parentheses and the functions "
                                    + ", ".join(FUNCTIONS))
    toks.append(_Tok("end", "", n))
    return toks


class _Cond:
    """A comparison: a condition in ``c ? a : b``, 1 or 0 in arithmetic."""

    def __init__(self, rel):
        self.rel = rel

    def value(self) -> sp.Expr:
        return sp.Piecewise((sp.Integer(1), self.rel), (sp.Integer(0), True))


def _num(v) -> sp.Expr:
    return v.value() if isinstance(v, _Cond) else v


def _cond(v):
    return v.rel if isinstance(v, _Cond) else sp.Ne(v, 0)


class _Parser:
    def __init__(self, text, symbols, locate, allow_suffixes, probes: Optional[Probes] = None):
        self.text = text
        self.symbols = symbols
        self.locate = locate
        self.probes = probes
        self.toks = _tokenize(text, locate, allow_suffixes, probes is not None)
        self.i = 0
        self.depth = 0

    # -- helpers -------------------------------------------------------
    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def error(self, message: str, tok: _Tok, hint: str = "") -> NetlistError:
        return NetlistError(message, self.locate(tok.pos, max(1, len(tok.text))), hint=hint)

    def expect(self, op: str) -> _Tok:
        tok = self.tok
        if tok.kind == "op" and tok.text == op:
            self.i += 1
            return tok
        found = "end of expression" if tok.kind == "end" else f"'{tok.text}'"
        raise self.error(f"expected '{op}' but found {found}", tok)

    def is_op(self, *ops: str) -> bool:
        return self.tok.kind == "op" and self.tok.text in ops

    # -- grammar -------------------------------------------------------
    def parse(self) -> sp.Expr:
        if self.tok.kind == "end":
            raise NetlistError("empty expression", self.locate(0, max(1, len(self.text))),
                               hint="write a value, e.g. {2*R0}")
        expr = _num(self.top())
        if self.tok.kind != "end":
            raise self.error(f"unexpected '{self.tok.text}' in expression", self.tok,
                             hint="commas are only allowed between function arguments"
                             if self.tok.text == "," else "check the operators and parentheses")
        return expr

    def top(self):
        cond = self.logic("||")
        if not self.is_op("?"):
            return cond
        self.i += 1
        a = _num(self.top())
        self.expect(":")
        b = _num(self.top())
        return sp.Piecewise((a, _cond(cond)), (b, True))

    def logic(self, op: str):
        value = self.logic("&&") if op == "||" else self.compare()
        while self.is_op(op):
            self.i += 1
            rhs = self.logic("&&") if op == "||" else self.compare()
            value = _Cond((sp.Or if op == "||" else sp.And)(_cond(value), _cond(rhs)))
        return value

    def compare(self):
        value = self.expr()
        if self.tok.kind == "op" and self.tok.text in _RELATIONS:
            rel = _RELATIONS[self.tok.text]
            self.i += 1
            return _Cond(rel(value, self.expr()))
        return value

    def expr(self) -> sp.Expr:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.error("expression is nested too deeply", self.tok)
        terms = [self.term()]
        while self.is_op("+", "-"):       # one Add at the end: a sum of n terms costs O(n), not O(n^2)
            op = self.tok.text
            self.i += 1
            rhs = self.term()
            terms.append(rhs if op == "+" else -rhs)
        self.depth -= 1
        return terms[0] if len(terms) == 1 else sp.Add(*terms)

    def term(self) -> sp.Expr:
        factors = [self.unary()]
        while self.is_op("*", "/"):
            op_tok = self.tok
            self.i += 1
            rhs = self.unary()
            if op_tok.text == "*":
                factors.append(rhs)
            else:
                if rhs.is_zero:
                    raise self.error("division by zero", op_tok, hint="the divisor evaluates to zero; check the parameter values")
                factors.append(1 / rhs)
        return factors[0] if len(factors) == 1 else sp.Mul(*factors)

    def unary(self) -> sp.Expr:
        if self.is_op("+", "-"):
            op = self.tok.text
            self.i += 1
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise self.error("expression is nested too deeply", self.tok)
            operand = self.unary()
            self.depth -= 1
            return -operand if op == "-" else operand
        return self.power()

    def power(self) -> sp.Expr:
        base = self.atom()
        if self.is_op("**", "^"):
            op_tok = self.tok
            self.i += 1
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise self.error("expression is nested too deeply", self.tok)
            exponent = self.unary()
            self.depth -= 1
            return self._pow(base, exponent, op_tok)
        return base

    def _pow(self, base, exponent, op_tok):
        if base.is_Number and exponent.is_Number:
            # Numeric powers are computed in floating point unless small, so that
            # a crafted input such as 9^9^9^9 cannot exhaust memory.
            if (base.is_Integer and exponent.is_Integer and abs(int(exponent)) <= 64
                    and abs(int(base)) <= 2 ** 32):
                if base == 0 and exponent < 0:
                    raise self.error("division by zero (0 to a negative power)", op_tok)
                return base ** exponent
            try:
                value = float(base) ** float(exponent)
            except (OverflowError, ZeroDivisionError):
                raise self.error("numeric power out of range", op_tok) from None
            if isinstance(value, complex) or not math.isfinite(value):
                raise self.error("numeric power is not a finite real number", op_tok)
            return sp.Float(value)
        if base.is_zero and exponent.is_negative:
            raise self.error("division by zero (0 to a negative power)", op_tok)
        return sp.Pow(base, exponent)

    def atom(self) -> sp.Expr:
        tok = self.tok
        if tok.kind == "num":
            self.i += 1
            return tok.value
        if tok.kind == "op" and tok.text == "(":
            self.i += 1
            value = _num(self.top())
            self.expect(")")
            return value
        if tok.kind == "probe":
            self.i += 1
            quantity, args, start = tok.value
            return self.probes(quantity, args, self.locate(start, max(1, len(args))))
        if tok.kind == "name":
            self.i += 1
            if self.is_op("("):
                return self.call(tok)
            return self.name(tok)
        if tok.kind == "end":
            raise self.error("expression ends unexpectedly", tok,
                             hint="an operand (number, name or parenthesis) is missing")
        raise self.error(f"unexpected '{tok.text}' in expression", tok,
                         hint="an operand (number, name or parenthesis) is expected here")

    def name(self, tok: _Tok) -> sp.Expr:
        try:
            value = self.symbols[tok.text]
        except KeyError:
            pass
        else:
            if isinstance(value, PwlTable) or callable(value):
                raise self.error(f"table '{tok.text}' is a function: write {tok.text}(x)", tok)
            return value
        if tok.text in _CONSTANTS:
            return _CONSTANTS[tok.text]
        if tok.text.lower() in FUNCTIONS:
            raise self.error(f"function '{tok.text}' needs arguments in parentheses", tok)
        known = sorted({str(k) for k in self.symbols})
        hint = ("define it with .param " + tok.text + "=VALUE" +
                (" (known: " + ", ".join(known[:12]) + (", ..." if len(known) > 12 else "") + ")"
                 if known else ""))
        if tok.text == "e":
            hint = "'e' is not a constant here; write exp(1), or define a parameter named e"
        raise self.error(f"undefined parameter '{tok.text}'", tok, hint=hint)

    def call(self, tok: _Tok) -> sp.Expr:
        fname = tok.text.lower()
        table = self.symbols.get(tok.text) if fname not in FUNCTIONS else None
        if isinstance(table, PwlTable):
            func, lo, hi = table, 1, 1
        elif callable(table) and hasattr(table, "arity"):        # a learned law, a .func
            func, lo, hi = table, table.arity, table.arity
        elif fname not in FUNCTIONS:
            raise self.error(f"unknown function '{tok.text}'", tok,
                             hint="available functions: " + ", ".join(FUNCTIONS) + " and .table names")
        else:
            func, lo, hi = FUNCTIONS[fname]
        self.expect("(")
        args = [_num(self.top())]
        while self.is_op(","):
            self.i += 1
            args.append(_num(self.top()))
        self.expect(")")
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} or more"
            raise self.error(f"{fname}() takes {want} argument(s), got {len(args)}", tok)
        if fname == "log" and args[0].is_zero:
            raise self.error("log(0) is undefined", tok)
        try:
            return func(*args)
        except ValueError as exc:
            raise self.error(f"{tok.text}(): {exc}", tok) from None


def parse_expression_at(text: str, symbols: Mapping[str, sp.Symbol], locate: Locator,
                        allow_suffixes: bool = True, probes: Optional[Probes] = None) -> sp.Expr:
    """Parse ``text``; ``locate(offset, length)`` gives the Location of a character range.

    Used by the netlist parser, whose expressions may span continuation lines;
    ``probes`` reads ``v(...)`` and ``i(...)`` (see the module docstring).
    """
    whole = locate(0, max(1, len(text)))
    try:        # linear in the text (sums and products are built at once); constants in floats
        expr = _Parser(text, symbols, locate, allow_suffixes, probes).parse()
        bad = constant_problem(expr)
    except NetlistError:
        raise
    except (ArithmeticError, ValueError, TypeError, RecursionError) as exc:
        raise NetlistError(f"cannot evaluate expression '{_short(text)}': {exc}", whole) from None
    if bad is not None:
        raise NetlistError(f"expression '{_short(text)}' has no finite real value: {_short(bad[1])}",
                           whole, hint="values and laws must be real; check the arguments of sqrt, log, "
                                       "asin, acos, powers and exp")
    big = size_problem(expr)
    if big is not None:
        raise NetlistError(f"expression '{_short(text)}' is too large for symbolic work: {big}", whole,
                           hint="give it in a simpler form (a lower power, fewer terms); laws are "
                                "differentiated and expanded symbolically")
    return expr


def _short(text: str, n: int = 120) -> str:
    """``text`` cut to ``n`` characters for a message."""
    return text if len(text) <= n else text[:n - 3] + "..."


def parse_expression(text: str, symbols: Mapping[str, sp.Symbol],
                     location: Optional[Location] = None,
                     allow_suffixes: bool = True) -> sp.Expr:
    """Parse an arithmetic expression into a sympy expression.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"Is*(exp(v/Vt) - 1)"`` or ``"sin(2*pi*1k*t)"``.
    symbols : mapping of str to sympy.Symbol
        Names that may appear (looked up with ``symbols[name]``; a mapping may
        implement case-insensitive lookup).  ``pi`` is a constant unless
        ``symbols`` defines it; ``e`` is not a constant.
    location : Location, optional
        Position of the first character of ``text``; error locations are
        offset from it.
    allow_suffixes : bool
        Whether numbers may carry SPICE suffixes (``2.2k``, ``10u``).

    Returns
    -------
    sympy.Expr

    Raises
    ------
    NetlistError
        On any syntax error, unknown name or function, or forbidden construct.
    """
    def locate(offset: int, length: int) -> Optional[Location]:
        if location is None:
            return Location(None, 1, offset + 1, text, length)
        return Location(location.file, location.line, location.column + offset,
                        location.text, length)

    return parse_expression_at(text, symbols, locate, allow_suffixes)
