"""The SPICE deck corpus: list of decks, how phsym runs one, where its ngspice reference lives.

Shared by ``tests/test_spice_corpus.py``, ``tests/decks/make_refs.py`` and
``benchmarks/bench_spice.py``.  A deck is run exactly as ``phsym simulate
DECK`` runs it with no flags: rate ``1/TSTEP`` and duration ``TSTOP`` of its
``.tran`` card, from the DC operating point unless ``UIC``, with the
deck's ``.options``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List

import numpy as np

DECKS = Path(__file__).resolve().parent
REFS = DECKS / "refs"
#: points of the uniform reference grid over [0, TSTOP]
GRID_POINTS = 401


def deck_paths() -> List[Path]:
    """Every deck of the corpus (``tests/decks/*.cir``), sorted by name."""
    return sorted(DECKS.glob("*.cir"))


#: decks phsym simulates and ngspice 39 does not (no reference), with the reason
NO_REFERENCE = {
    "bridge_1n4001": "ngspice-39 aborts with 'Timestep too small' near 7.2 ms (floating source, all "
                     "four diodes off, no junction capacitance), with default and with tight options",
}


def source_nodes(path: Path) -> List[str]:
    """Nodes whose potential ideal voltage sources fix from the datum (the source waveforms themselves)."""
    from phsym.netlist import load_netlist
    fixed = {"0"}
    vs = [el.nodes for el in load_netlist(path).elements if el.kind == "vsource"]
    grown = True
    while grown:
        grown = False
        for a, b in vs:
            if (a in fixed) != (b in fixed):
                fixed |= {a, b}
                grown = True
    return sorted(fixed - {"0"})


def signal_nodes(path: Path) -> List[str]:
    """Top-level non-datum nodes of a deck (no subcircuit or internal diode nodes)."""
    from phsym.netlist import load_netlist
    nodes = []
    for el in load_netlist(path).elements:
        for n in el.nodes:
            if n != "0" and "." not in n and "#" not in n and n not in nodes:
                nodes.append(n)
    return nodes


def run_deck(path: Path, **kw):
    """Simulate a deck as ``phsym simulate DECK`` does (keywords go to ``phsym.simulate``)."""
    from phsym.netlist.cards import deck_settings
    from phsym.simulation.run import simulate
    deck = deck_settings(path)
    x0 = None if deck.x0 == "ic" else deck.x0
    return simulate(str(path), deck.tran.fs, duration=deck.tran.stop, x0=x0,
                    **{**deck.simulator_options(), **kw})


def node_waveforms(res, nodes: List[str], grid: np.ndarray) -> Dict[str, np.ndarray]:
    """Node potentials of a phsym result, linearly interpolated onto ``grid``.

    Probes are step values: for the midpoint-type schemes they approximate
    the potential at the step's midpoint ``t_k + h/2`` (to second order),
    for backward Euler the value at the step's end.
    """
    h = res.t[1] - res.t[0]
    method = str(res.info.get("method", res.info.get("scheme", "")))
    shift = 0.0 if "backward" in method else h / 2
    t_mid = res.t_step - shift
    out = {}
    for n in nodes:
        v = np.asarray(res[f"v({n})"], dtype=float)
        out[n] = np.where((grid >= t_mid[0]) & (grid <= t_mid[-1]), np.interp(grid, t_mid, v), np.nan)
    return out


def ngspice_version() -> str:
    """ngspice's version line (``ngspice-39 : Circuit level simulation program``), or ``""``."""
    import subprocess
    out = subprocess.run(["ngspice", "--version"], capture_output=True, text=True).stdout
    return next((ln.strip("* ").strip() for ln in out.splitlines() if "ngspice" in ln.lower()), "")


def load_reference(path: Path, refs: Path = REFS):
    """``(t, {node: values}, command)`` of a deck's stored ngspice reference (``refs/NAME.npz``;
    the circuits of any size keep theirs in ``tests/decks/scale/refs``)."""
    with np.load(refs / f"{path.stem}.npz", allow_pickle=False) as z:
        names = [str(s) for s in z["names"]]
        return z["t"], {n: z["v"][i] for i, n in enumerate(names)}, str(z["command"])
