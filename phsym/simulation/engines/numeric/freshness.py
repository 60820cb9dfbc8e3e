"""The engine's compiled cache follows its sources.

The engine's compiled functions call each other across modules (the time
loop calls Newton, which calls the sparse LU), and numba's disk cache of a
function checks only its own file: after an edit of :mod:`.newton` the
cached loop would keep running the old Newton.  :func:`ensure_fresh` keeps a
digest of every engine source (and numba's version) beside the cache and,
when it differs, removes the engine's cached entries before anything loads
them, so they compile again once.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numba

__all__ = ["ensure_fresh", "SOURCES", "engine_ready", "mark_engine_ready"]

#: The modules whose compiled functions call each other.
SOURCES = ("call.py", "sparse.py", "newton.py", "stepping.py")

_DONE = []


def _digest() -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(numba.__version__.encode())
    for name in SOURCES:
        h.update((here / name).read_bytes())
    return h.hexdigest()


def _cache_path(dispatcher):
    path = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
    return Path(path) if path else None


def engine_ready(dispatcher) -> bool:
    """Whether this machine's numba cache holds the engine compiled from the current sources (a
    run needs no compile of the engine; :func:`mark_engine_ready` after the first).

    Parameters
    ----------
    dispatcher : numba dispatcher
        One of the engine's cached functions.
    """
    d = _cache_path(dispatcher)
    try:
        return d is not None and (d / "phsym-numeric-engine.ready").read_text() == _digest()
    except OSError:
        return False


def mark_engine_ready(dispatcher) -> None:
    """Record that the engine has been compiled into numba's cache (see :func:`engine_ready`).

    Parameters
    ----------
    dispatcher : numba dispatcher
        One of the engine's cached functions.
    """
    d = _cache_path(dispatcher)
    if d is None:
        return
    try:
        (d / "phsym-numeric-engine.ready").write_text(_digest())
    except OSError:
        pass


def ensure_fresh(dispatcher) -> None:
    """Remove stale cache entries of the engine's modules (once per process).

    Parameters
    ----------
    dispatcher : numba dispatcher
        One of the engine's cached functions (its cache directory is the engine's).
    """
    if _DONE:
        return
    _DONE.append(True)
    cache = getattr(dispatcher, "_cache", None)
    path = getattr(cache, "_cache_path", None)
    if not path:
        return
    d = Path(path)
    stamp = d / "phsym-numeric-engine.sha256"
    want = _digest()
    try:
        if stamp.read_text() == want:
            return
    except OSError:
        pass
    stems = tuple(name[:-3] + "." for name in SOURCES)
    try:
        for p in d.iterdir():
            if (p.name.startswith(stems) and p.suffix in (".nbi", ".nbc")) or p.name == "phsym-numeric-engine.ready":
                p.unlink()
        d.mkdir(parents=True, exist_ok=True)
        stamp.write_text(want)
    except OSError:       # a read-only cache: numba will not write either
        pass
