"""The numeric engine steps the same equations as the generated loop, on every circuit phsym ships.

Every bundled netlist and corpus deck (those with control parameters with
the controls turning during the run) against the generated loop's trajectories (``tests/decks/engines/refs``, made by
``tests/decks/engines/make_engine_refs.py``): the same states to Newton's
tolerance and an exact discrete power balance at every step.  Two circuits
also run both engines live, so the references cannot go stale unnoticed (the clipper here, the
transistor stage in tests/test_codegen_effort.py).
"""
from pathlib import Path

import numpy as np
import pytest

import phsym

ROOT = Path(__file__).resolve().parent.parent
REFS = ROOT / "tests" / "decks" / "engines" / "refs"

import importlib.util  # noqa: E402
_spec = importlib.util.spec_from_file_location("make_engine_refs", ROOT / "tests/decks/engines/make_engine_refs.py")
refs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refs)


def _paths():
    out = {}
    for p in sorted((ROOT / "netlists").glob("*.cir")) + sorted((ROOT / "tests" / "decks").glob("*.cir")):
        out[("n_" if p.parent.name == "netlists" else "d_") + p.stem] = p
    return out


CASES = sorted(p.stem for p in REFS.glob("*.npz"))


def test_every_circuit_has_a_reference():
    missing = [name for name in _paths() if not (REFS / f"{name}.npz").exists()]
    assert not missing, f"run tests/decks/engines/make_engine_refs.py for {missing}"
    assert all(phsym.load(_paths()[f"n_{stem}"]).controls for stem in refs.CONTROLS)


#: Decks whose DC point leaves a state free, started from the reference's state instead: the
#: generated loop's DC takes the least-squares value, the numeric engine keeps the ICs' value.
FREE_DC = {"n_bjtamp": "COUT floats between the stage and a zero current source"}


@pytest.mark.parametrize("name", CASES)
def test_numeric_engine_steps_like_the_generated_loop(name):
    ref = np.load(REFS / f"{name}.npz")
    res, sim = refs.run(_paths()[name], "numeric", x0=ref["x"][0] if name in FREE_DC else None, simulator=True)
    assert res.info["engine"] == "numeric" and res.info["scheme"] == str(ref["scheme"])
    x = ref["x"]
    # each state on the scale Newton's test uses (|x| + x_ref: a string's momentum that stays at
    # round-off before the pluck is compared on the momentum scale of its circuit, not on 1e-19)
    scale = np.abs(x).max(axis=0) + sim.plan().loop.xs + 1e-300
    # Newton's tolerance is 1e-12 of each state's scale per step; over 240 steps a few 1e-10
    assert np.max(np.abs(res.x - x) / scale) < 1e-8
    if res.info["scheme"] != "backward_euler":      # (backward Euler dissipates numerically)
        assert res.max_balance_error <= 1e-10       # relative to the run's power scale (stored energy / h)
    np.testing.assert_allclose(res.H, ref["H"], rtol=1e-8, atol=1e-10 * max(np.abs(ref["H"]).max(), 1e-300))
    # the ports' outputs too, through the power the sources supply (an op-amp's output is its input
    # difference times 1e5: states that agree do not by themselves show that the outputs do)
    for power in ("P_supplied", "P_diss"):
        np.testing.assert_allclose(getattr(res, power), ref[power], rtol=1e-6,
                                   atol=1e-8 * max(np.abs(ref[power]).max(), res.power_scale), err_msg=power)


def test_a_stream_turning_a_pot_steps_like_the_generated_loop():
    """The volume pot turned between the blocks of a stream (each block's first step ramps it): the
    numeric engine's states are the generated loop's, and the pot's values are numbers of the run
    (one plan, one system: nothing is rebuilt when it turns)."""
    ref = np.load(REFS / "n_triode_volume.npz")
    path = _paths()["n_triode_volume"]
    x = refs.stream(path, "numeric")
    scale = np.abs(ref["x_stream"]).max(axis=0) + 1e-12
    assert np.max(np.abs(x - ref["x_stream"]) / scale) < 1e-8
    sim = phsym.Simulator(phsym.load(path), 48000, engine="numeric")
    s = sim.stream()
    system = sim.plan().loop.system
    for pos in (0.2, 0.8):
        s.process(np.zeros((8, 2)), controls={"vol": pos})
        assert sim.plan().loop.system is system
    assert s.last.controls["vol"][-1] == 0.8


#: the transistor stage's live check is in tests/test_codegen_effort.py
#: (test_transistor_ports_across_their_junction_charges_are_not_unknowns), whose test compiles that
#: stage's generated loop anyway: a transistor stage's loop is the suite's costliest compile
@pytest.mark.parametrize("netlist", ["diode_clipper.cir"])
def test_both_engines_live(netlist):
    m = phsym.load(ROOT / "netlists" / netlist)
    a = phsym.Simulator(m, 48000, engine="numeric").run(duration=5e-3, x0="dc")
    b = phsym.Simulator(m, 48000, engine="generated").run(duration=5e-3, x0="dc")
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-9 * np.abs(b.x).max())
    for label in [p.label for p in m.probes] + m.outputs:
        np.testing.assert_allclose(a[label], b[label], rtol=0, atol=1e-9 * max(np.abs(b[label]).max(), 1e-12))
