"""SPICE decks of circuits of any size, read unmodified by ngspice-39 and by phsym.

Four families, each a function of one size returning the deck's text:

* :func:`ttl_nand_chain`: ``n`` two-input TTL NAND gates (7400-style:
  multi-emitter input, phase splitter, totem-pole output; 5 BJTs and 3
  diodes a gate), each gate's inputs tied to the previous gate's output;
* :func:`rtl_chain`: ``n`` RTL gates (resistor-transistor logic), NOR2 and
  inverter alternating, each driven by the previous one;
* :func:`rc_mesh`: an ``n x n`` grid of resistors with a capacitor from
  every node to ground, driven at a corner (linear);
* :func:`diode_ladder`: a Cockcroft-Walton voltage multiplier of ``n``
  diodes (``n / 2`` stages of two diodes and two capacitors).

The gates are written as nested subcircuits (a gate subcircuit instantiating
smaller ones), the devices through ``.model`` cards with junction
capacitances and transit times, so the transients exercise junction
charges.  Every deck holds ``.tran h T 0 h`` (ngspice's step never exceeds
phsym's fixed step ``h``), ``.save`` of a few node voltages (ngspice keeps
only those in memory; phsym skips the card with a warning) and ``.end``.

:data:`FAMILIES` names the families with their sizes for the benchmark
(``benchmarks/bench_scale.py``); :func:`deck_size` counts a deck's elements
and nodes from its size alone.

Examples
--------
>>> text = ttl_nand_chain(2)
>>> text.splitlines()[0]
'* Chain of 2 TTL NAND gates (10 BJTs, 6 diodes), 5 V, PULSE input'
>>> deck_size("ttl", 2).elements, deck_size("rc_mesh", 100).nodes
(28, 10001)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional, Sequence, Tuple

from .logic import rtl_gate_counts, rtl_chain, ttl_nand_chain
from .spice import duration, num, positive_int, save, tran

__all__ = ["ttl_nand_chain", "rtl_chain", "rc_mesh", "diode_ladder", "deck_size", "write_decks", "DeckSize", "Family",
           "FAMILIES"]

#: small-signal switching diode of the ladder (1N4148-like, no transit time)
LADDER_DIODE = ".model DL D(IS=2.52n N=1.752 RS=0.568 CJO=4p VJ=0.75 M=0.4)"


# ------------------------------------------------------------------ RC mesh
def mesh_node(i: int, j: int) -> str:
    """Name of the mesh node in row ``i``, column ``j`` (from 0): ``n{i}_{j}``."""
    return f"n{i}_{j}"


def rc_mesh(n: int, *, r: float = 1e3, c: float = 1e-9, rs: float = 100.0, step: float = 0.2e-6,
            steps: int = 1000) -> str:
    """An ``n x n`` RC mesh (linear): resistors between neighbours, a capacitor from each node to ground.

    Node ``n{i}_{j}`` (row ``i``, column ``j``, from 0) connects to its
    right and lower neighbours through ``r``; every node has ``c`` to
    ground; the corner ``n0_0`` is driven by ``V1`` (a 0-1 V ``PULSE`` with
    a rise of five steps, then held) through ``rs``, which keeps ``V1``
    off the corner's capacitor (a capacitor across a source would make the
    circuit index 2).  The network is passive and linear: the trapezoidal
    rule on its modified nodal equations is phsym's midpoint rule, which
    ``tests/scale_support.py`` uses as an independent reference.

    Size: ``n^2`` capacitors, ``2 n (n - 1)`` mesh resistors, ``rs`` and
    ``V1``: ``3 n^2 - 2 n + 2`` elements, ``n^2 + 1`` nodes (200 x 200:
    40,001 nodes, 119,602 elements).  Time constants from ``r c`` (1 us)
    to about ``n^2 r c`` (the slowest mode); a step of ``r c / 5``
    resolves the fastest local exchange.

    Parameters
    ----------
    n : int
        Nodes along a side, at least 1.
    r, c, rs : float
        Mesh resistance, node capacitance, source resistance.
    step : float, default 0.2 us
        Fixed step ``h``.
    steps : int, default 1000
        Number of steps: ``T = steps h``.

    Returns
    -------
    str
        The deck; ``.save`` keeps the source node, the driven corner, the
        middle node and the far corner.

    Examples
    --------
    >>> print(rc_mesh(1))  # doctest: +NORMALIZE_WHITESPACE
    * RC mesh 1 x 1 (1 nodes, 0 resistors between neighbours), corner-driven
    V1 src 0 PULSE(0 1 0 1e-06 1e-06 1 2)
    RS src n0_0 100
    C0_0 n0_0 0 1e-09
    .save v(src) v(n0_0)
    .tran 2e-07 0.0002 0 2e-07
    .end
    """
    n = positive_int(n, "n")
    steps = positive_int(steps, "steps")
    lines = [f"* RC mesh {n} x {n} ({n * n} nodes, {2 * n * (n - 1)} resistors between neighbours), corner-driven",
             f"V1 src 0 PULSE(0 1 0 {num(5 * step)} {num(5 * step)} 1 2)", f"RS src {mesh_node(0, 0)} {num(rs)}"]
    for i in range(n):
        for j in range(n):
            here = mesh_node(i, j)
            if j + 1 < n:
                lines.append(f"RH{i}_{j} {here} {mesh_node(i, j + 1)} {num(r)}")
            if i + 1 < n:
                lines.append(f"RV{i}_{j} {here} {mesh_node(i + 1, j)} {num(r)}")
            lines.append(f"C{i}_{j} {here} 0 {num(c)}")
    probes = list(dict.fromkeys(["src", mesh_node(0, 0), mesh_node(n // 2, n // 2), mesh_node(n - 1, n - 1)]))
    lines += save(probes) + [tran(step, steps * step), ".end"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ diode ladder
LADDER_SUBCKT = """\
* one Cockcroft-Walton stage: pump capacitor (a column), smoothing capacitor (b column), two diodes
.subckt cw_stage ai ao bi bo
CA ai ao 100n
CB bi bo 100n
DA bi ao DL
DB ao bo DL
.ends cw_stage"""


def diode_ladder(n_diodes: int, *, amplitude: float = 5.0, freq: float = 10e3, step: float = 0.5e-6,
                 stop: Optional[float] = None, steps: Optional[int] = None, rload: float = 10e6) -> str:
    """A Cockcroft-Walton voltage multiplier (diode-capacitor ladder) of ``n_diodes`` diodes.

    ``n_diodes / 2`` stages ``X1 ... Xs`` of the subcircuit ``cw_stage``:
    stage ``k`` has the pump capacitor from ``a{k-1}`` to ``a{k}``, the
    smoothing capacitor from ``b{k-1}`` to ``b{k}`` (``b0`` is ground; 100
    nF each) and the diodes ``b{k-1} -> a{k}`` and ``a{k} -> b{k}``
    (:data:`LADDER_DIODE`: ``CJO``, ``RS``).  ``V1`` (``SIN`` of
    ``amplitude`` at ``freq``) drives ``a0`` through 10 ohm; ``rload``
    loads the output ``b{s}``.  The run starts discharged (``UIC``): each
    period pumps charge one stage further, a peak-detector cascade whose
    stage ``k`` charges towards ``2 k`` times the amplitude (less the diode
    drops) over many periods.

    Size: ``2 n + 3`` elements (``n`` diodes, ``n`` capacitors, the
    source, its resistor and the load), ``n + 2`` nodes.

    Parameters
    ----------
    n_diodes : int
        Number of diodes, even, at least 2 (2,000 diodes: 1,000 stages).
    amplitude, freq : float
        Source amplitude [V] and frequency [Hz].
    step : float, default 0.5 us
        Fixed step ``h`` (200 steps a period at 10 kHz).
    stop : float, optional
        Duration ``T``; default 1 ms (ten periods, 2,000 steps).
    steps : int, optional
        Number of steps, instead of ``stop``: ``T = steps h``.
    rload : float
        Load resistance at the output.

    Returns
    -------
    str
        The deck; ``.save`` keeps the source and every ``b`` node (the
        multiplier's outputs, at most 16 of them, spread over the ladder).

    Examples
    --------
    >>> [ln for ln in diode_ladder(4).splitlines() if ln.startswith(("X", "RL"))]
    ['X1 a0 a1 0 b1 cw_stage', 'X2 a1 a2 b1 b2 cw_stage', 'RL b2 0 10000000']
    """
    n = positive_int(n_diodes, "n_diodes", 2, even=True)
    stop = duration(step, stop, steps, 1e-3)
    s = n // 2
    lines = [f"* Cockcroft-Walton multiplier: {s} stages, {n} diodes, {n} capacitors, SIN input, from rest (UIC)",
             LADDER_DIODE, LADDER_SUBCKT,
             f"V1 ac 0 SIN(0 {num(amplitude)} {num(freq)})", "RS ac a0 10"]
    for k in range(1, s + 1):
        lines.append(f"X{k} a{k - 1} a{k} {'0' if k == 1 else f'b{k - 1}'} b{k} cw_stage")
    lines.append(f"RL b{s} 0 {num(rload)}")
    outs = sorted({1 + (s - 1) * i // 15 for i in range(16)} if s > 16 else range(1, s + 1))
    lines += save(["ac"] + [f"b{k}" for k in outs]) + [tran(step, stop, uic=True), ".end"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ sizes
@dataclass(frozen=True)
class DeckSize:
    """Counts of a deck: flattened elements, nodes (without the datum and the
    devices' internal nodes), BJTs and diodes."""

    elements: int
    nodes: int
    bjts: int
    diodes: int


def _ttl_size(n: int) -> DeckSize:
    return DeckSize(13 * n + 2, 7 * n + 2, 5 * n, 3 * n)


def _rtl_size(n: int) -> DeckSize:
    nor, inv = rtl_gate_counts(n)
    return DeckSize(6 * nor + 4 * inv + 2, 3 * nor + 2 * inv + 2, 2 * nor + inv, 0)


def _mesh_size(n: int) -> DeckSize:
    return DeckSize(3 * n * n - 2 * n + 2, n * n + 1, 0, 0)


def _ladder_size(n: int) -> DeckSize:
    return DeckSize(2 * n + 3, n + 2, 0, n)


@dataclass(frozen=True)
class Family:
    """A family of decks for the scale benchmark.

    Attributes
    ----------
    name : str
        Short name (``--family`` of ``benchmarks/bench_scale.py``).
    build : callable
        ``build(size, **options) -> str``, the deck.
    count : callable
        ``count(size) -> DeckSize``.
    size_label : str
        What the size counts (``gates``, ``n (n x n nodes)``, ``diodes``).
    sizes : tuple of int
        The benchmark's sizes, up to the largest.
    quick : tuple of int
        Sizes of a quick run.
    """

    name: str
    build: Callable[..., str]
    count: Callable[[int], DeckSize]
    size_label: str
    sizes: Tuple[int, ...]
    quick: Tuple[int, ...]


#: the families of ``benchmarks/bench_scale.py`` by name
FAMILIES: Dict[str, Family] = {
    "ttl": Family("ttl", ttl_nand_chain, _ttl_size, "gates", (1, 2, 5, 10, 20, 50, 100, 200), (1, 2)),
    "rtl": Family("rtl", rtl_chain, _rtl_size, "gates", (1, 2, 5, 10, 20, 50, 100, 200), (1, 2)),
    "rc_mesh": Family("rc_mesh", rc_mesh, _mesh_size, "n (n x n nodes)", (10, 30, 100, 200), (10, 30)),
    "diode_ladder": Family("diode_ladder", diode_ladder, _ladder_size, "diodes",
                           (10, 50, 200, 500, 1000, 2000), (10, 50)),
}


def deck_size(family: str, size: int) -> DeckSize:
    """Element and node counts of a family's deck of one size (no parsing).

    Parameters
    ----------
    family : str
        A key of :data:`FAMILIES`.
    size : int
        The family's size (gates, mesh side, diodes).

    Examples
    --------
    >>> deck_size("ttl", 200)
    DeckSize(elements=2602, nodes=1402, bjts=1000, diodes=600)
    """
    try:
        return FAMILIES[family].count(int(size))
    except KeyError:
        raise ValueError(f"unknown family {family!r}: one of {', '.join(FAMILIES)}") from None


def write_decks(specs: Sequence[str], folder, steps: Optional[int] = None) -> Iterator[Tuple[str, int, Path]]:
    """Write the decks ``specs`` names into ``folder``, one at a time: ``(family, size, path)``.

    Parameters
    ----------
    specs : sequence of str
        ``FAMILY=SIZE,SIZE`` each (the benchmarks' ``--decks`` arguments), e.g. ``"ttl=3,10"``.
    folder : str or pathlib.Path
        Where the files go (``FAMILY_SIZE.cir``).
    steps : int, optional
        Steps of each deck's ``.tran`` (the family's default otherwise).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [(f, n, p.name) for f, n, p in write_decks(["diode_ladder=2,4"], tmp, steps=10)]
    [('diode_ladder', 2, 'diode_ladder_2.cir'), ('diode_ladder', 4, 'diode_ladder_4.cir')]
    """
    for spec in specs:
        family, _, sizes = spec.partition("=")
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r}: one of {', '.join(FAMILIES)}")
        try:
            numbers = [int(s) for s in sizes.split(",")]
        except ValueError:
            raise ValueError(f"deck spec {spec!r}: write FAMILY=SIZE,SIZE, e.g. {family}=3,10") from None
        for size in numbers:
            path = Path(folder) / f"{family}_{size}.cir"
            path.write_text(FAMILIES[family].build(size, steps=steps))
            yield family, size, path
