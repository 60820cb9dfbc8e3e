"""Compile the numeric engine once on this machine: ``python -m phsym.simulation.engines.numeric.warmup``.

The engine's functions are compiled into numba's disk cache the first time
any circuit runs on it (about a minute on a small machine); after that a new
circuit of known kinds compiles nothing.  ``engine="auto"`` runs a small
circuit on its own generated loop while the engine is not compiled yet and
starts this module in a detached process (``PHSYM_AOT=0`` turns that off),
so that later circuits find the engine ready.  ``phsym cache build``
(without a netlist) runs it in the foreground.  Where the package's
directory is writable (an editable install, a user's own virtual
environment) the detached warm-up compiles into it (``--package``,
:func:`build_package`): every later process of the installation finds the
engine there, whatever its numba cache (:mod:`.freshness`), and also
compiled ahead of time (:mod:`.engine`: a run that imports no numba).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

#: A circuit with the device kinds most netlists hold: its run compiles the engine and the law
#: kernels of a diode with junction charge, of a simple BJT and of a BJT with the parameters vendor
#: models set (Early voltage, high injection, leakage, charges with FC), whose law forms a new
#: transistor stage then finds in the package (a kernel is per form, not per parameter value).
#: Its symbolic build also records the descriptions of its elements' signatures
#: (:mod:`phsym.structure.circuit.kinds`): a plain diode (IS, N) is one more, of the same law form.
DECK = """numeric engine warm-up
.model DW D(IS=2.52n N=1.752 RS=0.568 CJO=4p TT=5n)
.model DP D(IS=1n N=1.5)
.model QW NPN(IS=1e-14 BF=100 CJE=2p CJC=1p TF=0.3n)
V1 in 0 SIN(0 1 1k)
R1 in a 1k
D1 a 0 DW
D2 0 a DP
C1 a 0 10n
VCC vcc 0 5
RC vcc c 2k
RB a b 10k
Q1 c b 0 QW
.model QF NPN(IS=6.7f BF=416 BR=0.74 NF=1 NR=1 VAF=74 IKF=67m ISE=6.7f NE=1.26 RB=10 RC=1 CJE=4.5p MJE=0.26
+ VJE=0.75 CJC=3.6p MJC=0.31 VJC=0.75 TF=301p TR=240n FC=0.5)
RC2 vcc c2 4.7k
Q2 c2 b e2 QF
RE2 e2 0 1k
"""


def warm() -> bool:
    """Run :data:`DECK` on the numeric engine for a few steps; True when the engine is ready."""
    from ....model import parse
    from ...simulator import Simulator
    from .loop import NumericLoop
    sim = Simulator(parse(DECK), 48000.0, engine="numeric")
    sim.run(duration=4 / 48000.0)
    return NumericLoop.ready()


def build_package() -> bool:
    """Compile the engine into the package's directory and the deck's law kernels into the package's
    kernel library (:mod:`phsym.codegen.laws.library`): :func:`warm_and_build` in a child whose numba
    cache is the in-tree one (no ``NUMBA_CACHE_DIR``) and whose phsym cache is empty, so that every
    kernel is compiled and stored, and the engine's entry points compiled ahead of time
    (:mod:`.engine`).  True when the engine is there."""
    from ....codegen.laws.library import ENV
    from .freshness import READY, package_cache
    with tempfile.TemporaryDirectory(prefix="phsym-package-build-") as tmp:
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env.update(PHSYM_CACHE_DIR=tmp, **{ENV: "write"})
        done = subprocess.run([sys.executable, "-m", "phsym.simulation.engines.numeric.warmup", "--aot"], env=env,
                              stdin=subprocess.DEVNULL).returncode == 0       # (not __name__: "__main__" under -m)
    if done:        # and the netlist parser's tables, which a first run would otherwise build (0.1 s)
        from ....netlist.grammar import save_package_tables
        try:
            save_package_tables()
        except OSError:
            pass        # the engine is what this build is for; a parse costs 0.1 s more without them
        compile_bytecode()
    return done and (package_cache() / READY).is_file()


def compile_bytecode() -> bool:
    """Write the bytecode of every module of the package (``__pycache__``), as a non-editable
    install does; True when every module compiled.

    An editable install leaves it to the first import of each module, which does not write it
    where ``PYTHONDONTWRITEBYTECODE`` is set (some containers and CI images): every process
    then compiles phsym's sources again, 0.3-0.4 s of a command's start (measured: the clipper
    with empty caches, 2.3-2.9 s wall with the bytecode, 2.7-3.1 s without).
    """
    import compileall
    from pathlib import Path
    root = Path(__file__).resolve().parents[3]
    try:
        return bool(compileall.compile_dir(str(root), quiet=2, workers=1))
    except OSError:         # a read-only installation: the imports compile as before
        return False


def warm_and_build() -> bool:
    """:func:`warm`, then the engine's entry points compiled ahead of time into the package
    (:func:`.engine.build`, with the types of the warm-up's calls); True when the engine is ready
    (an ahead-of-time build that fails leaves the JIT engine, which is)."""
    from .engine import aot_ready, build
    if aot_ready():     # compiled from the current sources for this CPU already
        return warm()
    done = warm()
    try:
        build()
    except Exception as exc:        # noqa: BLE001 - pycc needs setuptools and a C compiler
        print(f"the ahead-of-time engine was not built ({type(exc).__name__}: {exc}); the JIT engine "
              "serves", file=sys.stderr)
    return done


def main(argv=None) -> int:
    """Warm up (``--package``: :func:`build_package`; ``--aot``: :func:`warm_and_build`); returns the
    exit status (never raises: a background build must not disturb anyone)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        if "--package" in argv:
            return 0 if build_package() else 1
        return 0 if (warm_and_build() if "--aot" in argv else warm()) else 1
    except Exception:       # noqa: BLE001
        return 1


if __name__ == "__main__":      # pragma: no cover - a detached process
    sys.exit(main())
