"""Independent references for the circuits of any size (issue 34): a sparse MNA for linear RC decks.

The numeric engine's tests compare phsym with something that shares none of
its code.  For the linear RC meshes of :func:`phsym.benchmarks.rc_mesh`
(and any deck of resistors, capacitors and grounded voltage sources) this
module reads the deck's element lines itself (not through phsym's parser),
assembles the modified nodal equations with ``scipy.sparse``

    ``C e' + G e = B u(t)``

(``e``: the potentials of the nodes no source holds; a node a source holds
enters ``B u`` through the resistors and capacitors at it) and steps them
with the trapezoidal rule at the deck's step ``h``:

    ``(C/h + G/2) e_{k+1} = (C/h - G/2) e_k + B (u_k + u_{k+1}) / 2``,

one sparse LU (SuperLU) for the whole run.  On a linear circuit this is
phsym's midpoint rule with its input rule ``(u_k + u_{k+1}) / 2``
(``phsym.common.schemes``), so the two agree to the linear solver's
round-off, step by step, not only as ``h -> 0``.  phsym's probes are step
values at the step's midpoint: :meth:`MnaRun.midpoints` gives those.

Sources: ``DC``, ``PULSE`` (SPICE's meaning, see :func:`pulse`) or a plain
number; only sources from a node to ground.  Capacitors to a held node are
allowed; a node without a capacitor is algebraic (the trapezoidal rule then
averages its equation over the step).

It also names the committed ngspice references of the transistor and
diode decks (``tests/decks/scale``, made by
``tests/decks/scale/make_scale_refs.py``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

__all__ = ["pulse", "RCCircuit", "read_rc_deck", "MnaRun", "trapezoidal", "SCALE_DECKS", "REFERENCE_DECKS",
           "reference_deck_text"]

_SUFFIX = {"f": 1e-15, "p": 1e-12, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "meg": 1e6, "g": 1e9, "t": 1e12}


def _value(word: str) -> float:
    """A SPICE number (``1k``, ``100n``, ``2e-7``, ``10meg``)."""
    m = re.fullmatch(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)(meg|[fpnumkgt])?[a-z]*", word.lower())
    if not m:
        raise ValueError(f"not a number: {word!r}")
    return float(m.group(1)) * _SUFFIX.get(m.group(2) or "", 1.0)


def pulse(t: np.ndarray, v1: float, v2: float, td: float = 0.0, tr: float = 0.0, tf: float = 0.0,
          pw: float = np.inf, per: float = np.inf) -> np.ndarray:
    """SPICE's ``PULSE(V1 V2 TD TR TF PW PER)`` at the times ``t``.

    ``V1`` until ``TD``, a linear rise over ``TR`` to ``V2``, ``V2`` for
    ``PW``, a linear fall over ``TF``, ``V1`` until the period ``PER`` ends,
    then again (zero rise or fall times are jumps).

    Examples
    --------
    >>> pulse(np.array([0.0, 0.5, 1.0, 2.5, 3.5]), 0, 1, td=0, tr=1, tf=1, pw=1, per=10)
    array([0. , 0.5, 1. , 0.5, 0. ])
    """
    t = np.asarray(t, dtype=float)
    tau = t - td
    if np.isfinite(per) and per > 0:
        tau = np.where(tau >= 0, np.mod(tau, per), tau)
    rise = np.clip(tau / tr, 0.0, 1.0) if tr > 0 else (tau >= 0).astype(float)
    fall = np.clip((tau - tr - pw) / tf, 0.0, 1.0) if tf > 0 else (tau >= tr + pw).astype(float)
    return v1 + (v2 - v1) * (rise - fall)


@dataclass
class RCCircuit:
    """Modified nodal equations ``C e' + G e = B u(t)`` of a linear RC deck.

    Attributes
    ----------
    nodes : list of str
        Unknown node potentials ``e``, in the order of the matrices (lower case).
    C, G : scipy.sparse.csr_matrix
        Capacitance and conductance matrices (``n x n``).
    B : scipy.sparse.csr_matrix
        Input matrix (``n x m``), one column per voltage source.
    sources : list of (str, callable)
        Each source's name and its waveform ``u(t)`` (vectorised).
    step, stop : float
        The ``.tran`` card's step and duration.
    """

    nodes: List[str]
    C: sps.csr_matrix
    G: sps.csr_matrix
    B: sps.csr_matrix
    sources: List[Tuple[str, Callable[[np.ndarray], np.ndarray]]]
    step: float
    stop: float


def _waveform(words: List[str]) -> Callable[[np.ndarray], np.ndarray]:
    text = " ".join(words).replace("(", " ").replace(")", " ").replace(",", " ").split()
    if text and text[0].lower() == "dc":
        text = text[1:]
    if len(text) == 1:
        v = _value(text[0])
        return lambda t: np.full(np.shape(t), v)
    if text and text[0].lower() == "pulse":
        args = [_value(w) for w in text[1:]]
        return lambda t: pulse(t, *args)
    raise ValueError(f"unsupported source waveform: {' '.join(words)!r}")


def read_rc_deck(text: str) -> RCCircuit:
    """Assemble the MNA matrices of a deck of ``R``, ``C`` and grounded ``V`` elements.

    Reads element lines and ``.tran`` only (no subcircuits, parameters or
    continuation lines); comments, ``.save`` and ``.end`` are skipped.

    Parameters
    ----------
    text : str
        The deck (line 1 is a title or a comment, as in SPICE).

    Returns
    -------
    RCCircuit

    Raises
    ------
    ValueError
        For an element or card it does not read, a source not to ground, or
        a missing ``.tran``.
    """
    resistors, capacitors, vsources = [], [], []
    step = stop = None
    for line in text.splitlines()[1:]:
        words = line.split()
        if not words or words[0].startswith("*"):
            continue
        head = words[0].lower()
        if head == ".tran":
            step, stop = _value(words[1]), _value(words[2])
        elif head in (".save", ".end"):
            continue
        elif head[0] == "r":
            resistors.append((words[1].lower(), words[2].lower(), _value(words[3])))
        elif head[0] == "c":
            capacitors.append((words[1].lower(), words[2].lower(), _value(words[3])))
        elif head[0] == "v":
            a, b = words[1].lower(), words[2].lower()
            if b != "0":
                raise ValueError(f"source {words[0]} is not grounded: {line!r}")
            vsources.append((words[0], a, _waveform(words[3:])))
        else:
            raise ValueError(f"cannot read {line!r} (R, C and grounded V only)")
    if step is None:
        raise ValueError("the deck has no .tran card")
    held = {a: k for k, (_, a, _) in enumerate(vsources)}
    names = sorted({x for a, b, _ in resistors + capacitors for x in (a, b)} - {"0"} - set(held))
    index = {x: i for i, x in enumerate(names)}
    n, m = len(names), len(vsources)

    def stamp(elements, conductance):
        M = sps.lil_matrix((n, n))
        Bm = sps.lil_matrix((n, m))
        for a, b, value in elements:
            g = conductance(value)
            for p, q in ((a, b), (b, a)):
                if p in index:
                    M[index[p], index[p]] += g
                    if q in index:
                        M[index[p], index[q]] -= g
                    elif q in held:
                        Bm[index[p], held[q]] += g
        return M.tocsr(), Bm.tocsr()

    G, BG = stamp(resistors, lambda r: 1.0 / r)
    C, BC = stamp(capacitors, lambda c: c)
    if BC.nnz:
        raise ValueError("a capacitor at a source node: its current needs u'(t), which this reference does not take")
    return RCCircuit(names, C, G, BG, [(name, f) for name, _, f in vsources], step, stop)


@dataclass
class MnaRun:
    """Trajectory of :func:`trapezoidal`: ``e[k]`` at ``t[k]`` (``N + 1`` grid times)."""

    t: np.ndarray
    nodes: List[str]
    e: np.ndarray

    def node(self, name: str) -> np.ndarray:
        """Grid values of one node's potential (case-insensitive)."""
        return self.e[:, self.nodes.index(name.lower())]

    def midpoints(self) -> Dict[str, np.ndarray]:
        """Step values ``(e_k + e_{k+1}) / 2`` by node: what phsym's probes ``v(node)`` hold."""
        mid = 0.5 * (self.e[1:] + self.e[:-1])
        return {name: mid[:, i] for i, name in enumerate(self.nodes)}


