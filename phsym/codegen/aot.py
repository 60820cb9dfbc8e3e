"""Ahead-of-time compiled step modules: warm starts without importing numba.

The numba disk cache still needs numba itself: importing it and loading the
cached machine code take 0.7-1 s in a fresh process, more than the rest of a
warm start.  After a cold run, phsym therefore compiles the same generated
module once more, ahead of time with :mod:`numba.pycc`, into a plain
extension module in the cache (``phsym_aot_<key>``; about 10 s, in a
detached background process so that nobody waits for it).  A warm start of
a Newton model imports that extension in milliseconds and never imports
numba; the compiled loop is the same code, so results are bit-identical.

* ``PHSYM_AOT=0`` (or ``off``) disables the background build; the JIT cache
  is used as before.  :func:`build` compiles synchronously
  (``phsym cache build FILE``).
* :mod:`numba.pycc` is pending deprecation in numba and needs setuptools and a
  C compiler at build time (not at run time).  When a build fails, a
  ``.failed`` file keeps the reason and warm starts keep using the JIT cache.
* pycc extensions do not check argument types (a wrong dtype can crash), so
  :func:`checked` validates every array before the call.
* Builds write into a private temporary directory and move the finished
  extension into place with :func:`os.replace`; a lock file keeps concurrent
  builds of one key apart.  A ``.sha256`` file written before the extension
  holds its digest; an extension that does not match it (truncated or
  garbled) is removed with a :class:`~phsym.errors.CacheWarning` before
  anything imports it, and built again.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import os
import shutil
import sys
import time
import warnings
from pathlib import Path
import numpy as np

from ..common.guard import digest, discard
from ..common.paths import atomic_write
from ..errors import BuildError, SimulationInputError
from .cache import PREFIX, cache_dir

__all__ = ["AOT_PREFIX", "RUN_TYPES", "LINEAR_TYPES", "TYPES", "build", "status", "load", "start_background", "enabled", "checked"]

AOT_PREFIX = "phsym_aot_"
#: A lock older than this (seconds) belongs to a dead build.
STALE_LOCK = 900.0
#: At most this many background builds at once (a script simulating many
#: netlists must not start a compiler per netlist); the others start later,
#: from a warm run that finds no extension.
MAX_BUILDS = 1

_A1, _A2, _I1 = "f8[::1]", "f8[:, ::1]", "i8[::1]"
#: Argument types of the generated ``run`` (see :mod:`phsym.codegen.steps`).
RUN_TYPES = ([_A1, _A1, _A2, _A1, _A1, "f8", "i8", "i8", "f8", "i8", "b1", _A2, _A2, _A1, _A1, _A1, _A1, _A1, _I1, _I1,
              _A2, "b1", _I1] + [_A1, _A2, _I1] + [_A1] * 8)
#: Argument types of the unrolled linear ``run`` (see :mod:`phsym.codegen.linear_gen`).
LINEAR_TYPES = [_A1, _A2, "i8", "i8", _A2, _A2, _A2, _A1, _A2, _A2, _A2, _A2, _A1, _A1, _A1, _A2, "b1"]
#: Types by the ``KIND`` of a generated module.
TYPES = {"newton": RUN_TYPES, "linear": LINEAR_TYPES}


def _suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def _paths(key: str):
    d = cache_dir()
    stem = d / f"{AOT_PREFIX}{key}"
    return d, d / f"{AOT_PREFIX}{key}{_suffix()}", Path(f"{stem}.lock"), Path(f"{stem}.failed")


def _sidecar(ext: Path) -> Path:
    return ext.with_name(ext.name.split(".", 1)[0] + ".sha256")


def enabled() -> bool:
    """Whether background builds are on (``PHSYM_AOT`` not ``0``/``off``)."""
    return os.environ.get("PHSYM_AOT", "background").strip().lower() not in ("0", "off", "no", "false")


def status(key: str) -> str:
    """``"ready"``, ``"building"``, ``"failed"`` or ``"absent"`` for generated module ``key``.

    Parameters
    ----------
    key : str
        Cache key of the generated module.
    """
    _, ext, lock, failed = _paths(key)
    if ext.exists():
        return "ready"
    if lock.exists() and time.time() - lock.stat().st_mtime < STALE_LOCK:
        return "building"
    return "failed" if failed.exists() else "absent"


def load(key: str):
    """The compiled extension of ``key``, or ``None`` when there is none.

    Parameters
    ----------
    key : str
        Cache key of the generated module.
    """
    d, ext, _, _ = _paths(key)
    if not ext.exists():
        return None
    side = _sidecar(ext)
    try:
        ok = side.read_text().strip() == digest(ext)
    except (OSError, UnicodeDecodeError):
        ok = False
    if not ok:     # importing a garbled extension could crash the process
        discard([ext, side], "ahead-of-time extension: digest mismatch (truncated or garbled)")
        return None
    if str(d) not in sys.path:
        sys.path.insert(0, str(d))
    try:
        return importlib.import_module(AOT_PREFIX + key)
    except ImportError as exc:
        discard([ext, side], f"ahead-of-time extension: {exc}")
        return None


def checked(fn, types, *args):
    """Call ``fn`` after checking every array against ``types`` (pycc does not).

    Parameters
    ----------
    fn : callable
        An exported pycc function.
    types : list of str
        Its numba argument types (``"f8[::1]"``, ``"i8"``...).
    *args
        The arguments.
    """
    for i, (t, a) in enumerate(zip(types, args)):
        if "[" in t:
            want = np.float64 if t.startswith("f8") else np.int64
            nd = t.count(",") + 1
            if (not isinstance(a, np.ndarray) or a.dtype != want or a.ndim != nd
                    or not a.flags.c_contiguous or not a.flags.writeable):
                raise SimulationInputError(f"argument {i} of the compiled loop must be a writeable "
                                           f"C-contiguous {np.dtype(want).name} array with {nd} dimension(s)")
    return fn(*args)


def build(key: str) -> Path:
    """Compile the generated module ``key`` ahead of time (blocking, about 10 s).

    Parameters
    ----------
    key : str
        Cache key of a generated module in the cache directory.

    Returns
    -------
    pathlib.Path
        The extension module.

    Raises
    ------
    BuildError
        Another build holds the lock, or the build failed (the reason is kept
        in the ``.failed`` file).
    """
    d, ext, lock, failed = _paths(key)
    if ext.exists():
        return ext
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        if time.time() - lock.stat().st_mtime < STALE_LOCK:
            raise BuildError(f"another process is compiling {AOT_PREFIX}{key}") from None
        lock.unlink()
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    os.close(fd)
    import tempfile     # here and below: a warm run that only loads an extension imports neither
    tmp = Path(tempfile.mkdtemp(prefix=f".{AOT_PREFIX}{key}.", dir=str(d)))
    try:
        if str(d) not in sys.path:
            sys.path.insert(0, str(d))
        mod = importlib.import_module(PREFIX + key)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # pycc's pending-deprecation notice
            from numba.pycc import CC
        cc = CC(AOT_PREFIX + key)
        cc.output_dir = str(tmp)
        cc.verbose = False
        types = TYPES[getattr(mod, "KIND", "newton")]
        cc.export("run", f"i8({', '.join(types)})")(mod.run.py_func)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cc.compile()
        built = [p for p in tmp.iterdir() if p.name.endswith(_suffix()) or p.suffix in (".so", ".pyd")]
        if not built:
            raise BuildError("pycc produced no extension module")
        side = _sidecar(ext)
        atomic_write(side, lambda fh: fh.write(digest(built[0]).encode()))
        os.replace(built[0], ext)
        if failed.exists():
            failed.unlink()
        return ext
    except Exception as exc:
        failed.write_text(f"{type(exc).__name__}: {exc}\n")
        raise BuildError(f"ahead-of-time build of {AOT_PREFIX}{key} failed: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if lock.exists():
            lock.unlink()


def start_background(key: str) -> bool:
    """Start a detached build of ``key`` unless disabled, done, running or failed.

    Parameters
    ----------
    key : str
        Cache key of the generated module.

    Returns
    -------
    bool
        Whether a build process was started.
    """
    if not enabled() or status(key) != "absent":
        return False
    now = time.time()
    running = [p for p in cache_dir().glob(f"{AOT_PREFIX}*.lock") if now - p.stat().st_mtime < STALE_LOCK]
    if len(running) >= MAX_BUILDS:
        return False
    import subprocess
    try:
        subprocess.Popen([sys.executable, "-m", "phsym.codegen.aot", key], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         env={**os.environ, "PHSYM_CACHE_DIR": str(cache_dir())})
    except OSError:
        return False
    return True


if __name__ == "__main__":   # the background build: python -m phsym.codegen.aot KEY
    try:
        build(sys.argv[1])
    except BuildError:
        sys.exit(1)
