"""Plans for new parameter sets reuse what no parameter reaches (the numeric
J, probe vectors, numeric waveforms) and recompute the rest: every run equals
the run of a fresh simulator built at that parameter set."""
import numpy as np
import pytest

import phsym

NET = """* parameters in a two-port ratio, a waveform and a law
.param n=2 amp=1 Rl=8
V1 p 0 SIN(0 {amp} 1k)
R1 p a 1
TF1 a 0 s 0 {n}
C1 s 0 1u
R2 s 0 {Rl}
.probe v(s) i(R1)
"""


@pytest.mark.parametrize("method", ["midpoint", "discrete_gradient"])
def test_plans_follow_every_parameter(method):
    model = phsym.parse(NET)
    sim = phsym.Simulator(model, 48000, method=method, engine="newton" if method == "discrete_gradient" else "auto")
    sim.run(duration=2e-3)                                     # fills the cache at the defaults
    for params in ({"n": 3.0}, {"amp": 0.5}, {"Rl": 4.0, "n": 0.5}):
        got = sim.run(duration=2e-3, params=params)
        fresh = phsym.Simulator(phsym.parse(NET), 48000, method=method,
                                engine="newton" if method == "discrete_gradient" else "auto")
        ref = fresh.run(duration=2e-3, params=params)
        for label in ("v(s)", "i(R1)"):
            np.testing.assert_array_equal(got[label], ref[label])
    assert not sim._fixed_parts().J_constant                 # the ratio n is in J


def test_constant_parts_are_computed_once():
    sim = phsym.Simulator(phsym.load("netlists/diode_clipper.cir"), 48000)
    fixed = sim._fixed_parts()
    assert fixed.J_constant
    a, b = sim.plan({"Rs": 1e3}), sim.plan({"Rs": 2e3})
    assert a.probe_vector("v(out)") is b.probe_vector("v(out)")      # shared, read-only
    assert not a.probe_vector("v(out)").flags.writeable
