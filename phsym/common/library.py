"""Where the package keeps what it compiled and derived for every user of the installation.

``phsym cache build --package`` fills the directory (law kernels:
:mod:`phsym.codegen.laws.library`; their junction terms:
:mod:`phsym.codegen.laws.facts`; element descriptions:
:mod:`phsym.structure.circuit.kinds`) from a process with :data:`ENV` set to
``write``; every process reads it where its own cache lacks an entry.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["LIBRARY", "ENV", "writing"]

#: The package's library directory.
LIBRARY = Path(__file__).resolve().parent.parent / "codegen" / "laws" / "_library"
#: Environment variable: ``write`` makes what a process compiles or derives go into :data:`LIBRARY` too.
ENV = "PHSYM_LAW_LIBRARY"


def writing() -> bool:
    """Whether this process fills the package's library (``PHSYM_LAW_LIBRARY=write``)."""
    return os.environ.get(ENV, "").strip().lower() == "write"
