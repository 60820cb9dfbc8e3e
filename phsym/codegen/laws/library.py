"""Law kernels compiled into the package's own directory, for every user of the installation.

``phsym cache build --package`` runs the numeric engine's warm-up deck (the
device kinds most netlists hold: diodes with and without junction charge,
bipolar transistors) with :data:`ENV` set: each law kernel it compiles is
also copied here (``phsym/codegen/laws/_library/``: the kernel compiled
from C where there is a C compiler (:mod:`.native`), else the generated
module and numba's compiled code; and its index entry).  A process that needs a kernel
its own cache lacks takes it from here (:func:`fetch`): the C library (or
the module), and its index go into the user's cache directory, numba's
entries into numba's cache directory for that module (found by numba's own
locator rules), so nothing is derived with sympy or compiled, and a C
kernel needs no numba at all.  Compiled code is specific to the
machine's CPU and numba's version: entries that do not match are compiled
again by numba as usual.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import List, Optional

from ...common.library import ENV, LIBRARY, writing
from ...common.paths import cache_dir
from ..cache import PREFIX
from . import native

__all__ = ["LIBRARY", "ENV", "fetch", "store", "numba_dir", "writing"]


def numba_dir(py_file: Path) -> Optional[Path]:
    """numba's cache directory, in this process, of the functions of the module file ``py_file``
    (its locators in their order: ``NUMBA_CACHE_DIR``, the module's ``__pycache__``, ...)."""
    from numba.core import caching
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")     # renamed in numba 0.6x
    fn = SimpleNamespace(__code__=SimpleNamespace(co_firstlineno=1), __qualname__="kernel")
    for cls in impl._locator_classes:
        try:
            loc = cls.from_function(fn, str(py_file))
        except (OSError, AttributeError, TypeError):
            continue
        if loc is not None:
            return Path(loc.get_cache_path())
    return None


def _entries(d: Path, name: str) -> List[Path]:
    return [p for p in d.glob(name + ".*") if p.suffix in (".nbi", ".nbc")] if d.is_dir() else []


def _copy(src: Path, dst: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=dst.parent, prefix=".lib-")
    os.close(fd)
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def fetch(index_name: str) -> bool:
    """Copy the kernel of the index file ``index_name`` from :data:`LIBRARY` into this user's caches.

    Parameters
    ----------
    index_name : str
        File name of the kernel's index entry (``phsym_law_<key>.json``).

    Returns
    -------
    bool
        Whether the library had it and it was copied (the index entry last).
    """
    try:
        meta = json.loads((LIBRARY / index_name).read_text())
        name = PREFIX + str(meta["key"])
        d = cache_dir()
        lib = native.path(str(meta["key"]))
        c_kernel = native.enabled() and (LIBRARY / lib.name).is_file()
        if c_kernel:        # the C kernel: its digest first, so a half-copied library is not opened
            _copy(LIBRARY / lib.with_suffix(".sha256").name, lib.with_suffix(".sha256"))
            _copy(LIBRARY / lib.name, lib)
        module = d / f"{name}.py"
        if not module.is_file() and (LIBRARY / f"{name}.py").is_file():
            _copy(LIBRARY / f"{name}.py", module)
        elif not c_kernel:
            raise FileNotFoundError(LIBRARY / f"{name}.py")
        if not c_kernel and module.is_file():       # numba's compiled kernel (importing numba to find where)
            nd = numba_dir(module)
            if nd is not None:
                nd.mkdir(parents=True, exist_ok=True)
                for p in _entries(LIBRARY / "numba", name):
                    _copy(p, nd / p.name)
        _copy(LIBRARY / index_name, d / index_name)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return True


def store(index_name: str, key: str) -> None:
    """Copy a kernel this process compiled into :data:`LIBRARY` (only with ``PHSYM_LAW_LIBRARY=write``).

    Parameters
    ----------
    index_name : str
        File name of its index entry in the cache directory.
    key : str
        Its module's cache key.
    """
    if not writing():
        return
    name = PREFIX + key
    d = cache_dir()
    (LIBRARY / "numba").mkdir(parents=True, exist_ok=True)
    lib = native.path(key)
    if lib.is_file():
        for p in (lib.with_suffix(".sha256"), lib):
            _copy(p, LIBRARY / p.name)
    if (d / f"{name}.py").is_file():
        _copy(d / f"{name}.py", LIBRARY / f"{name}.py")
        nd = numba_dir(d / f"{name}.py")
        for p in _entries(nd, name) if nd is not None else ():
            _copy(p, LIBRARY / "numba" / p.name)
    _copy(d / index_name, LIBRARY / index_name)
