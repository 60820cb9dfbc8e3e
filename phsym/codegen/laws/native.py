"""Law kernels in C: the same kernels, loaded without numba.

A law kernel's module (:mod:`.source`) is written in the Python subset that
:mod:`phsym.codegen.c` translates to C99 statement by statement (the C
export's translator: the same operations in the same order, so the same
floats as numba's kernel).  :func:`build` translates it, compiles it with
the system C compiler into a shared library in the cache directory
(``phsym_law_c<key>.so``) and :func:`load` opens it with :mod:`ctypes`: the
engine takes the addresses of ``phsym_kernel`` and ``phsym_prepare``, which
have the one signature of :mod:`.abi`.  Nothing imports numba, and a
library loads in a fraction of a millisecond where a numba cfunc's cache
needs numba and its type registries (most of a second in a fresh process).

* The library is compiled in a private temporary file and moved into place
  with :func:`os.replace`; its SHA-256 is written first beside it
  (``.sha256``).  A library that does not match it (truncated, garbled) is
  removed with a :class:`~phsym.errors.CacheWarning` before it is opened,
  and compiled again.
* Without a C compiler (``cc``, or ``$CC``), or for a kernel outside the
  translated subset (a learned law), :func:`build` returns ``None`` and the
  caller compiles the numba kernel as before; ``PHSYM_NATIVE_KERNELS=0``
  neither builds nor loads C kernels.
"""
from __future__ import annotations

import ast
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ...common.guard import digest, discard, host_cpu
from ...common.paths import atomic_write, cache_dir
from ...errors import ExportError
from ...version import __version__

__all__ = ["ENV", "NATIVE_PREFIX", "SUFFIX", "enabled", "compiler", "c_source", "build", "load", "path", "addresses", "compiled"]

