"""Stiff storages stepped to the end on a circuit with two junctions (the op-amp clipper): the
values each step carries to the next, and junction charges that settle instead of ringing.  Split
from tests/test_stiff.py by circuit, so that each circuit's loops are compiled in one module."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

import phsym
from tests.test_stiff import _run

CLIPPER = Path(__file__).parent / "decks" / "opamp_diode_clipper.cir"


def test_carried_start_voltages_and_constants_are_those_recomputed(monkeypatch):
    # hot: each junction's start voltage, exponential and grading power carried from the step before;
    # cold: ve's states voided before every call of one step, so each step inverts v(Q) and computes
    # its constants itself.  Two junctions, and a step limit that makes Newton fail and subdivide
    m = phsym.load(CLIPPER)
    sim = phsym.Simulator(m, fs=48000, stiff="backward_euler", record_efforts=True, maxit=6, engine="generated")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hot = sim.run(duration=2e-3)
    loop = sim.plan().loop
    assert loop.subdivided, "the step limit no longer subdivides: the test lost its failed steps"
    n = int(np.count_nonzero(~loop._increments))
    assert n == 2
    # each junction's full change bounded by its N Vt; the records booked by converged steps only
    src = sim._gen.source
    assert "<= 0.0 else ph" not in src and src.count("if info[3] >= 2 and status == 0:") == 1
    real = loop.module

    class Cold:
        def run(self, *args):
            args[-1][n:2 * n] = np.nan
            return real.run(*args)

    monkeypatch.setattr(loop, "module", Cold())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cold = sim.run(duration=2e-3, chunk=1)
    scale = np.abs(hot.x).max(axis=0)
    assert np.max(np.abs(cold.x - hot.x) / scale) < 1e-12
    np.testing.assert_array_equal(cold.iterations, hot.iterations)
    assert cold.max_balance_error < 1e-12 and hot.max_balance_error < 1e-12


def test_junction_charges_stepped_to_the_end_settle_instead_of_ringing():
    # five clipped cycles of the 1 kHz input (ten before: measured on the first five, the ring
    # ratios 0.013 and 0.039, the iteration ratio 0.52, the RMS ratio 1.024 and dg's 3.1 %)
    m = phsym.load(CLIPPER)
    end, dg = _run(m, "backward_euler", 0.005), _run(m, "scheme", 0.005)
    assert end.max_balance_error < 1e-10 and dg.max_balance_error < 1e-10
    assert np.all(dg.P_num == 0) and np.all(end.P_num >= 0)
    # the junction charges' second difference from step to step: the Nyquist ringing of the
    # discrete gradient, gone when they step to the end
    for q in ("q_D1.cj", "q_D2.cj"):
        k = m.states.index(q)
        ring = lambda r: np.abs(np.diff(r.x[:, k], 2)).sum()     # noqa: E731
        assert ring(end) < 0.2 * ring(dg), q
    assert end.iterations.mean() < 0.75 * dg.iterations.mean() and end.iterations.max() <= 10
    # and the output is as accurate: against the scheme at 16x the rate (the clipping knees
    # dominate both errors at 48 kHz, about 3 % of the swing)
    ref = _run(m, "scheme", 0.005, fs=16 * 48000)
    yr = np.interp(end.t_step, ref.t_step, ref["v(out)"])
    rms = lambda r: np.sqrt(np.mean((r["v(out)"] - yr) ** 2))     # noqa: E731
    assert rms(end) <= 1.05 * rms(dg) and rms(dg) < 0.05 * np.ptp(yr)
