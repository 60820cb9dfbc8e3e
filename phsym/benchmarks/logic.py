"""Chains of logic gates built from BJTs and diodes through nested subcircuits.

* :func:`ttl_nand_chain`: two-input TTL NAND gates (7400 style), 5 BJTs and
  3 diodes a gate;
* :func:`rtl_chain`: RTL NOR2 gates and inverters, alternating.

Each gate is a subcircuit instantiating smaller ones and drives the next
gate; the devices have junction capacitances and transit times.  The decks
are read unmodified by ngspice-39 and phsym (see :mod:`phsym.benchmarks.decks`).
"""
from __future__ import annotations

from typing import Optional, Tuple

from .spice import duration, num, positive_int, save, tran

__all__ = ["ttl_nand_chain", "rtl_chain", "rtl_gate_counts", "TTL_NPN", "TTL_DIODE", "RTL_NPN"]

#: TTL integrated NPN: Gummel-Poon level 1 without Early voltage or knee current
#: (phsym's diffusion charge TF i_be is then SPICE's), junction capacitances,
#: forward and (saturation) reverse transit times
TTL_NPN = (".model QTTL NPN(IS=1e-16 BF=50 BR=0.5 RB=70 RC=40 RE=2 CJE=1p VJE=0.9 MJE=0.5 CJC=0.6p "
           "VJC=0.8 MJC=0.33 FC=0.5 TF=0.2n TR=10n)")
#: TTL junction diode (input clamps, the output level-shift diode)
TTL_DIODE = ".model DTTL D(IS=1e-15 N=1 RS=20 CJO=0.6p VJ=0.8 M=0.5)"
#: RTL discrete-style NPN
RTL_NPN = (".model QRTL NPN(IS=1e-15 BF=30 BR=0.5 RB=50 RC=20 RE=2 CJE=1.5p VJE=0.8 MJE=0.4 CJC=1p "
           "VJC=0.7 MJC=0.4 FC=0.5 TF=0.5n TR=20n)")


# ------------------------------------------------------------------ TTL
TTL_SUBCKTS = """\
* one emitter of the multi-emitter input transistor, with its input clamp diode
.subckt ttl_in e b c
Q1 c b e QTTL
D1 0 e DTTL
.ends ttl_in
* totem-pole output: Q3 pulls up through R4 and the level-shift diode, Q4 pulls down
.subckt ttl_out drive low y vcc
R4 vcc c3 130
Q3 c3 drive e3 QTTL
D1 e3 y DTTL
Q4 y low 0 QTTL
.ends ttl_out
* two-input NAND (7400 style): input transistor (two emitters), phase splitter Q2, totem-pole output
.subckt nand2 a b y vcc
R1 vcc b1 4k
X1 a b1 c1 ttl_in
X2 b b1 c1 ttl_in
Q2 c2 c1 e2 QTTL
R2 vcc c2 1.6k
R3 e2 0 1k
X3 c2 e2 y vcc ttl_out
.ends nand2"""


