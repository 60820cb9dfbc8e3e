"""The netlist statement parser (lark, LALR, from `grammar.lark`) and its analysed tables, cached on disk.

Building the LALR tables costs 40-50 ms of CPU in every fresh process, so they
are pickled into the user's cache (``phsym_lark_<hash>.cache``), or read from the
package's own directory where ``phsym cache build --package`` stored them.  The
file name covers the grammar, lark's and Python's versions; a checksum line
guards the pickled tables.
"""
from __future__ import annotations

import hashlib
import io
import sys
from functools import lru_cache
from pathlib import Path

from ..common.guard import discard
from ..common.paths import atomic_write, cache_dir

__all__ = ["PACKAGE_TABLES", "statement_parser", "save_package_tables"]


#: Where ``phsym cache build --package`` leaves the statement parser's tables for every user of the
#: installation (read when the user's cache has none: a first run then builds nothing).
PACKAGE_TABLES = Path(__file__).with_name("__pycache__")


def _grammar_text() -> str:
    return Path(__file__).with_name("grammar.lark").read_text(encoding="utf-8")


def _grammar_name(grammar: str) -> str:
    import lark      # on first parse: a warm start of a cached netlist reads no statement
    h = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()).hexdigest()[:16]
    return f"phsym_lark_{h}.cache"


def _grammar_cache(grammar: str) -> Path:
    return cache_dir() / _grammar_name(grammar)


def _load_tables(path: Path):
    """The parser stored at ``path``, or ``None`` when there is none or it is damaged (then removed)."""
    import lark
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    first, _, body = raw.partition(b"\n")
    try:
        if first != hashlib.sha256(body).hexdigest().encode():
            raise ValueError("checksum mismatch (truncated or garbled)")
        return lark.Lark.load(io.BytesIO(body))
    except Exception as exc:     # any decoding failure means damage  # noqa: BLE001
        discard([path], f"parse tables: {exc}")
        return None


def _save_tables(parser, path: Path) -> None:
    buf = io.BytesIO()
    parser.save(buf)
    body = buf.getvalue()
    atomic_write(path, lambda fh: fh.write(hashlib.sha256(body).hexdigest().encode() + b"\n" + body))


@lru_cache(maxsize=1)
def statement_parser():
    """The statement parser (lark, LALR; its tables cached on disk)."""
    import lark
    grammar = _grammar_text()
    # the analysed LALR tables live in our cache or the package's (building them: 40-50 ms of CPU);
    # the file name covers the grammar, lark's and Python's versions, a checksum line
    # guards the pickled tables
    try:
        path = _grammar_cache(grammar)
    except OSError:
        return lark.Lark(grammar, parser="lalr", propagate_positions=True)
    parser = _load_tables(path)
    if parser is not None:
        return parser
    parser = _load_tables(PACKAGE_TABLES / path.name)
    if parser is not None:      # seeded into the user's cache, as the engine's numba entries are
        try:
            _save_tables(parser, path)
        except OSError:
            pass
        return parser
    parser = lark.Lark(grammar, parser="lalr", propagate_positions=True)
    try:
        _save_tables(parser, path)
    except OSError:
        pass     # a read-only cache only costs the next start 0.1 s
    return parser


def save_package_tables() -> Path:
    """Store the statement parser's tables in the package's directory (:data:`PACKAGE_TABLES`), where
    a process whose own cache has none reads them; run by ``phsym cache build --package``.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    OSError
        When the package's directory is not writable.
    """
    import lark
    grammar = _grammar_text()
    path = PACKAGE_TABLES / _grammar_name(grammar)
    PACKAGE_TABLES.mkdir(exist_ok=True)
    _save_tables(lark.Lark(grammar, parser="lalr", propagate_positions=True), path)
    return path
