"""The compiled loops of linear schemes (numbers only: no sympy, no scipy).

:class:`DenseLinearLoop` steps small models with fused matrices on
``z = (x_k, ubar)``; :class:`SparseLinearLoop` solves each step with sparse
LU factors.  :class:`phsym.simulation.engines.linear.engine.LinearEngine` builds both; a
warm start rebuilds them from stored arrays (:meth:`from_arrays`).  Their
interface is that of :class:`phsym.simulation.engines.generated.NewtonLoop`.
"""
from __future__ import annotations

import time
from typing import Callable, Dict, Mapping, Optional, Tuple

import numpy as np

from ....codegen import aot
from ....codegen.linear_gen import MAX_UNROLLED, unrolled_linear, unrolled_source
from ....errors import SimulationError
from ..arrays import Progress, RunArrays, plain_call, stepping

__all__ = ["DenseLinearLoop", "SparseLinearLoop", "state_point_rows", "sparser_rows", "initial_energy"]


def state_point_rows(Wd, Wa, Aax, Aaa, Ba, theta: float) -> Optional[np.ndarray]:
    """Dissipation rows on ``(x_k, ubar, x_{k+1})``: ``[(1 - theta) C, D, theta C]``.

    ``w = Wd x_theta + Wa v_a`` reads the differential variables at the
    step's state point ``x_theta = (1 - theta) x_k + theta x_{k+1}`` and the
    algebraic ones, which the algebraic rows fix:
    ``0 = Aax x_theta + Aaa v_a + Ba ubar``.  Then ``w = C x_theta + D ubar``
    with ``C = Wd - Wa Aaa^{-1} Aax``, ``D = -Wa Aaa^{-1} Ba``.  In a chain of
    masses and dampers ``C`` has one or two entries per row where the fused
    rows (through the inverse of the whole step) are full.  Stacks of
    matrices (leading axes) are taken set by set.  ``None`` when ``Aaa`` is
    singular.

    Parameters
    ----------
    Wd, Wa : ndarray (..., n_w, n_x), (..., n_w, n_a)
        Dissipation rows on the differential and the algebraic variables.
    Aax, Aaa, Ba : ndarray
        Algebraic rows of ``A`` (differential and algebraic columns) and of ``B``.
    theta : float
        The scheme's parameter.
    """
    nd = Wd.shape[-1]
    if Aaa.shape[-1]:
        try:
            P = -np.linalg.solve(Aaa, np.concatenate([Aax, Ba], axis=-1))
        except np.linalg.LinAlgError:
            return None
        C = Wd + Wa @ P[..., :nd]
        D = Wa @ P[..., nd:]
    else:
        C, D = Wd, np.zeros(Wd.shape[:-1] + (Ba.shape[-1],))
    return np.concatenate([(1.0 - theta) * C, D, theta * C], axis=-1)


def sparser_rows(Wc: np.ndarray, ext: Optional[np.ndarray], G: np.ndarray) -> np.ndarray:
    """``ext`` (rows on ``(x_k, ubar, x_{k+1})``) when it has fewer nonzeros than the fused ``Wc`` and
    fuses back to it (``ext_z + ext_x G = Wc`` to 1e-9), else ``Wc``.

    Parameters
    ----------
    Wc : ndarray (n_w, n_z)
        Fused rows on ``z = (x_k, ubar)``.
    ext : ndarray (n_w, n_z + n_x) or None
        From :func:`state_point_rows`.
    G : ndarray (n_x, n_z)
        The update ``x_{k+1} = G z``.
    """
    if ext is None or not np.all(np.isfinite(ext)) or np.count_nonzero(ext) >= np.count_nonzero(Wc):
        return Wc
    nz = Wc.shape[1]
    err = np.abs(ext[:, :nz] + ext[:, nz:] @ G - Wc).max(initial=0.0)
    return ext if err <= 1e-9 * max(np.abs(Wc).max(initial=0.0), 1e-300) else Wc


def initial_energy(Q: np.ndarray, x: np.ndarray) -> float:
    """``H = x Q x / 2`` of a run's initial state (exactly 0.0 for a zero state, without arithmetic: a
    sweep's batch skips the products for its zero states and must give the same floats).

    Parameters
    ----------
    Q : ndarray (n_x, n_x)
        Energy matrix.
    x : ndarray (n_x,)
        Initial state.
    """
    return 0.5 * x @ (Q @ x) if x.any() else 0.0


def _linear_failure(h: float) -> Callable[[int], SimulationError]:
    return lambda bad: SimulationError("non-finite state (unstable or overflowing)", step=bad,
                                       time=(bad + 1) * h, quantity="H")


