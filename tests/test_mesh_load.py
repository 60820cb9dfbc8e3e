"""Large linear decks load without sympy arithmetic per element (issue 34).

Plain-number resistors and capacitors carry their parameter symbols only: the
law ``R i``, the energy ``q**2 / (2 C)`` and ``1 / C`` are built on first
read, and the numeric engine reads the numbers.  The symbolic forms built on
demand must be the ones the components wrote before, and the numeric
engine's numbers must equal those of the symbolic structure.
"""
import numpy as np
import pytest
import sympy as sp

import phsym
from phsym.benchmarks.decks import rc_mesh
from phsym.simulation import Simulator
from phsym.structure.circuit.canonical import linear_hessians


def _arithmetic_calls(monkeypatch, text: str) -> int:
    """sympy ``Mul`` / ``Pow`` / ``Add`` constructions (including sympy's unflattened ``_from_args``)
    made while ``text`` is loaded and its circuit data built."""
    count = [0]

    def counting(cls, name):
        original = getattr(cls, name)
        if name == "_from_args":
            fn = original.__func__

            def wrapped(kls, *a, **k):
                count[0] += 1
                return fn(kls, *a, **k)
            monkeypatch.setattr(cls, name, classmethod(wrapped))
        else:
            def wrapped(kls, *a, **k):
                count[0] += 1
                return original(kls, *a, **k)
            monkeypatch.setattr(cls, name, wrapped)

    for cls in (sp.Mul, sp.Pow, sp.Add):
        counting(cls, "__new__")
    for cls in (sp.Mul, sp.Add):
        counting(cls, "_from_args")
    try:
        model = phsym.parse(text)
        model.circuit
    finally:
        monkeypatch.undo()
    return count[0]


def test_a_plain_number_mesh_loads_without_sympy_arithmetic_per_element(monkeypatch):
    small = rc_mesh(21, steps=10)        # 1,262 elements: above SYMBOLIC_LIMIT, no structure at load
    large = rc_mesh(30, steps=10)        # 2,642 elements
    n_small, n_large = _arithmetic_calls(monkeypatch, small), _arithmetic_calls(monkeypatch, large)
    # what is left does not grow with the deck (the deck's source and its settings)
    assert n_large == n_small, (n_small, n_large)
    assert n_large < 100


MIXED = """* 3 x 3 RC mesh, plain numbers and parameter expressions mixed
.param rr=2.2k cc=0.47n k=1.5
V1 src 0 PULSE(0 1 0 1u 1u 1 2)
RS src a1 100
R12 a1 a2 1k
R23 a2 a3 {rr*k}
R14 a1 b1 rr
R25 a2 b2 1.8k
R36 a3 b3 {rr}
R45 b1 b2 2.7k
R56 b2 b3 1k
C1 a1 0 1n
C2 a2 0 {cc}
C3 a3 0 {2*cc}
C4 b1 0 0.68n IC=0.1
C5 b2 0 cc
C6 b3 0 1.5n
.tran 0.2u 20u
"""


def test_numbers_of_the_numeric_path_equal_the_symbolic_path():
    model = phsym.parse(MIXED)
    values = model.parameter_values()
    c = model.circuit
    # Q of each capacitor: the numeric engine's number against d2H/dx2 of the energy built on demand
    Q = linear_hessians(c.storages, values)
    for s, q in zip(c.storages, Q):
        st = s.record
        H = st.hamiltonian
        assert H == st.states[0] ** 2 / (2 * st.compliance)       # the form the component wrote before
        expected = float(sp.diff(H, st.states[0], 2).xreplace(values))
        assert q.shape == (1, 1) and q[0, 0] == pytest.approx(expected, rel=1e-15)
    for d in model._records[1]:
        assert d.law == d.coefficient * d.variable
    # the structure's matrices (symbolic) and the numeric engine's runs agree
    lin = Simulator(model, 5e6, engine="linear").run(duration=20e-6)
    num = Simulator(phsym.parse(MIXED), 5e6, engine="numeric").run(duration=20e-6)
    assert num.info["engine"] == "numeric"
    scale = np.max(np.abs(lin.x))
    assert np.max(np.abs(num.x - lin.x)) <= 1e-9 * scale
    assert num.max_balance_error < 1e-12


def test_a_large_build_is_frozen_and_the_next_one_reclaims_its_cycles(monkeypatch):
    """A build past ``SETTLE_ABOVE`` leaves its objects frozen (later full passes skip them); the
    next large build returns them to the collector first, so a cycle dropped meanwhile is freed."""
    import gc
    import weakref

    from phsym.common import parallel

    class Node:
        pass

    if gc.get_freeze_count():
        gc.unfreeze()
    monkeypatch.setattr(parallel, "SETTLE_ABOVE", 20_000)
    monkeypatch.setattr(parallel, "_FROZEN", False)
    try:
        with parallel.paused_collection():
            kept = [[i] for i in range(30_000)]
            cycle = Node()
            cycle.self = cycle
            ref = weakref.ref(cycle)
        assert gc.get_freeze_count() >= 30_000 and gc.isenabled()
        del cycle
        gc.collect()
        assert ref() is not None            # frozen: the collector does not see it
        with parallel.paused_collection():
            more = [[i] for i in range(30_000)]
        assert ref() is None                # the second large build collected it first
        assert gc.get_freeze_count() >= 60_000
        with parallel.paused_collection():  # a small build changes nothing
            small = [[i] for i in range(100)]
        assert len(kept) + len(more) + len(small) == 60_100
    finally:
        gc.unfreeze()


def test_a_deck_read_twice_is_read_once_while_its_includes_hold(tmp_path):
    """A command reads its deck's control cards, then its circuit: the second read reuses the first
    one's lines unless an included file changed in between."""
    from phsym.netlist.include import read_deck_lines

    lib = tmp_path / "parts.inc"
    lib.write_text("R2 b 0 2k\n")
    deck = tmp_path / "deck.cir"
    text = "* t\nV1 a 0 1\nR1 a b 1k\n.include parts.inc\n.tran 1u 10u\n"
    deck.write_text(text)
    first = read_deck_lines(text, str(deck))
    second = read_deck_lines(text, str(deck))
    assert [ln.text for ln in second.lines] == [ln.text for ln in first.lines]
    assert all(a is b for a, b in zip(first.lines, second.lines))
    second.lines.clear()                    # a reader's own list: the next read is whole
    assert len(read_deck_lines(text, str(deck)).lines) == len(first.lines)
    lib.write_text("R2 b 0 22k\nC2 b 0 1n\n")
    third = read_deck_lines(text, str(deck))
    assert [ln.text for ln in third.lines][-3:] == ["R2 b 0 22k", "C2 b 0 1n", ".tran 1u 10u"]
    other = read_deck_lines(text.replace("1k", "3k"), str(deck))
    assert other.lines[1].text == "R1 a b 3k"
