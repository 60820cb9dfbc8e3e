"""Regenerate the generated loop's trajectories the numeric engine is compared with (not run by CI).

Run from the repository root::

    PYTHONPATH=. python tests/decks/engines/make_engine_refs.py [NAME ...]

For every bundled netlist (``netlists/*.cir``) and corpus deck
(``tests/decks/*.cir``), the generated loop
(``Simulator(..., engine="generated")``) runs :func:`settings`' first
:data:`STEPS` steps (rate and start as ``phsym simulate`` takes them from
the deck, 48 kHz from the netlist's ICs otherwise; a deck with control
parameters turns them by :data:`CONTROLS`, and the volume pot of
``triode_volume`` is also turned between the blocks of a stream,
:func:`stream`, kept as ``x_stream``) and ``refs/NAME.npz``
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

#: The control signals of the decks with control parameters over the reference run (a ramp or a
#: sine of the time ``t``; text as the command records them).
CONTROLS = {
    "triode_volume": ("vol=0.1+160*t", lambda t: {"vol": 0.1 + 160 * t}),
    "overdrive": ("level=0.2+0.6*t/5m", lambda t: {"level": 0.2 + 0.6 * t / 5e-3}),
    "triodeamp": ("pos=0.5+0.4*sin(2*pi*1k*t)", lambda t: {"pos": 0.5 + 0.4 * np.sin(2 * np.pi * 1e3 * t)}),
}

#: The stream of :func:`stream`: blocks of this many samples, the pot's position per block.
BLOCK, STREAM_POSITIONS = 40, (0.5, 0.9, 0.3, 0.3, 0.05, 0.6)


def controls(path: Path):
    """The control signals of a reference run (by name, callables of t), ``None`` without."""
    c = CONTROLS.get(path.stem)
    if c is None:
        return None
    fn = c[1]
    names = fn(0.0)
    return {k: (lambda t, k=k: fn(t)[k]) for k in names}


def cases():
    """``(name, path)`` of every circuit the references cover."""
    out = []
    for p in sorted((ROOT / "netlists").glob("*.cir")) + sorted((ROOT / "tests" / "decks").glob("*.cir")):
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
    res = sim.run(duration=STEPS / fs, x0=deck_x0 if x0 is None else x0, controls=controls(path))
    return (res, sim) if simulator else res


def stream(path: Path, engine: str) -> np.ndarray:
    """The states of a stream of ``path`` (its first control turned to :data:`STREAM_POSITIONS`, one
    per block of :data:`BLOCK` samples, from the DC point), one row per sample after the first."""
    import phsym
    fs, _, options = settings(path)
    sim = phsym.Simulator(phsym.load(path), fs, engine=engine, **options)
    plan = sim.plan()
    n = BLOCK * len(STREAM_POSITIONS)
    U = plan.inputs(None, n / fs)[1:]
    s = sim.stream(x0="dc")
    name = plan.summary.controls[0]
    X = []
    for b, pos in enumerate(STREAM_POSITIONS):
        s.process(U[b * BLOCK:(b + 1) * BLOCK], controls={name: pos})
        X.append(s.last.x[1:])
    return np.vstack(X)


def main(names) -> None:
    import phsym
    REFS.mkdir(exist_ok=True)
    for name, path in cases():
        if names and name not in names and path.stem not in names:
            continue
        fs, x0, options = settings(path)
        res = run(path, "generated")
        ctl = CONTROLS.get(path.stem, ("",))[0]
        command = (f"phsym.Simulator(phsym.load({str(path.relative_to(ROOT))!r}), {fs!r}, engine='generated', "
                   f"**{options!r}).run(duration={STEPS}/{fs!r}, x0={x0!r}"
                   + (f", controls=<{ctl}>)" if ctl else ")"))
        extra = {}
        if path.stem == "triode_volume":
            extra["x_stream"] = stream(path, "generated")
            command += f"; stream(path, 'generated') of tests/decks/engines/make_engine_refs.py"
        np.savez_compressed(REFS / f"{name}.npz", x=res.x, H=res.H, P_diss=res.P_diss, P_supplied=res.P_supplied,
                            states=np.array(res.names.states), scheme=res.info["scheme"],
                            stiff=str(res.info.get("stiff")), fs=fs, x0=str(x0), command=command,
                            version=phsym.__version__, **extra)
        print(name, res.info["scheme"], res.x.shape, flush=True)


if __name__ == "__main__":
    main(set(sys.argv[1:]))
