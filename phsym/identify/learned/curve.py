"""A fitted learned law: callable, confidence band, trust range, netlist text."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

import numpy as np
import sympy as sp
from scipy import stats

from ...components.learnable import MonotoneFamily
from ...errors import IdentificationError

__all__ = ["LearnedCurve"]


def _num(x: float) -> str:
    return f"{float(x):.10g}"


@dataclass
class LearnedCurve:
    """The law of one learned element after a fit (``est.laws_['D1']``).

    Calling it gives the law of its port variable, vectorised over numpy
    arrays: ``curve(v)`` is the current of a ``kind=monotone`` element at the
    voltage ``v`` (or the effort ``dH/dx`` of a ``kind=convex`` storage at
    its state ``x``).

    Attributes
    ----------
    element : str
        Element name.
    family : MonotoneFamily
        The law family (knots, range).
    params : ndarray
        Fitted parameters in coefficient order (``family.names``).
    covariance : ndarray or None
        Their covariance (from the fit's Jacobian, or a saved ``.covariance``
        card); ``None``: no band.
    kind, port : str
        The element's ``kind=`` and ``port=``.
    excited : (float, float)
        Range of the port variable the fitting data visited.
    confidence : float
        Level of :meth:`band`.
    dof : int
        Degrees of freedom of the residuals (Student t of the band).
    nodes : (str, str)
        The element's nodes (for :meth:`netlist_line`).
    """

    element: str
    family: MonotoneFamily
    params: np.ndarray
    covariance: Optional[np.ndarray]
    kind: str
    port: str
    excited: Tuple[float, float]
    confidence: float = 0.95
    dof: int = 1000
    nodes: Tuple[str, str] = ("n+", "n-")
    scale: float = field(default=1.0)

    @classmethod
    def from_model(cls, model, name: str) -> "LearnedCurve":
        """The law of a netlist's learned element as saved: its line's values, and with the deck's
        ``.covariance`` card (:mod:`phsym.netlist.covariance`, written by ``phsym fit --save``) its
        band and excited range.

        Parameters
        ----------
        model : Model
            A loaded model.
        name : str
            The learned element (any letter case).

        Raises
        ------
        IdentificationError
            When ``name`` is not a learned element.
        """
        from ...components.learnable import Learnable
        spec = next((el for el in model.netlist.elements if el.name.lower() == name.lower()), None)
        if spec is None or spec.kind != Learnable.kind:
            known = [el.name for el in model.netlist.elements if el.kind == Learnable.kind]
            raise IdentificationError(f"{name!r} is not a learned element; learned: {', '.join(known) or 'none'}")
        comp = Learnable(spec, {})
        values = model.parameters
        params = np.array([float(values[str(p)]) for p in comp.parameters()])
        card = model.netlist.covariances.get(spec.name)
        fam = comp.family()
        if card is None:
            return cls(spec.name, fam, params, None, comp.choice("kind"), comp.choice("port"), (fam.lo, fam.hi),
                       nodes=tuple(spec.nodes[:2]))
        return cls(spec.name, fam, params, card.covariance, comp.choice("kind"), comp.choice("port"),
                   card.excited, card.level, card.dof, tuple(spec.nodes[:2]))

    @property
    def has_band(self) -> bool:
        """Whether the parameter covariance is known (a fit, or a saved ``.covariance`` card)."""
        return self.covariance is not None

    def __call__(self, v) -> np.ndarray:
        """The law at ``v`` (array_like; same shape back)."""
        v = np.asarray(v, float)
        return self.family.law(v.reshape(-1), self.params).reshape(v.shape)

    def energy(self, x) -> np.ndarray:
        """``H(x) = int_0^x f`` (the stored energy of a ``kind=convex`` element; the integral of the
        law for any kind)."""
        x = np.asarray(x, float)
        return (self.family.energy_basis(x.reshape(-1)) @ (self.params ** 2)).reshape(x.shape)

    def std(self, v) -> np.ndarray:
        """Standard deviation of the law at ``v`` (delta method on the parameter covariance)."""
        if self.covariance is None:
            raise IdentificationError(f"{self.element}: no covariance, so no band (a fitted netlist carries it "
                                      "as a .covariance card: phsym fit --save)")
        v = np.asarray(v, float)
        G = self.family.basis(v.reshape(-1)) * (2 * self.params)[None, :]
        var = np.einsum("ij,jk,ik->i", G, self.covariance, G)
        return np.sqrt(np.maximum(var, 0.0)).reshape(v.shape)

    def band(self, v) -> Tuple[np.ndarray, np.ndarray]:
        """Pointwise confidence band ``(lower, upper)`` of the law at ``v`` at level :attr:`confidence`.

        Parameters
        ----------
        v : array_like
            Points.
        """
        q = float(stats.t.ppf(0.5 + self.confidence / 2, max(int(self.dof), 1)))
        f, s = self(v), self.std(v)
        return f - q * s, f + q * s

    def excited_knots(self) -> np.ndarray:
        """Knots the fitting data reached (within one knot width of the visited range)."""
        c, s = self.family.centres, self.family.width
        lo, hi = self.excited
        return c[(c >= lo - s) & (c <= hi + s)]

    def slopes(self) -> Tuple[float, float]:
        """Slopes ``df/dv`` far below and far above the knots (the linear extrapolation)."""
        a, l, r = self.params[:3] ** 2
        return float(a + l), float(a + r)

    def expression(self, variable: str = "v") -> sp.Expr:
        """The law as a sympy closed form with numbers (``energy`` for a storage's ``H``)."""
        v = sp.Symbol(variable, real=True)
        return self.family.expression(v, [sp.Float(float(p)) for p in self.params], energy=self.kind == "convex")

    def netlist_line(self) -> str:
        """The element as a netlist line with its fitted values: it simulates as fitted and can be refitted."""
        fam = self.family
        vals = ", ".join(f"{k}={_num(p)}" for k, p in zip(fam.names, self.params))
        return (f"{self.element} {self.nodes[0]} {self.nodes[1]} learn(kind={self.kind}, port={self.port}, "
                f"knots={fam.knots}, range={_num(fam.lo)}..{_num(fam.hi)}, {vals})")

    def table_card(self, name: Optional[str] = None, points: int = 41, span: Optional[Tuple[float, float]] = None) -> str:
        """A ``.table NAME v1 f1 v2 f2 ...`` card sampling the law (linear interpolation between points).

        Parameters
        ----------
        name : str, optional
            Table name (default ``<element>_law``).
        points : int
            Number of points.
        span : (float, float), optional
            Where to sample (default: the knot range).
        """
        lo, hi = span if span is not None else (self.family.lo, self.family.hi)
        v = np.linspace(lo, hi, int(points))
        pairs = " ".join(f"{_num(a)} {_num(b)}" for a, b in zip(v, self(v)))
        return f".table {name or self.element.replace('.', '_') + '_law'} {pairs}"

    def covariance_card(self) -> str:
        """The ``.covariance`` card of this law (:mod:`phsym.netlist.covariance`): saved after
        :meth:`netlist_line`, it gives a loaded netlist the band and the excited range."""
        from ...netlist.covariance import covariance_card_text
        if self.covariance is None:
            raise IdentificationError(f"{self.element}: no covariance to save")
        return covariance_card_text(self.element, self.covariance, self.confidence, self.dof, self.excited)

    def table(self, points: int = 11, span: Optional[Tuple[float, float]] = None) -> str:
        """The curve as a text table: port variable, law, and the band's ends when known; rows
        outside the excited range are marked.

        Parameters
        ----------
        points : int
            Rows.
        span : (float, float), optional
            Range (default: the knot range and the excited range together).
        """
        lo, hi = span if span is not None else (min(self.family.lo, self.excited[0]),
                                                max(self.family.hi, self.excited[1]))
        v = np.linspace(lo, hi, int(points))
        f = self(v)
        head = f"  {'v':>12} {'f(v)':>12}"
        cols = [v, f]
        if self.has_band:
            a, b = self.band(v)
            head += f" {'lower':>12} {'upper':>12}"
            cols += [a, b]
        rows = [head]
        e0, e1 = self.excited
        for k in range(len(v)):
            mark = "" if not self.has_band or e0 <= v[k] <= e1 else "  (not excited)"
            rows.append("  " + " ".join(f"{c[k]:>12.5g}" for c in cols) + mark)
        return "\n".join(rows)

    def report(self) -> str:
        """How far the law may be trusted: excited range, knots, band and extrapolation."""
        fam, (lo, hi) = self.family, self.excited
        sl, sr = self.slopes()
        if not self.has_band:
            return "\n".join([f"{self.element}: learned {self.kind} law over knots {fam.lo:.4g}..{fam.hi:.4g} "
                              f"({fam.knots} knots, width {fam.width:.4g})",
                              "  no record of its fit (no .covariance card): band and excited range unknown",
                              f"  beyond the knots the law extrapolates linearly (slopes {sl:.4g} below, "
                              f"{sr:.4g} above) and stays passive"])
        knots = self.excited_knots()
        v = np.linspace(lo, hi, 101) if hi > lo else np.array([lo])
        f = self(v)
        a, b = self.band(v)
        swing = float(np.max(np.abs(f))) or 1.0
        lines = [f"{self.element}: learned {self.kind} law over knots {fam.lo:.4g}..{fam.hi:.4g} "
                 f"({fam.knots} knots, width {fam.width:.4g})",
                 f"  data excited {lo:.4g}..{hi:.4g}: {len(knots)} of {fam.knots} knots",
                 f"  {int(round(self.confidence * 100))}% band over the excited range: at most "
                 f"{float(np.max(b - a)) / 2:.3g} ({float(np.max(b - a)) / 2 / swing:.2%} of the largest value "
                 f"{swing:.4g})",
                 f"  trusted for {lo:.4g} <= v <= {hi:.4g}; outside, the law extrapolates linearly "
                 f"(slopes {sl:.4g} below, {sr:.4g} above) and stays passive, but is not determined by the data"]
        return "\n".join(lines)

    def plot(self, ax=None, span: Optional[Tuple[float, float]] = None, truth=None):
        """Plot the law, its confidence band and the excited range (matplotlib).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        span : (float, float), optional
            Range of the plot (default: the knot range).
        truth : callable, optional
            A reference law drawn dashed.
        """
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        lo, hi = span if span is not None else (self.family.lo, self.family.hi)
        v = np.linspace(lo, hi, 400)
        if self.has_band:
            a, b = self.band(v)
            ax.fill_between(v, a, b, alpha=0.3, label=f"{int(round(self.confidence * 100))}% band")
        ax.plot(v, self(v), label=f"learned {self.element}")
        if truth is not None:
            ax.plot(v, truth(v), "k--", lw=1, label="truth")
        if self.has_band:
            ax.axvspan(*self.excited, color="0.9", zorder=0, label="excited range")
        ax.set_xlabel("port variable")
        ax.set_ylabel("law")
        ax.legend()
        return ax
