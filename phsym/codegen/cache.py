"""On-disk cache of generated simulator modules.

Each generated module is a real ``.py`` file named ``phsym_gen_<key>.py`` in
the cache directory (``$PHSYM_CACHE_DIR`` or ``~/.cache/phsym``), which is put
on ``sys.path`` so the module is imported by name and registered in
``sys.modules``; numba's ``cache=True`` then stores the compiled machine code
next to it (or under ``$NUMBA_CACHE_DIR``) and a fresh process loads it
instead of recompiling.  Files are written to a temporary file and moved in
place with :func:`os.replace`, so concurrent builds never expose a partial
file.  The first line of each module is a checksum of the rest; a module
whose checksum does not match, or whose bytecode or numba files do not
decode, is removed with one :class:`~phsym.errors.CacheWarning` and rebuilt
(:mod:`phsym.common.guard`).
"""
from __future__ import annotations

import hashlib
import importlib
import shutil
import sys
from pathlib import Path
from typing import Dict, List

from ..common.paths import atomic_write, cache_dir
from ..common.guard import check_numba, discard
from . import interpret
from ..version import __version__

__all__ = ["cache_dir", "cache_key", "load_module", "cache_info", "clear_cache", "atomic_write", "BUILD_LOG",
           "PREFIXES"]

PREFIX = "phsym_gen_"

#: Keys of the modules this process wrote (not just imported); tests and
#: benchmarks use it to see whether a run regenerated code.
BUILD_LOG: List[str] = []


#: Sources of the compiled functions generated modules call.  numba's cache
#: of a generated module holds them compiled in and never looks at their
#: files again, so their text is part of every key: a changed kernel must
#: regenerate, not run the old machine code.
_KERNEL_FILES = ("codegen/kernels/generic.py", "codegen/kernels/junction.py", "codegen/kernels/learned.py",
                 "codegen/kernels/sweep.py", "codegen/laws/abi.py", "components/junction.py",
                 "components/junction_charge.py", "common/learned.py")
_KERNELS: List[str] = []


def _kernels() -> str:
    if not _KERNELS:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for name in _KERNEL_FILES:
            try:
                h.update((root / name).read_bytes())
            except OSError:     # an installation without the file: its name still counts
                h.update(name.encode())
        _KERNELS.append(h.hexdigest())
    return _KERNELS[0]


