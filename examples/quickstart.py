"""
Quick start: structure, linearisation and simulation of bundled netlists.
=========================================================================

Run from the repository root:  python examples/quickstart.py
"""
from pathlib import Path

import numpy as np

import phsym

try:
    NET = Path(__file__).resolve().parent.parent / "netlists"
except NameError:               # sphinx-gallery runs the file in examples/, without __file__
    NET = Path.cwd().parent / "netlists"

# 1. Structure of a loudspeaker (electrical + mechanical, mobility analogy)
spk = phsym.load(NET / "loudspeaker.cir")
print(spk)
print("states:", spk.states, " inputs:", spk.inputs, " outputs:", spk.outputs)
print("H =", spk.hamiltonian)
print("checks:", spk.check())

# %%
# 2. Its input impedance from the linearised PHS
lin = spk.linearize()
f = np.array([20.0, 50.0, 100.0, 1000.0])
Z = 1.0 / lin.transfer(2j * np.pi * f)[:, 0, 0]
for fi, zi in zip(f, Z):
    print(f"|Z({fi:6.0f} Hz)| = {abs(zi):7.3f} ohm")

# %%
# 3. Simulate the diode clipper with the discrete-gradient scheme
res = phsym.simulate(NET / "diode_clipper.cir", fs=48_000, duration=5e-3)
print(res.summary())
print("peak output voltage:", float(np.max(np.abs(res["v(out)"]))), "V")

# %%
# The probes and the power panel of the clipper run (``res.plot``).
fig = res.plot()
