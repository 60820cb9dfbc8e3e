"""
Linear PHS identification of a mass-spring-damper chain
=======================================================

Seed 000's protocol at reduced size: a chain of 10 masses (state dimension
20, two force inputs, the two collocated velocities as outputs) is simulated
exactly for 1 s under a chirp and a sine; ``LinearPHSEstimator`` fits a
port-Hamiltonian model ``x' = (J - R) Q x + B u, y = B^T Q x`` of order 20
(J skew, R positive semidefinite, Q = I) from the seed's start by L-BFGS
with the exact adjoint of the midpoint rule, and is cross-validated on different inputs (a square wave
and a cosine).  The full benchmark (50 masses, orders 20 to 120, both
optimisers) is ``benchmarks/identify_linear.py``; its table is in the user
guide (identification of linear PHS).
"""
import matplotlib.pyplot as plt
import numpy as np
import scipy.signal as ss

from phsym.benchmarks import msd_chain
from phsym.identify import LinearPHSEstimator

truth = msd_chain(10, 2, 1.0, 4.0, 4.0)
t = np.linspace(0.0, 1.0, 1001)
u = np.column_stack([ss.chirp(t, f0=3, t1=1, f1=20), np.sin(2 * np.pi * 3 * t)])
u_cv = np.column_stack([ss.square(t, duty=0.1), np.cos(np.pi * t)])


def exact(u):
    """The chain's outputs at the grid times (scipy's exact interpolating solution)."""
    return ss.lsim(truth.to_scipy(), u, t, interp=True)[1].reshape(len(t), -1)


y, y_cv = exact(u), exact(u_cv)

est = LinearPHSEstimator(20, optimizer="lbfgs", method="midpoint", init="seed", max_iter=150,
                         random_state=0)
est.fit(t, u, y)
print(f"{est.n_iter_} iterations, cost {est.history_['cost'][0]:.3e} -> {est.cost_:.3e}, {est.fit_time_:.2f} s")
print("R^2 train:", round(est.score(t, u, y), 5), " R^2 cross-validation:", round(est.score(t, u_cv, y_cv), 5))
m = est.model_
print("J skew:", np.allclose(m.J, -m.J.T), " min eigenvalue of R:", f"{np.linalg.eigvalsh(m.R).min():.2e}")

# %%
# Predictions of the identified model against the chain's outputs, on the
# training inputs and on the cross-validation inputs, and the cost history.
fig, ax = plt.subplots(3, 1, figsize=(7, 7))
for a, uu, yy, title in [(ax[0], u, y, "training inputs"), (ax[1], u_cv, y_cv, "cross-validation inputs")]:
    yp = est.predict(t, uu).y
    for j in range(2):
        a.plot(t, yy[:, j], color=f"C{j}", label=f"chain y{j + 1}")
        a.plot(t[1:], yp[:, j], "--", color=f"C{j}", label=f"model y{j + 1}")
    a.set_title(title)
    a.legend(ncol=4, fontsize="small")
ax[1].set_xlabel("t [s]")
ax[2].semilogy(est.history_["cost"])
ax[2].set_xlabel("iteration")
ax[2].set_ylabel("cost")
fig.tight_layout()
