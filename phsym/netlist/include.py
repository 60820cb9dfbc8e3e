"""Deck text -> logical lines: ``.include`` / ``.lib`` files read in, skipped cards set aside.

SPICE decks pull model libraries in with ``.include FILE`` and ``.lib FILE
SECTION`` (a library file holds sections ``.lib NAME`` ... ``.endl``;
LTspice's ``.lib FILE`` without a section, when ``FILE`` exists, reads the
whole file as ``.include`` does); paths
are relative to the directory of the file that names them (the working
directory for text without a file).  Each included line keeps its own file,
line and column, so errors point into the included file.

Output requests and interactive blocks that phsym has no use for
(``.plot``, ``.width``, ``.control`` ... ``.endc``, LTspice's
``.backanno``, the analyses phsym does not run: ``.noise``, ``.sens``,
``.disto``, ``.pz``) are removed here, before the grammar sees them (their
syntax is not phsym's), and listed in :attr:`DeckLines.skipped` for one
warning.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple

from ..errors import NetlistError
from .settings import INCLUDE_CARDS
from .source import LogicalLine, split_logical_lines

__all__ = ["DeckLines", "read_deck_lines", "SKIPPED_CARDS", "INCLUDE_CARDS"]

#: Cards ignored with one warning: output requests and analyses phsym has no use for.
SKIPPED_CARDS = (".plot", ".noise", ".sens", ".disto", ".pz", ".nodeset", ".width", ".backanno")


@dataclass
class DeckLines:
    """Logical lines of a deck with its included files.

    Attributes
    ----------
    lines : list of LogicalLine
        Statements in reading order (included text in place of its card).
    files : list of str
        Every file read through ``.include`` / ``.lib`` (resolved paths).
    skipped : list of str
        Skipped cards, e.g. ``".print (deck.cir:12)"``.
    """

    lines: List[LogicalLine] = field(default_factory=list)
    files: List[str] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)


def _head(line: LogicalLine) -> str:
    return line.text.split(None, 1)[0].lower()


def _args(line: LogicalLine) -> List[Tuple[str, int]]:
    """Words after the head with their offsets; quotes around a word are removed."""
    out = []
    text = line.text
    k = len(text.split(None, 1)[0])
    while k < len(text):
        if text[k].isspace():
            k += 1
            continue
        if text[k] in "\"'":
            end = text.find(text[k], k + 1)
            end = len(text) if end < 0 else end + 1
            out.append((text[k + 1:end - 1] if end > k + 1 else "", k))
        else:
            end = k
            while end < len(text) and not text[end].isspace():
                end += 1
            out.append((text[k:end], k))
        k = end
    return out


def _where(line: LogicalLine) -> str:
    return line.locate(0).describe()


def _read(path: Path, line: LogicalLine, offset: int, length: int, card: str) -> str:
    loc = line.locate(offset, length)
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NetlistError(f"{card} file '{path}' is not UTF-8 text ({exc.reason} at byte {exc.start})",
                           loc, hint="save the file as UTF-8") from None
    except OSError as exc:
        raise NetlistError(f"cannot read {card} file '{path}': {exc.strerror or exc}", loc,
                           hint=f"paths are relative to the directory of the file that names them "
                                f"({path.parent})") from None


def _section(lines: List[LogicalLine], name: str, line: LogicalLine, offset: int, path: Path
             ) -> List[LogicalLine]:
    """The lines of section ``name`` (``.lib name`` ... ``.endl``) of a library file."""
    out: Optional[List[LogicalLine]] = None
    found = []
    for ln in lines:
        head = _head(ln)
        args = _args(ln)
        if out is None:
            if head == ".lib" and len(args) == 1:
                found.append(args[0][0])
                if args[0][0].lower() == name.lower():
                    out = []
            continue
        if head == ".endl":
            return out
        out.append(ln)
    if out is not None:
        raise NetlistError(f"section '{name}' of '{path}' has no .endl", line.locate(offset, len(name)),
                           hint="end each library section with .endl")
    raise NetlistError(f"library '{path}' has no section '{name}'", line.locate(offset, len(name)),
                       hint="sections in that file: " + (", ".join(found) or "none"))


def _resolve(base: Path, name: str) -> Path:
    path = Path(name).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


def _expand(lines: List[LogicalLine], base: Path, stack: List[Tuple[str, str]], out: DeckLines) -> None:
    control: Optional[LogicalLine] = None
    for line in lines:
        head = _head(line)
        if control is not None:
            if head == ".endc":
                control = None
            continue
        if head == ".control":
            control = line
            out.skipped.append(f".control block ({_where(line)})")
            continue
        if head == ".endc":
            raise NetlistError(".endc without .control", line.locate(0, 5),
                               hint="a .control block starts with .control and ends with .endc")
        if head in SKIPPED_CARDS or (head == ".probe" and not _args(line)):
            out.skipped.append(f"{head} ({_where(line)})")
            continue
        if head == ".endl":
            raise NetlistError(".endl outside a library section", line.locate(0, 5),
                               hint=".endl ends a section '.lib NAME' of a file read by '.lib FILE NAME'")
        if head not in INCLUDE_CARDS:
            out.lines.append(line)
            continue
        args = _args(line)
        want = 2 if head == ".lib" else 1
        if head == ".lib" and len(args) == 1 and _resolve(base, args[0][0]).is_file():
            head, want = ".include", 1     # LTspice: .lib FILE (no section) reads the whole file
        if len(args) != want:
            usage = ".lib FILE SECTION" if head == ".lib" else f"{head} FILE"
            raise NetlistError(f"{head} takes {want} argument(s), got {len(args)}",
                               line.locate(0, len(line.text)),
                               hint=f"usage: {usage}; '.lib NAME' alone starts a section and "
                                    "belongs in a library file" if head == ".lib" else f"usage: {usage}")
        (name, offset) = args[0]
        path = _resolve(base, name)
        section = args[1][0] if head == ".lib" else ""
        key = (str(path), section.lower())
        if key in stack:
            chain = " -> ".join(Path(p).name + (f"[{s}]" if s else "") for p, s in stack[stack.index(key):] + [key])
            raise NetlistError(f"{head} cycle: {chain}", line.locate(offset, len(name)),
                               hint="a file (or library section) cannot include itself, directly or indirectly")
        text = _read(path, line, offset, len(name), head)
        if str(path) not in out.files:
            out.files.append(str(path))
        sub = split_logical_lines(text, str(path))
        if head == ".lib":
            sub = _section(sub, section, line, args[1][1], path)
        elif _head(line) == ".lib":         # LTspice's .lib FILE: a file of sections needs one named
            sections = [_args(ln)[0][0] for ln in sub if _head(ln) == ".lib" and len(_args(ln)) == 1]
            if sections:
                raise NetlistError(f"library '{path}' has sections: name one", line.locate(offset, len(name)),
                                   hint=f"write .lib {name} SECTION with SECTION one of {', '.join(sections)}")
        _expand(sub, path.parent, stack + [key], out)
    if control is not None:
        raise NetlistError(".control without .endc", control.locate(0, 8),
                           hint="end the block with .endc")


def read_deck_lines(text: str, file: Optional[str] = None) -> DeckLines:
    """Logical lines of a deck, ``.include`` / ``.lib`` files read in, skipped cards removed.

    Parameters
    ----------
    text : str
        The deck.
    file : str, optional
        Its path: included files are found relative to its directory (else
        relative to the working directory).

    Raises
    ------
    NetlistError
        For a missing or unreadable file, an include cycle, a missing library
        section or an unterminated ``.control`` block, located at the card.
    """
    base = Path(file).resolve().parent if file else Path.cwd()
    key = (text, file, str(base))
    if _LAST and _LAST[0] == key and _LAST[1] == _stamps(_LAST[2].files):
        last = _LAST[2]
        return DeckLines(list(last.lines), list(last.files), list(last.skipped))
    out = DeckLines()
    top = [(str(Path(file).resolve()), "")] if file else []
    _expand(split_logical_lines(text, file), base, top, out)
    _LAST[:] = [key, _stamps(out.files), DeckLines(list(out.lines), list(out.files), list(out.skipped))]
    return out


def _stamps(files: List[str]) -> list:
    """Size and modification time of each included file (a read deck is reused while they hold)."""
    out = []
    for f in files:
        try:
            st = os.stat(f)
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return out


#: The last deck read: ``[key, include stamps, DeckLines]``.  A command reads its deck twice (its
#: control cards, then its circuit): the second read of a 30,000-line deck would cost 0.3 s more.
#: Logical lines are not changed once read, so both readers may share them.
_LAST: list = []

