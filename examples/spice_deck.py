"""
A SPICE deck: full-wave bridge rectifier
========================================

phsym reads SPICE decks: the title line, ``*`` and ``;`` comments, scale
suffixes, ``.param``, ``.model D`` cards with SPICE's diode parameters,
``.tran`` (fixed step ``TSTEP``, duration ``TSTOP``; without ``UIC`` the run
starts from the DC operating point) and ``.options``.  This is the bridge
rectifier of the SPICE-compatibility page: a 10 V, 50 Hz source feeds four
diodes into ``100 uF || 1 kOhm``.  The deck's own ``.tran`` card sets the
rate and the duration, as ``phsym simulate DECK`` does on the command line.
"""
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import phsym
from phsym.netlist.cards import deck_settings

DECK = """Full-wave bridge rectifier
* source floating between ac1 and ac2; the bridge charges C1
V1 ac1 ac2 SIN(0 10 50)
D1 ac1 out DMOD
D2 ac2 out DMOD
D3 0 ac1 DMOD
D4 0 ac2 DMOD
C1 out 0 100u      ; reservoir capacitor
R1 out 0 1k
.model DMOD D(IS=2.52n N=1.752)
.options GMIN=1e-12
.tran 20.833333u 60m
.end
"""
path = Path(tempfile.mkdtemp()) / "bridge.cir"
path.write_text(DECK)

settings = deck_settings(path)
print(f".tran: step {settings.tran.step:.4g} s ({settings.tran.fs:.0f} Hz), stop {settings.tran.stop} s, "
      f"UIC {settings.tran.uic}; options {settings.options}")
model = phsym.load(path)
print("states:", model.states)
print("H =", model.hamiltonian)

# %%
# Simulate at the deck's rate from the DC operating point (``x0="dc"``, as
# SPICE does without ``UIC``).  Each step solves the diodes' Newton system;
# the discrete power balance holds to rounding.
res = phsym.Simulator(model, settings.tran.fs).run(duration=settings.tran.stop, x0="dc")
print(res.summary())
print(f"Newton iterations per step: max {res.iterations.max()}, mean {res.iterations[1:].mean():.2f}")

fig, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
ax[0].plot(res.t_step * 1e3, res["v(ac1,ac2)"], label="v(ac1, ac2)")
ax[0].plot(res.t_step * 1e3, res["v(out)"], label="v(out)")
ax[0].set_ylabel("V")
ax[0].legend()
for d in ("D1", "D2", "D3", "D4"):
    ax[1].plot(res.t_step * 1e3, res[f"i({d})"] * 1e3, label=f"i({d})")
ax[1].set_ylabel("mA")
ax[1].set_xlabel("t [ms]")
ax[1].legend(ncol=4, fontsize="small")
fig.tight_layout()
print(f"ripple of v(out) over the last 20 ms: {np.ptp(res['v(out)'][res.t_step > 0.04]):.3f} V")
