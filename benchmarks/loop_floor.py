"""What a step of a deck's generated Newton loop costs without its iterations, part by part.

Run from the repository root::

    PYTHONPATH=. python benchmarks/loop_floor.py DECK [--fs 48000] [--duration 0.5] [--reps 7]

The deck's generated module is copied and edited into variants that replay
the converged unknowns of a recorded Newton run instead of iterating, so
every variant steps the same trajectory (its states, outputs, energy,
powers and flags are checked equal to the Newton run's, bit for bit) and
differs only in the work a step does:

* ``newton``: the loop as generated (predictor, damped Newton iterations,
  the step's end: outputs, dissipated power, energy, balance terms);
* ``solve1``: the converged unknowns, then one residual and Jacobian and
  one Newton direction with its convergence test, not applied: about the
  work of a linearly implicit scheme (one evaluation of the device laws
  and one linear solve a step);
* ``eval1``: the converged unknowns and one residual and Jacobian, no
  direction;
* ``none``: the converged unknowns and the step's end (the device laws
  are still evaluated there, for the outputs and the stored energy); the
  predictor and the iteration's set-up (weights, the norm of a stale
  residual, the held columns' check) still run;
* ``end``: as ``none`` without the predictor (where the loop has one):
  the step's end and the iteration's set-up only.

All variants run in one process, alternated ``--reps`` times (separate
processes on this machine differ by up to 1.5x); each row is the best
run.  100x real time at 48 kHz is 0.21 us a step.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from newton_loop import newton_simulator, use_module  # noqa: E402

#: The iteration's update of the unknowns and its exit on convergence (``solve1`` exits before the update).
_UPDATE = re.compile(r"( {12})rprev = worst\n.*?\1it \+= 1\n\1if conv:\n\1    break\n", re.S)


def _find(text: str, mark: str, start: int = 0) -> int:
    """Where ``mark`` is in the generated module, or a message that the generator has changed."""
    i = text.find(mark, start)
    if i < 0:
        raise SystemExit(f"loop_floor: {mark.strip()!r} is not in the generated module (has the generator changed?)")
    return i


def _edit(text: str, variant: str, nv: int) -> str:
    """The generated module ``text`` edited into ``variant`` (``run`` takes the replay array ``RP`` last)."""
    # compiled afresh in this process: numba's disk cache cannot reload a module loaded from a path
    text = text.replace("cache=True", "cache=False")
    head = _find(text, "\ndef run(")
    sig = _find(text, "):\n", head)
    out = text[:sig] + ", RP" + text[sig:]
    body = _find(out, "\ndef run(")
    first = _find(out, "\n        resjac(", body)        # the iteration's first residual, 8 spaces in
    if variant == "record":
        mark = _find(out, "\n        IT[k] = it\n", body)
        return out[:mark] + f"\n        for i in range({nv}):\n            RP[k, i] = v[i]" + out[mark:]
    replay = f"\n        for i in range({nv}):\n            v[i] = RP[k, i]"
    if variant == "solve1":
        m = _UPDATE.search(out, first)
        if m is None:
            raise SystemExit("loop_floor: the generated iteration's update was not found (has the generator changed?)")
        out = out[:m.start()] + m.group(1) + "it += 1\n" + m.group(1) + "break\n" + out[m.end():]
    else:
        loop = _find(out, "\n        while True:\n", first)
        out = out[:loop] + "\n        while False:\n" + out[loop + len("\n        while True:\n"):]
        if variant in ("none", "end"):
            end = out.index("\n", first + 1)
            out = out[:first] + "\n        pass" + out[end:]
        # the predictor (junction voltages extrapolated from the steps before): its else branch
        # keeps the history the replay overwrites anyway
        pred = out.find("\n        if info[3] >= 2:\n", body, first)
        if variant == "end" and pred >= 0:
            out = out[:pred] + "\n        if False:\n" + out[pred + len("\n        if info[3] >= 2:\n"):]
            first -= len("info[3] >= 2") - len("False")
    return out[:first] + replay + out[first:]


#: What every variant must reproduce bit for bit.
_SAME = ("x", "y", "H", "P_diss", "P_supplied", "flags")


class _Replaying:
    """Stands in for a generated module: ``run`` gets the replay array as its last argument."""

    def __init__(self, module, RP):
        self._module, self._RP = module, RP

    def run(self, *args):
        return self._module.run(*args, self._RP)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("deck", help="netlist with a nonlinear element (a Newton loop)")
    ap.add_argument("--fs", type=float, default=48000.0, help="sample rate [Hz] (default 48000)")
    ap.add_argument("--duration", type=float, default=0.5, help="simulated seconds per run (default 0.5)")
    ap.add_argument("--reps", type=int, default=7, help="alternations, best of each (default 7)")
    args = ap.parse_args(argv)
    if not (0 < args.fs < math.inf and 0 < args.duration < math.inf) or args.reps < 1:
        ap.error("--fs and --duration must be positive and finite, --reps at least 1")
    if round(args.duration * args.fs) < 1:
        ap.error("--duration is shorter than one step at --fs")
    sim, x0 = newton_simulator(args.deck, args.fs, "loop_floor")
    plans = list(sim._plans.values())
    text, nv = Path(sim._gen.module.__file__).read_text(), len(sim._gen.unknowns)
    n = round(args.duration * args.fs)
    RP = np.zeros((n + 1, nv))
    with tempfile.TemporaryDirectory() as tmp:
        mods = {"newton": sim._gen.module}
        for name in ("record", "solve1", "eval1", "none", "end"):
            path = Path(tmp) / f"floor_{name}.py"
            path.write_text(_edit(text, name, nv))
            spec = importlib.util.spec_from_file_location(f"floor_{name}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            mods[name] = mod if name == "newton" else _Replaying(mod, RP)

        def step(name, duration):
            use_module(sim, mods[name])
            return sim.run(duration=duration, x0=x0)

        ref = step("record", args.duration)       # fills RP with the converged unknowns
        if any(plan.loop.subdivided for plan in plans):
            raise SystemExit("loop_floor: Newton failed at some steps and took them in sub-steps; the replay "
                             "needs a run without (try another --fs)")
        best = {k: np.inf for k in mods if k != "record"}
        for _ in range(args.reps):
            for name in best:
                r = step(name, args.duration)
                best[name] = min(best[name], r.info["wall_time"])
                same = [np.array_equal(getattr(r, a), getattr(ref, a)) for a in _SAME]
                if not all(same):
                    raise SystemExit(f"loop_floor: variant {name} left the recorded run "
                                     f"({', '.join(a for a, s in zip(_SAME, same) if not s)} differ): "
                                     "the edits no longer fit the loop")
    print(f"{args.deck} at {args.fs:.0f} Hz, {nv} unknowns, {np.mean(ref.iterations):.2f} Newton iterations a step, "
          f"best of {args.reps} runs of {n} steps")
    print("| variant | us a step | x real time |")
    print("| --- | --- | --- |")
    for name, wall in best.items():
        us = wall / n * 1e6
        print(f"| {name} | {us:.3f} | {1e6 / (us * args.fs):.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
