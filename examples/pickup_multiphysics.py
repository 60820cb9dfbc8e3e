"""
Electromagnetic pickup: three domains, one energy balance
=========================================================

``netlists/pickup.cir`` couples three physical domains: a magnet (a
magnetomotive-force source) drives flux through a coil and an air gap; a
plucked steel string (mass, spring, damper in the mobility analogy) moves in
that gap and changes its reluctance; the flux variation induces the output
voltage across the amplifier's input resistance.  The gap is one storage
with two states, ``H(phi, x) = (Rc + (g0 - x)/(mu0 A)) phi^2/2``: its mmf
``R(x) phi`` acts on the magnetic circuit and its force
``-phi^2/(2 mu0 A)`` on the string.  This page goes from the netlist to the
structure, the simulation and the per-step energy balance.
"""
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import phsym

try:
    NET = Path(__file__).resolve().parent.parent / "netlists"
except NameError:               # sphinx-gallery runs the file in examples/, without __file__
    NET = Path.cwd().parent / "netlists"

print((NET / "pickup.cir").read_text())
model = phsym.load(NET / "pickup.cir")

# %%
# The structure: the states of all three domains, one Hamiltonian, a skew
# interconnection and a non-negative dissipation.
S = model.structure
print("states:", model.states)
print("H =", model.hamiltonian)
J = S.J_numeric(model.parameter_values()).toarray()
print("J + J^T = 0:", np.allclose(J, -J.T))
print("dissipative ports:", [(d.element, d.z) for d in S.dissipative])

# %%
# Simulation at 48 kHz with the discrete-gradient scheme (the deck's
# ``.tran`` card: 50 ms from the DC operating point, where the magnet's flux
# holds the string pulled in a little): the pluck at 5 ms makes it ring, and
# the output is the coil voltage ``v(e)``.
res = phsym.simulate(NET / "pickup.cir")
print(res.summary())

fig, ax = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
ax[0].plot(res.t * 1e3, res["x_XG1"] * 1e6)
ax[0].set_ylabel("string x [um]")
ax[1].plot(res.t_step * 1e3, res["v(e)"] * 1e3)
ax[1].set_ylabel("output v(e) [mV]")
ax[2].semilogy(res.t_step * 1e3, np.abs(res.balance) / res.power_scale + 1e-18)
ax[2].set_ylabel("|balance| / power scale")
ax[2].set_xlabel("t [ms]")
fig.tight_layout()

# %%
# The energy balance ``(H[k+1] - H[k]) / h = -P_diss + P_supplied`` holds at
# every step to round-off, across the three domains: the pluck supplies the
# string's energy, which the coil passes to the amplifier's input resistance
# and the damper dissipates; the magnet exchanges power with the circuit as
# the gap's reluctance changes.
print(f"largest relative balance residual: {np.abs(res.balance).max() / res.power_scale:.2e}")
energy_in = np.sum(res.P_supplied) * res.info["h"]
energy_lost = np.sum(res.P_diss) * res.info["h"]
print(f"supplied {energy_in:.4e} J, dissipated {energy_lost:.4e} J, stored {res.H[-1] - res.H[0]:.4e} J")
