"""Small-signal equations of the numeric engine at a DC point (SPICE's ``.ac`` on a circuit of any size).

A step of backward Euler from the DC point ``x`` at the DC inputs stays at
``x``: its unknowns are the DC potentials and currents with every state
increment zero (:mod:`.step`).  Its equations ``F(z) = Zr z + Or OUT + Kr K``
have entries ``a + b / h``, the ``b`` ones exactly where a state increment
over the step is a time derivative (a capacitor's current ``dx / h``, an
inductor's voltage, a junction charge's current).  Linearised at that point
and with ``1 / h`` replaced by ``s = j omega`` they are the circuit's
small-signal equations in deviations::

    (A + s B) dz = -U du

``A`` and ``B`` hold the constant entries plus the laws' derivatives (the
kernels' outputs at the DC point), ``U`` the inputs' columns; the branch
currents ``I = (Ca + s Cb) dz + Cu du`` and the potentials ``dz[:n_nodes]``
make the step vector the probes read (:meth:`.parts.NumericParts.probe`).
Nothing here is symbolic: a 10,000-node mesh is one sparse LU per frequency.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla
import sympy as sp

from ....errors import SimulationError
from ....structure.circuit.data import CircuitData
from .layout import STATE
from .operating import DCPoint
from .step import StepSystem
from .system import System

__all__ = ["SmallSignal"]


def _split(T, shape=None):
    """The ``a`` and ``b`` parts of a :class:`~.sparse_build.Triplets` as scipy CSR matrices."""
    shape = shape or T.shape
    r, c = np.asarray(T.rows, dtype=np.int64), np.asarray(T.cols, dtype=np.int64)
    return (sps.csr_matrix((np.asarray(T.a, dtype=float), (r, c)), shape=shape),
            sps.csr_matrix((np.asarray(T.b, dtype=float), (r, c)), shape=shape))


def _law_jacobian(S: System, OUT: np.ndarray) -> sps.csr_matrix:
    """``d OUT / d z``: each kernel's derivatives (in ``OUT``) times how its inputs read ``z``."""
    G = S.groups
    rows, cols, vals = [], [], []
    for inst, _, _, _ in G.instances():
        n_out, n_var = G.shape(inst)
        for m in range(n_out):
            for j in range(n_var):
                rows.append(G.out(inst, m))
                cols.append(G.inp(inst, j))
                vals.append(OUT[G.derivative(inst, m, j)])
    D = sps.csr_matrix((vals, (rows, cols)), shape=(OUT.size, max(G.n_in, 1)))
    return D @ S.IZ.matrix(1.0)


class SmallSignal:
    """The small-signal equations at a DC point (see the module docstring).

    Parameters
    ----------
    c : CircuitData
        The circuit.
    values : mapping of sympy.Symbol to float
        Parameter values.
    point : DCPoint
        The DC point (:func:`~.operating.dc_point`, nothing held).
    u0 : ndarray
        The DC inputs.
    xs : ndarray
        State scales (Newton's, for the linearisation's own step system).

    Attributes
    ----------
    A, B : scipy.sparse.csc_matrix
        ``F_z = A + s B``.
    U : scipy.sparse.csr_matrix
        ``F_u`` (unknowns x inputs).
    n_nodes : int
        Node potentials (the first unknowns).
    """

    def __init__(self, c: CircuitData, values: Mapping[sp.Symbol, float], point: DCPoint, u0: Sequence[float],
                 xs: np.ndarray):
        S = StepSystem(c, values, "backward_euler")
        L = S.L
        self.circuit, self.n_nodes, self.n_u = c, L.n_nodes, len(c.ports)
        u0 = np.asarray(u0, dtype=float)
        K = np.zeros(L.n_k)
        for i in range(c.n_x):
            K[L.k_x(i)], K[L.k_scale(i)] = point.x[i], xs[i]
        for j in range(self.n_u):
            K[L.k_u(j)] = u0[j]
        for i, m in L.effort_index.items():
            K[L.k_effort(i)] = point.efforts[m]
        K[L.k_one] = 1.0
        S.fill_controls(K)
        z = np.where(L.kinds == STATE, 0.0, point.z)      # the step that stays: every increment zero
        OUT = S.outputs(z, K)
        Mz = _law_jacobian(S, OUT)
        Ra, Rb = _split(S.R)
        Oa, Ob = _split(S.RO, (L.n_z, OUT.size))
        self.A = (Ra + Oa @ Mz).tocsc()
        self.B = (Rb + Ob @ Mz).tocsc()
        u_cols = [L.k_u(j) for j in range(self.n_u)]
        if S.IK.matrix(1.0)[:, u_cols].count_nonzero():     # no law reads a source directly (they read its branch)
            raise S.unsupported("a law reading an input directly")
        Ka, Kb = _split(S.RK)
        if Kb[:, u_cols].count_nonzero():
            raise S.unsupported("an input entering a step through 1/h")
        self.U = Ka[:, u_cols]
        Ca, Cb = _split(S.BZ)
        Ba, Bb = _split(S.BO, (len(c.branches), OUT.size))
        self.Ca, self.Cb = Ca + Ba @ Mz, Cb + Bb @ Mz
        self.Cu = _split(S.BK)[0][:, u_cols]

    def step_vectors(self, f: np.ndarray, du: np.ndarray) -> np.ndarray:
        """The complex step vector ``[potentials, branch currents, inputs]`` per frequency (rows).

        Parameters
        ----------
        f : ndarray
            Frequencies [Hz].
        du : ndarray of complex
            The inputs' amplitudes.

        Raises
        ------
        SimulationError
            When the equations are singular at a frequency.
        """
        du = np.asarray(du, dtype=complex)
        rhs = -(self.U @ du)
        iu = self.Cu @ du
        out = np.empty((f.size, self.n_nodes + self.Ca.shape[0] + self.n_u), dtype=complex)
        for i, fk in enumerate(np.asarray(f, dtype=float)):
            s = 2j * np.pi * fk
            try:
                lu = spla.splu((self.A + s * self.B).tocsc().astype(complex))
                dz = lu.solve(rhs)
            except RuntimeError:
                dz = np.full(rhs.shape, np.nan, dtype=complex)
            if not np.all(np.isfinite(dz)):
                raise SimulationError(f"the small-signal equations are singular at {fk:g} Hz "
                                      "(a node without a DC path?)", step=i, time=0.0)
            out[i] = np.concatenate([dz[:self.n_nodes], self.Ca @ dz + s * (self.Cb @ dz) + iu, du])
        return out
