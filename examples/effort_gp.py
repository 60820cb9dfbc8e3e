"""
Gaussian-process identification of an effort function
=====================================================

Seed 002's RC circuit at reduced size: a capacitor with the nonlinear charge
law ``q = u_C^2 / 2`` (so its effort is ``z_1 = sqrt(2 q)``) charged through
a conductance by a source ``u = 1 + sin t``; the pH-DAE has the states
``x = (q_C, u_2, I_V)``, one of them differential.  ``EffortGP`` learns the
effort vector ``z(x)`` of ``E x' = (J - R) z(x) + B u`` from 32 samples of
the states and inputs (derivatives estimated from the time series), with a
posterior standard deviation, and is compared with the exact effort on 300
held-out samples.  The seed's whole protocol (both systems, both variants,
repetitions) is ``benchmarks/identify_gp.py``; its tables are in the user
guide (Gaussian-process identification).
"""
import matplotlib.pyplot as plt
import numpy as np

from phsym.identify import EffortGP
from phsym.identify.gp.seeds import rc_circuit

s = rc_circuit()                                   # explicit Euler data, 3001 samples
rng = np.random.default_rng(0)
perm = rng.permutation(len(s.t))
train, test = perm[:32], perm[32:332]

gp = EffortGP(s.E, s.J, s.R, s.B).fit(s.X, s.U, t=s.t, train_index=train)
z_true = s.effort(s.X[test])
z, std = gp.predict(s.X[test], return_std=True)
rmse = np.sqrt(np.mean((z - z_true) ** 2, axis=0))
print(f"fit on {train.size} samples in {gp.fit_time_:.2f} s")
print("RMSE per effort component on 300 test samples:", np.array2string(rmse, precision=2))
print("R^2 of (J - R) z against E x' - B u:", round(gp.score(s.X[test], s.U[test], Xdot=s.Xdot[test]), 5))

# %%
# Left: the learned capacitor effort ``z_1`` at the test samples against the
# charge, with two posterior standard deviations, and the exact law.  Right:
# exact and learned ``z_1`` along the trajectory.
q = np.linspace(s.X[:, 0].min(), s.X[:, 0].max(), 200)
fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
ax[0].plot(q, np.sqrt(2 * q), "k", lw=1, label="exact sqrt(2 q)")
ax[0].errorbar(s.X[test, 0], z[:, 0], yerr=2 * std[:, 0], fmt=".", ms=3, lw=0.5, label="learned z_1 +- 2 std")
ax[0].plot(s.X[train, 0], s.effort(s.X[train])[:, 0], "o", mfc="none", label="training samples")
ax[0].set_xlabel("q_C")
ax[0].legend(fontsize="small")
order = np.argsort(s.t[test])
ax[1].plot(s.t[test][order], z_true[order, 0], "k", label="exact z_1")
ax[1].plot(s.t[test][order], z[order, 0], "--", label="learned z_1")
ax[1].set_xlabel("t")
ax[1].legend(fontsize="small")
fig.tight_layout()
