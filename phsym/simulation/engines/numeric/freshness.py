"""The engine's compiled cache follows its sources.

The engine's compiled functions call each other across modules (the time
loop calls Newton, which calls the sparse LU), and numba's disk cache of a
function checks only its own file: after an edit of :mod:`.newton` the
cached loop would keep running the old Newton.  :func:`ensure_fresh` keeps a
digest of every engine source (and numba's version) beside the cache and,
when it differs, removes the engine's cached entries before anything loads
them, so they compile again once.

The engine compiled into the package's own directory (numba's in-tree
cache, ``numeric/__pycache__``: ``phsym cache build --package`` after
installing) serves every user of the installation, also one whose numba
cache is elsewhere (``NUMBA_CACHE_DIR``) or empty, and also when the
package directory is read-only: :func:`seed_from_package` copies its
entries into numba's cache directory of this process before anything loads
them (a few MB, milliseconds; numba then finds them as its own, their source
stamps being content hashes).  Compiled code is specific to the machine's
CPU and numba's version: entries that do not match are compiled again by
numba as usual.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["ensure_fresh", "SOURCES", "engine_ready", "mark_engine_ready", "package_cache", "package_writable", "seed_from_package",
           "READY", "STAMP"]

#: The modules whose compiled functions call each other.
SOURCES = ("call.py", "sparse.py", "newton.py", "stepping.py")

_DONE = []
#: File names of the stamps beside the engine's cache entries.
READY, STAMP = "phsym-numeric-engine.ready", "phsym-numeric-engine.sha256"


def _digest() -> str:
    import numba        # (here: a run on the ahead-of-time engine imports no numba, :mod:`.engine`)
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
        return d is not None and (d / READY).read_text() == _digest()
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
        (d / READY).write_text(_digest())
    except OSError:
        pass


def package_cache() -> Path:
    """The engine's cache in the package's own directory (numba's in-tree cache of its sources)."""
    return Path(__file__).resolve().parent / "__pycache__"


def _entries(d: Path):
    stems = tuple(name[:-3] + "." for name in SOURCES)
    return [p for p in d.iterdir() if p.name.startswith(stems) and p.suffix in (".nbi", ".nbc")]


def seed_from_package(d: Path, source: Path = None) -> bool:
    """Copy the engine compiled in the package's directory into numba's cache directory ``d``.

    Nothing happens when ``d`` is that directory, or when it holds no engine compiled from the
    current sources and numba (its ready stamp).  The stamps are written last, so a copy that
    stops half-way is not taken for a compiled engine.

    Parameters
    ----------
    d : pathlib.Path
        numba's cache directory of the engine's functions in this process.
    source : pathlib.Path, optional
        Where the compiled engine is (default :func:`package_cache`).

    Returns
    -------
    bool
        Whether the entries were copied.
    """
    src = package_cache() if source is None else Path(source)
    try:
        if src.resolve() == d.resolve() or (src / READY).read_text() != _digest():
            return False
        d.mkdir(parents=True, exist_ok=True)
        for p in _entries(src):
            fd, tmp = tempfile.mkstemp(dir=d, prefix=".seed-")
            os.close(fd)
            shutil.copyfile(p, tmp)
            os.replace(tmp, d / p.name)
        for name in (STAMP, READY):
            (d / name).write_text(_digest())
    except OSError:
        return False
    return True


def ensure_fresh(dispatcher) -> None:
    """Remove stale cache entries of the engine's modules (once per process); where the engine is
    not compiled in numba's cache, take it from the package's directory (:func:`seed_from_package`).

    Parameters
    ----------
    dispatcher : numba dispatcher
        One of the engine's cached functions (its cache directory is the engine's).
    """
    if _DONE:
        return
    _DONE.append(True)
    d = _cache_path(dispatcher)
    if d is None:
        return
    want = _digest()
    try:
        fresh = (d / STAMP).read_text() == want
    except OSError:
        fresh = False
    if not fresh:
        try:
            for p in _entries(d) if d.is_dir() else ():
                p.unlink()
            (d / READY).unlink(missing_ok=True)
            d.mkdir(parents=True, exist_ok=True)
            (d / STAMP).write_text(want)
        except OSError:       # a read-only cache: numba will not write either
            pass
    if not engine_ready(dispatcher):
        seed_from_package(d)


def package_writable() -> bool:
    """Whether this process may compile the engine into the package's directory
    (:func:`phsym.simulation.engines.numeric.warmup.build_package`)."""
    d = package_cache()
    return os.access(d if d.is_dir() else d.parent, os.W_OK)
