"""Numeric linear port-Hamiltonian systems in descriptor form.

    E x' = (J - R) Q x + B u,      y = B^T Q x + (S - N) u

with J = -J^T, R = R^T >= 0, Q^T E = E^T Q >= 0 and the feedthrough split
into S = S^T >= 0 and N = -N^T (the names of pyMOR's ``PHLTIModel``).  The
Hamiltonian is H(x) = x^T Q^T E x / 2 and the power balance reads
dH/dt = -(Qx)^T R (Qx) - u^T S u + y^T u  (u^T N u = 0).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

import numpy as np

from ..common.schemes import get_scheme
from ..errors import MissingDependencyError, StructureError
from .discrete import state_transition, theta_step

__all__ = ["LinearPHS"]

ArrayLike = Union[np.ndarray, Sequence]


def _as_matrix(a: Any, name: str, shape: Optional[tuple] = None) -> np.ndarray:
    m = np.array(a, dtype=float, copy=True)
    if m.ndim == 1 and shape is not None and len(shape) == 2 and shape[1] == 1:
        m = m.reshape(-1, 1)
    if m.ndim != 2:
        raise StructureError(f"{name} must be a 2-D matrix, got shape {m.shape}")
    if shape is not None and m.shape != shape:
        raise StructureError(f"{name} has shape {m.shape}, expected {shape}")
    if not np.all(np.isfinite(m)):
        raise StructureError(f"{name} contains non-finite entries")
    return m


def _is_psd(M: np.ndarray, atol: float) -> bool:
    """PSD test: diagonal shortcut, else Cholesky of ``M + atol I`` (O(n^3/3))."""
    if M.size == 0:
        return True
    d = np.diag(M)
    if not np.any(M - np.diag(d)):
        return bool(np.min(d) >= -atol)
    try:
        np.linalg.cholesky(M + (atol + 1e-300) * np.eye(M.shape[0]))
        return True
    except np.linalg.LinAlgError:
        return bool(np.min(np.linalg.eigvalsh(M)) >= -atol)


class LinearPHS:
    """A linear (descriptor) port-Hamiltonian system.

    ``E x' = (J - R) Q x + B u``, ``y = B^T Q x + (S - N) u``.

    Parameters
    ----------
    J : array_like, shape (n, n)
        Skew-symmetric interconnection matrix.
    R : array_like, shape (n, n)
        Symmetric positive semidefinite dissipation matrix.
    Q : array_like, shape (n, n), optional
        Energy matrix (identity when omitted).
    B : array_like, shape (n, m)
        Input (port) matrix.
    E : array_like, shape (n, n), optional
        Descriptor matrix (identity when omitted); singular for a pH-DAE.
    S : array_like, shape (m, m), optional
        Symmetric positive semidefinite part of the feedthrough (power
        ``u^T S u`` dissipated between the ports, e.g. a resistor directly
        across a voltage source); zero when omitted.
    N : array_like, shape (m, m), optional
        Skew-symmetric part of the feedthrough (lossless direct coupling, e.g.
        a current source into a node a voltage source holds); zero when omitted.
    states, inputs, outputs : sequence of str, optional
        Names (defaults ``x0..``, ``u0..``, ``y0..``).
    check : bool, default True
        Verify the structure (J skew, R PSD, Q^T E symmetric PSD, S PSD,
        N skew) and raise
        :class:`~phsym.errors.StructureError` when violated.
    tol : float, default 1e-9
        Relative tolerance of the structure checks.

    Examples
    --------
    A mass (m = 2) with a damper (c = 0.5) driven by a force:

    >>> import numpy as np
    >>> sys = LinearPHS.from_matrices(J=[[0.0]], R=[[0.5]], Q=[[0.5]], B=[[1.0]])
    >>> complex(sys.transfer(1j)[0, 0])  # 1/(m s + c)
    (0.11764705882352941-0.47058823529411764j)
    """

    def __init__(self, J: ArrayLike, R: ArrayLike, Q: Optional[ArrayLike] = None,
                 B: Optional[ArrayLike] = None, E: Optional[ArrayLike] = None, *,
                 S: Optional[ArrayLike] = None, N: Optional[ArrayLike] = None,
                 states: Optional[Sequence[str]] = None,
                 inputs: Optional[Sequence[str]] = None,
                 outputs: Optional[Sequence[str]] = None,
                 check: bool = True, tol: float = 1e-9):
        J = _as_matrix(J, "J")
        n = J.shape[0]
        if J.shape != (n, n):
            raise StructureError(f"J must be square, got shape {J.shape}")
        self.J = J
        self.R = _as_matrix(R, "R", (n, n))
        self.Q = np.eye(n) if Q is None else _as_matrix(Q, "Q", (n, n))
        self.E = np.eye(n) if E is None else _as_matrix(E, "E", (n, n))
        if B is None:
            raise StructureError("B (input matrix) is required")
        B = np.array(B, dtype=float)
        if B.ndim == 1:
            B = B.reshape(n, -1)
        self.B = _as_matrix(B, "B")
        if self.B.shape[0] != n:
            raise StructureError(f"B has {self.B.shape[0]} rows, expected {n}")
        m = self.B.shape[1]
        self.S = np.zeros((m, m)) if S is None else _as_matrix(S, "S", (m, m))
        self.N = np.zeros((m, m)) if N is None else _as_matrix(N, "N", (m, m))
        self.states = list(states) if states is not None else [f"x{i}" for i in range(n)]
        self.inputs = list(inputs) if inputs is not None else [f"u{i}" for i in range(m)]
        self.outputs = list(outputs) if outputs is not None else [f"y{i}" for i in range(m)]
        for label, seq, size in (("states", self.states, n), ("inputs", self.inputs, m),
                                 ("outputs", self.outputs, m)):
            if len(seq) != size:
                raise StructureError(f"{label} has {len(seq)} names, expected {size}")
        if check:
            problems = [k for k, ok in self.check(tol).items() if not ok]
            if problems:
                raise StructureError("matrices are not port-Hamiltonian: "
                                     + ", ".join(problems) + " violated",
                                     hint="J and N must be skew, R and S symmetric PSD, Q^T E symmetric PSD")

    # ------------------------------------------------------------------ build
    @classmethod
    def from_matrices(cls, J: ArrayLike, R: ArrayLike, Q: Optional[ArrayLike] = None,
                      B: Optional[ArrayLike] = None, E: Optional[ArrayLike] = None,
                      **kwargs: Any) -> "LinearPHS":
        """Build from matrices (same arguments as the constructor).

        Parameters
        ----------
        J, R, Q, B, E : array_like
            See :class:`LinearPHS`.
        **kwargs
            ``S``, ``N``, ``states``, ``inputs``, ``outputs``, ``check``, ``tol``.

        Returns
        -------
        LinearPHS
        """
        return cls(J, R, Q, B, E, **kwargs)

    # ------------------------------------------------------------- properties
    @property
    def n_states(self) -> int:
        """Number of (descriptor) states n."""
        return self.J.shape[0]

    @property
    def n_inputs(self) -> int:
        """Number of ports m."""
        return self.B.shape[1]

    @property
    def A(self) -> np.ndarray:
        """System matrix ``(J - R) Q``."""
        return (self.J - self.R) @ self.Q

    @property
    def C(self) -> np.ndarray:
        """Output matrix ``B^T Q``."""
        return self.B.T @ self.Q

    @property
    def D(self) -> np.ndarray:
        """Feedthrough ``S - N``."""
        return self.S - self.N

    @property
    def has_feedthrough(self) -> bool:
        """Whether ``S`` or ``N`` is non-zero."""
        return bool(np.any(self.S) or np.any(self.N))

    @property
    def is_descriptor(self) -> bool:
        """Whether E is singular (a pH-DAE)."""
        return np.linalg.matrix_rank(self.E) < self.n_states

    def hamiltonian(self, x: ArrayLike) -> np.ndarray:
        """Energy ``x^T Q^T E x / 2``.

        Parameters
        ----------
        x : array_like
            One state (n,) or many (N, n).
        """
        x = np.asarray(x, dtype=float)
        W = self.Q.T @ self.E
        return 0.5 * np.einsum("...i,ij,...j->...", x, W, x)

    def check(self, tol: float = 1e-9) -> Dict[str, bool]:
        """Structure checks.

        Parameters
        ----------
        tol : float
            Relative tolerance (scaled by the largest matrix entry).

        Returns
        -------
        dict of str to bool
            ``"J skew"``, ``"R symmetric"``, ``"R PSD"``, ``"Q^T E symmetric"``,
            ``"Q^T E PSD"``, ``"S symmetric"``, ``"S PSD"``, ``"N skew"``.
        """
        def scale(*ms):
            return max(1.0, *(float(np.max(np.abs(m))) if m.size else 0.0 for m in ms))

        sj = scale(self.J)
        sr = scale(self.R)
        sd = scale(self.S, self.N)
        W = self.Q.T @ self.E
        sw = scale(W)
        out = {
            "J skew": bool(np.max(np.abs(self.J + self.J.T), initial=0.0) <= tol * sj),
            "R symmetric": bool(np.max(np.abs(self.R - self.R.T), initial=0.0) <= tol * sr),
            "Q^T E symmetric": bool(np.max(np.abs(W - W.T), initial=0.0) <= tol * sw),
        }
        out["R PSD"] = _is_psd(0.5 * (self.R + self.R.T), tol * sr)
        out["Q^T E PSD"] = _is_psd(0.5 * (W + W.T), tol * sw)
        out["S symmetric"] = bool(np.max(np.abs(self.S - self.S.T), initial=0.0) <= tol * sd)
        out["S PSD"] = _is_psd(0.5 * (self.S + self.S.T), tol * sd)
        out["N skew"] = bool(np.max(np.abs(self.N + self.N.T), initial=0.0) <= tol * sd)
        return out

    # -------------------------------------------------------------- analysis
    def transfer(self, s: Union[complex, ArrayLike]) -> np.ndarray:
        """Transfer function ``G(s) = B^T Q (s E - (J - R) Q)^{-1} B + S - N``.

        Parameters
        ----------
        s : complex or array_like of complex
            Evaluation point(s).

        Returns
        -------
        numpy.ndarray
            Shape (m, m) for scalar ``s``, else ``s.shape + (m, m)``.
        """
        s_arr = np.asarray(s, dtype=complex)
        A, C, D = self.A, self.C, self.D
        flat = s_arr.reshape(-1)
        out = np.empty((flat.size, self.n_inputs, self.n_inputs), dtype=complex)
        for k, sk in enumerate(flat):
            try:
                out[k] = C @ np.linalg.solve(sk * self.E - A, self.B) + D
            except np.linalg.LinAlgError:
                raise StructureError(f"s E - (J - R) Q is singular at s = {sk}") from None
        return out.reshape(s_arr.shape + (self.n_inputs, self.n_inputs))

    def poles(self) -> np.ndarray:
        """Finite generalised eigenvalues of the pencil (A, E)."""
        import scipy.linalg as sla      # here: importing the structure layer stays cheap
        w = sla.eigvals(self.A, self.E)
        return w[np.isfinite(w)]

    def to_state_space(self) -> tuple:
        """Explicit state-space matrices ``(A, B, C, D)``.

        A regular E is inverted; a singular E is reduced when the algebraic
        part is index 1 (which may add to the feedthrough ``S - N``).

        Returns
        -------
        tuple of numpy.ndarray
            ``(A, B, C, D)`` with ``x' = A x + B u``, ``y = C x + D u``.

        Raises
        ------
        StructureError
            For a descriptor system of index higher than 1.
        """
        n, m = self.n_states, self.n_inputs
        A, B, C = self.A, self.B, self.C
        if not self.is_descriptor:
            Ei = np.linalg.inv(self.E)
            return Ei @ A, Ei @ B, C, self.D
        # Split E = U diag(S, 0) V^T and change coordinates.
        U, S, Vt = np.linalg.svd(self.E)
        r = int(np.sum(S > S[0] * 1e-12)) if S.size and S[0] > 0 else 0
        At = U.T @ A @ Vt.T
        Bt = U.T @ B
        Ct = C @ Vt.T
        A11, A12, A21, A22 = At[:r, :r], At[:r, r:], At[r:, :r], At[r:, r:]
        if np.linalg.matrix_rank(A22) < n - r:
            raise StructureError("descriptor system has index > 1: no explicit state space",
                                 hint="use a simulator (backward Euler) or transfer()")
        K = np.linalg.solve(A22, np.hstack([A21, Bt[r:]]))
        K1, K2 = K[:, :r], K[:, r:]
        Sinv = np.diag(1.0 / S[:r])
        Ar = Sinv @ (A11 - A12 @ K1)
        Br = Sinv @ (Bt[:r] - A12 @ K2)
        Cr = Ct[:, :r] - Ct[:, r:] @ K1
        Dr = self.D - Ct[:, r:] @ K2
        return Ar, Br, Cr, Dr

    def to_scipy(self):
        """Convert to :class:`scipy.signal.StateSpace` (see :meth:`to_state_space`)."""
        import scipy.signal as ss
        return ss.StateSpace(*self.to_state_space())

    def to_control(self):
        """Convert to a python-control ``StateSpace`` (needs ``control``)."""
        try:
            import control
        except ImportError as exc:  # pragma: no cover - optional dependency
            raise MissingDependencyError("python-control is not installed: pip install 'phsym[control]'") from exc
        return control.ss(*self.to_state_space())

    def discretize(self, h: float, method: str = "midpoint") -> tuple:
        """Discrete-time update ``x_{k+1} = Ad x_k + Bd u_*`` (see :mod:`phsym.structure.discrete`).

        For a descriptor system the update is that of the differential
        variables (those whose column of E is non-zero); algebraic variables
        are step values.

        Parameters
        ----------
        h : float
            Time step in seconds.
        method : str
            A scheme of :mod:`phsym.common.schemes`: ``midpoint`` (Cayley-Tustin,
            ``u_* = (u_k + u_{k+1})/2``), ``backward_euler`` (``u_* = u_{k+1}``)
            or ``explicit_euler`` (``u_* = u_k``).

        Returns
        -------
        tuple of numpy.ndarray
            ``(Ad, Bd)``.
        """
        scheme = get_scheme(method, ("midpoint", "backward_euler", "explicit_euler"), StructureError)
        if not (h > 0 and np.isfinite(h)):
            raise StructureError(f"step h must be positive and finite, got {h}")
        return state_transition(theta_step(self.E, self.A, self.B, float(h), scheme))[:2]

    # ------------------------------------------------------------ conversion
    def to_dict(self) -> Dict[str, Any]:
        """JSON-serialisable dictionary (see :meth:`from_dict`)."""
        return {"type": "LinearPHS", "version": 1,
                "E": self.E.tolist(), "J": self.J.tolist(), "R": self.R.tolist(),
                "Q": self.Q.tolist(), "B": self.B.tolist(), "S": self.S.tolist(), "N": self.N.tolist(),
                "states": self.states,
                "inputs": self.inputs, "outputs": self.outputs}

    @classmethod
    def from_dict(cls, d: Dict[str, Any], check: bool = True) -> "LinearPHS":
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            As produced by :meth:`to_dict` (``S`` and ``N`` may be missing: no feedthrough).
        check : bool
            Verify the structure.
        """
        if d.get("type") != "LinearPHS":
            raise StructureError("not a LinearPHS description (missing type: LinearPHS)")
        return cls(d["J"], d["R"], d["Q"], d["B"], d["E"], S=d.get("S"), N=d.get("N"), states=d.get("states"),
                   inputs=d.get("inputs"), outputs=d.get("outputs"), check=check)

    def save(self, path: Union[str, Path]) -> None:
        """Write the model as JSON (loadable with :meth:`load` and ``phsym.load``).

        Parameters
        ----------
        path : str or pathlib.Path
            Destination file (``.json``).
        """
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path: Union[str, Path]) -> "LinearPHS":
        """Read a model written by :meth:`save`.

        Parameters
        ----------
        path : str or pathlib.Path
            File written by :meth:`save`.
        """
        try:
            d = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise StructureError(f"cannot read LinearPHS from {path}: {exc}") from None
        return cls.from_dict(d)

    def to_latex(self, digits: int = 6) -> str:
        """LaTeX of ``E x' = (J - R) Q x + B u``, ``y = B^T Q x + (S - N) u`` with the matrices.

        Parameters
        ----------
        digits : int
            Significant digits of the entries.
        """
        import sympy as sp

        def mat(a):
            return sp.latex(sp.Matrix(a).applyfunc(lambda v: sp.Float(float(v), digits)))
        names = ("E", "J", "R", "Q", "B") + (("S", "N") if self.has_feedthrough else ())
        return (r"E \dot{x} = (J - R) Q x + B u, \quad y = B^T Q x"
                + (" + (S - N) u" if self.has_feedthrough else "") + "\n\n"
                + "\n".join(f"{k} = {mat(getattr(self, k))}" for k in names))

    def __repr__(self) -> str:
        kind = "descriptor " if self.is_descriptor else ""
        return f"<LinearPHS {kind}n={self.n_states} m={self.n_inputs}>"
