"""Which engine runs a model: the rule of ``engine="auto"``.

Two engines run any model with the same schemes and the same discrete
power balance (docs/simulation.md, "Two engines"):

* the *generated* loop (:mod:`.generated`): a Newton loop written out for
  one circuit, every law and Jacobian entry unrolled and compiled.  Fastest
  per step on small circuits (audio: the diode clipper at 5 M steps/s), but
  its build grows much faster than the circuit: seconds for a diode, 14-30 s
  for a transistor stage, out of memory for tens of transistors;
* the *numeric* engine (:mod:`.numeric`): compiled once for every circuit,
  law kernels compiled once per law form and shared by all instances, sparse
  Newton.  A new circuit whose laws are known compiles nothing.

``auto`` takes the generated loop where it is ready and wins: a small
nonlinear circuit whose generated loop this machine has compiled before
(:func:`generated_ready`), or any small nonlinear circuit while the numeric
engine itself is not compiled on this machine yet (its first compile takes
about a minute, a small circuit's own loop seconds; the engine is then
compiled in a detached process, :mod:`.numeric.warmup`; an engine compiled
into the package's directory counts, :mod:`.numeric.freshness`); a circuit the
numeric engine does not step yet
(:meth:`~phsym.structure.circuit.CircuitData.numeric_obstacles`); otherwise the numeric engine, and for a
small circuit from a netlist file it starts the generated loop's build in a
background process (as the ahead-of-time builds, ``PHSYM_AOT=0`` turns it
off), so the next run of the same netlist gets it.  Small linear models keep
the linear fast path.  ``PHSYM_ENGINE=generated`` (or ``numeric``, ``linear``)
makes ``auto`` stand for that engine in every call (a whole test suite or
benchmark on one engine).  The limits are measured (docs/benchmarks.md).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional

from ...common import budget
from ...common.paths import atomic_write, cache_dir
from ...errors import SimulationInputError
from ...version import __version__

__all__ = ["ENGINES", "ENGINE_ENV", "numeric_ready", "start_numeric_warmup", "GENERATED_LIMIT", "LINEAR_LIMIT", "choose", "auto_engine", "fingerprint", "plain_fingerprint", "generated_ready",
           "ready_module", "mark_ready", "start_generated_build", "check_generated_budget"]

#: Engine names (``"newton"`` is the generated loop's former name).
ENGINES = ("auto", "generated", "numeric", "linear")

#: Environment variable naming the engine ``"auto"`` stands for (unset: the rule below).
ENGINE_ENV = "PHSYM_ENGINE"

#: Branches above which ``auto`` never builds the generated loop (its build time and memory grow
#: much faster than the circuit; measured in docs/benchmarks.md).
GENERATED_LIMIT = 60

#: Branches above which ``auto`` steps a linear model on the numeric engine instead of the linear
#: fast path (which builds the symbolic structure).
LINEAR_LIMIT = 400

READY_PREFIX = "phsym_ready_"

#: Seconds during which a started warm-up of the numeric engine is not started again.
WARMUP_WINDOW = 900.0

#: Peak bytes of the generated loop's build (symbolic structure, unrolled source, numba) for a
#: circuit of :data:`_GEN_BRANCHES` branches: a TTL NAND gate, 0.64-0.86 GB measured; the build
#: grows at least like the square of the branches (nine gates ran past 9 GB).
_GEN_BYTES, _GEN_BRANCHES = 0.8 * 2**30, 51


def check_generated_budget(model) -> None:
    """Refuse, before any symbolic work, a generated loop whose build would not fit in memory.

    Parameters
    ----------
    model : Model
        The model.

    Raises
    ------
    ResourceError
        With the estimate and the hint to use the numeric engine.
    """
    n = model.size["branches"]
    need = _GEN_BYTES * (n / _GEN_BRANCHES) ** 2
    budget.check(f"the generated loop of a circuit of {n} branches", need,
                 hint="engine='numeric' (or 'auto') runs it on the numeric engine, which compiles nothing per "
                      "circuit")


def fingerprint(model, scheme: str, stiff: str) -> str:
    """What the generated loop of ``model`` depends on: its elements and parameters, the scheme,
    the stiff rule and phsym's version (not locations, comments or the sample rate).

    Parameters
    ----------
    model : Model
        The model.
    scheme : str
        Canonical scheme name.
    stiff : str
        Resolved stiff rule.
    """
    nl = model.netlist
    return _fingerprint(((e.name, e.kind, tuple(e.nodes), sorted((k, str(v)) for k, v in e.values.items()),
                          str(e.law), str(e.ic), tuple(e.refs), sorted(e.choices.items())) for e in nl.elements),
                        ((name, str(p.expression), p.control) for name, p in nl.parameters.items()), scheme, stiff)


def plain_fingerprint(deck, scheme: str, stiff: str) -> str:
    """:func:`fingerprint` of the model of a plain deck (:mod:`phsym.netlist.plain`), without the model:
    its values are parameters by name, with no law, IC, reference, option or expression.

    Parameters
    ----------
    deck : PlainDeck
        The deck.
    scheme, stiff : str
        Canonical scheme name and resolved stiff rule.
    """
    return _fingerprint(((e.name, e.kind, tuple(e.nodes), sorted(e.params.items()), "None", "None", (), [])
                         for e in deck.elements), ((name, "None", False) for name in deck.parameters), scheme, stiff)


def _fingerprint(elements, parameters, scheme: str, stiff: str) -> str:
    h = hashlib.sha256(f"{__version__}\0{scheme}\0{stiff}\0".encode())
    for row in elements:
        h.update(repr(row).encode())
    for row in parameters:
        h.update(repr(row).encode())
    return h.hexdigest()[:24]


def _ready_file(fp: str) -> Path:
    return cache_dir() / f"{READY_PREFIX}{fp}"


def generated_ready(model, scheme: str, stiff: str) -> bool:
    """Whether this machine has compiled the generated loop of ``model`` (its module and numba's
    cache are there: a run loads it instead of compiling).

    Parameters
    ----------
    model : Model
        The model.
    scheme, stiff : str
        Scheme and resolved stiff rule.
    """
    return ready_module(fingerprint(model, scheme, stiff)) is not None


def ready_module(fp: str) -> Optional[str]:
    """The key of the compiled generated module recorded under the fingerprint ``fp``
    (:func:`fingerprint`), or ``None`` when there is none (two file checks, no model needed).

    Parameters
    ----------
    fp : str
        A :func:`fingerprint`.
    """
    try:
        key = _ready_file(fp).read_text().strip()
    except OSError:
        return None
    return key if (cache_dir() / f"phsym_gen_{key}.py").is_file() else None


def mark_ready(model, scheme: str, stiff: str, key: str) -> None:
    """Record that the generated loop ``key`` of ``model`` has been compiled.

    Parameters
    ----------
    model : Model
        The model.
    scheme, stiff : str
        Scheme and resolved stiff rule.
    key : str
        The generated module's cache key.
    """
    try:
        atomic_write(_ready_file(fingerprint(model, scheme, stiff)), lambda fh: fh.write(key.encode()))
    except OSError:     # a read-only cache: nothing remembered, nothing broken
        pass


def _background() -> bool:
    return os.environ.get("PHSYM_AOT", "background").strip().lower() not in ("0", "off", "no", "false")


def start_generated_build(path: Optional[str], method: str, stiff: str, fs: float) -> bool:
    """Compile the generated loop of the netlist file ``path`` in a detached process (nobody waits);
    False when there is no file or background builds are off.

    Parameters
    ----------
    path : str or None
        The netlist file.
    method, stiff : str
        Scheme and the stiff rule as given.
    fs : float
        Sample rate (the stiff rule depends on the step).
    """
    if not path or not _background() or not Path(path).is_file():
        return False
    try:
        subprocess.Popen([sys.executable, "-m", "phsym.simulation.engines.build_generated", str(path), method, stiff,
                          repr(float(fs))], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True,
                         env={**os.environ, "PHSYM_CACHE_DIR": str(cache_dir())})
    except OSError:
        return False
    return True


def numeric_ready() -> bool:
    """Whether the numeric engine is compiled on this machine (numba's cache; see
    :mod:`.numeric.warmup`)."""
    from .numeric.loop import NumericLoop
    return NumericLoop.ready()


def start_numeric_warmup() -> bool:
    """Compile the numeric engine in a detached process (nobody waits), into the package's directory
    where it is writable (:func:`.numeric.warmup.build_package`); False when background builds are off
    (``PHSYM_AOT=0``)."""
    if not _background():
        return False
    mark = cache_dir() / f"{READY_PREFIX}numeric_warmup"
    try:        # one warm-up at a time: a user running ten small circuits starts one compile, not ten
        if time.time() - mark.stat().st_mtime < WARMUP_WINDOW:
            return False
    except OSError:
        pass
    try:
        atomic_write(mark, lambda fh: fh.write(b"started"))
        from .numeric.freshness import package_writable
        # into the package's directory where possible: every later process finds it there
        subprocess.Popen([sys.executable, "-m", "phsym.simulation.engines.numeric.warmup"]
                         + (["--package"] if package_writable() else []), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return False
    return True


def choose(model, engine: str, scheme: str, stiff: str) -> str:
    """The engine that runs ``model`` (see the module docstring).

    Parameters
    ----------
    model : Model
        The model.
    engine : str
        One of :data:`ENGINES` (or ``"newton"``).
    scheme, stiff : str
        Scheme and resolved stiff rule.
    """
    e = str(engine).strip().lower()
    if e == "auto" and os.environ.get(ENGINE_ENV, "").strip():
        e = os.environ[ENGINE_ENV].strip().lower()
        engine = f"{ENGINE_ENV}={e}"
    e = "generated" if e == "newton" else e
    if e not in ENGINES:
        raise SimulationInputError(f"unknown engine {engine!r}: use auto, generated, numeric or linear")
    if e != "auto":
        return e
    linear = model.is_linear and not model.controls     # the linear path does not drive controls
    return auto_engine(model.size["branches"], linear, model.circuit.numeric_obstacles(),
                       lambda: generated_ready(model, scheme, stiff))


def auto_engine(n: int, linear: bool, obstacles, ready: Callable[[], bool]) -> str:
    """The rule of ``engine="auto"`` (see the module docstring), from what it reads of a circuit.

    Parameters
    ----------
    n : int
        Number of branches.
    linear : bool
        Whether the linear engine can run it (linear laws, no controls).
    obstacles : sequence
        What the numeric engine cannot run (:meth:`~phsym.structure.circuit.data.CircuitData.numeric_obstacles`).
    ready : callable
        Whether the circuit's generated loop is compiled on this machine (asked only for a small
        nonlinear circuit).
    """
    if n <= LINEAR_LIMIT and obstacles:
        return "linear" if linear else "generated"
    if linear:
        return "linear" if n <= LINEAR_LIMIT else "numeric"
    if n <= GENERATED_LIMIT and (ready() or not numeric_ready()):
        # not ready: a first run on this machine, where the circuit's own loop compiles in seconds
        # and the engine takes about a minute once (started in the background by the Simulator)
        return "generated"
    return "numeric"
