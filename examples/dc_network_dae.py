"""
The DC power network of seed 001 as a pH-DAE: descriptor form and a step response.
==================================================================================

Run from the repository root:  python examples/dc_network_dae.py
"""
from pathlib import Path

import numpy as np
import sympy as sp

import phsym

model = phsym.load(Path(__file__).resolve().parent.parent / "netlists" / "dc_network.cir")
d = model.descriptor()
print("xi =", d.xi)
sp.pprint(d.E)
sp.pprint(d.J - d.R)
res = phsym.Simulator(model, 200.0, method="backward_euler").run(u={"VG": lambda t: np.ones_like(t)}, duration=2.0)
print(res.summary())
print("final generator current:", res["y(VG)"][-1], "A (DC value 1/(R_G + R_L + R_R) =", 1 / 10, ")")
