"""Piecewise-linear laws from data in the netlist language.

``pwl(x, x1, y1, x2, y2, ...)`` in any law expression, and ``.table NAME
x1 y1 x2 y2 ...`` or ``.table NAME FILE.csv`` (two columns, relative to the
file of the card), used as ``NAME(x)``.  The interpolation (monotone,
end segments continued) is :mod:`phsym.common.piecewise`.

``.table NAME FILE.npz`` reads a learned law instead (written by ``phsym
learn ... --out FILE.npz``, :mod:`phsym.common.learned`): ``NAME(x)`` is its
posterior mean, evaluated numerically by the generated code.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import sympy as sp

from ..common.learned import LearnedLaw
from ..common.piecewise import check_points, pwl_expression
from ..errors import Location, NetlistError

__all__ = ["PwlTable", "LearnedTable", "pwl_function", "read_table_file", "table_card"]


def pwl_function(x: sp.Expr, *points: sp.Expr) -> sp.Expr:
    """``pwl(x, x1, y1, x2, y2, ...)`` of the expression language.

    Parameters
    ----------
    x : sympy.Expr
        The argument.
    *points : sympy.Expr
        Numbers ``x1, y1, x2, y2, ...``.
    """
    if len(points) % 2:
        raise ValueError(f"pwl() takes x then pairs x1, y1, x2, y2, ...: got {len(points)} numbers after x")
    vals = []
    for k, p in enumerate(points):
        if not p.is_number:
            raise ValueError(f"point value {k + 1} ({p}) is not a number (parameters are not allowed in tables)")
        vals.append(float(p))
    return pwl_expression(x, vals[0::2], vals[1::2])


class PwlTable:
    """A named table of a netlist (``.table NAME ...``), used as ``NAME(x)``.

    Parameters
    ----------
    name : str
        The table's name.
    xs, ys : sequence of float
        Breakpoints and values (see the module docstring).
    location : Location, optional
        Where it was defined.
    """

    def __init__(self, name: str, xs: Sequence[float], ys: Sequence[float], location: Optional[Location] = None):
        self.name = name
        self.xs, self.ys = check_points(xs, ys)
        self.location = location

    def __call__(self, x: sp.Expr) -> sp.Expr:
        """The interpolant at ``x``.

        Parameters
        ----------
        x : sympy.Expr
            The argument.
        """
        return pwl_expression(x, self.xs, self.ys)

    def __repr__(self) -> str:
        return f"<PwlTable {self.name}: {len(self.xs)} points>"


class LearnedTable:
    """A learned law of a netlist (``.table NAME FILE.npz``), used as ``NAME(x)``.

    Parameters
    ----------
    name : str
        The table's name.
    law : phsym.common.learned.LearnedLaw
        The law read from the file.
    location : Location, optional
        Where it was defined.
    """

    def __init__(self, name: str, law: LearnedLaw, location: Optional[Location] = None):
        self.name = name
        self.law = law
        self.location = location

    @property
    def arity(self) -> int:
        """Number of arguments."""
        return self.law.n_inputs

    def __call__(self, *x: sp.Expr) -> sp.Expr:
        """The learned law at ``x``.

        Parameters
        ----------
        *x : sympy.Expr
            The arguments.
        """
        return self.law(*x)

    def __repr__(self) -> str:
        return f"<LearnedTable {self.name}: {self.law!r}>"


def read_table_file(path: Path, location: Optional[Location] = None) -> Tuple[List[float], List[float]]:
    """The first two numeric columns of a CSV file (a header row and ``#`` comments are skipped).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    location : Location, optional
        The ``.table`` card (for errors).

    Raises
    ------
    NetlistError
        Missing file, or a row without two numbers.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise NetlistError(f"cannot read table file {path}: {exc.strerror or exc}", location,
                           hint="the path is relative to the netlist's directory") from None
    xs, ys = [], []
    header = False
    for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [c.strip() for c in row if c.strip()]
        if not cells or cells[0].startswith("#"):
            continue
        try:
            a, b = float(cells[0]), float(cells[1])
        except (ValueError, IndexError):
            if not xs and not header:
                header = True       # the first row that is not a comment may be a header
                continue
            raise NetlistError(f"{path}, line {lineno}: expected two numbers, got {','.join(row)!r}",
                               location) from None
        xs.append(a)
        ys.append(b)
    return xs, ys


_USAGE = (".table NAME x1 y1 x2 y2 ..., .table NAME FILE.csv (two columns, relative to the netlist) "
          "or .table NAME LAW.npz (a learned law)")


def table_card(stmt, names, deck_file: Optional[str]):
    """Define the table of a ``.table`` card in ``names`` (a case-insensitive name table).

    Parameters
    ----------
    stmt : Statement
        The card.
    names : NameTable
        Parameter names of the netlist; the table is added (a name may not
        be both a parameter and a table).
    deck_file : str or None
        The netlist's file (a table file is relative to its directory).

    Returns
    -------
    PwlTable or LearnedTable
    """
    from .numbers import looks_numeric, parse_number
    from .source import Word
    items = list(stmt.items)
    if len(items) < 2 or not all(isinstance(w, Word) and w.kind == "word" for w in items):
        raise NetlistError(".table needs a name and points or a file", stmt.loc(stmt.head), hint=_USAGE)
    name_word, rest = items[0], items[1:]
    loc = stmt.loc(name_word)
    if not (name_word.text[0].isalpha() or name_word.text[0] == "_"):
        raise NetlistError(f"invalid table name '{name_word.text}'", loc, hint="table names start with a letter")
    if name_word.text in names:
        raise NetlistError(f"'{name_word.text}' is already defined", loc, hint="tables and parameters share names")
    if len(rest) == 1 and rest[0].text.lower().endswith(".npz"):
        from ..errors import DataFileError
        base = Path(deck_file).parent if deck_file else Path.cwd()
        try:
            learned = LearnedTable(name_word.text, LearnedLaw.load(base / rest[0].text), loc)
        except DataFileError as exc:
            raise NetlistError(str(exc), stmt.loc(rest[0]),
                               hint="the path is relative to the netlist's directory") from None
        names.set(name_word.text, learned)
        return learned
    if len(rest) == 1 and not looks_numeric(rest[0].text):
        base = Path(deck_file).parent if deck_file else Path.cwd()
        xs, ys = read_table_file(base / rest[0].text, stmt.loc(rest[0]))
        where = stmt.loc(rest[0])
    else:
        nums = []
        for w in rest:
            if not looks_numeric(w.text):
                raise NetlistError(f"table value '{w.text}' is not a number", stmt.loc(w), hint=_USAGE)
            nums.append(parse_number(w.text, stmt.loc(w)))
        if len(nums) % 2:
            raise NetlistError(f".table {name_word.text}: {len(nums)} numbers do not make (x, y) pairs",
                               stmt.loc(rest[-1]), hint=_USAGE)
        xs, ys = nums[0::2], nums[1::2]
        where = loc
    try:
        table = PwlTable(name_word.text, xs, ys, loc)
    except ValueError as exc:
        raise NetlistError(f".table {name_word.text}: {exc}", where, hint=_USAGE) from None
    names.set(name_word.text, table)
    return table
