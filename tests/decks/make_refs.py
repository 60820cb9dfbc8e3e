"""Regenerate the ngspice reference waveforms of the deck corpus (not run by CI).

Run from the repository root (needs ngspice on PATH; phsym only to list nodes)::

    PYTHONPATH=. python tests/decks/make_refs.py [DECK ...]

Decks under ``tests/decks/wild`` get every analysis they ask for
(:func:`make_wild_reference`; see ``tests/decks/wild_corpus.py``).

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

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DECKS, GRID_POINTS, REFS, deck_paths, ngspice_version, signal_nodes  # noqa: E402
from wild_corpus import REFERENCE_EDITS, WILD, WILD_REFS, analysis_cards, wild_paths  # noqa: E402

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


#: cards the wild wrapper leaves out: the analyses (run from its control block) and output requests
_DROPPED = (".tran", ".ac", ".dc", ".tf", ".op", ".four", ".fourier", ".print", ".plot", ".probe", ".save",
            ".width", ".backanno", ".end")


def _wild_wrapper(path: Path, options: str):
    """The deck's text with its analyses moved into a control block that writes every vector."""
    from phsym.netlist.cards import deck_settings
    cards = analysis_cards(path)
    text = path.read_text(encoding="utf-8-sig")
    edits = REFERENCE_EDITS.get(path.stem, [])
    for old, new, _why in edits:
        if old not in text:
            raise RuntimeError(f"{path.name}: reference edit {old!r} not found")
        text = text.replace(old, new)
    lines, skip = [], False
    for k, line in enumerate(text.splitlines()):
        card = line.strip().lower()
        if k and card.startswith("+") and skip:
            continue
        skip = k > 0 and bool(card) and card.split()[0] in _DROPPED
        if not skip:
            lines.append(line)
    control = ["set wr_singlescale", "set wr_vecnames"]
    for name in ("op", "tf", "dc", "ac", "tran"):
        if name not in cards:
            continue
        if name == "tran":
            tran = deck_settings(path).tran
            control.append(f"tran {tran.step!r} {tran.stop!r} 0 {tran.step / TMAX_DIVISOR!r}"
                           + (" uic" if tran.uic else ""))
        else:
            control.append(cards[name].split(None, 1)[0][1:] + " " + (cards[name].split(None, 1) + [""])[1])
        if name == "tf":
            control.append("print all")
        else:
            control.append(f"wrdata .wild_{path.stem}_{name}.txt all")
        if name == "tran" and "four" in cards:         # after wrdata: its vectors have other lengths
            control.append("fourier " + cards["four"].split(None, 1)[1])
    control.append("quit")
    lines += [options, ".control", *control, ".endc", ".end"]
    return "\n".join(lines) + "\n", control, edits


def _columns(path: Path, complex_values: bool, scaled: bool = True):
    """Vectors of an ngspice ``wrdata ... all`` file: top-level node voltages ``v(n)`` and source
    currents ``i(vname)`` (subcircuit-internal vectors and repeated scales left out)."""
    head = path.read_text().splitlines()[0].split()
    data = np.atleast_2d(np.loadtxt(path, skiprows=1))
    width = 2 if complex_values else 1
    scale, out = data[:, 0], {}
    for k in range(1 if scaled else 0, len(head), width):        # the first scale is one column, real
        name = head[k]
        col = data[:, k] + 1j * data[:, k + 1] if complex_values else data[:, k]
        low = name.lower()
        if (scaled and low == head[0].lower()) or "." in low:
            continue                    # a repeated scale, a subcircuit's vector
        if low.endswith("#branch"):
            out.setdefault(f"i({low[:-7]})", col)
        elif "#" not in low:            # ngspice writes v(1) for a numeric node, a named one bare
            out.setdefault(low if low.startswith("v(") else f"v({low})", col)
    return (scale.real if complex_values else scale), out


def _printed(stdout: str):
    """``name = value`` lines ngspice prints (``print all``, ``.meas``), and Fourier tables."""
    values, four = {}, {}
    current = None
    for line in stdout.splitlines():
        m = re.match(r"\s*([\w#().,:\-]+)\s*=\s*([-+0-9.eE]+)", line)
        if m and not line.lstrip().startswith(("Fourier", "No.", "DC")):
            values.setdefault(m.group(1).lower(), float(m.group(2)))
        m = re.match(r"\s*Fourier analysis for (\S+):", line)
        if m:
            current = m.group(1).rstrip(":").lower()
            four[current] = {"rows": []}
        elif current and "THD:" in line:
            four[current]["thd"] = float(line.split("THD:")[1].split("%")[0])
        elif current and re.match(r"\s*\d+\s+[-+0-9.eE]+\s+[-+0-9.eE]+\s+[-+0-9.eE]+", line):
            four[current]["rows"].append([float(v) for v in line.split()[:5]])
    return values, four


