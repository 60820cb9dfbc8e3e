"""Newton's chord steps (reusing the last factorization after a small step) change nothing but the work.

A stiff diode circuit (junction capacitance, series resistance, hard
pulses) stepped by the numeric engine with its default chord threshold
and with a full Newton iteration every time (``loop.reuse = 0``): the same
trajectory to Newton's tolerance, the same iterations, an exact power
balance in both, and fewer factorizations with chord steps (so the mode
is exercised, not skipped).
"""
import numpy as np

import phsym
from phsym.simulation.engines.numeric.newton import REUSE

DECK = """* stiff diode switching: +-5 V pulses through 1k into a diode with depletion and diffusion charge
.model DSW D(IS=1e-14 N=1 RS=5 CJO=50p VJ=0.7 M=0.5 FC=0.5 TT=5n)
V1 in 0 PULSE(-5 5 0 10n 10n 1u 2u)
R1 in a 1k
D1 a 0 DSW
C1 a 0 2p
.end
"""


def _run(path, reuse):
    sim = phsym.Simulator(phsym.load(path), 1e9, engine="numeric")
    sim.plan().loop.reuse = reuse
    res = sim.run(duration=4e-6)
    return res, int(sim.plan().loop.factorizations[0]), sim.plan().loop.xs


def test_chord_steps_follow_full_newton_on_a_stiff_diode(tmp_path):
    path = tmp_path / "stiff_diode.cir"
    path.write_text(DECK)
    full, n_full, xs = _run(path, 0.0)
    chord, n_chord, _ = _run(path, REUSE)
    assert full.info["engine"] == chord.info["engine"] == "numeric"
    assert full.t_step.size == chord.t_step.size == 4000
    # states on Newton's scale (|x| + x_ref), as the engines are compared: 1e-12 a step, a few 1e-10 in all
    scale = np.abs(full.x).max(axis=0) + xs
    assert np.max(np.abs(chord.x - full.x) / scale) < 1e-9
    assert full.max_balance_error <= 1e-11 and chord.max_balance_error <= 1e-11
    assert abs(chord.iterations.sum() - full.iterations.sum()) <= 0.02 * full.iterations.sum()
    assert n_chord < n_full
