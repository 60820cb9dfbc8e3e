"""Netlist text -> logical lines -> statements (lark), keeping original positions.

Comment lines (``*``), end-of-line comments (``;``), blank lines and ``+``
continuations are handled here; each logical line remembers, for every one of
its characters, the line and column it came from, so every error points into
the original text.
"""
from __future__ import annotations

import hashlib
import io
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Tuple, Union

import lark

from ..common.guard import discard
from ..common.paths import atomic_write, cache_dir
from ..errors import Location, NetlistError

__all__ = ["LogicalLine", "Word", "Assign", "Call", "Statement", "split_logical_lines",
           "parse_statement", "read_statements"]


@dataclass
class LogicalLine:
    """A statement's text with a map from each character to (line, column)."""

    text: str
    positions: List[Tuple[int, int]]
    lines: List[str]  # all original source lines
    file: Optional[str]

    def locate(self, offset: int, length: int = 1) -> Location:
        """Location of ``length`` characters starting at ``offset`` of :attr:`text`."""
        if not self.positions:
            return Location(self.file, 1, 1, "", 1)
        if offset >= len(self.positions):
            line, col = self.positions[-1]
            col += 1
        else:
            line, col = self.positions[max(offset, 0)]
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


Item = Union[Word, Assign, Call]


@dataclass
class Statement:
    head: Word
    items: List[Item]
    line: LogicalLine
    # filled by the reader: the raw text after the head (for .title)
    rest: str = field(default="")

    def loc(self, item, length: Optional[int] = None) -> Location:
        """Location of a word, assignment, call or raw offset."""
        if isinstance(item, Assign):
            return self.line.locate(item.key.start, len(item.key.text))
        if isinstance(item, Call):
            return self.line.locate(item.name.start, item.end - item.name.start)
        if isinstance(item, Word):
            return self.line.locate(item.start, len(item.text) if length is None else length)
        return self.line.locate(int(item), length or 1)


def _strip_comment(line: str) -> str:
    cut = line.find(";")
    return line if cut < 0 else line[:cut]


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
            current.text += " "
            current.positions.append((number, first + 1))
            for k in range(first + 1, len(body)):
                current.text += body[k]
                current.positions.append((number, k + 1))
            continue
        head = stripped.split(None, 1)[0].lower()
        if head == ".end":
            break
        current = LogicalLine("", [], lines, file)
        for k in range(first, len(body)):
            current.text += body[k]
            current.positions.append((number, k + 1))
        out.append(current)
    return out


def _grammar_cache(grammar: str) -> Path:
    h = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()).hexdigest()[:16]
    return cache_dir() / f"phsym_lark_{h}.cache"


@lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    grammar = (Path(__file__).with_name("grammar.lark")).read_text(encoding="utf-8")
    # the analysed LALR tables live in our cache (0.1 s of every cold start);
    # the file name covers the grammar, lark's and Python's versions, a checksum line
    # guards the pickled tables
    try:
        path = _grammar_cache(grammar)
    except OSError:
        return lark.Lark(grammar, parser="lalr", propagate_positions=True)
    try:
        raw = path.read_bytes()
    except OSError:
        raw = None
    if raw is not None:
        first, _, body = raw.partition(b"\n")
        try:
            if first != hashlib.sha256(body).hexdigest().encode():
                raise ValueError("checksum mismatch (truncated or garbled)")
            return lark.Lark.load(io.BytesIO(body))
        except Exception as exc:     # any decoding failure means damage  # noqa: BLE001
            discard([path], f"parse tables: {exc}")
    parser = lark.Lark(grammar, parser="lalr", propagate_positions=True)
    buf = io.BytesIO()
    parser.save(buf)
    body = buf.getvalue()
    try:
        atomic_write(path, lambda fh: fh.write(hashlib.sha256(body).hexdigest().encode() + b"\n" + body))
    except OSError:
        pass     # a read-only cache only costs the next start 0.1 s
    return parser


def _convert(node) -> Item:
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
    raise NetlistError(f"internal error: unexpected parse node {node!r}")  # pragma: no cover


_TOKEN_NAMES = {"EQUAL": "'='", "LPAR": "'('", "RPAR": "')'", "COMMA": "','",
                "WORD": "a word", "BRACED": "a {expression}", "$END": "end of line"}


def parse_statement(line: LogicalLine) -> Statement:
    """Parse one logical line with the lark grammar."""
    try:
        tree = _lark().parse(line.text)
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


def read_statements(text: str, file: Optional[str] = None) -> List[Statement]:
    """Split ``text`` into logical lines and parse each into a :class:`Statement`.

    ``.title`` lines are not tokenised (their text is free); their
    :attr:`Statement.items` is empty and :attr:`Statement.rest` holds the title.
    """
    out = []
    for line in split_logical_lines(text, file):
        head = line.text.split(None, 1)[0]
        if head.lower() == ".title":
            stmt = Statement(Word("word", head, 0), [], line)
            stmt.rest = line.text[len(head):].strip()
            out.append(stmt)
            continue
        out.append(parse_statement(line))
    return out