def _stepped_reference(path: Path) -> Path:
    """A deck with ``.step`` (which ngspice-39 does not run): one ngspice run per step, the ``.step``
    card replaced by ``.param NAME=VALUE`` and the parameter's own ``.param`` line removed; the
    transients stacked (``tran_v``: steps x nodes x points) with ``step_names``, ``step_values``."""
    from phsym.netlist.cards import deck_settings
    from phsym.simulation.analyses.steps import step_sets
    sets = step_sets(deck_settings(path).analyses.steps)
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    names = [n.lower() for n in sets[0]]
    kept = [ln for ln in lines if not ln.strip().lower().startswith(".step")
            and not re.match(r"\s*\.param\s+(\w+)\s*=", ln, re.I)
            or (re.match(r"\s*\.param\s+(\w+)\s*=", ln, re.I) and
                re.match(r"\s*\.param\s+(\w+)\s*=", ln, re.I).group(1).lower() not in names)]
    runs, commands = [], []
    for k, values in enumerate(sets):
        tmp = WILD / f"{path.stem}_step{k}.cir"
        tmp.write_text("\n".join(kept[:1] + [f".param {n}={v!r}" for n, v in values.items()] + kept[1:]) + "\n")
        try:
            dest = make_wild_reference(tmp)
        finally:
            tmp.unlink(missing_ok=True)
        with np.load(dest) as z:
            runs.append({k2: z[k2] for k2 in z.files})
        dest.unlink()
        commands.append(str(runs[-1]["command"]) + " [" + ", ".join(f"{n}={v!r}" for n, v in values.items()) + "]")
    out = WILD_REFS / f"{path.stem}.npz"
    np.savez_compressed(out, command=np.array(" || ".join(commands)), ngspice=runs[0]["ngspice"],
                        edits=np.array([".step card replaced by .param NAME=VALUE per step: ngspice-39 has no .step"]),
                        step_names=np.array(list(sets[0])), step_values=np.array([list(v.values()) for v in sets]),
                        tran_t=runs[0]["tran_t"], tran_names=runs[0]["tran_names"],
                        tran_v=np.array([r["tran_v"] for r in runs]))
    return out


def make_wild_reference(path: Path) -> Path:
    """Run ngspice on a wild deck, every analysis it asks for; store ``wild/refs/NAME.npz``."""
    if "step" in analysis_cards(path):
        return _stepped_reference(path)
    errors = []
    for options in OPTIONS:
        try:
            return _make_wild(path, options)
        except RuntimeError as exc:
            errors.append(str(exc))
    raise RuntimeError("\n".join(errors))


def _make_wild(path: Path, options: str) -> Path:
    cards = analysis_cards(path)
    text, control, edits = _wild_wrapper(path, options)
    tmp = WILD / f".ref_{path.stem}.cir"
    tmp.write_text(text)
    outs = {name: WILD / f".wild_{path.stem}_{name}.txt" for name in ("op", "dc", "ac", "tran")}
    store = {}
    try:
        cmd = ["ngspice", "-b", tmp.name]
        proc = subprocess.run(cmd, cwd=WILD, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0 or any(n in cards and not f.exists() for n, f in outs.items()):
            raise RuntimeError(f"ngspice failed on {path.name}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        values, four = _printed(proc.stdout)
        for name, f in outs.items():
            if name not in cards:
                continue
            x, cols = _columns(f, name == "ac", name != "op")
            if name == "tran":
                tran = deck_settings_of(path)
                if x[-1] < tran.stop * (1 - 1e-9):
                    raise RuntimeError(f"ngspice stopped at t = {x[-1]:g} on {path.name}:\n{proc.stdout[-1500:]}")
                keep = np.concatenate([[True], np.diff(x) > 0])
                grid = np.linspace(0.0, tran.stop, GRID_POINTS)
                cols = {k: np.interp(grid, x[keep], v[keep]) for k, v in cols.items() if k.startswith("v(")}
                x = grid
            if name != "op":
                store[f"{name}_{'t' if name == 'tran' else 'f' if name == 'ac' else 'x'}"] = x
            store[f"{name}_names"] = np.array(list(cols))
            store[f"{name}_v"] = np.array([c[0] for c in cols.values()] if name == "op" else list(cols.values()))
    finally:
        tmp.unlink(missing_ok=True)
        for f in outs.values():
            f.unlink(missing_ok=True)
    if "tf" in cards:
        keys = [k for k in values if k == "transfer_function" or "impedance" in k]
        store["tf_names"], store["tf_v"] = np.array(keys), np.array([values[k] for k in keys])
    meas = [m.group(1).lower() for m in re.finditer(r"^\s*\.meas\w*\s+\w+\s+(\w+)", path.read_text(),
                                                       re.IGNORECASE | re.MULTILINE)]
    if meas:
        missing = [m for m in meas if m not in values]
        if missing:
            raise RuntimeError(f"ngspice printed no value for .meas {', '.join(missing)} of {path.name}")
        store["meas_names"], store["meas_v"] = np.array(meas), np.array([values[m] for m in meas])
    if four:
        store["four_names"] = np.array(list(four))
        store["four_v"] = np.array([np.array(f["rows"]) for f in four.values()])
        store["four_thd"] = np.array([f.get("thd", np.nan) for f in four.values()])
    version = ngspice_version()
    WILD_REFS.mkdir(exist_ok=True)
    dest = WILD_REFS / f"{path.stem}.npz"
    np.savez_compressed(dest, command=np.array(" ".join(cmd) + " | " + options + " | " + "; ".join(control)),
                        ngspice=np.array(version), edits=np.array([f"{o!r} -> {n!r}: {w}" for o, n, w in edits]),
                        **store)
    return dest


def deck_settings_of(path: Path):
    """The ``.tran`` card of a deck (phsym's reader of control cards)."""
    from phsym.netlist.cards import deck_settings
    return deck_settings(path).tran


def main(argv) -> None:
    paths = [DECKS / a if not Path(a).exists() else Path(a) for a in argv] or deck_paths() + wild_paths()
    failed = []
    for p in paths:
        try:
            p = Path(p)
            dest = (make_wild_reference if p.resolve().parent == WILD else make_reference)(p)
        except RuntimeError as exc:
            failed.append(Path(p).name)
            print(exc)
            continue
        print(f"{p.name}: {dest.relative_to(DECKS)} ({dest.stat().st_size} bytes)")
    if failed:
        sys.exit(f"ngspice failed on {', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1:])