def cache_key(source: str, *parts: str) -> str:
    """Hash of the generated source, the options, the phsym version and the kernels' sources."""
    h = hashlib.sha256()
    for s in (source, __version__, _kernels()) + tuple(parts):
        h.update(s.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _checksum(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def _write(path: Path, body: str) -> None:
    text = f"# phsym-checksum: {_checksum(body)}\n" + body
    atomic_write(path, lambda fh: fh.write(text.encode()))


def _problem(path: Path) -> str:
    """Why the generated module at ``path`` cannot be used, or ``""``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable: {exc}"
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return "not UTF-8 text"
    first, _, body = text.partition("\n")
    return "" if first == f"# phsym-checksum: {_checksum(body)}" else "checksum mismatch (truncated or garbled)"


def _pycache(d: Path, name: str) -> list:
    pc = d / "__pycache__"
    return sorted(pc.glob(name + ".*")) if pc.is_dir() else []


def _locate(name: str):
    """``(directory, path, problem)`` of a generated module; a damaged file is discarded."""
    d = cache_dir()
    if str(d) not in sys.path:
        sys.path.insert(0, str(d))
    path = d / f"{name}.py"
    why = _problem(path)
    if why and why != "missing":
        discard([path] + _pycache(d, name), why)
    return d, path, why


def _import(d: Path, name: str):
    """Import a checked module; damaged bytecode or numba files are discarded first."""
    importlib.invalidate_caches()
    try:
        mod = importlib.import_module(name)
    except (ImportError, SyntaxError, ValueError, EOFError) as exc:
        # the source was checked, so the stale or garbled bytecode is at fault
        sys.modules.pop(name, None)
        pyc = _pycache(d, name)
        if not pyc:
            raise
        discard(pyc, f"bytecode: {type(exc).__name__}: {exc}")
        importlib.invalidate_caches()
        mod = importlib.import_module(name)
    check_numba(mod)
    return mod


#: Interpreted generated loops of this process by module name and kernel mode (:mod:`.interpret`; never in sys.modules,
#: where the compiled module of the same file may be).
_INTERPRETED: Dict[tuple, object] = {}


def _interpreted(path: Path, name: str):
    kernels = interpret.compiled_kernels()
    mod = _INTERPRETED.get((name, kernels))
    if mod is None:
        mod = _INTERPRETED[name, kernels] = interpret.load(path, name, kernels)
    return mod


def load_module(body: str, key: str, loop: bool = False):
    """Import (writing it first if needed) the generated module ``body``.

    A cached file that is truncated or garbled (checksum line) is replaced
    with one :class:`~phsym.errors.CacheWarning`; so are damaged bytecode and
    numba cache files of the module.

    Parameters
    ----------
    body : str
        Python source of the module.
    key : str
        Cache key (see :func:`cache_key`).
    loop : bool
        A generated loop that Python may run: with ``PHSYM_JIT=0`` it is
        loaded interpreted (:mod:`phsym.codegen.interpret`), not compiled.

    Returns
    -------
    module
    """
    name = PREFIX + key
    if loop and interpret.enabled():
        if (name, interpret.compiled_kernels()) in _INTERPRETED:
            return _INTERPRETED[name, interpret.compiled_kernels()]
    elif name in sys.modules:
        return sys.modules[name]
    d, path, why = _locate(name)
    if why:
        _write(path, body)
        BUILD_LOG.append(key)
    if loop and interpret.enabled():
        return _interpreted(path, name)
    return _import(d, name)


#: File-name prefixes of everything phsym keeps in the cache directory:
#: generated modules, warm-start snapshots, ahead-of-time extensions.
PREFIXES = (PREFIX, "phsym_run_", "phsym_aot_", "phsym_lark_", "phsym_law_", "phsym_ready_",
            "phsym_upgrade_")


def cache_info() -> Dict[str, object]:
    """Directory, counts of generated modules, warm-start snapshots and
    ahead-of-time extensions, and total size in bytes."""
    d = cache_dir()
    files = [p for p in d.rglob("*") if p.is_file()]
    return {"directory": str(d), "modules": len(list(d.glob(PREFIX + "*.py"))),
            "snapshots": len(list(d.glob("phsym_run_*.npz"))),
            "compiled": len([p for p in d.glob("phsym_aot_*") if p.suffix in (".so", ".pyd")]),
            "files": len(files), "bytes": sum(p.stat().st_size for p in files)}


def clear_cache() -> int:
    """Delete generated modules, snapshots, extensions and compiled code; returns files removed."""
    d = cache_dir()
    n = 0
    for prefix in PREFIXES:
        for p in list(d.glob(prefix + "*")) + list(d.glob("." + prefix + "*")):
            if p.is_file():
                p.unlink()
                n += 1
            elif p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
    pc = d / "__pycache__"
    if pc.exists():
        for p in list(pc.glob(PREFIX + "*")):
            p.unlink()
            n += 1
    return n


def import_generated(key: str, loop: bool = False):
    """The generated module of ``key`` from the cache directory (written before by
    :func:`load_module`), imported by name so numba finds its disk cache.

    Parameters
    ----------
    key : str
        Cache key.
    loop : bool
        A generated loop that Python may run (interpreted with ``PHSYM_JIT=0``, see :func:`load_module`).

    Raises
    ------
    ImportError
        When the module is not in the cache or was damaged (then it is
        removed with a :class:`~phsym.errors.CacheWarning`); the caller
        regenerates it.
    """
    name = PREFIX + key
    interpreted = loop and interpret.enabled()
    if interpreted and (name, interpret.compiled_kernels()) in _INTERPRETED:
        return _INTERPRETED[name, interpret.compiled_kernels()]
    if not interpreted and name in sys.modules:
        return sys.modules[name]
    d, path, why = _locate(name)
    if why:
        raise ImportError(f"generated module {name} is not in the cache ({why})", name=name)
    return _interpreted(path, name) if interpreted else _import(d, name)