class DenseLinearLoop:
    """Dense linear scheme ``x_{k+1} = G z``, ``y = Yc z``, ``w = Wc z``, ``e = Ec z``
    with ``z = (x_k, ubar_k)`` (see :mod:`phsym.simulation.engines.linear.engine`).

    Parameters
    ----------
    G, Yc, Wc, Ec : ndarray
        Fused update, output, dissipation and effort matrices.  ``Wc`` may
        also have ``n_x`` more columns, which multiply ``x_{k+1}`` (the
        dissipation read at the step's state point, often much sparser;
        loops too large to unroll only).
    pw : ndarray
        Weights of the dissipation rows (``P_diss = sum pw w^2``).
    Q : ndarray
        Energy matrix of the state (``H = x Q x / 2``).
    inputs : int
        Input of a step: 0 start, 1 midpoint, 2 end.
    prefer_aot : bool
        Prefer the ahead-of-time compiled unrolled loop when the cache has one
        (and start its background build when not); warm starts set this.
    stacked : tuple, optional
        ``(arrays, j)``: the matrices are row ``j`` of ``arrays``, stacks of
        many parameter sets in the order of :attr:`ARRAYS` (see the
        attribute).

    Attributes
    ----------
    key : str or None
        Cache key of the unrolled loop module (``None``: generic kernel).
    compiled : str
        ``"ahead of time"``, ``"numba cache"`` or ``"numba kernel"`` after a run.
    stacked : tuple or None
        ``(arrays, j)`` when the matrices are row ``j`` of stacks of many
        parameter sets (:class:`~phsym.simulation.engines.linear.template.LinearTemplate`),
        ``arrays`` in the order of :attr:`ARRAYS`: a sweep passes the stacks on.
    """

    KIND = "linear-dense"
    ARRAYS = ("G", "Yc", "Wc", "pw", "Q", "Ec")

    def __init__(self, G, Yc, Wc, pw, Q, Ec, inputs: int, prefer_aot: bool = False,
                 stacked: Optional[tuple] = None):
        c = np.ascontiguousarray
        self.G, self.Yc, self.Wc, self.pw, self.Q, self.Ec = (c(a, dtype=float) for a in (G, Yc, Wc, pw, Q, Ec))
        self.inputs = int(inputs)
        self.prefer_aot = bool(prefer_aot)
        self.compiled = ""
        self.compile_time = 0.0
        self.n_e = self.Ec.shape[0]
        self._csr: Optional[tuple] = None
        self.stacked = stacked
        nx, nz = self.G.shape
        self.key: Optional[str] = None
        if self.Wc.shape[1] not in (nz, nz + nx):
            raise ValueError(f"dissipation rows with {self.Wc.shape[1]} columns for {nx} states and {nz - nx} inputs")
        if nx * nz <= MAX_UNROLLED and self.Wc.shape[1] == nz:     # G is (nx, nx + nu)
            self.key = unrolled_source(nx, nz - nx, self.Wc.shape[0], self.n_e, self.inputs)[1]

    def carry(self, start: Optional[Mapping[str, float]] = None) -> None:
        """Nothing: the state alone continues a linear run (see :meth:`NewtonLoop.carry`).

        Parameters
        ----------
        start : mapping of str to float, optional
            Ignored (a linear step has no Newton start).
        """
        return None

    def compressed(self) -> tuple:
        """``G, Yc, Wc`` (with ``pw``), ``Q``, ``Ec`` as compressed rows: the arguments of
        :func:`phsym.codegen.kernels.linear_csr.run_linear_csr` after ``inputs`` (built once)."""
        if self._csr is None:
            from ....codegen.kernels.linear_csr import compress
            c = [compress(a) for a in (self.G, self.Yc, self.Wc)]
            self._csr = (*c[0], *c[1], *c[2], self.pw, *compress(self.Q), *compress(self.Ec))
        return self._csr

    def run(self, x: np.ndarray, U: np.ndarray, h: float, rec: bool, progress: Progress = None,
            chunk: int = 0, carry: None = None) -> Tuple[RunArrays, float]:
        """Step from ``x`` (overwritten) over ``U``; see :meth:`NewtonLoop.run`.

        Parameters
        ----------
        x : ndarray
            Initial state.
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        h : float
            Step (for error messages).
        rec : bool
            Record efforts.
        progress : callable(done, total), optional
            Called after each chunk.
        chunk : int
            Steps per compiled call.
        carry : None
            Unused (the interface of :meth:`NewtonLoop.run`).
        """
        N = U.shape[0] - 1
        rec = bool(rec) and self.n_e > 0
        A = RunArrays.allocate(N, x, U.shape[1], self.n_e, rec, counters=False)
        A.Hh[0] = initial_energy(self.Q, x)
        args = (self.G, self.Yc, self.Wc, self.pw, self.Q, self.Ec, A.X, A.Y, A.Hh, A.Pd, A.Ps, A.E, rec)
        call = plain_call
        t0 = time.perf_counter()
        if self.key is not None:
            mod = aot.load(self.key) if self.prefer_aot else None
            if mod is not None:
                call, self.compiled = aot.checked, "ahead of time"
            else:
                mod = unrolled_linear(self.G.shape[0], U.shape[1], self.Wc.shape[0], self.n_e, self.inputs)
                self.compiled = "interpreted" if getattr(mod, "INTERPRETED", False) else "numba cache"
                if self.prefer_aot:
                    aot.start_background(self.key)
            call(mod.run, aot.LINEAR_TYPES, x, U, 0, 0, *args)      # compile or load first

            def steps(k0, k1):
                call(mod.run, aot.LINEAR_TYPES, x, U, int(k0), int(k1), *args)
                Hk = A.Hh[k0 + 1:k1 + 1]
                if np.isfinite(Hk.sum()):      # finite sum: every entry finite (no boolean temporary)
                    return -1
                bad = np.flatnonzero(~np.isfinite(Hk))
                return int(k0 + bad[0]) if bad.size else -1
        else:       # too large to unroll: the nonzeros of the rows (the same floats, see linear_csr)
            from ....codegen.kernels.linear_csr import run_linear_csr      # numba: only when this loop runs
            self.compiled = "numba kernel"
            cargs = self.compressed() + (A.X, A.Y, A.Hh, A.Pd, A.Ps, A.E, rec)
            run_linear_csr(x, U, 0, 0, self.inputs, *cargs)

            def steps(k0, k1):
                return run_linear_csr(x, U, k0, k1, self.inputs, *cargs)
        self.compile_time = time.perf_counter() - t0
        return A, stepping(steps, N, h, progress, chunk, _linear_failure(h))

    def to_arrays(self) -> Tuple[Dict[str, object], Dict[str, np.ndarray]]:
        """``(meta, arrays)`` describing this loop (see :meth:`from_arrays`)."""
        return ({"kind": self.KIND, "inputs": self.inputs, "key": self.key},
                {k: getattr(self, k) for k in self.ARRAYS})

    @classmethod
    def from_arrays(cls, meta: Dict[str, object], arrays: Dict[str, np.ndarray]) -> "DenseLinearLoop":
        """The loop described by :meth:`to_arrays`.

        Parameters
        ----------
        meta : dict
            JSON-able description.
        arrays : dict of str to ndarray
            The loop's arrays.
        """
        return cls(*(arrays[k] for k in cls.ARRAYS), meta["inputs"], prefer_aot=True)


