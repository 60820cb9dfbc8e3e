"""
Mass, damping and stiffness matrices from forces and positions
==============================================================

Seed 004's 3-DOF system at reduced size: ``M q'' + D q' + K q = u`` with
``M = diag(0.8, 2, 1.2)``, ``K`` coupling every pair of masses and
``D = 0.1 K``.  Random binary forces act on every mass, the positions are
sampled exactly (zero-order hold, h = 0.05 s, 2000 samples) and 15 dB of
white noise is added.  ``MechanicalEstimator`` fits symmetric ``M, K > 0``
and ``D >= 0`` (Cholesky parametrisation, so the estimate is physical by
construction) with standard deviations, and keeps the better of the midpoint
and the exact ZOH discretisation.  The full Monte Carlo study against the
output-error bound, equation-error least squares and n4sid is
``benchmarks/identify_mechanical.py``; its tables are in the user guide
(identification of mass, damping and stiffness matrices).
"""
import matplotlib.pyplot as plt
import numpy as np
import scipy.signal as ss

from phsym.identify import MechanicalEstimator

K = np.array([[4.0, -1, -1], [-1, 4, -1], [-1, -1, 4]])
M, D = np.diag([0.8, 2.0, 1.2]), 0.1 * K
n, h, N = 3, 0.05, 2000

rng = np.random.default_rng(1)
u = np.sign(rng.standard_normal((N, n)))
u[0] = 0.0
Mi = np.linalg.inv(M)
A = np.block([[np.zeros((n, n)), np.eye(n)], [-Mi @ K, -Mi @ D]])
B = np.vstack([np.zeros((n, n)), Mi])
Ad, Bd, *_ = ss.cont2discrete((A, B, np.eye(2 * n), np.zeros((2 * n, n))), h, method="zoh")
x, q = np.zeros(2 * n), np.zeros((N, n))
for k in range(N - 1):                  # held forces: the exact sampled positions from rest
    x = Ad @ x + Bd @ u[k]
    q[k + 1] = x[:n]
noise = rng.standard_normal(q.shape) * q.std(axis=0) * 10 ** (-15 / 20)
t = np.arange(N) * h

est = MechanicalEstimator(n).fit(t, u, q + noise)
print("discretisation kept:", est.discretisation_)
for name, true, hat, std in [("M", M, est.M_, est.M_std_), ("D", D, est.D_, est.D_std_), ("K", K, est.K_, est.K_std_)]:
    rel = np.linalg.norm(hat - true) / np.linalg.norm(true)
    print(f"{name}: relative error {100 * rel:.2f} %  (largest std {std.max():.3f})")
    print(np.array2string(hat, precision=3))
print("R^2 against the noise-free positions:", round(est.score(t, u, q), 5))
print("eigenvalues of M, D, K:", [np.round(np.linalg.eigvalsh(X), 3) for X in (est.M_, est.D_, est.K_)])

# %%
# Estimated against true entries (upper triangles) with two standard
# deviations, and the predicted positions of mass 1 over the first 20 s.
fig, ax = plt.subplots(2, 1, figsize=(7, 6))
iu = np.triu_indices(n)
pos = 0
for i, (name, true, hat, std) in enumerate([("M", M, est.M_, est.M_std_), ("D", D, est.D_, est.D_std_),
                                            ("K", K, est.K_, est.K_std_)]):
    x_ = np.arange(pos, pos + len(iu[0]))
    ax[0].errorbar(x_, hat[iu], yerr=2 * std[iu], fmt="o", color=f"C{i}", label=f"{name} estimate +- 2 std")
    ax[0].plot(x_, true[iu], "kx")
    pos += len(iu[0]) + 1
ax[0].set_ylabel("entry value (x: true)")
ax[0].legend(fontsize="small")
first = t <= 20
ax[1].plot(t[first], (q + noise)[first, 0], ".", ms=2, color="0.6", label="measured q1")
ax[1].plot(t[first], q[first, 0], "k", lw=0.8, label="noise-free q1")
ax[1].plot(t[first], est.predict(t, u)[first, 0], "--", label="identified model")
ax[1].set_xlabel("t [s]")
ax[1].legend(fontsize="small")
fig.tight_layout()
