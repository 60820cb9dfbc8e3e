"""Regenerate the generated loop's trajectories the numeric engine is compared with (not run by CI).

Run from the repository root::

    PYTHONPATH=. python tests/decks/engines/make_engine_refs.py [NAME ...]

For every bundled netlist (``netlists/*.cir``) and corpus deck
(``tests/decks/*.cir``) without control parameters, the generated loop
(``Simulator(..., engine="generated")``) runs :func:`settings`' first
:data:`STEPS` steps (rate and start as ``phsym simulate`` takes them from
the deck, 48 kHz from the netlist's ICs otherwise) and ``refs/NAME.npz``
keeps ``x`` (states, float64), ``H``, ``P_diss``, ``P_supplied``,
``states``, ``scheme``, ``stiff``, ``fs``, ``x0``, the exact call
(``command``) and phsym's version.  ``tests/test_engine_numeric.py`` runs
the numeric engine with the same settings and asks for the same states to
Newton's tolerance: both engines step the same equations.  The generated
loop compiles for seconds to a minute per circuit, which is why CI reads
these files instead of compiling every circuit.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
REFS = Path(__file__).resolve().parent / "refs"
#: Steps of every reference run.
STEPS = 240


def cases():
    """``(name, path)`` of every circuit the references cover (controls excluded: one engine drives them)."""
    import phsym
    out = []
    for p in sorted((ROOT / "netlists").glob("*.cir")) + sorted((ROOT / "tests" / "decks").glob("*.cir")):
        if phsym.load(p).controls:
            continue
        name = ("n_" if p.parent.name == "netlists" else "d_") + p.stem
        out.append((name, p))
    return out


def settings(path: Path):
    """``(fs, x0, options)`` as ``phsym simulate`` runs the file (48 kHz from the ICs without ``.tran``)."""
    from phsym.netlist.cards import deck_settings
    deck = deck_settings(path)
    if deck.tran is None:
        return 48000.0, None, {}
    return deck.tran.fs, (None if deck.x0 == "ic" else deck.x0), deck.simulator_options()


def run(path: Path, engine: str, x0=None, simulator: bool = False):
    """The reference run of ``path`` on ``engine`` (from ``x0`` instead of the deck's start when given;
    ``(result, Simulator)`` with ``simulator``)."""
    import phsym
    fs, deck_x0, options = settings(path)
    sim = phsym.Simulator(phsym.load(path), fs, engine=engine, **options)
    res = sim.run(duration=STEPS / fs, x0=deck_x0 if x0 is None else x0)
    return (res, sim) if simulator else res


def main(names) -> None:
    import phsym
    REFS.mkdir(exist_ok=True)
    for name, path in cases():
        if names and name not in names and path.stem not in names:
            continue
        fs, x0, options = settings(path)
        res = run(path, "generated")
        command = (f"phsym.Simulator(phsym.load({str(path.relative_to(ROOT))!r}), {fs!r}, engine='generated', "
                   f"**{options!r}).run(duration={STEPS}/{fs!r}, x0={x0!r})")
        np.savez_compressed(REFS / f"{name}.npz", x=res.x, H=res.H, P_diss=res.P_diss, P_supplied=res.P_supplied,
                            states=np.array(res.names.states), scheme=res.info["scheme"],
                            stiff=str(res.info.get("stiff")), fs=fs, x0=str(x0), command=command,
                            version=phsym.__version__)
        print(name, res.info["scheme"], res.x.shape, flush=True)


if __name__ == "__main__":
    main(set(sys.argv[1:]))
