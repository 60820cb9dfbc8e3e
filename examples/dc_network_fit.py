"""
Grey-box fit of the DC power network of seed 001 (a smaller version of its tables).
===================================================================================

Run from the repository root:  python examples/dc_network_fit.py

1. Simulate the network (backward Euler, Ts = 5 ms, 50 s, 40-harmonic
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

import numpy as np

import phsym
from phsym.identify import ParameterEstimator

model = phsym.load(Path(__file__).resolve().parent.parent / "netlists" / "dc_network.cir")
theta = {"L": 2.0, "C1": 0.01, "C2": 0.02, "R_L": 1.0, "R_G": 6.0, "R_R": 3.0}
start = {"L": 1.5, "C1": 0.015, "C2": 0.015, "R_L": 1.5, "R_G": 4.5, "R_R": 4.0}
rng = np.random.default_rng(0)
Ts = 0.005
t = np.arange(10001) * Ts
phases = rng.uniform(0, 2 * np.pi, 40)
u = sum(np.sin(2 * np.pi * (i + 1) * 0.1 * t + phases[i]) for i in range(40))
res = phsym.Simulator(model, 1 / Ts, "backward_euler").run(u={"VG": u}, x0=[0.005, 0.1, -0.01])
labels = ["y(VG)", "v(n1)", "v(n2)"]
clean = {k: np.concatenate([[res[k][0]], res[k]]) for k in labels}   # sample 0 is not fitted


def noisy(snr):
    return {k: v + rng.standard_normal(v.size) * np.std(v) * 10 ** (-snr / 20) for k, v in clean.items()}


print("== output I_G only, SNR 20 dB ==")
y20 = noisy(20)
est = ParameterEstimator(model, list(theta), ["y(VG)"], initial=start, x0="estimate")
est.fit(t, {"VG": u}, {"y(VG)": y20["y(VG)"]})
print(est.summary())
yp = est.predict(t, {"VG": u})["y(VG)"]
print(f"NRMS against noise-free I_G: {phsym.identify.parameter_estimator.nrms(yp[1:], clean['y(VG)'][1:]):.4f}\n")

print("== outputs (I_G, V1, V2), SNR 40 dB ==")
est = ParameterEstimator(model, list(theta), labels, initial=start, x0="estimate").fit(t, {"VG": u}, noisy(40))
print(est.summary())
for k, v in theta.items():
    print(f"{k:>4}: deviation {100 * (est.params_[k] / v - 1):+.4f} %  (predicted std {100 * est.relative_std_[k]:.4f} %)")
