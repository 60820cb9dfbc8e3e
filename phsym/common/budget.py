"""Memory budgets: a job that would not fit says so before it starts.

phsym estimates what a job needs from counts it knows before allocating
(elements after flattening, branches, steps times recorded columns) and
compares it with what this machine can give: the smallest of the memory
the kernel reports available (``MemAvailable`` in ``/proc/meminfo``), the
cgroup's limit less its use (containers, CI runners) and the address-space
limit (``ulimit -v``).  The environment variable ``PHSYM_MEMORY_LIMIT``
(``"2G"``, ``"512M"``, bytes) sets the budget instead.  A job asking more
than :data:`FRACTION` of it raises :class:`~phsym.errors.ResourceError`
naming the estimate, its parts and what to change; nothing is allocated.

The per-item figures are measured (docs/benchmarks.md, "Memory"), with a
margin: an estimate errs towards refusing a job that would have fitted
narrowly rather than letting one eat the machine.

Examples
--------
>>> parse_size("1.5G"), parse_size("512M"), parse_size("4096")
(1610612736, 536870912, 4096)
>>> human(3 * 2**30)
'3.0 GB'
"""
from __future__ import annotations

import os
import resource
from pathlib import Path
from typing import Mapping, Optional

from ..errors import ResourceError

__all__ = ["FRACTION", "LIMIT_ENV", "BYTES_PER_ELEMENT", "available", "parse_size", "human", "check"]

#: Environment variable giving the budget in bytes (suffixes K, M, G, T).
LIMIT_ENV = "PHSYM_MEMORY_LIMIT"
#: Share of the budget one job may plan to use.
FRACTION = 0.8
#: Peak bytes per flattened element from parsing to a running numeric engine
#: (measured up to ~12 kB on RC meshes and gate chains; twice that here).
BYTES_PER_ELEMENT = 24_000

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text: str) -> int:
    """Bytes of a size such as ``"2G"``, ``"512M"``, ``"1.5g"`` or ``"4096"``."""
    s = str(text).strip().upper().removesuffix("B").removesuffix("I")
    unit = s[-1:] if s[-1:] in _UNITS and s[-1:] else ""
    number = s[:-1] if unit else s
    try:
        value = float(number)
    except ValueError:
        raise ResourceError(f"{LIMIT_ENV}={text!r} is not a size (examples: 2G, 512M, 1000000)") from None
    if not value > 0 or value != value or value == float("inf"):
        raise ResourceError(f"{LIMIT_ENV}={text!r} must be a positive size")
    return int(value * _UNITS[unit])


def human(n: float) -> str:
    """``n`` bytes as a short text (``'3.0 GB'``)."""
    for unit, size in (("TB", 2**40), ("GB", 2**30), ("MB", 2**20), ("kB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def _meminfo() -> Optional[int]:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup() -> Optional[int]:
    root = Path("/sys/fs/cgroup")
    for limit, used in ((root / "memory.max", root / "memory.current"),
                        (root / "memory" / "memory.limit_in_bytes", root / "memory" / "memory.usage_in_bytes")):
        try:
            text = limit.read_text().strip()
            if text == "max" or int(text) >= 2**60:
                continue
            return int(text) - int(used.read_text().strip())
        except (OSError, ValueError):
            continue
    return None


def _rlimit() -> Optional[int]:
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    return soft - used


def available() -> Optional[int]:
    """Bytes this process may still use (``PHSYM_MEMORY_LIMIT`` if set; ``None`` if unknown)."""
    env = os.environ.get(LIMIT_ENV)
    if env:
        return parse_size(env)
    found = []
    for probe in (_meminfo, _cgroup, _rlimit):
        try:
            value = probe()
        except OSError:
            value = None
        if value is not None:
            found.append(max(value, 0))
    return min(found) if found else None


def check(what: str, need: float, parts: Optional[Mapping[str, float]] = None, hint: str = "") -> None:
    """Raise :class:`~phsym.errors.ResourceError` when ``need`` bytes do not fit the budget.

    Parameters
    ----------
    what : str
        The job, as the message names it (``"a run of 2000000 steps"``).
    need : float
        Estimated peak bytes.
    parts : mapping of str to float, optional
        What the estimate is made of, by name, for the message.
    hint : str
        What the user can change.
    """
    budget = available()
    if budget is None or need <= FRACTION * budget:
        return
    detail = ""
    if parts:
        detail = " (" + ", ".join(f"{k} {human(v)}" for k, v in parts.items() if v) + ")"
    source = f"{LIMIT_ENV}" if os.environ.get(LIMIT_ENV) else "available memory"
    raise ResourceError(f"{what} needs about {human(need)}{detail}, more than {FRACTION:.0%} of the "
                        f"{human(budget)} this machine can give ({source}); nothing was allocated"
                        + (f"\nhint: {hint}" if hint else ""))
