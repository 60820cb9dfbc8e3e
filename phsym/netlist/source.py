"""Netlist text -> logical lines -> statements (lark), keeping original positions.

Comment lines (``*``), end-of-line comments (``;``, and ``$`` or ``//`` after a blank), blank lines and ``+``
continuations are handled here; each logical line remembers, for every one of
its characters, the line and column it came from, so every error points into
the original text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import MutableMapping
from typing import Dict, Iterator, List, Optional, Tuple, Union

from ..errors import Location, NetlistError
from .grammar import statement_parser

__all__ = ["LogicalLine", "Word", "Assign", "Call", "Group", "Statement", "ItemLocations", "span", "split_logical_lines", "prepare_line", "raw_statement",
           "parse_statement", "read_statements"]


class LogicalLine:
    """A statement's text with a map from each character to (line, column).

    Parameters
    ----------
    text : str
        The statement's text.
    positions : list of (int, int), optional
        Line and column of each character of ``text``; ``None`` with ``runs``.
    lines : list of str
        All original source lines.
    file : str, optional
        The source's name.
    runs : list of (int, int, int), optional
        ``(offset, line, column)`` where a stretch of consecutive source columns starts in ``text``
        (one per physical line; the reader's form: a deck's lines keep no per-character list).
    """

    __slots__ = ("text", "lines", "file", "_list", "_runs")

    def __init__(self, text: str, positions: Optional[List[Tuple[int, int]]], lines: List[str],
                 file: Optional[str], runs: Optional[List[Tuple[int, int, int]]] = None):
        self.text = text
        self.lines = lines
        self.file = file
        self._list = positions
        self._runs = runs

    def __repr__(self) -> str:
        return f"LogicalLine({self.text!r}, file={self.file!r})"

    @property
    def positions(self) -> List[Tuple[int, int]]:
        """Line and column of each character of :attr:`text`."""
        if self._list is None:
            runs, out = self._runs or [], []
            for j, (off, line, col) in enumerate(runs):
                end = runs[j + 1][0] if j + 1 < len(runs) else len(self.text)
                out.extend((line, col + k) for k in range(end - off))
            self._list = out
        return self._list

    def _at(self, offset: int) -> Tuple[int, int]:
        if self._list is not None:
            return self._list[offset]
        runs = self._runs
        j = len(runs) - 1
        while runs[j][0] > offset:
            j -= 1
        off, line, col = runs[j]
        return line, col + offset - off

    def locate(self, offset: int, length: int = 1) -> Location:
        """Location of ``length`` characters starting at ``offset`` of :attr:`text`."""
        n = len(self._list) if self._list is not None else (len(self.text) if self._runs else 0)
        if not n:
            return Location(self.file, 1, 1, "", 1)
        if offset >= n:
            line, col = self._at(n - 1)
            col += 1
        else:
            line, col = self._at(max(offset, 0))
        src = self.lines[line - 1]
        length = max(1, min(length, len(src) - col + 1))
        return Location(self.file, line, col, src, length)


@dataclass
class Word:
    """A bare word (``kind="word"``) or a braced expression (``kind="braced"``)."""

    kind: str
    text: str
    start: int

    @property
    def inner(self) -> str:
        return self.text[1:-1] if self.kind == "braced" else self.text


@dataclass
class Assign:
    key: Word
    value: Word


@dataclass
class Call:
    name: Word
    args: List[Union[Word, Assign]]
    end: int


@dataclass
class Group:
    """A parenthesised list not attached to a word: ``(3,0)`` of ``POLY(2) (3,0) (4,0)``."""

    args: List[Union[Word, Assign]]
    start: int
    end: int


Item = Union[Word, Assign, Call, Group]


@dataclass
class Statement:
    head: Word
    items: List[Item]
    line: LogicalLine
    # filled by the reader: the raw text after the head (for .title)
    rest: str = field(default="")

    def loc(self, item, length: Optional[int] = None) -> Location:
        """Location of a word, assignment, call or raw offset."""
        return self.line.locate(*span(item, length))


def span(item, length: Optional[int] = None) -> Tuple[int, int]:
    """``(offset, length)`` of a word, assignment, call, group or raw offset in its logical line."""
    if isinstance(item, Assign):
        return item.key.start, len(item.key.text)
    if isinstance(item, Call):
        return item.name.start, item.end - item.name.start
    if isinstance(item, Group):
        return item.start, item.end - item.start
    if isinstance(item, Word):
        return item.start, len(item.text) if length is None else length
    return int(item), length or 1



class ItemLocations(MutableMapping):
    """Argument key -> :class:`~phsym.errors.Location`, each found from its statement item when read.

    An element line records where each argument is written (for messages
    that point at it), yet almost none is ever read: locating every word of
    a 30,000-element deck at load made 200,000 locations (a tenth of its
    load).  A value set here is an item of ``stmt`` (a word, an assignment,
    a call), kept as its span in the line, or a ready location.

    Parameters
    ----------
    stmt : Statement
        The statement the items belong to (its logical line is kept).
    """

    __slots__ = ("_line", "_items")

    def __init__(self, stmt: "Statement"):
        self._line = stmt.line
        self._items: Dict[str, object] = {}

    def __getitem__(self, key: str) -> Location:
        v = self._items[key]
        if not isinstance(v, Location):
            v = self._items[key] = self._line.locate(*v)
        return v

    def __setitem__(self, key: str, value) -> None:
        self._items[key] = value if isinstance(value, Location) else span(value)

    def __delitem__(self, key: str) -> None:
        del self._items[key]

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"ItemLocations({dict(self)!r})"

#: end-of-line comments as ngspice reads them: ``;`` anywhere, ``$`` and ``//`` at the
#: start or after a blank (``1k$x`` is no comment there either)
_COMMENT = re.compile(r";|(?:^|(?<=\s))(?:\$|//)")


def _strip_comment(line: str) -> str:
    m = _COMMENT.search(line)
    return line if m is None else line[:m.start()]


def split_logical_lines(text: str, file: Optional[str] = None) -> List[LogicalLine]:
    """Split netlist text into logical lines (stops at ``.end``)."""
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    out: List[LogicalLine] = []
    current: Optional[LogicalLine] = None
    for number, raw in enumerate(lines, start=1):
        body = _strip_comment(raw)
        stripped = body.lstrip()
        if not stripped or stripped.startswith("*"):
            continue
        first = len(body) - len(stripped)  # 0-based column of first non-blank
        if stripped.startswith("+"):
            if current is None:
                raise NetlistError("continuation line '+' without a preceding statement",
                                   Location(file, number, first + 1, raw, 1),
                                   hint="'+' at the start of a line continues the previous line; "
                                        "remove it or join the lines")
            # the '+' reads as a blank, located at the '+'; the rest keeps its columns
            current._runs.append((len(current.text), number, first + 1))
            current.text += " " + body[first + 1:]
            continue
        head = stripped.split(None, 1)[0].lower()
        if head == ".end":
            break
        current = LogicalLine(stripped, None, lines, file, runs=[(0, number, first + 1)])
        out.append(current)
    return out


def _convert(node) -> Item:
    import lark
    if isinstance(node, lark.Tree):
        if node.data == "word":
            tok = node.children[0]
            return Word("word", str(tok), tok.start_pos)
        if node.data == "braced":
            tok = node.children[0]
            return Word("braced", str(tok), tok.start_pos)
        if node.data == "assign":
            key = node.children[0]
            return Assign(Word("word", str(key), key.start_pos), _convert(node.children[1]))
        if node.data == "call":
            name = node.children[0]
            args = [_convert(c) for c in node.children[1:] if c is not None]
            return Call(Word("word", str(name), name.start_pos), args, node.meta.end_pos)
        if node.data == "group":
            return Group([_convert(c) for c in node.children if c is not None], node.meta.start_pos,
                         node.meta.end_pos)
    raise NetlistError(f"internal error: unexpected parse node {node!r}")  # pragma: no cover


_TOKEN_NAMES = {"EQUAL": "'='", "LPAR": "'('", "RPAR": "')'", "COMMA": "','",
                "WORD": "a word", "BRACED": "a {expression}", "$END": "end of line"}


_B_LINE = re.compile(r"^(\s*[bB]\S*\s+\S+\s+\S+\s+)([vViI])\s*=\s*")
_VALUE_LINE = re.compile(r"^(\s*[eEgG]\S*\s+\S+\s+\S+\s+)(value|table)\b\s*=?\s*", re.IGNORECASE)


def _edit(line: LogicalLine, start: int, end: int, text: str) -> LogicalLine:
    """``line`` with ``line.text[start:end]`` replaced by ``text`` (its characters located at ``start``)."""
    pos = line.positions[min(start, len(line.positions) - 1)] if line.positions else (1, 1)
    return LogicalLine(line.text[:start] + text + line.text[end:],
                       line.positions[:start] + [pos] * len(text) + line.positions[end:], line.lines, line.file)


def _braced(line: LogicalLine, start: int, end: int) -> LogicalLine:
    """The expression ``line.text[start:end]`` as one ``{...}`` (inner braces dropped, positions kept)."""
    keep = [k for k in range(start, end) if line.text[k] not in "{}"]
    while keep and line.text[keep[-1]].isspace():
        keep.pop()
    text = "".join(line.text[k] for k in keep)
    here = line.positions[start] if start < len(line.positions) else (line.positions[-1] if line.positions else (1, 1))
    return LogicalLine(line.text[:start] + "{" + text + "}" + line.text[end:],
                       line.positions[:start] + [here] + [line.positions[k] for k in keep] + [here]
                       + line.positions[end:], line.lines, line.file)


def prepare_line(line: LogicalLine) -> LogicalLine:
    """Braces for the expression of a ``B`` line or an ``E``/``G`` ``VALUE`` or ``TABLE``.

    ``B1 o 0 V=V(a)*2`` -> ``B1 o 0 V={V(a)*2}``; ``E1 o 0 VALUE = {V(a)}``
    -> ``E1 o 0 VALUE={V(a)}``; ``E1 o 0 TABLE {V(a)} = (0,0) (1,2)`` ->
    ``E1 o 0 TABLE {V(a)} (0,0) (1,2)``.  Other lines are returned as they are.

    Parameters
    ----------
    line : LogicalLine
        A statement's text.
    """
    m = _B_LINE.match(line.text)
    if m:
        return _braced(line, m.end(), len(line.text))
    m = _VALUE_LINE.match(line.text)
    if not m:
        return line
    if m.group(2).lower() == "value":
        line = _edit(line, m.start(2), m.end(), m.group(2) + "=")
        start = m.start(2) + len(m.group(2)) + 1
        return _braced(line, start, len(line.text))
    start = m.end()         # TABLE: the expression runs to its closing brace, or to '='
    if line.text[start:start + 1] == "{":
        close = line.text.find("}", start)
        end = len(line.text) if close < 0 else close + 1
    else:
        eq = line.text.find("=", start)
        end = len(line.text) if eq < 0 else eq
    rest = line.text[end:]
    eq = len(rest) - len(rest.lstrip())
    if rest[eq:eq + 1] == "=":
        line = _edit(line, end + eq, end + eq + 1, " ")
    return _braced(line, start, end)


#: a line of plain words only (no ``= ( ) { } , ;``): the grammar reads it as its words
_PLAIN = re.compile(r"[=(){},;]")
_TOKEN = re.compile(r"\S+")


def parse_statement(line: LogicalLine) -> Statement:
    """Parse one logical line with the lark grammar (after :func:`prepare_line`).

    A line of plain words (``R12 n3_4 n3_5 1k``: most lines of a large
    deck) is split at blanks directly, as the grammar would split it (its
    ``WORD`` is ``[^\\s=(){},;]+``), at a tenth of the parser's cost.
    """
    line = prepare_line(line)
    if not _PLAIN.search(line.text):
        words = [Word("word", m.group(), m.start()) for m in _TOKEN.finditer(line.text)]
        if words:
            stmt = Statement(words[0], words[1:], line)
            stmt.rest = line.text[words[0].start + len(words[0].text):].strip()
            return stmt
    import lark
    try:
        tree = statement_parser().parse(line.text)
    except lark.exceptions.UnexpectedCharacters as exc:
        ch = line.text[exc.pos_in_stream] if exc.pos_in_stream < len(line.text) else ""
        hint = "check for a stray character"
        if ch == "{":
            hint = "'{' starts an expression that must end with '}' on the same statement (no nesting)"
        elif ch == "}":
            hint = "'}' without a matching '{'"
        raise NetlistError(f"unexpected character '{ch}'", line.locate(exc.pos_in_stream, 1),
                           hint=hint) from None
    except lark.exceptions.UnexpectedToken as exc:
        tok = exc.token
        if tok.type == "$END":
            pos, what = len(line.text), "end of line"
        else:
            pos, what = tok.start_pos, f"'{tok}'"
        expected = sorted(_TOKEN_NAMES.get(e, e) for e in exc.expected)
        hint = "expected " + " or ".join(expected) if expected else ""
        if tok.type == "EQUAL":
            hint = "'=' must follow a keyword, as in R=1k"
        raise NetlistError(f"unexpected {what}", line.locate(pos, len(str(tok)) or 1),
                           hint=hint) from None
    except lark.exceptions.LarkError as exc:  # pragma: no cover - defensive
        raise NetlistError(f"syntax error: {exc}", line.locate(0, len(line.text))) from None
    children = [_convert(c) for c in tree.children]
    head = children[0]
    stmt = Statement(head, children[1:], line)
    stmt.rest = line.text[head.start + len(head.text):].strip()
    return stmt


def raw_statement(line: LogicalLine) -> Statement:
    """A card whose syntax is its own (``.title``, ``.ic``, ``.meas``): no items, its text in ``rest``."""
    head = line.text.split(None, 1)[0]
    stmt = Statement(Word("word", head, 0), [], line)
    stmt.rest = line.text[len(head):].strip()
    return stmt


def read_statements(text: str, file: Optional[str] = None) -> List[Statement]:
    """Split ``text`` into logical lines and parse each into a :class:`Statement`.

    ``.title`` lines are not tokenised (their text is free); their
    :attr:`Statement.items` is empty and :attr:`Statement.rest` holds the title.
    """
    out = []
    for line in split_logical_lines(text, file):
        head = line.text.split(None, 1)[0]
        out.append(raw_statement(line) if head.lower() in (".title", ".meas", ".measure") else parse_statement(line))
    return out