class SparseLinearLoop:
    """Linear scheme with sparse LU factors (scipy's ``splu``), for large models:
    the unknowns of a step solve ``M v = K x_k + Ku ubar_k`` and the stacked
    linear outputs are ``o = Ox x + Ov v + Ou ubar`` (see
    :func:`phsym.codegen.kernels.generic.run_linear_sparse`).

    Parameters
    ----------
    csr : dict of str to tuple
        ``(indptr, indices, data)`` of ``K, Ku, Ox, Ov, Ou, Q`` (CSR) and of the
        factors ``L, U`` (CSC).
    perm_r, perm_c : ndarray of int64
        Row and column permutations of the factorisation.
    pw : ndarray
        Weights of the dissipation rows.
    inputs : int
        Input of a step: 0 start, 1 midpoint, 2 end.
    n_y, n_w, n_e : int
        Rows of the outputs: port outputs, dissipation rows, efforts.
    """

    KIND = "linear-sparse"
    MATRICES = ("K", "Ku", "L", "U", "Ox", "Ov", "Ou", "Q")

    def __init__(self, csr: Dict[str, tuple], perm_r, perm_c, pw, inputs: int, n_y: int, n_w: int, n_e: int):
        self.csr = {k: tuple(np.ascontiguousarray(a) for a in v) for k, v in csr.items()}
        self.perm_r = np.ascontiguousarray(perm_r, dtype=np.int64)
        self.perm_c = np.ascontiguousarray(perm_c, dtype=np.int64)
        self.pw = np.ascontiguousarray(pw, dtype=float)
        self.inputs, self.n_y, self.n_w, self.n_e = int(inputs), int(n_y), int(n_w), int(n_e)
        self.compiled = "numba kernel"
        self.compile_time = 0.0
        self.key: Optional[str] = None

    @classmethod
    def from_matrices(cls, mats: Dict[str, object], perm_r, perm_c, pw, inputs: int, n_y: int, n_w: int,
                      n_e: int) -> "SparseLinearLoop":
        """Build from scipy.sparse matrices (CSR, or CSC for ``L`` and ``U``).

        Parameters
        ----------
        mats : dict of str to scipy.sparse matrix
            :attr:`MATRICES`.
        perm_r, perm_c : ndarray
            Permutations of the factorisation.
        pw : ndarray
            Weights of the dissipation rows.
        inputs : int
            Input rule code.
        n_y, n_w, n_e : int
            Output row counts.
        """
        csr = {k: (m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data.astype(float))
               for k, m in mats.items()}
        return cls(csr, perm_r, perm_c, pw, inputs, n_y, n_w, n_e)

    def energy(self, x: np.ndarray) -> float:
        """H(x) = x Q x / 2 with the CSR energy matrix.

        Parameters
        ----------
        x : ndarray
            State.
        """
        ptr, idx, dat = self.csr["Q"]
        qx = np.array([dat[ptr[i]:ptr[i + 1]] @ x[idx[ptr[i]:ptr[i + 1]]] for i in range(x.shape[0])])
        return 0.5 * float(x @ qx)

    def carry(self, start: Optional[Mapping[str, float]] = None) -> None:
        """Nothing: the state alone continues a linear run (see :meth:`NewtonLoop.carry`).

        Parameters
        ----------
        start : mapping of str to float, optional
            Ignored (a linear step has no Newton start).
        """
        return None

    def run(self, x: np.ndarray, U: np.ndarray, h: float, rec: bool, progress: Progress = None,
            chunk: int = 0, carry: None = None) -> Tuple[RunArrays, float]:
        """Step from ``x`` (overwritten) over ``U``; see :meth:`NewtonLoop.run`.

        Parameters
        ----------
        x : ndarray
            Initial state.
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        h : float
            Step (for error messages).
        rec : bool
            Record efforts.
        progress : callable(done, total), optional
            Called after each chunk.
        chunk : int
            Steps per compiled call.
        carry : None
            Unused (the interface of :meth:`NewtonLoop.run`).
        """
        from ....codegen.kernels.generic import run_linear_sparse      # numba: only when this loop runs
        N = U.shape[0] - 1
        rec = bool(rec) and self.n_e > 0
        A = RunArrays.allocate(N, x, U.shape[1], self.n_e, rec, counters=False)
        A.Hh[0] = self.energy(x)
        c = self.csr
        args = (*c["K"], *c["Ku"], *c["L"], *c["U"], self.perm_r, self.perm_c, *c["Ox"], *c["Ov"], *c["Ou"],
                self.pw, *c["Q"], A.X, A.Y, A.Hh, A.Pd, A.Ps, A.E, rec)
        t0 = time.perf_counter()
        run_linear_sparse(x, U, 0, 0, self.inputs, self.n_y, self.n_w, *args)   # compile or load first
        self.compile_time = time.perf_counter() - t0
        return A, stepping(lambda k0, k1: run_linear_sparse(x, U, k0, k1, self.inputs, self.n_y,
                                                                     self.n_w, *args),
                            N, h, progress, chunk, _linear_failure(h))

    def to_arrays(self) -> Tuple[Dict[str, object], Dict[str, np.ndarray]]:
        """``(meta, arrays)`` describing this loop (see :meth:`from_arrays`)."""
        arrays = {f"{k}_{part}": a for k, v in self.csr.items() for part, a in zip(("ptr", "idx", "dat"), v)}
        arrays.update(perm_r=self.perm_r, perm_c=self.perm_c, pw=self.pw)
        return {"kind": self.KIND, "inputs": self.inputs, "n_y": self.n_y, "n_w": self.n_w,
                "n_e": self.n_e, "key": None}, arrays

    @classmethod
    def from_arrays(cls, meta: Dict[str, object], arrays: Dict[str, np.ndarray]) -> "SparseLinearLoop":
        """The loop described by :meth:`to_arrays`.

        Parameters
        ----------
        meta : dict
            JSON-able description.
        arrays : dict of str to ndarray
            The loop's arrays.
        """
        csr = {k: tuple(arrays[f"{k}_{part}"] for part in ("ptr", "idx", "dat")) for k in cls.MATRICES}
        return cls(csr, arrays["perm_r"], arrays["perm_c"], arrays["pw"], meta["inputs"], meta["n_y"],
                   meta["n_w"], meta["n_e"])
