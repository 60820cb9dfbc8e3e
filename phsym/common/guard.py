"""Validation of cache entries on load: a damaged entry never locks a user out.

A crash or a full disk can leave any cache entry truncated or garbled: a
generated module, numba's index (``.nbi``) and data (``.nbc``) files, a
warm-start snapshot, an ahead-of-time extension, the grammar's parse tables.
Each loader checks its entry before use; a bad one is removed with
:func:`discard` (one :class:`~phsym.errors.CacheWarning` naming the file and
what was wrong) and the caller rebuilds it, so the result is the same as
with a clean cache.

Numba itself unpickles its files without a guard (a truncated index raises
``UnpicklingError`` on every later call), so :func:`check_numba` reads them
first, before the dispatcher does.
"""
from __future__ import annotations

import hashlib
import pickle
import shutil
import sys
import warnings
from pathlib import Path
from typing import Iterable, Union

from ..errors import CacheWarning

__all__ = ["discard", "digest", "check_numba", "host_cpu"]

PathLike = Union[str, Path]


def host_cpu() -> str:
    """This machine's processor, as far as code compiled for the host depends on it: the architecture
    and the first processor's model and flags, hashed.  Entries compiled with ``-march=native`` (the
    C law kernels) or numba's host target (the engine's extension) record it, so that a cache or a
    package folder moved to another machine is rebuilt instead of crashing on an instruction the
    processor lacks."""
    import platform
    h = hashlib.sha256(platform.machine().encode())
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith(("flags", "model name", "Features", "CPU part")):
                    h.update(line.encode())
                elif not line.strip():
                    break       # the first processor's block
    except OSError:
        h.update(platform.processor().encode())
    return h.hexdigest()[:16]


def _user_level() -> int:
    """``stacklevel`` of the first caller outside phsym (and importlib), counted from :func:`discard`."""
    root = str(Path(__file__).resolve().parent.parent)
    frame, level = sys._getframe(2), 2
    while frame is not None and (frame.f_code.co_filename.startswith(root)
                                 or frame.f_code.co_filename.startswith("<frozen")):
        frame, level = frame.f_back, level + 1
    return level


def discard(paths: Iterable[PathLike], reason: str) -> None:
    """Remove a damaged cache entry (all its files) and say so once.

    Parameters
    ----------
    paths : iterable of path
        The entry's files (a directory in a file's place is removed with
        its contents); the first one names it in the warning.
    reason : str
        What was wrong (``"truncated"``, the decoder's message...).  The
        warning points at the first caller outside phsym.
    """
    paths = [Path(p) for p in paths]
    for p in paths:
        try:
            if p.is_dir() and not p.is_symlink():       # an entry replaced by a directory
                shutil.rmtree(p)
            else:
                p.unlink()
        except FileNotFoundError:
            pass
        except OSError:      # read-only cache: the entry is skipped, not removed
            pass
    if paths:
        warnings.warn(f"damaged cache entry {paths[0]} ({reason}) was removed and is rebuilt",
                      CacheWarning, stacklevel=_user_level())


def digest(path: PathLike) -> str:
    """SHA-256 of a file's bytes (hex).

    Parameters
    ----------
    path : path
        The file.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _numba_problem(path: Path) -> str:
    """Why numba could not read ``path``, or ``""``: the same reads as numba's loader."""
    try:
        with open(path, "rb") as fh:
            if path.suffix == ".nbi":     # pickled version stamp, then pickled (stamp, overloads)
                pickle.load(fh)
                stamp, overloads = pickle.loads(fh.read())
                if not isinstance(overloads, dict):
                    return "index is not a mapping"
            else:
                pickle.loads(fh.read())
    except FileNotFoundError:     # replaced or removed meanwhile by another process: not damage
        return ""
    except Exception as exc:     # any decoding failure is damage  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return ""


def check_numba(module) -> int:
    """Validate numba's disk cache of every cached dispatcher in ``module``.

    Call it after importing a module whose functions use ``cache=True`` and
    before calling them (numba reads its files at the first call).  A file
    that does not decode removes all of that module's cache files, so numba
    compiles afresh and rewrites them.

    Parameters
    ----------
    module : module
        An imported module.

    Returns
    -------
    int
        Number of damaged files found.
    """
    prefix = module.__name__.rpartition(".")[2] + "."
    dirs = set()
    for obj in vars(module).values():
        cache = getattr(obj, "_cache", None)
        if getattr(obj, "py_func", None) is not None and getattr(obj.py_func, "__module__", None) == module.__name__:
            path = getattr(cache, "_cache_path", None)
            if path:
                dirs.add(Path(path))
    bad = 0
    for d in dirs:
        try:
            files = sorted(p for p in d.iterdir() if p.name.startswith(prefix) and p.suffix in (".nbi", ".nbc"))
        except OSError:
            continue
        problems = [(p, why) for p in files for why in [_numba_problem(p)] if why]
        if problems:
            bad += len(problems)
            first, why = problems[0]
            discard([first] + [p for p in files if p != first], f"numba cache: {why}")
    return bad

