"""The numeric engine steps the same equations as the generated loop, on every circuit phsym ships.

Every bundled netlist and corpus deck (controls excepted) against the
generated loop's trajectories (``tests/decks/engines/refs``, made by
``tests/decks/engines/make_engine_refs.py``): the same states to Newton's
tolerance and an exact discrete power balance at every step.  Two circuits
also run both engines live, so the references cannot go stale unnoticed.
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


def test_every_circuit_without_controls_has_a_reference():
    missing = []
    for name, path in _paths().items():
        if not (REFS / f"{name}.npz").exists() and not phsym.load(path).controls:
            missing.append(name)
    assert not missing, f"run tests/decks/engines/make_engine_refs.py for {missing}"


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


@pytest.mark.parametrize("netlist", ["diode_clipper.cir", "bjt_common_emitter.cir"])
def test_both_engines_live(netlist):
    m = phsym.load(ROOT / "netlists" / netlist)
    a = phsym.Simulator(m, 48000, engine="numeric").run(duration=5e-3, x0="dc")
    b = phsym.Simulator(m, 48000, engine="generated").run(duration=5e-3, x0="dc")
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-9 * np.abs(b.x).max())
    for label in [p.label for p in m.probes] + m.outputs:
        np.testing.assert_allclose(a[label], b[label], rtol=0, atol=1e-9 * max(np.abs(b[label]).max(), 1e-12))
