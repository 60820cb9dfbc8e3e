"""
An unknown diode law learned from input-output data
===================================================

A diode clipper whose resistor and capacitor are known but whose diode pair
is not: the netlist line ``D1 out 0 learn(kind=monotone, knots=14,
range=-0.7..0.7, scale=1m)`` stands for a monotone current law ``i = f(v)``
that is passive for every value of its parameters.  The "recording" here is
a simulation of the clipper with Shockley diodes (``netlists/diode_clipper.cir``)
plus noise; :class:`~phsym.identify.LearnedLawEstimator` fits the law from
the input and output voltages only, then the learned curve with its
confidence band is compared with the Shockley pair, and the fitted model
predicts a held-out input.
"""
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import phsym
from phsym.identify import LearnedLawEstimator
from phsym.identify.learned import laws_text

try:
    NET = Path(__file__).resolve().parent.parent / "netlists"
except NameError:               # sphinx-gallery runs the file in examples/, without __file__
    NET = Path.cwd().parent / "netlists"

fs = 48_000.0
t = np.arange(961) / fs                                   # 20 ms
vin = 1.8 * np.sin(2 * np.pi * 700 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 90 * t))
truth = phsym.load(NET / "diode_clipper.cir")
vout = np.asarray(phsym.Simulator(truth, fs, "midpoint").run(u={"Vin": vin})["v(out)"])
vout_noisy = vout + 0.003 * np.random.default_rng(0).standard_normal(vout.size)

netlist = """* clipper whose diode pair is unknown
Vin in 0 DC 0
R1 in out 2.2k
C1 out 0 10n
D1 out 0 learn(kind=monotone, knots=14, range=-0.7..0.7, scale=1m)
"""
# a rough prior (a silicon-like pair, not the truth) gives the start
est = LearnedLawEstimator(phsym.parse(netlist), outputs=["v(out)"], method="midpoint", max_nfev=40,
                          prior=("shockley_pair", {"Is": 1e-9, "N": 2.0}))
est.fit(t, {"Vin": vin}, {"v(out)": vout_noisy})
print(est.report())

# %%
# The learned law, its 95 % band and the truth (Shockley pair, IS = 2.52 nA,
# N = 1.752).  Outside the excited range (shaded) the law is not determined
# by the data: it extrapolates linearly and stays passive.
law = est.laws_["D1"]


def shockley_pair(v):
    return 2.52e-9 * (np.exp(v / (1.752 * 0.02585)) - np.exp(-v / (1.752 * 0.02585)))


fig, ax = plt.subplots(figsize=(6, 4))
law.plot(ax=ax, span=(-0.7, 0.7), truth=shockley_pair)
ax.set_xlabel("diode voltage v [V]")
ax.set_ylabel("current [A]")
ax.set_ylim(-1.5e-3, 1.5e-3)
fig.tight_layout()

# %%
# A held-out input (other frequency and level) predicted by the fitted model;
# ``validate`` reports the error and how much of the record leaves the excited range.
vin2 = 1.2 * np.sin(2 * np.pi * 300 * t)
vout2 = np.asarray(phsym.Simulator(truth, fs, "midpoint").run(u={"Vin": vin2})["v(out)"])
print(est.validate(t, {"Vin": vin2}, {"v(out)": vout2}))

# %%
# The fitted netlist: the element's fitted line and its ``.covariance`` card
# (the band and the excited range).  Read back, it gives the same curve with
# its band: what ``phsym show fitted.cir`` prints (``--plot`` draws it).
text = est.netlist_text(netlist)
print("\n".join(text.splitlines()[:8]) + "\n...")        # the card: 153 numbers, 17 x 17 lower triangle
print(laws_text(phsym.parse(text)))