#: Environment variable: ``0`` (``off``, ``no``, ``false``) keeps the numba kernels.
ENV = "PHSYM_NATIVE_KERNELS"
#: File-name prefix of a compiled library (the cache's ``phsym_law_`` entries, see
#: :data:`phsym.codegen.cache.PREFIXES`).
NATIVE_PREFIX = "phsym_law_c"
SUFFIX = ".so"
#: ``-ffp-contract=off``: no fused multiply-add where numba's code has none (the same floats).
FLAGS = ("-std=c99", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno", "-march=native")
#: Seconds a C compile may take (a kernel compiles in a fraction of a second; a hung compiler must
#: not hang the run: numba's kernel is compiled instead).
COMPILE_TIMEOUT = 120
#: The translator's sources and the junction functions it translates (paths in ``phsym/``): a change
#: compiles every library again.
_SOURCES = ("codegen/c/translate.py", "codegen/c/emit.py", "codegen/c/subset.py", "codegen/laws/native.py",
            "codegen/kernels/junction.py", "components/junction_charge.py")
_FP: List[str] = []
_JUNCTION = Path(__file__).resolve().parents[1] / "kernels" / "junction.py"

_HEAD = """#include <math.h>
#include <stdint.h>
#define M_PI_PH 3.14159265358979323846
#define M_E_PH 2.71828182845904523536
"""


def _fingerprint() -> str:
    if not _FP:
        root = Path(__file__).resolve().parents[2]
        h = hashlib.sha256(__version__.encode())
        h.update(host_cpu().encode())       # -march=native: another processor compiles its own
        for name in _SOURCES:
            h.update((root / name).read_bytes())
        _FP.append(h.hexdigest()[:16])
    return _FP[0]


def enabled() -> bool:
    """Whether C kernels are built and loaded (:data:`ENV` not ``0``)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "no", "false")


def compiler() -> Optional[str]:
    """The C compiler to build law kernels with (``$CC``, else ``cc`` or ``gcc`` on the path), or
    ``None`` when there is none or :data:`ENV` turns the C kernels off."""
    if not enabled():
        return None
    cc = os.environ.get("CC", "").strip()
    if cc:
        return shutil.which(cc)
    return shutil.which("cc") or shutil.which("gcc")


def path(key: str) -> Path:
    """The compiled library of the kernel module ``key`` in the cache directory.

    Parameters
    ----------
    key : str
        Cache key of the kernel's module text (:func:`phsym.codegen.cache.cache_key`).
    """
    return cache_dir() / f"{NATIVE_PREFIX}{key}_{_fingerprint()}{SUFFIX}"


def _sidecar(lib: Path) -> Path:
    return lib.with_suffix(".sha256")


def c_source(text: str) -> str:
    """C99 source of the kernel module ``text`` (:func:`.source.kernel_source`): its ``kernel``
    and ``prepare`` exported as ``phsym_kernel`` and ``phsym_prepare``.

    Parameters
    ----------
    text : str
        The module's Python source.

    Raises
    ------
    ExportError
        A construct outside the translated subset.
    """
    from ..c.subset import HELPERS
    from ..c.translate import Translator
    from ...components.junction_charge import charge_energy, charge_energy_from, charge_voltage
    if "learned_bumps(" in text:
        raise ExportError("C law kernels: learned laws stay numba kernels")
    space = {"junction_voltage": charge_voltage, "junction_energy_v": charge_energy,
             "junction_energy_q": charge_energy_from}
    T = Translator(text, space, "k_")
    if "junction_energy(" in text:      # the composite, from its module's text (importing it imports numba)
        T.defs.update({n.name: n for n in ast.parse(_JUNCTION.read_text()).body
                       if isinstance(n, ast.FunctionDef) and n.name == "junction_energy"})
    kinds = {"n": "i", "P": "D1", "IN": "D1", "OUT": "D1", "W": "D1"}
    names = ["kernel"] + (["prepare"] if "prepare" in T.defs else [])
    fns = [T.function(name, kinds, f"k_{name}") for name in names]
    doc = ast.get_docstring(ast.parse(text)) or ""
    out = [f"/* Generated by phsym {__version__} (phsym.codegen.laws.native) from the law kernel module:",
           *[f" * {ln}".rstrip() for ln in doc.replace("*/", "* /").splitlines()[:1]],
           " * Do not edit: phsym rewrites it from the law. */", _HEAD, HELPERS, "", T.source(), ""]
    for name, f in zip(names, fns):
        if f.hidden:
            raise ExportError(f"C law kernels: {name} reads an array's shape")
        out += [f"void phsym_{name}(int64_t n, double *P, double *IN, double *OUT, double *W)",
                f"{{ {f.cname}((long)n, P, IN, OUT, W); }}", ""]
    return "\n".join(out)


def build(key: str, text: str) -> Optional[Path]:
    """The compiled library of ``text``, compiled now if the cache has none; ``None`` without a
    compiler, outside the subset, or when the compile fails (the caller uses numba's kernel).

    Parameters
    ----------
    key : str
        Cache key of the module text.
    text : str
        The kernel module's Python source.
    """
    if not enabled():
        return None
    lib = path(key)
    if _valid(lib):
        return lib
    cc = compiler()
    if cc is None:
        return None
    try:
        src = c_source(text)
    except ExportError:
        return None
    d = lib.parent
    tmp = Path(tempfile.mkdtemp(prefix=f".{lib.stem}.", dir=str(d)))
    try:
        (tmp / "k.c").write_text(src)
        done = subprocess.run([cc, *FLAGS, "-o", str(tmp / "k.so"), str(tmp / "k.c"), "-lm"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=COMPILE_TIMEOUT)
        if done.returncode != 0:
            return None
        atomic_write(_sidecar(lib), lambda fh: fh.write(digest(tmp / "k.so").encode()))
        os.replace(tmp / "k.so", lib)
        from ..cache import BUILD_LOG
        BUILD_LOG.append(key)
    except (OSError, subprocess.TimeoutExpired):       # no compiler that works: numba's kernel
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return lib


def _valid(lib: Path) -> bool:
    """Whether ``lib`` is there and matches its digest (a damaged one is removed)."""
    if not lib.exists():
        return False
    side = _sidecar(lib)
    try:
        ok = lib.is_file() and side.read_text().strip() == digest(lib)
    except (OSError, UnicodeDecodeError):
        ok = False
    if not ok:      # opening a garbled library could crash the process
        discard([lib, side], "compiled law kernel: digest mismatch (truncated or garbled)")
    return ok


def load(key: str) -> Optional[ctypes.CDLL]:
    """The compiled library of the kernel module ``key``, or ``None`` when the cache has none (or
    it was damaged and removed).

    Parameters
    ----------
    key : str
        Cache key of the module text.
    """
    if not enabled():
        return None
    hit = _OPEN.get(key)        # opened already (as an imported module stays in sys.modules)
    if hit is not None:
        return hit
    lib = path(key)
    if not _valid(lib):
        return None
    try:
        hit = _OPEN[key] = ctypes.CDLL(str(lib))
    except OSError as exc:
        discard([lib, _sidecar(lib)], f"compiled law kernel: {exc}")
        return None
    return hit


#: Libraries this process has opened, by key.
_OPEN: Dict[str, ctypes.CDLL] = {}


def addresses(lib: ctypes.CDLL) -> Tuple[int, int]:
    """``(kernel, prepare)``: the addresses of a library's functions (``prepare`` 0 when none).

    Parameters
    ----------
    lib : ctypes.CDLL
        A loaded library (:func:`load`).
    """
    def addr(name: str) -> int:
        try:
            return int(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value)
        except AttributeError:
            return 0
    return addr("phsym_kernel"), addr("phsym_prepare")


def compiled(key: str, n_pre: int) -> Tuple[object, int, int]:
    """``(owner, kernel, prepare)`` of the kernel module ``key`` in the cache: its C library where
    there is one, else numba's module (``owner`` keeps the code alive; ``prepare`` is 0 when
    ``n_pre`` is 0).

    Parameters
    ----------
    key : str
        Cache key of the module text.
    n_pre : int
        Entries of ``W`` per instance (:mod:`.abi`).

    Raises
    ------
    ImportError
        Neither is in the cache (the caller derives the kernel again).
    """
    lib = load(key)
    if lib is not None:
        address, prepare = addresses(lib)
        if address and (prepare or not n_pre):
            return lib, address, prepare if n_pre else 0
    from ..cache import import_generated
    mod = import_generated(key)
    return mod, int(mod.kernel.address), int(mod.prepare.address) if n_pre else 0
