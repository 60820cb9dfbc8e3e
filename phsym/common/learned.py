"""Learned laws as numbers: a sum of Gaussian bumps evaluated by compiled code.

A law learned by a Gaussian process (:mod:`phsym.identify.gp`) has the
posterior mean

    f(x) = P(x) + sum_b [v_b + w_b . (x - c_b)] exp(-|(x - c_b) / l|^2 / 2)

with one bump per training sample ``c_b``, value weights ``v_b``, gradient
weights ``w_b`` (the bumps of a learned Hamiltonian are derivatives of the
kernel), length scales ``l`` and a quadratic polynomial ``P`` (the prior
mean) in the standardised inputs ``(x - offset) / scale``.  Writing it out as
an expression makes the generated code, and its compile time, grow with the
number of samples; :class:`LearnedLaw` keeps the numbers instead (saved as
``.npz``) and gives sympy a function :class:`LearnedBumps` whose derivatives
of any order are again ``LearnedBumps`` (closed form by Hermite
polynomials: ``d^m/du^m exp(-u^2/2) = (-1)^m He_m(u) exp(-u^2/2)``).  The
code printer writes it as a call of the compiled loop
:func:`bump_sum` over arrays that the generated module holds as constants
(:mod:`phsym.codegen.kernels.learned`), so the step function has one call per
derivative order however many samples the law was learned from.

Laws are registered in this process by a 48-bit key derived from their
numbers (:attr:`LearnedLaw.key`): the sympy function carries only the key.

>>> import numpy as np, sympy as sp
>>> law = LearnedLaw(centers=[[0.0]], values=[1.0], slopes=[[0.0]], lengths=[1.0])
>>> q = sp.Symbol("q", real=True)
>>> round(float(law(q).subs(q, 0.5)), 6)
0.882497
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import numpy as np
import sympy as sp

from ..errors import DataFileError

__all__ = ["LearnedLaw", "LearnedBumps", "bump_sum", "registered", "FORMAT"]

#: ``format`` entry of the ``.npz`` files (checked on load).
FORMAT = "phsym-learned-law-1"

_REGISTRY: Dict[int, "LearnedLaw"] = {}


def registered(key: int) -> "LearnedLaw":
    """The law of ``key`` (loaded or built in this process).

    Parameters
    ----------
    key : int
        :attr:`LearnedLaw.key`.

    Raises
    ------
    KeyError
        The law was never loaded in this process.
    """
    try:
        return _REGISTRY[int(key)]
    except KeyError:
        raise KeyError(f"learned law {int(key)} is not loaded in this process (load its .npz file first)") from None


def bump_sum(x, a, C, V, W, L):
    """``d^a / dx^a`` of ``sum_b [V_b + W_b . (x - C_b)] exp(-|(x - C_b) / L|^2 / 2)`` (plain loops:
    numba compiles the same function for generated code).

    Parameters
    ----------
    x : tuple of float
        The point, one entry per input.
    a : tuple of int or float
        Derivative order per input (all zero: the value; whole numbers).
    C : ndarray, shape (N, n)
        Centres.
    V : ndarray, shape (N,)
        Value weights.
    W : ndarray, shape (N, n)
        Gradient weights.
    L : ndarray, shape (n,)
        Length scales.
    """
    n = L.shape[0]
    total = 0.0
    for b in range(C.shape[0]):
        r2 = 0.0
        for d in range(n):
            u = (x[d] - C[b, d]) / L[d]
            r2 += u * u
        if r2 > 1400.0:         # exp underflows: the bump does not reach x
            continue
        s = 0.0
        for j in range(-1, n):  # j = -1: the value bump V_b; j >= 0: the slope bump -W_bj L_j^2 d/dx_j
            coef = V[b] if j < 0 else -W[b, j] * L[j] * L[j]
            if coef == 0.0:
                continue
            prod = coef
            for d in range(n):
                m = int(a[d]) + (1 if d == j else 0)
                u = (x[d] - C[b, d]) / L[d]
                he0, he1 = 1.0, u   # probabilists' Hermite polynomials He_0, He_1
                for k in range(1, m):
                    he0, he1 = he1, u * he1 - k * he0
                prod *= (1.0 if m == 0 else he1) * (-1.0 / L[d]) ** m
            s += prod
        total += s * math.exp(-0.5 * r2)
    return total


class LearnedBumps(sp.Function):
    """``d^a / dx^a`` of the bump sum of a registered :class:`LearnedLaw`.

    Arguments ``(key, a_1, ..., a_n, x_1, ..., x_n)``: the law's key, the
    derivative order per input (integers) and the inputs.  ``diff`` raises
    the order; printing for generated code calls the compiled
    :func:`bump_sum` (:mod:`phsym.codegen.kernels.learned`).
    """

    @classmethod
    def eval(cls, *args):
        if len(args) < 3 or len(args) % 2 == 0:
            raise TypeError("LearnedBumps takes a key, n derivative orders and n inputs")
        return None

    @property
    def law(self) -> "LearnedLaw":
        """The registered law."""
        return registered(int(self.args[0]))

    @property
    def orders(self):
        """Derivative order per input."""
        n = (len(self.args) - 1) // 2
        return tuple(int(o) for o in self.args[1:1 + n])

    @property
    def inputs(self):
        """The input expressions."""
        n = (len(self.args) - 1) // 2
        return self.args[1 + n:]

    def fdiff(self, argindex=1):
        n = (len(self.args) - 1) // 2
        j = argindex - 2 - n
        if j < 0:
            raise sp.ArgumentIndexError(self, argindex)
        orders = list(self.orders)
        orders[j] += 1
        return LearnedBumps(self.args[0], *orders, *self.inputs)

    @staticmethod
    def _imp_(key, *rest):
        n = len(rest) // 2
        law = registered(int(key))
        return law.bumps(np.stack(np.broadcast_arrays(*[np.asarray(r, float) for r in rest[n:]]), -1),
                         tuple(int(o) for o in rest[:n]))

    def _eval_evalf(self, prec):
        if all(x.is_number for x in self.inputs):
            x = np.array([[float(v) for v in self.inputs]])
            return sp.Float(float(self.law.bumps(x, self.orders)[0]), prec)
        return None

    def _pythoncode(self, printer):
        # generated modules define LRN<key>_C, _V, _W, _L (phsym.codegen.kernels.learned.declare)
        k = int(self.args[0])
        xs = "".join(printer._print(x) + ", " for x in self.inputs)
        a = "".join(f"{o}.0, " for o in self.orders)   # floats: numba would type int constants as
        # literals and compile the kernel once per derivative order
        return f"learned_bumps(({xs}), ({a}), LRN{k}_C, LRN{k}_V, LRN{k}_W, LRN{k}_L)"


def _array(value: Any, name: str, ndim: int) -> np.ndarray:
    arr = np.array(value, dtype=float, ndmin=ndim)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has non-finite values")
    return np.ascontiguousarray(arr)


class LearnedLaw:
    """A learned law ``f(x)`` kept as numbers (see the module docstring).

    Parameters
    ----------
    centers : array_like, shape (N, n)
        Bump centres ``c_b`` (the training inputs, in the law's units).
    values : array_like, shape (N,)
        Value weights ``v_b``.
    slopes : array_like, shape (N, n)
        Gradient weights ``w_b``.
    lengths : array_like, shape (n,)
        Length scales ``l`` (positive).
    offset, scale : array_like, shape (n,), optional
        Standardisation of the polynomial's inputs (default 0 and 1).
    linear : array_like, shape (n,), optional
        Linear coefficients ``g`` of ``P = c0 + g . s + s^T Q s / 2``, ``s = (x - offset) / scale``.
    quadratic : array_like, shape (n, n), optional
        Symmetric ``Q``.
    constant : float
        ``c0``.
    kind : str
        What the law is: ``"H"`` (an energy), ``"z"`` (an effort or flow law).
    meta : dict of str to str, optional
        Free text kept in the file (source, variable names, fit settings).
    """

    def __init__(self, centers: Any, values: Any, slopes: Any, lengths: Any, offset: Any = None, scale: Any = None,
                 linear: Any = None, quadratic: Any = None, constant: float = 0.0, kind: str = "H",
                 meta: Optional[Dict[str, str]] = None):
        self.centers = _array(centers, "centers", 2)
        N, n = self.centers.shape
        self.values = _array(values, "values", 1)
        self.slopes = _array(slopes, "slopes", 2)
        self.lengths = _array(lengths, "lengths", 1)
        self.offset = _array(np.zeros(n) if offset is None else offset, "offset", 1)
        self.scale = _array(np.ones(n) if scale is None else scale, "scale", 1)
        self.linear = _array(np.zeros(n) if linear is None else linear, "linear", 1)
        self.quadratic = _array(np.zeros((n, n)) if quadratic is None else quadratic, "quadratic", 2)
        self.constant = float(constant)
        if (self.values.shape != (N,) or self.slopes.shape != (N, n)
                or any(v.shape != (n,) for v in (self.lengths, self.offset, self.scale, self.linear))
                or self.quadratic.shape != (n, n)):
            raise ValueError(f"inconsistent shapes for {N} centres of {n} inputs")
        if not (self.lengths > 0).all() or not (self.scale > 0).all():
            raise ValueError("length scales and scales must be positive")
        if kind not in ("H", "z"):
            raise ValueError(f"kind must be 'H' or 'z', not {kind!r}")
        self.quadratic = (self.quadratic + self.quadratic.T) / 2
        self.kind = kind
        self.meta = {str(k): str(v) for k, v in (meta or {}).items()}
        h = hashlib.sha256()
        for arr in self._arrays().values():
            h.update(np.ascontiguousarray(arr, float).tobytes())
        self.key = int.from_bytes(h.digest()[:6], "big")
        _REGISTRY.setdefault(self.key, self)

    @property
    def n_inputs(self) -> int:
        """Number of inputs ``n``."""
        return self.centers.shape[1]

    def _arrays(self) -> Dict[str, np.ndarray]:
        return {"centers": self.centers, "values": self.values, "slopes": self.slopes, "lengths": self.lengths,
                "offset": self.offset, "scale": self.scale, "linear": self.linear, "quadratic": self.quadratic,
                "constant": np.array(self.constant)}

    # ------------------------------------------------------------ evaluation
    def bumps(self, X: Any, orders: Optional[Sequence[int]] = None) -> np.ndarray:
        """Derivative ``orders`` of the bump sum at the rows of ``X`` (vectorised :func:`bump_sum`).

        Parameters
        ----------
        X : array_like, shape (M, n)
            Points.
        orders : sequence of int, optional
            Derivative order per input (default: the value).
        """
        X = np.atleast_2d(np.asarray(X, float))
        a = tuple(orders) if orders is not None else (0,) * self.n_inputs
        U = (X[:, None, :] - self.centers[None]) / self.lengths          # (M, N, n)
        G = np.exp(-0.5 * np.sum(U * U, axis=-1))

        def factor(m, u, ell):
            he0, he1 = np.ones_like(u), u
            for k in range(1, m):
                he0, he1 = he1, u * he1 - k * he0
            return (he0 if m == 0 else he1) * (-1.0 / ell) ** m

        base = [factor(a[d], U[..., d], self.lengths[d]) for d in range(self.n_inputs)]
        total = self.values[None] * np.prod(base, axis=0)
        for j in range(self.n_inputs):
            prod = -self.slopes[None, :, j] * self.lengths[j] ** 2 * factor(a[j] + 1, U[..., j], self.lengths[j])
            for d in range(self.n_inputs):
                if d != j:
                    prod = prod * base[d]
            total = total + prod
        return np.sum(total * G, axis=1)

    def evaluate(self, X: Any) -> np.ndarray:
        """``f`` at the rows of ``X`` (bumps plus polynomial).

        Parameters
        ----------
        X : array_like, shape (M, n)
            Points.
        """
        X = np.atleast_2d(np.asarray(X, float))
        s = (X - self.offset) / self.scale
        poly = self.constant + s @ self.linear + 0.5 * np.einsum("mi,ij,mj->m", s, self.quadratic, s)
        return self.bumps(X) + poly

    def gradient(self, X: Any) -> np.ndarray:
        """``grad f`` at the rows of ``X``, shape (M, n).

        Parameters
        ----------
        X : array_like, shape (M, n)
            Points.
        """
        X = np.atleast_2d(np.asarray(X, float))
        s = (X - self.offset) / self.scale
        out = np.empty_like(X)
        for j in range(self.n_inputs):
            e = [0] * self.n_inputs
            e[j] = 1
            out[:, j] = self.bumps(X, e) + (self.linear[j] + s @ self.quadratic[j]) / self.scale[j]
        return out

    def __call__(self, *x: sp.Expr) -> sp.Expr:
        """The law as a sympy expression in ``x`` (one per input): the polynomial and one
        :class:`LearnedBumps`.

        Parameters
        ----------
        *x : sympy.Expr
            The inputs.
        """
        if len(x) != self.n_inputs:
            raise ValueError(f"the learned law takes {self.n_inputs} argument(s), got {len(x)}")
        s = [(xi - sp.Float(o)) / sp.Float(c) for xi, o, c in zip(x, self.offset, self.scale)]
        poly = sp.Float(self.constant) + sum(sp.Float(g) * si for g, si in zip(self.linear, s))
        n = self.n_inputs
        poly += sum(sp.Float(self.quadratic[i, j] / 2) * s[i] * s[j] for i in range(n) for j in range(n)
                    if self.quadratic[i, j] != 0.0)
        return sp.expand(poly) + LearnedBumps(sp.Integer(self.key), *([sp.Integer(0)] * n), *x)

    def expression(self, *x: sp.Expr) -> sp.Expr:
        """The law written out (one exponential per sample: the text route, whose size grows with
        the samples; :meth:`__call__` keeps the numbers).

        Parameters
        ----------
        *x : sympy.Expr
            The inputs.
        """
        bumps = self(*x) - LearnedBumps(sp.Integer(self.key), *([sp.Integer(0)] * self.n_inputs), *x)
        f = sp.Float
        for c, v, w in zip(self.centers, self.values, self.slopes):
            r2 = sum((xi - f(ci)) ** 2 / f(li ** 2) for xi, ci, li in zip(x, c, self.lengths))
            amp = f(v) + sum(f(wi) * (xi - f(ci)) for xi, ci, wi in zip(x, c, w) if wi != 0.0)
            bumps += amp * sp.exp(-r2 / 2)
        return bumps

    # ------------------------------------------------------------ files
    def save(self, path: Any) -> Path:
        """Write the law to ``path`` (``.npz``; numbers, kind and meta data, no pickles).

        Parameters
        ----------
        path : str or pathlib.Path
            Target file (``.npz`` is appended by numpy when missing).
        """
        path = Path(path)
        meta = np.array([f"{k}={v}" for k, v in self.meta.items()], dtype=str)
        np.savez(path, format=np.array(FORMAT), kind=np.array(self.kind), meta=meta, **self._arrays())
        return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")

    @classmethod
    def load(cls, path: Any) -> "LearnedLaw":
        """Read a law written by :meth:`save`.

        Parameters
        ----------
        path : str or pathlib.Path
            The ``.npz`` file.

        Raises
        ------
        DataFileError
            Unreadable file, missing entries or inconsistent numbers.
        """
        try:
            with np.load(Path(path), allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise DataFileError(f"cannot read learned law {path}: {exc}") from None
        if str(data.get("format", "")) != FORMAT:
            raise DataFileError(f"{path} is not a phsym learned law (format {FORMAT!r} expected); "
                                "write one with `phsym learn ... --out law.npz`")
        try:
            meta = dict(str(m).split("=", 1) for m in data.get("meta", []))
            return cls(data["centers"], data["values"], data["slopes"], data["lengths"], data["offset"],
                       data["scale"], data["linear"], data["quadratic"], float(data["constant"]),
                       str(data["kind"]), meta)
        except (KeyError, ValueError) as exc:
            raise DataFileError(f"{path}: invalid learned law ({exc})") from None

    def __repr__(self) -> str:
        return f"<LearnedLaw {self.kind}: {self.centers.shape[0]} bumps, {self.n_inputs} input(s)>"
