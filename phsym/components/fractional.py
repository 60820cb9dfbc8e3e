"""Fractional-order elements by a passive diffusive representation.

``s**-alpha`` (0 < alpha < 1) is a superposition of first-order cells,
``s**-alpha = integral of mu(xi) / (s + xi) dxi`` with the positive weight
``mu(xi) = sin(alpha pi) / pi * xi**-alpha``.  phsym replaces the integral by
``K`` cells with poles ``xi_k`` spread logarithmically from 1-3 decades
below to 1-3 decades above the band (the spread with the smallest error) and
non-negative weights ``w_k`` fitted once (non-negative least squares on the
relative error over a logarithmic frequency grid of the band; cached per
``(alpha, fmin, fmax, cells)``), so that

    s**-alpha ~ sum_k w_k / (s + xi_k)

Each cell is a linear storage with a linear resistor, so the element is
passive by construction and the discrete energy balance stays exact; the
fit error over the band is :func:`diffusive_fit`'s ``error`` (reported in
docs/components.md for the defaults).

* ``fcapacitor`` (fractional integrator of the current): ``Z(s) = 1 / (C
  s**alpha)``, a series chain of parallel RC cells (``C_k = C / w_k``,
  ``R_k = w_k / (C xi_k)``).  ``alpha = 1`` would be a capacitor.
* ``finductor`` (fractional derivator): ``Z(s) = L s**alpha = L s s**(alpha -
  1)``, a series chain of parallel RL cells from the fit of ``s**-(1 -
  alpha)`` (``R_k = L w_k``, ``L_k = L w_k / xi_k``).
"""
from __future__ import annotations

from functools import lru_cache
from typing import List, NamedTuple, Tuple

import numpy as np
import sympy as sp

from ..errors import StructureError
from .base import EFFORT, FLOW, P_LINEAR, P_STORE_EFFORT, P_STORE_FLOW, Contribution, Dissipation, Storage
from .component import Component, Value, register

__all__ = ["DiffusiveFit", "diffusive_fit", "FractionalCapacitor", "FractionalInductor"]

_V = sp.Symbol("v", real=True)
_I = sp.Symbol("i", real=True)


class DiffusiveFit(NamedTuple):
    """Poles ``xi`` [rad/s], weights ``w`` and the largest relative error of
    ``sum w / (j omega + xi)`` against ``(j omega)**-alpha`` over the band."""

    xi: np.ndarray
    w: np.ndarray
    error: float


@lru_cache(maxsize=64)
def diffusive_fit(alpha: float, fmin: float, fmax: float, cells: int) -> DiffusiveFit:
    """Fit ``s**-alpha`` by ``cells`` first-order cells over ``[fmin, fmax]`` Hz.

    Parameters
    ----------
    alpha : float
        Order, ``0 < alpha < 1``.
    fmin, fmax : float
        Band in Hz (``0 < fmin < fmax``).
    cells : int
        Number of cells (poles), at least 2.

    Returns
    -------
    DiffusiveFit
        Poles, non-negative weights (zero-weight cells removed) and the
        largest relative error over the band.
    """
    from scipy.optimize import nnls
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < fmin < fmax:
        raise ValueError(f"the band needs 0 < fmin < fmax, got {fmin}, {fmax}")
    if cells < 2:
        raise ValueError(f"at least 2 cells are needed, got {cells}")
    w_grid = 2 * np.pi * np.logspace(np.log10(fmin), np.log10(fmax), 40 * cells)
    s = 1j * w_grid
    target = s ** -alpha
    best = None
    # the poles bracket the band; how far beyond each end pays depends on alpha
    # (small orders need high poles, large ones low poles): keep the best spread
    for lo in (1.0, 1.5, 2.0, 3.0):
        for hi in (1.0, 1.5, 2.0, 3.0):
            xi = 2 * np.pi * np.logspace(np.log10(fmin) - lo, np.log10(fmax) + hi, cells)
            A = 1.0 / (s[:, None] + xi[None, :]) / target[:, None]          # relative error rows
            Ar = np.vstack([A.real, A.imag])
            br = np.concatenate([np.ones_like(w_grid), np.zeros_like(w_grid)])
            scale = np.linalg.norm(Ar, axis=0)
            w, _ = nnls(Ar / scale, br, maxiter=50 * cells)
            w = w / scale
            keep = w > 0
            approx = (1.0 / (s[:, None] + xi[None, keep])) @ w[keep]
            err = float(np.max(np.abs(approx / target - 1)))
            if best is None or err < best[2]:
                best = (xi[keep], w[keep], err)
    return DiffusiveFit(*best)


