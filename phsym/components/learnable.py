"""Learnable laws: a free-form monotone law (or convex energy) with trainable parameters.

A netlist line ``NAME n+ n- learn(kind=monotone, knots=12, range=-2..2)``
puts an element whose law is unknown into an otherwise known netlist; its
parameters (``NAME.a``, ``NAME.l``, ``NAME.r``, ``NAME.w1`` ... ``NAME.wK``)
appear in ``model.parameters`` and are fitted from input-output data by
:class:`phsym.identify.learned.LearnedLawEstimator`.

The family
----------
With knots ``c_1 < ... < c_K`` evenly spread over ``[lo, hi]``, width
``s = (hi - lo) / (K - 1)``, ``u_k = (v - c_k) / s``, the step ``tanh`` and
the smooth hinge ``rho(u) = (u + sqrt(u**2 + e**2)) / 2`` (``e`` =
:data:`EPS`), the law is

    f(v) = a**2 v + sum_k w_k**2 s [tanh(u_k) - tanh(u_k(0))]
           + r**2 s [rho(u_K) - rho(u_K(0))] - l**2 s [rho(-u_1) - rho(-u_1(0))]

(``u(0)`` is ``u`` at ``v = 0``).  The ``w_k`` terms are smooth steps (slope
bumps ``sech(u)**2``) at each knot: any monotone shape over the range; the
``l`` and ``r`` hinges let the slope grow beyond the first and last knot (a
linear extrapolation with the end slope) and ``a`` is a linear slope.  The
steps' tails decay exponentially, so a knot does not leak into distant
parts of the range (an exponential diode law needs that).  Every
coefficient is linear in the squared parameters: ``f(v) = B(v) @ p**2``
(:meth:`MonotoneFamily.basis`).

**Passivity for every parameter value.**  Each bracket ``g(v)`` above is
nondecreasing in ``v`` (``tanh`` and ``rho`` are increasing; ``-rho(-u)`` is
increasing in ``u``) and zero at ``v = 0``, so ``g(v)`` has the sign of
``v``: ``v g(v) >= 0``.  The coefficients ``a**2, w_k**2, l**2, r**2`` are
non-negative for every real parameter, so ``f`` is nondecreasing with
``f(0) = 0`` and ``v f(v) = sum_j p_j**2 v g_j(v) >= 0`` for every ``v``
and every parameter vector: the element can only absorb power.

**Convex energies.**  For ``kind=convex`` the same ``f`` is the effort of a
storage, ``dH/dx = f(x)``, and ``H(x) = int_0^x f`` in closed form
(:meth:`MonotoneFamily.expression` with ``energy=True``, elementary:
``int tanh = log(cosh(u))``, ``int rho = u**2/4 + (u sqrt(u**2 + e**2) +
e**2 asinh(u/e))/4``).  ``H'' = f' >= 0``
(convex), ``H(0) = H'(0) = 0``, hence ``H >= 0`` for every parameter value:
a passive storage.

Sign convention: receiver convention as every element, ``w = e(n+) - e(n-)``
(across) and the through variable entering at ``n+``.  ``kind=monotone``
``port=across`` (default): through ``= f(across)`` (``i = f(v)``, a damper's
force of its velocity); ``port=through``: across ``= f(through)``
(``v = g(i)``).  ``kind=convex`` ``port=across`` (default): the state
integrates the across variable (flux, or a spring's displacement) and the
through variable is ``dH/dx`` (an inductor, a spring); ``port=through``:
the state integrates the through variable (charge, momentum) and the across
variable is ``dH/dx`` (a capacitor).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Mapping, Optional, Tuple

import numpy as np
import sympy as sp

from ..errors import StructureError
from .base import EFFORT, FLOW, P_STORE_EFFORT, P_STORE_FLOW, P_VCR, P_CCR, Contribution, Dissipation, Storage
from .component import Choice, Component, Value, register

__all__ = ["MonotoneFamily", "Learnable", "sig", "rho", "EPS"]


#: Sharpness of the end hinges: ``rho(u) = (u + sqrt(u**2 + EPS**2)) / 2``.
EPS = 0.25


def _sqrt(z):
    return sp.sqrt(z) if isinstance(z, sp.Basic) else np.sqrt(z)


def sig(u):
    """Step ``tanh(u)`` (numpy or sympy): increasing, from -1 to 1."""
    return sp.tanh(u) if isinstance(u, sp.Basic) else np.tanh(u)


def rho(u):
    """Smooth hinge ``(u + sqrt(u**2 + EPS**2)) / 2`` (numpy or sympy): increasing, ~0 below 0, ~u above."""
    return (u + _sqrt(u ** 2 + EPS ** 2)) / 2


def _sig_int(u):
    """``int tanh = log(cosh(u))``, written ``|u| + log((1 + exp(-2|u|)) / 2)`` in numpy (no overflow)."""
    if isinstance(u, sp.Basic):
        return sp.log(sp.cosh(u))
    a = np.abs(u)
    return a + np.log1p(np.exp(-2 * a)) - np.log(2.0)


def _rho_int(u):
    """``int rho = u**2/4 + (u sqrt(u**2 + e**2) + e**2 asinh(u / e)) / 4``."""
    e = EPS
    if isinstance(u, sp.Basic):
        return u ** 2 / 4 + (u * sp.sqrt(u ** 2 + e ** 2) + e ** 2 * sp.asinh(u / e)) / 4
    return u * u / 4 + (u * np.sqrt(u * u + e * e) + e * e * np.arcsinh(u / e)) / 4


@dataclass(frozen=True)
class MonotoneFamily:
    """The monotone law family of a learnable element (see the module docstring).

    Parameters
    ----------
    lo, hi : float
        Range of the knots (``lo < hi``).
    knots : int
        Number of knots (at least 2).

    Examples
    --------
    >>> fam = MonotoneFamily(-1.0, 1.0, 3)
    >>> fam.names
    ('a', 'l', 'r', 'w1', 'w2', 'w3')
    >>> p = np.ones(6)
    >>> v = np.array([-2.0, 0.0, 0.5])
    >>> f = fam.law(v, p)
    >>> bool(f[1] == 0 and f[0] < 0 < f[2])
    True
    """

    lo: float
    hi: float
    knots: int

    @property
    def width(self) -> float:
        """Knot spacing ``s`` (also the width of each basis function)."""
        return (self.hi - self.lo) / (self.knots - 1)

    @property
    def centres(self) -> np.ndarray:
        """Knot positions ``c_k``."""
        return np.linspace(self.lo, self.hi, self.knots)

    @property
    def names(self) -> Tuple[str, ...]:
        """Parameter keys in coefficient order: ``a``, ``l``, ``r``, ``w1`` ... ``wK``."""
        return ("a", "l", "r") + tuple(f"w{k + 1}" for k in range(self.knots))

    def _columns(self, v, energy: bool) -> List:
        """Basis functions of the law (or of the energy) at ``v`` (numpy array or sympy symbol),
        each minus its value at 0 (so the law, and the energy, are exactly 0 there)."""
        raw = self._raw(v, energy)
        if isinstance(v, sp.Basic):
            return [c - c.subs(v, 0) for c in raw]
        zero = self._raw(np.zeros(1), energy)
        return [c - z for c, z in zip(raw, zero)]

    def _raw(self, v, energy: bool) -> List:
        s, cs = self.width, self.centres
        symbolic = isinstance(v, sp.Basic)
        num = (lambda z: sp.Float(float(z))) if symbolic else float
        S = num(s)
        c1, cK = num(cs[0]), num(cs[-1])
        if not energy:
            return [v, -S * rho(-(v - c1) / S), S * rho((v - cK) / S)] + [S * sig((v - num(c)) / S) for c in cs]
        # H = int_0^x f: each column integrated once more; the linear terms make dH/dx = 0 at 0
        return ([v ** 2 / 2, S ** 2 * _rho_int(-(v - c1) / S) + S * num(rho(c1 / s)) * v,
                 S ** 2 * _rho_int((v - cK) / S) - S * num(rho(-cK / s)) * v]
                + [S ** 2 * _sig_int((v - num(c)) / S) - S * num(sig(-c / s)) * v for c in cs])

    def basis(self, v) -> np.ndarray:
        """Matrix ``B`` with ``f(v) = B @ p**2`` (one row per point, one column per parameter).

        Parameters
        ----------
        v : array_like
            Points.
        """
        v = np.asarray(v, float).reshape(-1)
        return np.column_stack([np.broadcast_to(c, v.shape) for c in self._columns(v, False)])

    def energy_basis(self, x) -> np.ndarray:
        """Matrix ``E`` with ``H(x) = E @ p**2``.

        Parameters
        ----------
        x : array_like
            States.
        """
        x = np.asarray(x, float).reshape(-1)
        return np.column_stack([np.broadcast_to(c, x.shape) for c in self._columns(x, True)])

    def law(self, v, p) -> np.ndarray:
        """``f(v)`` for the parameter vector ``p`` (coefficient order :attr:`names`).

        Parameters
        ----------
        v : array_like
            Points.
        p : array_like
            Parameters.
        """
        p = np.asarray(p, float)
        return self.basis(v) @ (p * p)

    def expression(self, v: sp.Symbol, p, energy: bool = False) -> sp.Expr:
        """The law ``f(v)`` (or the energy ``H(v)``) as a sympy expression in the parameters ``p``.

        Parameters
        ----------
        v : sympy.Symbol
            Port variable (or state).
        p : sequence of sympy.Expr or float
            Parameters (symbols, or numbers for a closed form of a fitted law).
        energy : bool
            The energy instead of the law.
        """
        return sp.Add(*[sp.sympify(q) ** 2 * col for q, col in zip(p, self._columns(v, energy))])

    def start(self, scale: float) -> np.ndarray:
        """Start parameters: all equal, the law's slope at 0 equal to ``scale``.

        Parameters
        ----------
        scale : float
            Typical slope ``df/dv`` (a conductance, a stiffness).
        """
        d = 1e-6 * self.width
        slope = float(np.sum(self.basis(np.array([d])) - self.basis(np.array([-d]))) / (2 * d))
        return np.full(self.knots + 3, np.sqrt(scale / slope))


_V = sp.Symbol("v", real=True)


@register
class Learnable(Component):
    """Learnable element ``NAME n+ n- learn(kind=monotone, knots=K, range=LO..HI [, port=..] [, scale=..])``.

    A law to be learned from data, passive for every parameter value (the
    proof and the sign convention: :mod:`phsym.components.learnable`).
    ``kind=monotone``: a dissipation ``i = f(v)`` (``port=through``:
    ``v = f(i)``); ``kind=convex``: a storage with convex energy ``H(x)``
    whose effort ``f = dH/dx`` is monotone (``port=across``: the state
    integrates the across variable, as an inductor or a spring;
    ``port=through``: the through variable, as a capacitor).  The knots
    spread evenly over ``range``; ``scale`` (default 1) sets the start
    values: a law of slope about ``scale``.  Works in any domain (a damper
    or a spring in a mechanical netlist).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nR1 a b 1k\\nD1 b 0 learn(kind=monotone, knots=4, range=-1..1, scale=1m)\\n")
    >>> [p for p in m.parameters if p.startswith("D1")]
    ['D1.a', 'D1.l', 'D1.r', 'D1.w1', 'D1.w2', 'D1.w3', 'D1.w4']
    >>> d = m.structure.dissipative[1]
    >>> d.element, d.z.subs(d.w, 0)
    ('D1', 0)
    """

    kind = "learned"
    keywords = ("learn",)
    domain = "any"
    values = (Value("knots", "", "number of knots (at least 2)", default=8, structural=True, check="positive"),
              Value("lo", "", "lower end of the knot range (range=LO..HI)", default=-1.0, structural=True),
              Value("hi", "", "upper end of the knot range (range=LO..HI)", default=1.0, structural=True),
              Value("scale", "", "typical slope of the law (sets the start values)", default=1.0,
                    structural=True, check="positive"))
    choices = (Choice("kind", ("monotone", "convex"), "monotone law of a dissipation, or convex energy of a storage"),
               Choice("port", ("across", "through"), "variable the law reads (monotone) or the state "
                      "integrates (convex)"))
    summary = "law learned from data: monotone dissipation or convex energy, passive for every parameter value"

    @classmethod
    def usage(cls) -> str:
        return "NAME n+ n- learn(kind=monotone|convex, knots=K, range=LO..HI, [port=across|through], [scale=S])"

    @classmethod
    def family_of(cls, values: Mapping[str, float]) -> MonotoneFamily:
        """The law family of an element with the structural ``values`` (``knots``, ``lo``, ``hi``).

        Parameters
        ----------
        values : mapping of str to float
            The element's structural values.
        """
        return MonotoneFamily(float(values["lo"]), float(values["hi"]), int(values["knots"]))

    @classmethod
    def line_values(cls, structural: Mapping[str, float]) -> Tuple[Value, ...]:
        """The trainable values of a line: one per coefficient of its family (default: the start values).

        Parameters
        ----------
        structural : mapping of str to float
            The line's structural values.
        """
        knots, lo, hi = structural["knots"], structural["lo"], structural["hi"]
        if knots != int(knots) or knots < 2:
            raise ValueError(f"knots must be a whole number >= 2, got {knots:g}")
        if not lo < hi:
            raise ValueError(f"range must have LO < HI, got {lo:g}..{hi:g}")
        fam = cls.family_of(structural)
        start = fam.start(float(structural["scale"]))
        docs = {"a": "linear slope (square root)", "l": "slope growth below the range (square root)",
                "r": "slope growth above the range (square root)"}
        return tuple(Value(k, "", docs.get(k, f"weight of knot {k[1:]} (square root)"), default=float(p0))
                     for k, p0 in zip(fam.names, start))

    @classmethod
    def line_key(cls, word: str) -> Optional[str]:
        """The coefficient a keyword names (``a``, ``l``, ``r``, ``w1``...), else None: a fitted law is
        written back with its values.

        Parameters
        ----------
        word : str
            A keyword of the line.
        """
        low = word.lower()
        return low if re.fullmatch(r"[alr]|w[1-9][0-9]*", low) else None

    def family(self) -> MonotoneFamily:
        """This element's law family."""
        return self.family_of({k: float(self.value(k)) for k in ("knots", "lo", "hi")})

    def parameters(self) -> List[sp.Expr]:
        """This element's trainable parameters (symbols), in coefficient order."""
        return [self.value(k) for k in self.family().names]

    def contribute(self) -> Contribution:
        fam, p = self.family(), self.parameters()
        across = self.choice("port") == "across"
        if self.choice("kind") == "monotone":
            law = fam.expression(_V, p)
            d = Dissipation(self.name, self.name, "across" if across else "through", law, _V, False)
            return Contribution(branches=[self.branch("dissipation", P_VCR if across else P_CCR)], dissipations=[d])
        if self.spec.ic is not None:
            raise StructureError(f"{self.name}: IC= is not supported on a learned storage", [self.name])
        x = sp.Symbol(f"x_{self.name}", real=True)
        port = FLOW if across else EFFORT
        br = self.branch("storage", P_STORE_FLOW if across else P_STORE_EFFORT)
        st = Storage((self.name,), (x,), fam.expression(x, p, energy=True), (br.name,), (port,), (None,),
                     quadratic=False)
        return Contribution(branches=[br], storages=[st])
