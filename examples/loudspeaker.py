"""
Loudspeaker: one driver in both analogies
=========================================

An electrodynamic loudspeaker couples an electrical circuit (coil resistance
and inductance) to a mechanical one (moving mass, suspension, damping).
``netlists/loudspeaker.cir`` writes the mechanics in the mobility analogy
(the coil is a transformer of ratio Bl between voltage and velocity);
``netlists/loudspeaker_gyrator.cir`` writes it in the impedance analogy
(force = voltage, the coil is a gyrator Bl).  Both must give the same
Hamiltonian structure and the same input impedance; their step responses
coincide, and phsym's simulation conserves the multiphysics energy balance.
"""
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import phsym

try:
    NET = Path(__file__).resolve().parent.parent / "netlists"
except NameError:               # sphinx-gallery runs the file in examples/, without __file__
    NET = Path.cwd().parent / "netlists"

mob = phsym.load(NET / "loudspeaker.cir")
imp = phsym.load(NET / "loudspeaker_gyrator.cir")
for name, m in [("mobility", mob), ("impedance", imp)]:
    print(f"{name:9s} states {m.states}  H = {m.hamiltonian}")

# %%
# Input impedance from the linearised PHS of each netlist, and the closed
# form ``Z = Re + j w Le + Bl^2 / (Rms + j w Mms + Kms / (j w))``.
f = np.logspace(1, 4, 400)
s = 2j * np.pi * f
Z_mob = 1 / mob.linearize().transfer(s)[:, 0, 0]
Z_imp = 1 / imp.linearize().transfer(s)[:, 0, 0]
Re, Le, Bl, Mms, Kms, Rms = 6, 0.5e-3, 5, 20e-3, 2e3, 1.5
Z_ref = Re + s * Le + Bl ** 2 / (Rms + s * Mms + Kms / s)
print("max relative difference from the closed form:",
      f"{np.max(np.abs(Z_mob / Z_ref - 1)):.1e} (mobility), {np.max(np.abs(Z_imp / Z_ref - 1)):.1e} (impedance)")
print(f"resonance sqrt(Kms/Mms)/(2 pi) = {np.sqrt(Kms / Mms) / (2 * np.pi):.1f} Hz, "
      f"peak of |Z| below 1 kHz at {f[np.argmax(np.abs(Z_mob) * (f < 1e3))]:.1f} Hz")

# %%
# A 1 V step at 8 kHz for 0.2 s in both netlists: the coil current and the
# energy balance (the residual is at rounding level).
runs = {name: phsym.Simulator(m, 8000).run(u={"V1": 1.0}, duration=0.2)
        for name, m in [("mobility", mob), ("impedance", imp)]}
for name, r in runs.items():
    print(f"{name:9s} {r.summary()}")
diff = np.max(np.abs(runs["mobility"]["y(V1)"] - runs["impedance"]["y(V1)"]))
print(f"max difference of the input current between the analogies: {diff:.1e} A")

fig, ax = plt.subplots(2, 1, figsize=(7, 6))
ax[0].loglog(f, np.abs(Z_mob), label="mobility netlist")
ax[0].loglog(f, np.abs(Z_imp), "--", label="impedance netlist")
ax[0].set_xlabel("f [Hz]")
ax[0].set_ylabel("|Z| [ohm]")
ax[0].legend()
r = runs["mobility"]
ax[1].plot(r.t_step, r["y(V1)"], label="coil current, mobility")
ax[1].plot(runs["impedance"].t_step, runs["impedance"]["y(V1)"], "--", label="coil current, impedance")
ax[1].set_xlabel("t [s]")
ax[1].set_ylabel("A")
ax[1].legend()
fig.tight_layout()