class _Fractional(Component):
    """Shared: a series chain of first-order cells with internal nodes ``NAME#k``."""

    terminals = ("n+", "n-")
    exponent_offset = 0.0       # fitted exponent: alpha - offset (capacitor) or 1 - alpha (inductor)

    def fit(self) -> DiffusiveFit:
        """The diffusive fit of this element."""
        alpha = float(self.value("alpha"))
        try:
            return diffusive_fit(self.fitted_order(alpha), float(self.value("fmin")), float(self.value("fmax")),
                                 int(self.value("cells")))
        except ValueError as exc:
            raise StructureError(f"{self.name}: {exc}", [self.name]) from None

    def fitted_order(self, alpha: float) -> float:
        """The order of ``s**-order`` that the cells approximate."""
        raise NotImplementedError

    def cell(self, k: int, xi: float, w: float, nodes: Tuple[str, str]) -> Contribution:
        """Records of cell ``k`` between ``nodes``."""
        raise NotImplementedError

    def contribute(self) -> Contribution:
        fit = self.fit()
        a, b = self.spec.nodes
        chain: List[str] = [a] + [f"{self.name}#{k}" for k in range(1, len(fit.w))] + [b]
        out = Contribution()
        for k, (xi, w) in enumerate(zip(fit.xi, fit.w)):
            out.extend(self.cell(k + 1, float(xi), float(w), (chain[k], chain[k + 1])))
        return out


_COMMON = (Value("alpha", "", "order, 0 < alpha < 1", default=0.5, check="unit", structural=True),
           Value("fmin", "Hz", "lower end of the band of the fit", default=20.0, check="positive", structural=True),
           Value("fmax", "Hz", "upper end of the band of the fit", default=20e3, check="positive", structural=True),
           Value("cells", "", "number of cells of the fit", default=12, check="positive", structural=True))


@register
class FractionalCapacitor(_Fractional):
    """Fractional capacitor ``Z1 n+ n- fcapacitor C=1u alpha=0.5 [fmin=20 fmax=20k cells=12]``.

    ``Z(s) = 1 / (C s**alpha)`` (a fractional integrator of the current)
    over the band ``[fmin, fmax]``: a series chain of parallel RC cells, cell
    ``k`` with ``C_k = C / w_k`` (state ``q_NAME.k``) and ``R_k = w_k / (C
    xi_k)`` (see the module docstring).  Passive; receiver convention.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("I1 0 a\\nZ1 a 0 fcapacitor C=1 alpha=0.5 cells=8\\n")
    >>> len(m.states)
    8
    """

    kind = "fcapacitor"
    keywords = ("fcapacitor",)
    values = (Value("C", "F s^(alpha-1)", "pseudo-capacitance", main=True, check="positive"),) + _COMMON
    summary = "fractional capacitor 1/(C s^alpha), diffusive cells fitted over a band"

    def fitted_order(self, alpha: float) -> float:
        return alpha

    def cell(self, k: int, xi: float, w: float, nodes: Tuple[str, str]) -> Contribution:
        C = self.value("C")
        name = f"{self.name}.{k}"
        q = sp.Symbol(f"q_{name}", real=True)
        bs = self.branch("storage", P_STORE_EFFORT, nodes=nodes, suffix=f".{k}")
        br = self.branch("dissipation", P_LINEAR, nodes=nodes, suffix=f".r{k}")
        st = Storage((name,), (q,), sp.Float(w) * q ** 2 / (2 * C), (bs.name,), (EFFORT,), (None,), quadratic=True)
        d = Dissipation(br.name, br.name, "across", C * sp.Float(xi / w) * _V, _V, True)    # i = v / R_k
        return Contribution(branches=[bs, br], storages=[st], dissipations=[d])


@register
class FractionalInductor(_Fractional):
    """Fractional inductor ``Z2 n+ n- finductor L=1m alpha=0.5 [fmin=20 fmax=20k cells=12]``.

    ``Z(s) = L s**alpha`` (a fractional derivator of the current) over the
    band: a series chain of parallel RL cells from the fit of ``s**-(1 -
    alpha)``, cell ``k`` with ``R_k = L w_k`` and ``L_k = L w_k / xi_k``
    (state ``phi_NAME.k``).  Passive; receiver convention.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nZ2 a 0 finductor L=1 alpha=0.5 cells=6\\n")
    >>> len(m.states)
    6
    """

    kind = "finductor"
    keywords = ("finductor",)
    values = (Value("L", "H s^(alpha-1)", "pseudo-inductance", main=True, check="positive"),) + _COMMON
    summary = "fractional inductor L s^alpha, diffusive cells fitted over a band"

    def fitted_order(self, alpha: float) -> float:
        return 1.0 - alpha

    def cell(self, k: int, xi: float, w: float, nodes: Tuple[str, str]) -> Contribution:
        L = self.value("L")
        name = f"{self.name}.{k}"
        phi = sp.Symbol(f"phi_{name}", real=True)
        bs = self.branch("storage", P_STORE_FLOW, nodes=nodes, suffix=f".{k}")
        br = self.branch("dissipation", P_LINEAR, nodes=nodes, suffix=f".r{k}")
        Lk = L * sp.Float(w / xi)
        st = Storage((name,), (phi,), phi ** 2 / (2 * Lk), (bs.name,), (FLOW,), (None,), quadratic=True)
        d = Dissipation(br.name, br.name, "across", _V / (L * sp.Float(w)), _V, True)        # i = v / R_k
        return Contribution(branches=[bs, br], storages=[st], dissipations=[d])
