"""Field-effect transistors: MOSFET (SPICE level 1) and JFET (SPICE level 1).

Each is a resistive multiport (gate-source and drain-source ports, plus
bulk-source for a MOSFET whose bulk is not tied to its source) whose
drain current reads every port voltage; see the classes for the power they
receive, which is never negative.
"""
from __future__ import annotations

import sympy as sp

from .base import Contribution
from .component import Choice, Value, register
from .device import Device

__all__ = ["MOSFET", "JFET", "shichman_hodges", "jfet_drain_current"]

_VGS = sp.Symbol("v_gs", real=True)
_VDS = sp.Symbol("v_ds", real=True)
_VBS = sp.Symbol("v_bs", real=True)


def _symmetric(forward, vgs: sp.Expr, vds: sp.Expr, vbs: sp.Expr) -> sp.Expr:
    """``forward(vgs, vds, vbs)`` for ``vds >= 0``; drain and source swapped below."""
    return sp.Piecewise((forward(vgs, vds, vbs), vds >= 0),
                        (-forward(vgs - vds, -vds, vbs - vds), True))


def shichman_hodges(vgs: sp.Expr, vds: sp.Expr, vbs: sp.Expr, *, beta, vto, lam, gamma, phi) -> sp.Expr:
    """Drain current of SPICE's level-1 MOSFET (n-type), drain to source.

    ``v_th = VTO + GAMMA (s(v_bs) - sqrt(PHI))`` with ``s = sqrt(PHI - v_bs)``
    (SPICE's linear continuation ``sqrt(PHI) - v_bs / (2 sqrt(PHI))``,
    floored at 0, for ``v_bs > 0``); with ``v_ov = v_gs - v_th``: 0 for
    ``v_ov <= 0``, ``beta/2 v_ov**2 (1 + LAMBDA v_ds)`` in saturation
    (``v_ds >= v_ov``), ``beta v_ds (v_ov - v_ds/2)(1 + LAMBDA v_ds)``
    below; for ``v_ds < 0`` drain and source swap roles.

    Parameters
    ----------
    vgs, vds, vbs : sympy.Expr
        Port voltages.
    beta : sympy.Expr
        ``KP W / L`` [A/V^2].
    vto, lam, gamma, phi : sympy.Expr
        Threshold voltage, channel-length modulation, body-effect
        coefficient, surface potential.

    Examples
    --------
    >>> import sympy as sp
    >>> i = shichman_hodges(sp.Float(3), sp.Float(5), sp.Integer(0), beta=1e-3, vto=1, lam=0, gamma=0, phi=0.6)
    >>> float(i)   # saturation: 1e-3/2 * 2**2
    0.002
    """
    def forward(g, d, b):
        sarg = sp.Piecewise((sp.sqrt(phi - b), b <= 0),
                            (sp.Max(sp.sqrt(phi) - b / (2 * sp.sqrt(phi)), 0), True))
        vov = g - (vto + gamma * (sarg - sp.sqrt(phi)))
        clm = 1 + lam * d
        return sp.Piecewise((0, vov <= 0), (beta / 2 * vov ** 2 * clm, d >= vov),
                            (beta * d * (vov - d / 2) * clm, True))
    return _symmetric(forward, vgs, vds, vbs)


def jfet_drain_current(vgs: sp.Expr, vds: sp.Expr, *, beta, vto, lam, b, pb) -> sp.Expr:
    """Drain current of SPICE's level-1 JFET (n-channel), drain to source.

    With ``v_gst = v_gs - VTO``: 0 for ``v_gst <= 0``; saturation
    (``v_ds >= v_gst``) ``beta' v_gst**2 (B + B_f v_gst)``; linear
    ``beta' v_ds (v_ds (B_f v_ds - B) + v_gst (2 B + 3 B_f (v_gst - v_ds)))``
    with ``beta' = BETA (1 + LAMBDA v_ds)`` and ``B_f = (1 - B) / (PB - VTO)``
    (ngspice's doping-tail parameter ``B``; ``B = 1`` is Shichman-Hodges).
    Drain and source swap roles for ``v_ds < 0``.

    Parameters
    ----------
    vgs, vds : sympy.Expr
        Port voltages.
    beta, vto, lam, b, pb : sympy.Expr
        Transconductance parameter, threshold voltage, channel-length
        modulation, doping-tail parameter, gate junction potential.

    Examples
    --------
    >>> import sympy as sp
    >>> float(jfet_drain_current(sp.Float(-1), sp.Float(5), beta=1e-3, vto=-2, lam=0, b=1, pb=1))
    0.001
    """
    bf = (1 - b) / (pb - vto)

    def forward(g, d, _bulk):
        vgst = g - vto
        bp = beta * (1 + lam * d)
        return sp.Piecewise((0, vgst <= 0), (bp * vgst ** 2 * (b + bf * vgst), d >= vgst),
                            (bp * d * (d * (bf * d - b) + vgst * (2 * b + 3 * bf * (vgst - d))), True))
    return _symmetric(forward, vgs, vds, sp.Integer(0))


def _junction(Is, v, vt, gmin) -> sp.Expr:
    return Is * (sp.exp(v / vt) - 1) + gmin * v


@register
class MOSFET(Device):
    """MOSFET ``M d g s b [MODEL] [W=.. L=..] [VTO=.. KP=.. ...] [polarity=nmos|pmos]`` (SPICE level 1).

    Dissipative ports of one device: gate-source (branch ``NAME.gs``, law
    ``GMIN v_gs``: the gate draws no current but keeps a conductance like
    SPICE's junctions), drain-source (``NAME.ds``: the channel current of
    :func:`shichman_hodges` with ``beta = KP W / (L - 2 LD)``, minus the
    bulk-drain diode's current) and, unless the bulk is tied to the source,
    bulk-source (``NAME.bs``: both bulk diodes ``IS (exp(v / Vt) - 1)``).
    A p-type device (``PMOS`` card) has every branch reversed, ``v_sg``,
    ``v_sd``, ``v_sb``, with the threshold ``-VTO`` (SPICE's convention:
    ``VTO < 0`` for an enhancement PMOS).  The device receives

        ``P = GMIN v_gs**2 + v_ds i_ch + v_bs i_bs + v_bd i_bd >= 0``

    everywhere (the channel current has the sign of ``v_ds``): it is
    passive.  ``CGSO``, ``CGDO``, ``CGBO`` (per metre of width) give linear
    gate capacitances ``W CGSO`` ... (storages ``NAME.cgs``...); the Meyer
    capacitances (from ``TOX``) and the bulk junction capacitances are not
    modelled.  ``RD``, ``RS`` are series resistors to internal nodes.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse(".model N1 NMOS(VTO=1 KP=1m)\\nV1 d 0 5\\nV2 g 0 3\\nM1 d g 0 0 N1\\n")
    >>> [d.element for d in m.structure.dissipative]
    ['M1.gs', 'M1.ds']
    """

    kind = "mosfet"
    letters = ("M",)
    terminals = ("drain", "gate", "source", "bulk")
    values = (Value("Vto", "V", "zero-bias threshold voltage", default=0.0, aliases=("VT0",)),
              Value("Kp", "A/V^2", "transconductance parameter", default=2e-5, check="positive"),
              Value("Lambda", "1/V", "channel-length modulation", default=0.0, check="nonnegative"),
              Value("Gamma", "V^0.5", "body-effect coefficient", default=0.0, check="nonnegative"),
              Value("Phi", "V", "surface potential", default=0.6, check="positive"),
              Value("W", "m", "channel width", default=1e-4, check="positive"),
              Value("L", "m", "channel length", default=1e-4, check="positive"),
              Value("Ld", "m", "lateral diffusion", check="nonnegative", optional=True),
              Value("Is", "A", "bulk junction saturation current", default=1e-14, check="positive"),
              Value("Rd", "ohm", "drain resistance", check="nonnegative", optional=True),
              Value("Rs", "ohm", "source resistance", check="nonnegative", optional=True),
              Value("Cgso", "F/m", "gate-source overlap capacitance per width", check="nonnegative",
                    optional=True),
              Value("Cgdo", "F/m", "gate-drain overlap capacitance per width", check="nonnegative",
                    optional=True),
              Value("Cgbo", "F/m", "gate-bulk overlap capacitance per length", check="nonnegative",
                    optional=True),
              Value("Vt", "V", "thermal voltage", default=0.02585, check="positive"),
              Value("Gmin", "S", "conductance across each port (SPICE GMIN)", default=1e-12,
                    check="nonnegative"))
    choices = (Choice("polarity", ("nmos", "pmos"), "transistor type (set by a .model card's type)"),)
    model = "NMOS"
    model_types = ("NMOS", "PMOS")
    # accepted on .model cards, without an effect here: Meyer and junction
    # capacitances, oxide and process parameters, noise, temperature
    model_ignored = ("LEVEL", "TOX", "CBD", "CBS", "PB", "CJ", "MJ", "CJSW", "MJSW", "FC", "JS", "RSH",
                     "NSUB", "NSS", "TPG", "UO", "U0", "KF", "AF", "TNOM", "XJ", "NFS", "VMAX", "NEFF",
                     "UCRIT", "UEXP", "UTRA", "DELTA", "THETA", "ETA", "KAPPA", "XQC")
    summary = "MOSFET, n or p (SPICE level 1 Shichman-Hodges: body effect, CLM, bulk diodes, overlap capacitances)"

    def contribute(self) -> Contribution:
        out = Contribution()
        inner = self.series(out, {"d": "Rd", "s": "Rs"})
        d, g, s, b = inner["d"], inner["g"], inner["s"], inner["b"]
        sign = 1 if self.n_type else -1
        length = self.value("L") - (2 * self.given("Ld") if self.given("Ld") is not None else 0)
        beta = self.value("Kp") * self.value("W") / length
        Is, vt, gmin = self.value("Is"), self.value("Vt"), self.value("Gmin")
        tied = b == s
        vbs = sp.Integer(0) if tied else _VBS
        ich = shichman_hodges(_VGS, _VDS, vbs, beta=beta, vto=sign * self.value("Vto"), lam=self.value("Lambda"),
                              gamma=self.value("Gamma"), phi=self.value("Phi"))
        ibd = _junction(Is, vbs - _VDS, vt, gmin)
        ports = [("gs", g, s, gmin * _VGS), ("ds", d, s, ich - ibd)]
        if not tied:
            ports.append(("bs", b, s, _junction(Is, _VBS, vt, gmin) + ibd))
        self.multiport(out, ports, [_VGS, _VDS, _VBS][:len(ports)])
        w, length0 = self.value("W"), self.value("L")
        for tag, node, key, size in (("cgs", s, "Cgso", w), ("cgd", d, "Cgdo", w), ("cgb", b, "Cgbo", length0)):
            c = self.given(key)
            if c is not None:
                self.capacitor(out, tag, g, node, c * size)
        return out


@register
class JFET(Device):
    """JFET ``J d g s [MODEL] [VTO=.. BETA=.. LAMBDA=.. IS=..] [polarity=njf|pjf]`` (SPICE level 1).

    Two dissipative ports of one device: gate-source (branch ``NAME.gs``:
    the gate-source and gate-drain junction currents, ``IS (exp(v / Vt) -
    1) + GMIN v`` each) and drain-source (``NAME.ds``: the channel current
    of :func:`jfet_drain_current` minus the gate-drain junction current).
    A p-channel device (``PJF`` card) has both branches reversed (``v_sg``,
    ``v_sd``) and the threshold ``-VTO``.  The device receives

        ``P = v_gs i_gs + v_gd i_gd + v_ds i_ch >= 0``

    everywhere: it is passive.  ``CGS``, ``CGD`` are linear gate
    capacitances here (SPICE makes them depletion capacitances with ``PB``,
    ``M``, ``FC``); ``RD``, ``RS`` are series resistors to internal nodes.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse(".model J1 NJF(VTO=-2 BETA=1m)\\nV1 d 0 9\\nR1 g 0 1Meg\\nJ1 d g 0 J1\\n")
    >>> [d.element for d in m.structure.dissipative]
    ['R1', 'J1.gs', 'J1.ds']
    """

    kind = "jfet"
    letters = ("J",)
    terminals = ("drain", "gate", "source")
    values = (Value("Vto", "V", "threshold (pinch-off) voltage", default=-2.0, aliases=("VT0",)),
              Value("Beta", "A/V^2", "transconductance parameter", default=1e-4, check="positive"),
              Value("Lambda", "1/V", "channel-length modulation", default=0.0, check="nonnegative"),
              Value("Is", "A", "gate junction saturation current", default=1e-14, check="positive"),
              Value("B", "", "doping-tail parameter (ngspice; 1: Shichman-Hodges)", default=1.0,
                    check="positive"),
              Value("Pb", "V", "gate junction potential", default=1.0, check="positive"),
              Value("Rd", "ohm", "drain resistance", check="nonnegative", optional=True),
              Value("Rs", "ohm", "source resistance", check="nonnegative", optional=True),
              Value("Cgs", "F", "gate-source capacitance (linear here)", check="nonnegative", optional=True),
              Value("Cgd", "F", "gate-drain capacitance (linear here)", check="nonnegative", optional=True),
              Value("Vt", "V", "thermal voltage", default=0.02585, check="positive"),
              Value("Gmin", "S", "conductance across each junction (SPICE GMIN)", default=1e-12,
                    check="nonnegative"))
    choices = (Choice("polarity", ("njf", "pjf"), "transistor type (set by a .model card's type)"),)
    model = "NJF"
    model_types = ("NJF", "PJF")
    model_ignored = ("LEVEL", "M", "FC", "KF", "AF", "TNOM", "VTOTC", "BETATCE", "XTI", "EG", "N", "ISR",
                     "NR", "ALPHA", "VK", "TCV", "BEX")
    summary = "JFET, n or p channel (SPICE level 1: Shichman-Hodges with ngspice's B, gate junctions, RD/RS)"

    def contribute(self) -> Contribution:
        out = Contribution()
        inner = self.series(out, {"d": "Rd", "s": "Rs"})
        d, g, s = inner["d"], inner["g"], inner["s"]
        sign = 1 if self.n_type else -1
        Is, vt, gmin = self.value("Is"), self.value("Vt"), self.value("Gmin")
        ich = jfet_drain_current(_VGS, _VDS, beta=self.value("Beta"), vto=sign * self.value("Vto"),
                                 lam=self.value("Lambda"), b=self.value("B"), pb=self.value("Pb"))
        igd = _junction(Is, _VGS - _VDS, vt, gmin)
        self.multiport(out, [("gs", g, s, _junction(Is, _VGS, vt, gmin) + igd), ("ds", d, s, ich - igd)],
                       [_VGS, _VDS])
        for tag, node, key in (("cgs", s, "Cgs"), ("cgd", d, "Cgd")):
            c = self.given(key)
            if c is not None:
                self.capacitor(out, tag, g, node, c)
        return out