def ttl_nand_chain(n_gates: int, *, step: float = 50e-12, stop: Optional[float] = None,
                   steps: Optional[int] = None, cload: float = 5e-12) -> str:
    """A chain of two-input TTL NAND gates (7400 style), each driving the next.

    Gate ``k`` has both inputs on node ``n{k-1}`` (``n0 = in``, a 0-3.5 V
    ``PULSE`` with 1 ns edges, 20 ns high every 40 ns) and its output on
    node ``nk``, loaded by ``cload`` to ground; ``VCC`` is 5 V.  A gate is
    the subcircuit ``nand2`` (``R1 = 4k``, ``R2 = 1.6k``, ``R3 = 1k``,
    phase splitter ``Q2``) instantiating two ``ttl_in`` (one emitter of
    the input transistor with its clamp diode) and one ``ttl_out``
    (``R4 = 130``, ``Q3``, level-shift diode, ``Q4``): 5 BJTs, 3 diodes and
    4 resistors, nested two deep.  Devices: :data:`TTL_NPN` (``CJE``,
    ``CJC``, ``TF``, ``TR``; ``RB``, ``RC``, ``RE`` put the junction
    capacitances on internal nodes, so no capacitor loop forms) and
    :data:`TTL_DIODE` (``CJO``, ``RS``).

    Size: ``13 n + 2`` elements (5n BJTs, 3n diodes, 4n resistors, n load
    capacitors, two sources), ``7 n + 2`` nodes before the devices'
    internal nodes.  A gate's output falls about 1 ns and rises about 6
    ns after its input's edge (ngspice-39).

    Parameters
    ----------
    n_gates : int
        Number of gates, at least 1 (200 gates: 1,000 BJTs).
    step : float, default 50 ps
        Fixed step ``h`` of ``.tran h T 0 h``: about 20 steps an edge.
    stop : float, optional
        Duration ``T``; default 40 ns (one input period) plus 4 ns a gate,
        so that the first edge reaches the end of the chain.
    steps : int, optional
        Number of steps, instead of ``stop``: ``T = steps h``.
    cload : float, default 5 pF
        Load (wiring) capacitance at each gate output.

    Returns
    -------
    str
        The deck; ``.save`` keeps ``v(in)`` and every gate output.

    Examples
    --------
    >>> deck = ttl_nand_chain(1)
    >>> [ln for ln in deck.splitlines() if ln.startswith(("X1 in", "CL", ".tran"))]
    ['X1 in in n1 vcc nand2', 'CL1 n1 0 5e-12', '.tran 5e-11 4.4e-08 0 5e-11']
    """
    n = positive_int(n_gates, "n_gates")
    stop = duration(step, stop, steps, 40e-9 + n * 4e-9)
    lines = [f"* Chain of {n} TTL NAND gates ({5 * n} BJTs, {3 * n} diodes), 5 V, PULSE input",
             TTL_NPN, TTL_DIODE, TTL_SUBCKTS,
             "VCC vcc 0 DC 5", "VIN in 0 PULSE(0 3.5 5n 1n 1n 20n 40n)"]
    for k in range(1, n + 1):
        src = "in" if k == 1 else f"n{k - 1}"
        lines += [f"X{k} {src} {src} n{k} vcc nand2", f"CL{k} n{k} 0 {num(cload)}"]
    lines += save(["in"] + [f"n{k}" for k in range(1, n + 1)]) + [tran(step, stop), ".end"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ RTL
RTL_SUBCKTS = """\
* one input leg: base resistor and transistor, collector on the gate's output
.subckt rtl_leg in c
RB in b 450
Q1 c b 0 QRTL
.ends rtl_leg
* two-input NOR: two legs on one 640 ohm pull-up
.subckt rtl_nor2 a b y vcc
RC vcc y 640
X1 a y rtl_leg
X2 b y rtl_leg
.ends rtl_nor2
* inverter: one leg on the pull-up
.subckt rtl_inv a y vcc
RC vcc y 640
X1 a y rtl_leg
.ends rtl_inv"""


def rtl_gate_counts(n: int) -> Tuple[int, int]:
    """NOR2 gates and inverters of an ``n``-gate RTL chain (odd gates are NOR2).

    Parameters
    ----------
    n : int
        Number of gates.

    Returns
    -------
    (int, int)
        ``(ceil(n / 2), floor(n / 2))``.
    """
    return (n + 1) // 2, n // 2


def rtl_chain(n_gates: int, *, step: float = 100e-12, stop: Optional[float] = None,
              steps: Optional[int] = None, cload: float = 5e-12) -> str:
    """A chain of RTL gates (resistor-transistor logic), NOR2 and inverter alternating.

    Gate ``k`` (odd ``k``) is the subcircuit ``rtl_nor2`` with both inputs
    on the previous output (a fan-out of two legs), gate ``k`` (even) is
    ``rtl_inv``; both instantiate ``rtl_leg`` (a 450 ohm base resistor and
    a transistor whose collector is the output) under a 640 ohm pull-up to
    ``VCC = 3.6 V`` (the classic 900-series values).  The input is a 0-3.6
    V ``PULSE`` (2 ns edges, 40 ns high every 80 ns); each output carries
    ``cload`` to ground.  Device: :data:`RTL_NPN` (``CJE``, ``CJC``,
    ``TF``, ``TR``, with ``RB``, ``RC``, ``RE``).

    Size: with ``a = ceil(n / 2)`` NOR2 gates and ``b = floor(n / 2)``
    inverters, ``2 a + b`` BJTs, ``6 a + 4 b + 2`` elements and ``3 a + 2 b
    + 2`` nodes.  A gate switches in 3-17 ns (ngspice-39); a NOR2's
    output swings 0.1-2.1 V, an inverter's (driving two legs) 0.16-1.6 V.

    Parameters
    ----------
    n_gates : int
        Number of gates, at least 1 (200 gates: 300 BJTs).
    step : float, default 100 ps
        Fixed step ``h`` of ``.tran h T 0 h``.
    stop : float, optional
        Duration ``T``; default 80 ns (one input period) plus 8 ns a gate.
    steps : int, optional
        Number of steps, instead of ``stop``: ``T = steps h``.
    cload : float, default 5 pF
        Load capacitance at each gate output.

    Returns
    -------
    str
        The deck; ``.save`` keeps ``v(in)`` and every gate output.

    Examples
    --------
    >>> [ln for ln in rtl_chain(2).splitlines() if ln.startswith(("X1 in", "X2 n1"))]
    ['X1 in in n1 vcc rtl_nor2', 'X2 n1 n2 vcc rtl_inv']
    """
    n = positive_int(n_gates, "n_gates")
    stop = duration(step, stop, steps, 80e-9 + n * 8e-9)
    nor, inv = rtl_gate_counts(n)
    lines = [f"* Chain of {n} RTL gates ({nor} NOR2, {inv} inverters; {2 * nor + inv} BJTs), 3.6 V, PULSE input",
             RTL_NPN, RTL_SUBCKTS, "VCC vcc 0 DC 3.6", "VIN in 0 PULSE(0 3.6 5n 2n 2n 40n 80n)"]
    for k in range(1, n + 1):
        src = "in" if k == 1 else f"n{k - 1}"
        gate = f"X{k} {src} {src} n{k} vcc rtl_nor2" if k % 2 else f"X{k} {src} n{k} vcc rtl_inv"
        lines += [gate, f"CL{k} n{k} 0 {num(cload)}"]
    lines += save(["in"] + [f"n{k}" for k in range(1, n + 1)]) + [tran(step, stop), ".end"]
    return "\n".join(lines) + "\n"
