"""Vacuum tubes: the triode (Koren's plate current, a grid current when the
grid conducts), a resistive two-port like a transistor."""
from __future__ import annotations

import sympy as sp

from .base import Contribution
from .component import Value, register
from .device import Device

__all__ = ["Triode", "koren_plate_current"]

_VGK = sp.Symbol("v_gk", real=True)
_VPK = sp.Symbol("v_pk", real=True)


def _softplus(a: sp.Expr) -> sp.Expr:
    """``ln(1 + exp(a))`` without overflow for large ``a``."""
    return sp.Piecewise((a + sp.log(1 + sp.exp(-a)), a > 30), (sp.log(1 + sp.exp(a)), True))


def koren_plate_current(vgk: sp.Expr, vpk: sp.Expr, *, mu, ex, kg1, kp, kvb) -> sp.Expr:
    """Koren's triode plate current (plate to cathode).

    ``E1 = vpk / Kp ln(1 + exp(Kp (1/mu + vgk / sqrt(Kvb + vpk**2))))`` and
    ``i_p = E1**Ex / Kg1`` for ``vpk > 0`` (then ``E1 > 0``), else 0.

    Parameters
    ----------
    vgk, vpk : sympy.Expr
        Grid-cathode and plate-cathode voltages.
    mu, ex, kg1, kp, kvb : sympy.Expr
        Amplification factor, exponent, and Koren's fitted constants.

    Examples
    --------
    >>> i = koren_plate_current(sp.Float(-1.5), sp.Float(200), mu=100, ex=1.4, kg1=1060, kp=600, kvb=300)
    >>> round(float(i) * 1e3, 4)     # 12AX7 at -1.5 V, 200 V [mA]: E1 = 0.5716, E1**1.4 / 1060
    0.4313
    """
    e1 = vpk / kp * _softplus(kp * (1 / mu + vgk / sp.sqrt(kvb + vpk ** 2)))
    return sp.Piecewise((e1 ** ex / kg1, vpk > 0), (0, True))


@register
class Triode(Device):
    """Triode ``U1 plate grid cathode triode [mu=.. Ex=.. Kg1=.. Kp=.. Kvb=.. Va=.. Rgk=..]`` (Koren).

    Two dissipative ports of one device: grid-cathode (branch ``NAME.gk``,
    ``w = v_gk``) with the grid current ``(v_gk - Va) / Rgk`` above the
    onset ``Va`` (0 below; the grid conducting towards the cathode, as
    PyPHS's triode), and plate-cathode (``NAME.pk``, ``w = v_pk``) with
    :func:`koren_plate_current`, which reads ``v_gk``.  Both carry
    ``Gmin v`` too.  The defaults are Koren's 12AX7.  The tube receives

        ``P = v_gk i_g + v_pk i_p >= 0``

    everywhere (``i_p = 0`` unless ``v_pk > 0``; ``i_g >= 0`` only above
    ``Va >= 0``): it is passive and takes its power from the plate supply.
    Inter-electrode capacitances are ordinary capacitors in the netlist.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("VB p 0 200\\nVG g 0 -1.5\\nU1 p g 0 triode\\n")
    >>> [d.element for d in m.structure.dissipative]
    ['U1.gk', 'U1.pk']
    """

    kind = "triode"
    keywords = ("triode",)
    terminals = ("plate", "grid", "cathode")
    values = (Value("mu", "", "amplification factor", default=100.0, check="positive"),
              Value("Ex", "", "exponent of the plate current", default=1.4, check="positive"),
              Value("Kg1", "", "plate current constant (i_p = E1**Ex / Kg1, volts and amperes)", default=1060.0,
                    check="positive"),
              Value("Kp", "", "constant of the soft knee near cut-off", default=600.0, check="positive"),
              Value("Kvb", "V^2", "constant of the plate-voltage dependence", default=300.0, check="positive"),
              Value("Va", "V", "grid current onset (grid-cathode voltage)", default=0.33, check="nonnegative"),
              Value("Rgk", "ohm", "grid-cathode resistance once the grid conducts", default=3e3, check="positive"),
              Value("Gmin", "S", "conductance across each port (SPICE GMIN)", default=1e-12, check="nonnegative"))
    summary = "vacuum triode (Koren's plate current, grid current above an onset)"

    def contribute(self) -> Contribution:
        out = Contribution()
        p, g, k = self.spec.nodes
        gmin, va = self.value("Gmin"), self.value("Va")
        ig = sp.Piecewise(((_VGK - va) / self.value("Rgk"), _VGK > va), (0, True)) + gmin * _VGK
        ip = koren_plate_current(_VGK, _VPK, mu=self.value("mu"), ex=self.value("Ex"), kg1=self.value("Kg1"),
                                 kp=self.value("Kp"), kvb=self.value("Kvb")) + gmin * _VPK
        self.multiport(out, [("gk", g, k, ig), ("pk", p, k, ip)], [_VGK, _VPK])
        return out
