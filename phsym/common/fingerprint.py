"""The installed code's fingerprint: what every record derived by one version of phsym's code keys on.

A warm-start snapshot, an element description (:mod:`phsym.structure.circuit.kinds`)
and a law form's junction terms (:mod:`phsym.codegen.laws.facts`) are derived
by phsym's code and read back later without it.  Keyed on the version alone,
a record made before an edit of an editable install (a component's
contribution, the engine's planner) would be read after it; keyed on this
fingerprint it is not, and the reader derives it again.

>>> code_fingerprint() == code_fingerprint() and len(code_fingerprint())
64
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Optional

from ..version import __version__

__all__ = ["code_fingerprint"]

_FINGERPRINT: Optional[str] = None
# folders of built files inside the package (bytecode, the kernel library): not the code itself
_NOT_SOURCE = {"__pycache__", "_library"}


def code_fingerprint() -> str:
    """Version plus path, size and mtime of phsym's source files (``.py``, ``.lark``), hashed.

    Only ``stat`` calls (a few ms, once per process): a warm run computes it
    for its snapshot's key.
    """
    global _FINGERPRINT
    if _FINGERPRINT is None:
        root = str(Path(__file__).resolve().parent.parent)
        found = {".py": [], ".lark": []}
        # one os.walk rather than two pathlib globs: a third of a warm run's own time went to them
        for top, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _NOT_SOURCE]
            rel = os.path.relpath(top, root)
            parts = () if rel == "." else tuple(rel.split(os.sep))
            for f in files:
                kind = found.get(os.path.splitext(f)[1])
                if kind is not None:
                    kind.append(parts + (f,))
        h = hashlib.sha256(__version__.encode())
        for parts in sorted(found[".py"]) + sorted(found[".lark"]):
            st = os.stat(os.path.join(root, *parts))
            h.update(f"{'/'.join(parts)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT
