"""Regenerate the ngspice reference waveforms of the deck corpus (not run by CI).

Run from the repository root (needs ngspice on PATH; phsym only to list nodes)::

    PYTHONPATH=. python tests/decks/make_refs.py [DECK ...]

For each ``tests/decks/NAME.cir`` a temporary copy ``.ref_NAME.cir`` is
written next to it (so ``.include``/``.lib`` paths resolve the same way)
with the deck's ``.tran`` card moved into a ``.control`` block::

    .options reltol=1e-6 abstol=1e-12 vntol=1e-9 method=gear   (method=trap if Gear aborts)
    .control
    set wr_singlescale
    set wr_vecnames
    tran TSTEP TSTOP 0 TMAX [uic]      (TMAX = TSTEP/50)
    wrdata OUT v(node) ...
    quit
    .endc

(``.save`` cards are dropped: ``wrdata`` writes every top-level node) and
``ngspice -b .ref_NAME.cir`` is run in the deck's folder.  ngspice's
adaptive time points are linearly interpolated (the step is at most
TSTEP/50) onto ``GRID_POINTS`` uniform points over ``[0, TSTOP]`` and stored
in ``refs/NAME.npz``: ``t``, ``names`` (top-level nodes), ``v`` (one row
per node), ``command`` (the ngspice command line and the control lines),
``ngspice`` (its version line).  The deck files themselves are unchanged,
so ``phsym simulate DECK`` runs exactly what ngspice ran.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DECKS, GRID_POINTS, REFS, deck_paths, ngspice_version, signal_nodes  # noqa: E402

#: tried in order: Gear-2 first (ngspice's trapezoidal rule rings after a diode
#: cuts an inductor's current off, e.g. the transformer deck), trapezoidal when
#: ngspice aborts with Gear ("timestep too small" on the RL half-wave deck)
OPTIONS = (".options reltol=1e-6 abstol=1e-12 vntol=1e-9 method=gear",
           ".options reltol=1e-6 abstol=1e-12 vntol=1e-9 method=trap")
TMAX_DIVISOR = 50


def _wrapper(path: Path, out: Path, nodes, options: str, tmax_divisor: float = TMAX_DIVISOR):
    """The deck's text with its ``.tran`` (and ``.save``) cards moved into a ``.control`` block."""
    from phsym.netlist.cards import deck_settings
    tran = deck_settings(path).tran
    lines = []
    for line in path.read_text().splitlines():
        card = line.strip().lower()
        if card.startswith((".tran", ".save")) or card == ".end":   # .save would hide the nodes wrdata writes
            continue
        lines.append(line)
    control = ["set wr_singlescale", "set wr_vecnames",
               f"tran {tran.step!r} {tran.stop!r} 0 {tran.step / tmax_divisor!r}" + (" uic" if tran.uic else ""),
               f"wrdata {out.name} " + " ".join(f"v({n})" for n in nodes), "quit"]
    lines += [options, ".control", *control, ".endc", ".end"]
    return "\n".join(lines) + "\n", tran, control


def make_reference(path: Path, refs: Path = REFS, tmax_divisor: float = TMAX_DIVISOR, dtype=np.float64) -> Path:
    """Run ngspice on one deck and store its reference; returns the .npz path.

    Parameters
    ----------
    path : Path
        The deck; ngspice runs in its folder.
    refs : Path, default ``tests/decks/refs``
        Where ``NAME.npz`` is written.
    tmax_divisor : float, default 50
        ngspice's largest step is ``TSTEP / tmax_divisor``.
    dtype : numpy dtype, default float64
        Type of the stored node voltages (float32 halves a large reference).
    """
    errors = []
    for options in OPTIONS:
        try:
            return _make_reference(path, options, refs, tmax_divisor, dtype)
        except RuntimeError as exc:
            errors.append(str(exc))
    raise RuntimeError("\n".join(errors))


def _make_reference(path: Path, options: str, refs: Path, tmax_divisor: float, dtype) -> Path:
    nodes = signal_nodes(path)
    folder = path.resolve().parent
    tmp = folder / f".ref_{path.stem}.cir"
    out = folder / f".ref_{path.stem}.txt"
    text, tran, control = _wrapper(path, out, nodes, options, tmax_divisor)
    tmp.write_text(text)
    try:
        cmd = ["ngspice", "-b", tmp.name]
        proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"ngspice failed on {path.name}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        data = np.loadtxt(out, skiprows=1)
    finally:
        tmp.unlink(missing_ok=True)
        out.unlink(missing_ok=True)
    t = data[:, 0]
    if t[-1] < tran.stop * (1 - 1e-9):
        raise RuntimeError(f"ngspice stopped at t = {t[-1]:g} < TSTOP = {tran.stop:g} on {path.name}:\n"
                           f"{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
    keep = np.concatenate([[True], np.diff(t) > 0])     # ngspice repeats breakpoints
    grid = np.linspace(0.0, tran.stop, GRID_POINTS)
    values = np.array([np.interp(grid, t[keep], data[keep, 1 + i]) for i in range(len(nodes))], dtype=dtype)
    version = ngspice_version()
    refs.mkdir(exist_ok=True)
    dest = refs / f"{path.stem}.npz"
    np.savez_compressed(dest, t=grid, names=np.array(nodes), v=values,
                        command=np.array(" ".join(cmd) + " | " + options + " | " + "; ".join(control)),
                        ngspice=np.array(version))
    return dest


def main(argv) -> None:
    paths = [DECKS / a if not Path(a).exists() else Path(a) for a in argv] or deck_paths()
    failed = []
    for p in paths:
        try:
            dest = make_reference(Path(p))
        except RuntimeError as exc:
            failed.append(Path(p).name)
            print(exc)
            continue
        print(f"{Path(p).name}: {dest.relative_to(DECKS)} ({dest.stat().st_size} bytes)")
    if failed:
        sys.exit(f"ngspice failed on {', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1:])
