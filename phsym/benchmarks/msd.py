"""Reference port-Hamiltonian benchmark systems.

Currently provides the single mass-spring-damper chain used by the
identification benchmark (Gugercin, Polyuga, Beattie, van der Schaft 2012;
``SingleMSDChain`` of the port-Hamiltonian benchmark collection).
"""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from ..errors import StructureError
from ..structure.linear import LinearPHS

__all__ = ["msd_chain"]

Scalar_or_seq = Union[float, Sequence[float], np.ndarray]


def _per_cell(value: Scalar_or_seq, n_cells: int, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        return np.full(n_cells, float(arr))
    arr = arr.reshape(-1)
    if arr.size != n_cells:
        raise StructureError(f"{name} has {arr.size} entries, expected a scalar or {n_cells}")
    return arr.copy()


def msd_chain(n_cells: int = 50, io_dim: int = 2, c: Scalar_or_seq = 1.0,
              m: Scalar_or_seq = 4.0, k: Scalar_or_seq = 4.0) -> LinearPHS:
    """Single mass-spring-damper chain as a linear port-Hamiltonian system.

    ``N = n_cells`` masses in a row, neighbours coupled by springs, mass N tied
    to a wall by spring ``k_N`` (mass 1 is free on the left), every mass
    damped to ground.  Forces act on the first ``io_dim`` masses; the outputs
    are their velocities.  The state is ``(q_1, p_1, ..., q_N, p_N)``
    (positions and momenta), so ``n = 2 N``.

    Parameters
    ----------
    n_cells : int, default 50
        Number of masses N (at least 1).
    io_dim : int, default 2
        Number of ports m (forces on masses ``1..m``), ``1 <= m <= N``.
    c : float or sequence of float, default 1.0
        Damping coefficient(s) ``c_j`` (scalar or one per cell).
    m : float or sequence of float, default 4.0
        Mass(es) ``m_j``.
    k : float or sequence of float, default 4.0
        Stiffness(es) ``k_j``; ``k_j`` couples masses j and j+1 and ``k_N``
        couples mass N to the wall.

    Returns
    -------
    LinearPHS
        ``x' = (J - R) Q x + B u``, ``y = B^T Q x`` with
        ``J = blockdiag([[0, 1], [-1, 0]])``, ``R = diag(0, c_1, ..., 0, c_N)``,
        ``Q`` holding the stiffness matrix on the positions and ``1/m_j`` on the
        momenta, ``B[p_i, i] = 1``.

    Examples
    --------
    >>> sys = msd_chain(50, 2, 1.0, 4.0, 4.0)
    >>> sys.n_states, sys.n_inputs
    (100, 2)
    """
    n_cells = int(n_cells)
    io_dim = int(io_dim)
    if n_cells < 1:
        raise StructureError("n_cells must be at least 1")
    if not 1 <= io_dim <= n_cells:
        raise StructureError(f"io_dim must lie in [1, n_cells = {n_cells}], got {io_dim}")
    cv = _per_cell(c, n_cells, "c")
    mv = _per_cell(m, n_cells, "m")
    kv = _per_cell(k, n_cells, "k")
    if np.any(cv < 0) or np.any(mv <= 0) or np.any(kv <= 0):
        raise StructureError("need c >= 0, m > 0 and k > 0")
    n = 2 * n_cells
    iq = np.arange(0, n, 2)   # position indices
    ip = iq + 1               # momentum indices
    J = np.zeros((n, n))
    J[iq, ip] = 1.0
    J[ip, iq] = -1.0
    R = np.zeros((n, n))
    R[ip, ip] = cv
    K = np.zeros((n_cells, n_cells))
    K[0, 0] = kv[0]
    for j in range(1, n_cells):
        K[j, j] = kv[j - 1] + kv[j]
    for j in range(n_cells - 1):
        K[j, j + 1] = K[j + 1, j] = -kv[j]
    Q = np.zeros((n, n))
    Q[np.ix_(iq, iq)] = K
    Q[ip, ip] = 1.0 / mv
    B = np.zeros((n, io_dim))
    B[ip[:io_dim], np.arange(io_dim)] = 1.0
    states = [f"{s}{j + 1}" for j in range(n_cells) for s in ("q", "p")]
    return LinearPHS(J, R, Q, B, states=states,
                     inputs=[f"F{i + 1}" for i in range(io_dim)],
                     outputs=[f"v{i + 1}" for i in range(io_dim)])
