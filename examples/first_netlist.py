"""
A first netlist: the series RLC circuit
=======================================

Load ``netlists/rlc.cir`` (a 1 kHz sine source driving R, L and C in
series), look at the port-Hamiltonian structure phsym derives from it,
simulate it with the discrete-gradient scheme and check the discrete energy
balance: at every step the change of stored energy equals the supplied
energy minus the dissipated energy, to rounding.
"""
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

import phsym

try:
    NET = Path(__file__).resolve().parent.parent / "netlists"
except NameError:               # sphinx-gallery runs the file in examples/, without __file__
    NET = Path.cwd().parent / "netlists"
print(open(NET / "rlc.cir").read())

# %%
# Structure
# ---------
# The states are the inductor's flux and the capacitor's charge, the input is
# the source voltage and the output the current the source delivers
# (receiver convention: ``y u`` is the power entering the circuit).
model = phsym.load(NET / "rlc.cir")
print("states :", model.states)
print("inputs :", model.inputs, " outputs:", model.outputs)
print("H      =", model.hamiltonian)
print("checks :", model.check())
s = model.explicit
sp.pprint(s.J)
sp.pprint(s.R)

# %%
# Simulation
# ----------
# 96 kHz, 5 ms, the netlist's own 1 kHz sine.  ``plot`` draws the probes and
# the power panel (dH/dt, dissipated and supplied power) and the per-step
# residual of the power balance.
res = phsym.Simulator(model, 96_000, method="discrete_gradient").run(duration=5e-3)
print(res.summary())
fig = res.plot(["v(b)", "i(L1)"])

# %%
# Energy balance
# --------------
# Summed over the run, the energy stored at the end equals the initial energy
# plus the supplied minus the dissipated energy; the step residual is at the
# level of rounding relative to the power scale.
h = 1 / 96_000
stored = res.H[-1] - res.H[0]
supplied = h * np.sum(res.P_supplied)
dissipated = h * np.sum(res.P_diss)
print(f"stored {stored:.6e} J = supplied {supplied:.6e} J - dissipated {dissipated:.6e} J "
      f"(mismatch {stored - supplied + dissipated:.1e} J)")
print(f"max relative power-balance residual per step: {res.max_balance_error:.1e}")

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(res.t, res.H * 1e6, label="H (stored)")
ax.plot(res.t[1:], (res.H[0] + h * np.cumsum(res.P_supplied - res.P_diss)) * 1e6, "--",
        label="H(0) + supplied - dissipated")
ax.set_xlabel("t [s]")
ax.set_ylabel("energy [uJ]")
ax.legend()
fig.tight_layout()
