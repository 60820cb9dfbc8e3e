"""
Grey-box fit of the DC power network of seed 001 (a smaller version of its tables).
===================================================================================

Run from the repository root:  python examples/dc_network_fit.py

1. Simulate the network (backward Euler, Ts = 5 ms, 20 s, 40-harmonic
   multisine of 0.1 Hz) from a random initial state and add output noise.
2. Fit all six parameters from the generator current I_G alone at 20 dB:
   good output fit, but C2, R_L and R_R are practically unidentifiable (a
   warning names them).
3. Fit them from (I_G, V1, V2) at 40 dB: every parameter within a fraction
   of a percent, with Cramér-Rao standard deviations and 95 % intervals.

The full benchmark (three noise levels, ten runs, timing) is
``benchmarks/fit_dc_network.py``.
"""
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import phsym
from phsym.identify import ParameterEstimator

try:
    NET = Path(__file__).resolve().parent.parent / "netlists"
except NameError:               # sphinx-gallery runs the file in examples/, without __file__
    NET = Path.cwd().parent / "netlists"
model = phsym.load(NET / "dc_network.cir")
theta = {"L": 2.0, "C1": 0.01, "C2": 0.02, "R_L": 1.0, "R_G": 6.0, "R_R": 3.0}
start = {"L": 1.5, "C1": 0.015, "C2": 0.015, "R_L": 1.5, "R_G": 4.5, "R_R": 4.0}
rng = np.random.default_rng(0)
Ts = 0.005
t = np.arange(4001) * Ts
phases = rng.uniform(0, 2 * np.pi, 40)
u = sum(np.sin(2 * np.pi * (i + 1) * 0.1 * t + phases[i]) for i in range(40))
res = phsym.Simulator(model, 1 / Ts, "backward_euler").run(u={"VG": u}, x0=[0.005, 0.1, -0.01])
labels = ["y(VG)", "v(n1)", "v(n2)"]
clean = {k: np.concatenate([[res[k][0]], res[k]]) for k in labels}   # sample 0 is not fitted


def noisy(snr):
    return {k: v + rng.standard_normal(v.size) * np.std(v) * 10 ** (-snr / 20) for k, v in clean.items()}


# %%
# Output I_G only, SNR 20 dB
# --------------------------
print("== output I_G only, SNR 20 dB ==")
y20 = noisy(20)
est = ParameterEstimator(model, list(theta), ["y(VG)"], initial=start, x0="estimate")
est.fit(t, {"VG": u}, {"y(VG)": y20["y(VG)"]})
print(est.summary())
yp = est.predict(t, {"VG": u})["y(VG)"]
print(f"NRMS against noise-free I_G: {phsym.identify.parameter_estimator.nrms(yp, clean['y(VG)'][1:]):.4f}\n")

# %%
# Outputs (I_G, V1, V2), SNR 40 dB
# --------------------------------
print("== outputs (I_G, V1, V2), SNR 40 dB ==")
est = ParameterEstimator(model, list(theta), labels, initial=start, x0="estimate").fit(t, {"VG": u}, noisy(40))
print(est.summary())
for k, v in theta.items():
    print(f"{k:>4}: deviation {100 * (est.params_[k] / v - 1):+.4f} %  (predicted std {100 * est.relative_std_[k]:.4f} %)")

# %%
# Relative deviation of each estimate from the true value with its 95 %
# confidence interval (Cramér-Rao, from the Jacobian at the optimum), and the
# fitted against the measured generator current over the first 10 s.
names = list(theta)
dev = np.array([100 * (est.params_[k] / theta[k] - 1) for k in names])
lo = np.array([100 * (est.confidence_intervals_[k][0] / theta[k] - 1) for k in names])
hi = np.array([100 * (est.confidence_intervals_[k][1] / theta[k] - 1) for k in names])
fig, ax = plt.subplots(2, 1, figsize=(7, 6))
ax[0].errorbar(range(len(names)), dev, yerr=[dev - lo, hi - dev], fmt="o", capsize=4)
ax[0].axhline(0, color="k", lw=0.5)
ax[0].set_xticks(range(len(names)), names)
ax[0].set_ylabel("estimate / true - 1 [%]")
ax[0].set_title("95 % confidence intervals, outputs (I_G, V1, V2), 40 dB")
yp = est.predict(t, {"VG": u})["y(VG)"]
first = t[1:] <= 10
ax[1].plot(t[1:][first], yp[first], lw=0.8, label="fitted model's I_G")
ax[1].plot(t[1:][first], clean["y(VG)"][1:][first], "k--", lw=0.8, label="noise-free I_G")
ax[1].set_xlabel("t [s]")
ax[1].set_ylabel("A")
ax[1].legend()
fig.tight_layout()
