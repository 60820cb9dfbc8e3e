"""The numeric engine's compiled entry points: ahead of time where built, else numba's JIT.

The functions that Python calls (:data:`ENTRIES`: the time loop
:func:`.stepping.run`, Newton's :func:`.newton.solve` for the DC operating
point, the kernel groups' evaluation) are compiled once per machine by
numba's disk cache.  Loading that cache needs numba itself and its type
registries: 0.6-1 s of a fresh process, more than the rest of a small
circuit's run.  :func:`build` therefore also compiles them ahead of time
with :mod:`numba.pycc` into one extension module in the package's own
directory (``numeric/__pycache__/phsym_numeric_engine*.so``; ``phsym cache
build --package`` and the first run's background package build, about a
minute), with the same code as the JIT functions, hence the same results to
the bit.  A process finds it by :func:`entry`, imports it in milliseconds
and never imports numba.

* ``PHSYM_ENGINE_AOT=0`` runs the JIT functions even where the extension
  is built (a comparison, a debugging session).
* The extension is compiled for the host CPU, as numba's JIT code is, and
  used only where its record (a JSON file beside it) names the current
  sources of the engine (:data:`.freshness.SOURCES`), this CPU and the
  extension's SHA-256; otherwise (sources edited, a damaged file, no build) the JIT
  functions run as before.
* pycc's wrappers do not check their arguments' types (a wrong dtype can
  crash): every call is checked against the recorded types first, as
  :func:`phsym.codegen.aot.checked` does for generated loops, and a call
  whose arguments do not match (a read-only or non-contiguous array) goes
  to the JIT function, which compiles for them.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Callable, Dict, Optional

import numpy as np

from ....common.guard import digest, host_cpu
from . import freshness

__all__ = ["ENTRIES", "NAME", "ENV", "entry", "aot_ready", "ready", "build", "location", "jit"]

#: Entry points: module of the engine and function name.
ENTRIES = {"run": "stepping", "solve": "newton", "call_groups": "newton", "prepare_groups": "newton",
           "w_size": "newton"}
#: Module name of the extension.
NAME = "phsym_numeric_engine"
#: Environment variable: ``0`` runs the JIT engine even where the extension is built.
ENV = "PHSYM_ENGINE_AOT"
_HERE = Path(__file__).resolve().parent


def location() -> Path:
    """Where the extension is (the package's numba cache directory, :func:`.freshness.package_cache`)."""
    return freshness.package_cache()


def _suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def _files(d: Path):
    return d / f"{NAME}{_suffix()}", d / f"{NAME}.json"


def _sources_digest() -> str:
    h = hashlib.sha256()
    for name in freshness.SOURCES:
        h.update((_HERE / name).read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------------------------- argument checks
def _spec(t) -> object:
    """A JSON description of numba type ``t`` (arrays, tuples, scalars)."""
    from numba import types
    if isinstance(t, types.Array):
        if t.layout != "C" or not t.mutable:
            raise TypeError(f"the engine's arrays are C-contiguous and writeable, not {t}")
        return ["a", str(t.dtype), int(t.ndim)]
    if isinstance(t, types.BaseTuple):
        return ["t", [_spec(e) for e in t.types]]
    if t == types.float64:
        return "f8"
    if t == types.int64:
        return "i8"
    if t == types.boolean:
        return "b1"
    raise TypeError(f"no check for argument type {t}")


_DTYPES = {"float64": np.dtype(np.float64), "int64": np.dtype(np.int64)}


def _fits(spec, a) -> bool:
    """Whether ``a`` is what the compiled function takes (``spec``: :func:`_spec`)."""
    if isinstance(spec, str):
        if spec == "f8":
            return isinstance(a, (float, int, np.floating, np.integer)) and not isinstance(a, (bool, np.bool_))
        if spec == "i8":
            return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
        return isinstance(a, (bool, np.bool_))
    if spec[0] == "a":
        return (isinstance(a, np.ndarray) and a.dtype == _DTYPES[spec[1]] and a.ndim == spec[2]
                and a.flags.c_contiguous and a.flags.writeable and a.flags.aligned)
    return isinstance(a, tuple) and len(a) == len(spec[1]) and all(_fits(s, x) for s, x in zip(spec[1], a))


# ---------------------------------------------------------------------------------- loading
_LOADED: Dict[str, object] = {}


def _load():
    """The extension and its record, or ``(None, None)`` where it is absent, stale or damaged."""
    if "ext" in _LOADED:
        return _LOADED["ext"], _LOADED["record"]
    ext = record = None
    if os.environ.get(ENV, "1").strip().lower() in ("0", "off", "no", "false"):
        _LOADED.update(ext=None, record=None)
        return None, None
    so, rec = _files(location())
    try:
        record = json.loads(rec.read_text())
        if (record.get("sources") == _sources_digest() and record.get("python") == sys.implementation.cache_tag
                and record.get("cpu") == host_cpu()):
            if digest(so) == record.get("sha256"):
                spec = importlib.util.spec_from_file_location(NAME, so)
                ext = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(ext)
    except (OSError, ValueError, KeyError, TypeError, ImportError, AttributeError):
        ext = None
    if ext is None:
        record = None
    _LOADED.update(ext=ext, record=record)
    return ext, record


def aot_ready() -> bool:
    """Whether the ahead-of-time engine is there for the current sources (numba is not imported)."""
    return _load()[0] is not None


def jit(name: str) -> Callable:
    """The JIT function ``name`` of :data:`ENTRIES` (imports numba; importing :mod:`.newton` makes the
    engine's cache fresh first, :func:`.freshness.ensure_fresh`)."""
    fn = _LOADED.get("jit:" + name)
    if fn is None:
        fn = getattr(importlib.import_module(f"{__package__}.{ENTRIES[name]}"), name)
        _LOADED["jit:" + name] = fn
    return fn


def entry(name: str) -> Callable:
    """The compiled entry point ``name`` of :data:`ENTRIES`: the ahead-of-time function, whose
    arguments are checked at each call (falling back to the JIT function when they do not fit), or the
    JIT function where there is no extension.

    Parameters
    ----------
    name : str
        ``run``, ``solve``, ``call_groups``, ``prepare_groups`` or ``w_size``.
    """
    ext, record = _load()
    if ext is None:
        return jit(name)
    hit = _LOADED.get("aot:" + name)
    if hit is not None:
        return hit
    fn, spec = getattr(ext, name), record["types"][name]

    def call(*args):
        if len(args) == len(spec) and all(_fits(s, a) for s, a in zip(spec, args)):
            return fn(*args)
        return jit(name)(*args)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"The engine's {name} compiled ahead of time (arguments checked)."
    _LOADED["aot:" + name] = call
    return call


def ready() -> bool:
    """Whether a run compiles nothing of the engine: the ahead-of-time extension is there, or
    numba's cache holds the engine (:func:`.freshness.engine_ready`)."""
    if aot_ready():
        return True
    from .freshness import engine_ready
    return engine_ready(jit("run"))


# ---------------------------------------------------------------------------------- build
def _signatures() -> Dict[str, tuple]:
    """``(argument types, return type)`` of each entry point: those of a run's JIT functions (compiled
    by the warm-up), the kernel-group helpers' from the types of a group table."""
    from numba import types
    sigs = {}
    for name, mod in ENTRIES.items():
        fn = getattr(importlib.import_module(f"{__package__}.{mod}"), name)
        if fn.nopython_signatures:
            sig = fn.nopython_signatures[0]
            sigs[name] = (tuple(sig.args), sig.return_type)
    G, A = types.Array(types.int64, 2, "C"), types.Array(types.float64, 1, "C")
    sigs.setdefault("w_size", ((G,), types.int64))
    sigs.setdefault("prepare_groups", ((G, A, A, A), types.void))
    sigs.setdefault("call_groups", ((G, A, A, A, A), types.void))
    missing = set(ENTRIES) - set(sigs)
    if missing:
        raise RuntimeError(f"no signature of {sorted(missing)}: run the warm-up deck first")
    return sigs


def build(dest: Optional[Path] = None) -> Path:
    """Compile :data:`ENTRIES` ahead of time into ``dest`` (default :func:`location`), after a run
    of the JIT engine in this process (their signatures are that run's).

    Parameters
    ----------
    dest : pathlib.Path, optional
        Directory of the extension and its record.

    Returns
    -------
    pathlib.Path
        The extension.
    """
    from ....common.paths import atomic_write
    dest = location() if dest is None else Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    sigs = _signatures()
    record = {"sources": _sources_digest(), "python": sys.implementation.cache_tag, "cpu": host_cpu(),
              "types": {n: [_spec(t) for t in args] for n, (args, _) in sigs.items()}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # pycc's pending-deprecation notice
        from numba.pycc import CC
    tmp = Path(tempfile.mkdtemp(prefix=f".{NAME}.", dir=str(dest)))
    try:
        cc = CC(NAME)
        cc.output_dir = str(tmp)
        cc.verbose = False
        cc.target_cpu = "host"          # as the JIT compiles (a generic x86-64 target stepped 1.3-1.5x slower)
        for name, mod in ENTRIES.items():
            fn = getattr(importlib.import_module(f"{__package__}.{mod}"), name)
            args, ret = sigs[name]
            cc.export(name, ret(*args))(fn.py_func)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cc.compile()
        built = [p for p in tmp.iterdir() if p.name.startswith(NAME) and p.name.endswith((_suffix(), ".so"))]
        if not built:
            raise RuntimeError("pycc produced no extension module")
        so, rec = _files(dest)
        record["sha256"] = digest(built[0])
        if rec.exists():
            rec.unlink()            # no record during the move: a half-written pair is not loaded
        os.replace(built[0], so)
        atomic_write(rec, lambda fh: fh.write(json.dumps(record).encode()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _LOADED.clear()
    return so
