"""Warm start: a netlist simulated before runs again without sympy.

Building a model (sympy, networkx) and importing scipy cost more than a second
in a fresh process, while the compiled loop of a cached netlist loads in a
fraction of that.  After :func:`phsym.simulate` has run a netlist *file*
with its own parameter values, it stores the run's
:class:`~phsym.simulation.plan.RunPlan` (numbers only: parameter array,
state scales, initial state from the ICs, waveform arguments, the linear
matrices or the key of the generated module, the probe vectors and names).
The next :func:`phsym.simulate` of the same file text, sample rate, method
and options loads the plan and runs it: the same :meth:`RunPlan.run` as the
symbolic path, so the arrays are identical.

The snapshot key covers the netlist text, the sample rate, the method, the
options, phsym's version and the size and modification time of phsym's own
source files, so an edited netlist or an updated phsym never reuses an old
snapshot.  Runs with parameter overrides, ``x0="dc"`` with given inputs
and :class:`~phsym.model.Model` objects take the symbolic path; with the
netlist's own waveforms, ``x0="dc"`` is stored as the snapshot's initial
state (under its own key).

A small circuit that ``engine="auto"`` ran on the numeric engine because
its generated loop was not compiled yet (a first run) leaves an *upgrade
request* beside its snapshot.  The background build of the generated loop
(:mod:`.engines.build_generated`) then saves the snapshot again on the
generated loop, so the next run loads that (faster to load and to step);
a snapshot whose generated loop is compiled but which was not moved (the
build and the request raced, or the move failed) is dropped by
:func:`outdated`, and that run takes the symbolic path once.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from ..common.fingerprint import code_fingerprint
from ..common.guard import discard
from ..common.paths import atomic_write, cache_dir
from .plan import FORMAT, RunPlan

__all__ = ["snapshot_key", "save_plan", "load_plan", "snapshot_file", "SNAPSHOT_PREFIX", "UPGRADE_PREFIX",
           "upgrade_file", "request_upgrade", "upgrade_request", "outdated"]

SNAPSHOT_PREFIX = "phsym_run_"
UPGRADE_PREFIX = "phsym_upgrade_"


def snapshot_key(text: bytes, fs: float, method: str, options: Mapping[str, object]) -> str:
    """Key of the snapshot of a netlist run.

    Parameters
    ----------
    text : bytes
        Netlist file contents.
    fs : float
        Sample rate.
    method : str
        Scheme name as given.
    options : mapping
        Simulator options.
    """
    h = hashlib.sha256(f"{code_fingerprint()}\0{FORMAT}".encode())
    for part in (text, repr(float(fs)).encode(), str(method).lower().encode(),
                 repr(sorted((str(k), repr(v)) for k, v in options.items())).encode()):
        h.update(part)
        h.update(b"\0")
    return h.hexdigest()[:24]


def snapshot_file(key: str) -> Path:
    """Path of the snapshot with ``key`` in the cache directory.

    Parameters
    ----------
    key : str
        See :func:`snapshot_key`.
    """
    return cache_dir() / f"{SNAPSHOT_PREFIX}{key}.npz"


def save_plan(plan: RunPlan, key: str) -> None:
    """Write the plan atomically (temporary file, then :func:`os.replace`).

    Parameters
    ----------
    plan : RunPlan
        A plan at the netlist's own parameter values.
    key : str
        See :func:`snapshot_key`.
    """
    meta, arrays = plan.to_arrays()
    atomic_write(snapshot_file(key), lambda fh: np.savez(fh, meta=np.array(json.dumps(meta)), **arrays))


def load_plan(key: str) -> Optional[RunPlan]:
    """The stored plan with ``key``, or ``None`` if missing, damaged or of another format.

    A damaged snapshot (truncated or garbled: the zip's CRC, the JSON or the
    arrays do not decode) is removed with a :class:`~phsym.errors.CacheWarning`;
    the symbolic path then writes a new one.

    Parameters
    ----------
    key : str
        See :func:`snapshot_key`.
    """
    path = snapshot_file(key)
    if not path.exists():
        return None
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PK\x03\x04":
                raise ValueError("not a zip archive (truncated or garbled)")
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            arrays = {k: data[k] for k in data.files if k != "meta"}
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            return None
        return RunPlan.from_arrays(meta, arrays)
    except FileNotFoundError:     # removed meanwhile by another process
        return None
    except Exception as exc:     # any decoding failure means damage  # noqa: BLE001
        discard([path], f"snapshot: {type(exc).__name__}: {exc}")
        return None


def upgrade_file(key: str) -> Path:
    """Path of the upgrade request of the snapshot ``key``.

    Parameters
    ----------
    key : str
        See :func:`snapshot_key`.
    """
    return cache_dir() / f"{UPGRADE_PREFIX}{key}.json"


def request_upgrade(key: str, fp: str, path: str, fs: float, method: str, options: Mapping[str, object],
                    dc: bool) -> bool:
    """Ask the background build of the generated loop ``fp`` to save the snapshot ``key`` on it;
    False when the options do not serialise (the snapshot then stays on the numeric engine).

    Parameters
    ----------
    key : str
        See :func:`snapshot_key`.
    fp : str
        Fingerprint of the generated loop being built (:func:`~.engines.choice.fingerprint`).
    path : str
        The netlist file.
    fs : float
        Sample rate.
    method : str
        Scheme name as given to :func:`phsym.simulate`.
    options : mapping
        Simulator options as given.
    dc : bool
        Whether the run started at its DC point.
    """
    try:
        body = json.dumps({"fp": fp, "path": str(path), "fs": float(fs), "method": str(method),
                           "options": dict(options), "dc": bool(dc)}, allow_nan=False)
    except (TypeError, ValueError):
        return False
    try:
        atomic_write(upgrade_file(key), lambda fh: fh.write(body.encode()))
    except OSError:
        return False
    return True


def upgrade_request(path: Path) -> Optional[dict]:
    """The decoded request in ``path``, or ``None`` when it is missing or damaged (then removed).

    Parameters
    ----------
    path : Path
        An :func:`upgrade_file`.
    """
    try:
        req = json.loads(path.read_text())
        if not isinstance(req, dict) or not isinstance(req.get("fp"), str):
            raise ValueError("not an upgrade request")
        return req
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        discard([path], f"upgrade request: {type(exc).__name__}: {exc}")
        return None


def outdated(key: str) -> bool:
    """Whether the snapshot ``key`` waits for a generated loop that is compiled now but did not
    receive it; the snapshot and its request are then removed (two file checks otherwise).

    Parameters
    ----------
    key : str
        See :func:`snapshot_key`.
    """
    path = upgrade_file(key)
    if not path.exists():
        return False
    req = upgrade_request(path)
    from .engines.choice import ready_module
    if req is None or ready_module(req["fp"]) is None:
        return False
    for p in (snapshot_file(key), path):
        try:
            p.unlink()
        except OSError:
            pass
    return True
