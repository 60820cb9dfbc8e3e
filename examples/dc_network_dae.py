"""
The DC power network of seed 001 as a pH-DAE: descriptor form and a step response.
==================================================================================

Run from the repository root:  python examples/dc_network_dae.py
"""
from pathlib import Path

import numpy as np
import sympy as sp

import phsym

try:
    NET = Path(__file__).resolve().parent.parent / "netlists"
except NameError:               # sphinx-gallery runs the file in examples/, without __file__
    NET = Path.cwd().parent / "netlists"
model = phsym.load(NET / "dc_network.cir")
d = model.descriptor()
print("xi =", d.xi)
sp.pprint(d.E)
sp.pprint(d.J - d.R)
res = phsym.Simulator(model, 200.0, method="backward_euler").run(u={"VG": lambda t: np.ones_like(t)}, duration=2.0)
print(res.summary())
print("final generator current:", res["y(VG)"][-1], "A (DC value 1/(R_G + R_L + R_R) =", 1 / 10, ")")

# %%
# Generator current and node voltages of the step response, with the power
# panel (backward Euler dissipates numerically; the panel shows the residual
# of the balance including that numerical dissipation).
fig = res.plot(["y(VG)", "v(n1)", "v(n2)"])
