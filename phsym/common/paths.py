"""Where phsym keeps files (the one cache location) and how it writes them.

The cache directory is ``$PHSYM_CACHE_DIR`` or ``~/.cache/phsym``: generated
modules, warm-start plans, ahead-of-time extensions and the netlist
grammar's parse tables (see :mod:`phsym.codegen.cache`).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["cache_dir", "atomic_write"]


def cache_dir() -> Path:
    """The cache directory (created if missing)."""
    d = os.environ.get("PHSYM_CACHE_DIR")
    path = Path(d) if d else Path.home() / ".cache" / "phsym"
    path.mkdir(parents=True, exist_ok=True)
    return path


def atomic_write(path: Path, write) -> None:
    """Write ``path`` through a temporary file in its directory and :func:`os.replace`,
    so that readers never see a partial file.

    Parameters
    ----------
    path : pathlib.Path
        Destination.
    write : callable(binary file)
        Writes the contents.
    """
    fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