def trapezoidal(circuit: RCCircuit, step: Optional[float] = None, steps: Optional[int] = None,
                e0: Optional[np.ndarray] = None) -> MnaRun:
    """Step ``C e' + G e = B u(t)`` with the trapezoidal rule.

    Parameters
    ----------
    circuit : RCCircuit
        From :func:`read_rc_deck`.
    step : float, optional
        The step ``h`` (default: the deck's).
    steps : int, optional
        Number of steps (default: the deck's ``round(stop / h)``).
    e0 : array, optional
        Initial potentials (default zero: a deck whose sources start at 0 V
        is then at its DC point).

    Returns
    -------
    MnaRun
    """
    h = float(step or circuit.step)
    N = int(steps if steps is not None else round(circuit.stop / h))
    t = np.arange(N + 1) * h
    U = np.column_stack([f(t) for _, f in circuit.sources]) if circuit.sources else np.zeros((N + 1, 0))
    BU = np.asarray(circuit.B @ U.T).T if circuit.sources else np.zeros((N + 1, len(circuit.nodes)))
    lhs = (circuit.C / h + circuit.G / 2).tocsc()
    rhs = (circuit.C / h - circuit.G / 2).tocsr()
    lu = spla.splu(lhs)
    e = np.zeros((N + 1, len(circuit.nodes)))
    if e0 is not None:
        e[0] = e0
    for k in range(N):
        e[k + 1] = lu.solve(rhs @ e[k] + 0.5 * (BU[k] + BU[k + 1]))
    return MnaRun(t, list(circuit.nodes), e)


# ---------------------------------------------------------------- ngspice references
#: the committed decks and ngspice references of the circuits of any size
SCALE_DECKS = Path(__file__).resolve().parent / "decks" / "scale"
#: reference name -> (family of :data:`phsym.benchmarks.FAMILIES`, size)
REFERENCE_DECKS = {"ttl_nand_1": ("ttl", 1), "ttl_nand_3": ("ttl", 3), "rtl_3": ("rtl", 3),
                   "diode_ladder_40": ("diode_ladder", 40)}


def reference_deck_text(name: str) -> str:
    """The deck text of a reference, as :mod:`phsym.benchmarks` builds it today."""
    from phsym.benchmarks import FAMILIES
    family, size = REFERENCE_DECKS[name]
    return FAMILIES[family].build(size)
