"""Field-effect transistors: MOSFET (SPICE level 1) and JFET (SPICE level 1).

Each is a resistive multiport (gate-source and drain-source ports, plus
bulk-source for a MOSFET whose bulk is not tied to its source) whose
drain current reads every port voltage; see the classes for the power they
receive, which is never negative.
"""
from __future__ import annotations

import warnings

import sympy as sp

from ..errors import NetlistWarning
from .base import EFFORT, P_STORE_EFFORT, Contribution, Storage
from .component import Choice, Value, register
from .device import Device
from .junction import junction_storage

__all__ = ["MOSFET", "JFET", "shichman_hodges", "jfet_drain_current", "level1_parameters"]

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


#: ngspice's constants for the level-1 derivation (q [C], permittivity of vacuum [F/m])
_Q, _EPS0 = 1.6021766208e-19, 8.854214871e-12
_DERIVED_FROM = ("Vto", "Kp", "Gamma", "Phi", "Tox", "Uo", "Nsub", "Nss", "Tpg")


def level1_parameters(given, sign: int, number, tnom: float = 27.0) -> dict:
    """``KP``, ``PHI``, ``GAMMA``, ``VTO`` of a level-1 MOSFET as SPICE derives them (at ``TNOM``).

    With ``TOX``: ``Cox = 3.9 eps0 / TOX`` and ``KP = UO Cox 1e-4`` (``UO``
    600 cm^2/Vs by default); with ``NSUB`` (cm^-3) too: ``PHI = 2 Vt
    ln(NSUB / 1.45e10)`` (at least 0.1), ``GAMMA = sqrt(2 eps_si q NSUB) /
    Cox`` and ``VTO = VFB + type (GAMMA sqrt(PHI) + PHI)`` with the flat-band
    voltage of the gate type ``TPG`` and the surface states ``NSS``.  Given
    values win; without ``TOX`` the defaults are ``KP = 2e-5``, ``PHI =
    0.6``, ``GAMMA = VTO = 0``.

    Parameters
    ----------
    given : dict of str to (sympy.Expr or None)
        ``Vto Kp Gamma Phi Tox Uo Nsub Nss Tpg`` as given (None: not given).
    sign : int
        ``+1`` for n-type, ``-1`` for p-type.
    number : callable
        A given value as a number (at the default parameters).
    tnom : float
        Nominal temperature [degrees Celsius].

    Examples
    --------
    >>> p = level1_parameters(dict(Tox=1e-7, Uo=550, Nsub=1e15), 1, float)
    >>> [round(float(p[k]), 6) for k in ("Kp", "Phi", "Gamma", "Vto")]
    [1.9e-05, 0.576341, 0.527623, 0.131183]
    """
    from ..common.physics import BOLTZMANN_OVER_Q, KELVIN
    g = {k: (None if given.get(k) is None else sp.sympify(given[k])) for k in _DERIVED_FROM}
    out = {"Kp": g["Kp"], "Phi": g["Phi"], "Gamma": g["Gamma"], "Vto": g["Vto"]}
    if g["Tox"] is not None and number(g["Tox"]) > 0:
        cox = 3.9 * _EPS0 / g["Tox"]
        if out["Kp"] is None:
            out["Kp"] = (g["Uo"] if g["Uo"] is not None else 600) * cox * 1e-4
        if g["Nsub"] is not None:
            t = tnom + KELVIN
            vtnom, egfet = t * BOLTZMANN_OVER_Q, 1.16 - 7.02e-4 * t * t / (t + 1108)
            if out["Phi"] is None:
                out["Phi"] = sp.Max(0.1, 2 * vtnom * sp.log(g["Nsub"] * 1e6 / 1.45e16))
            tpg = g["Tpg"] if g["Tpg"] is not None else 1
            wkfng = 3.2 if number(tpg) == 0 else 3.25 + 0.5 * egfet - sign * tpg * 0.5 * egfet
            wkfngs = wkfng - (3.25 + 0.5 * egfet + sign * 0.5 * out["Phi"])
            if out["Gamma"] is None:
                out["Gamma"] = sp.sqrt(2 * 11.70 * _EPS0 * _Q * g["Nsub"] * 1e6) / cox
            if out["Vto"] is None:
                nss = g["Nss"] if g["Nss"] is not None else 0
                vfb = wkfngs - nss * 1e4 * _Q / cox
                out["Vto"] = vfb + sign * (out["Gamma"] * sp.sqrt(out["Phi"]) + out["Phi"])
    defaults = {"Kp": 2e-5, "Phi": 0.6, "Gamma": 0.0, "Vto": 0.0}
    return {k: sp.Float(defaults[k]) if v is None else v for k, v in out.items()}


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
    passive.  ``KP``, ``PHI``, ``GAMMA``, ``VTO`` are derived from ``TOX``,
    ``UO``, ``NSUB``, ``NSS``, ``TPG`` as SPICE does (:func:`level1_parameters`).
    ``CGSO``, ``CGDO``, ``CGBO`` (per metre of width) give linear
    gate capacitances ``W CGSO`` ... (storages ``NAME.cgs``...).  The bulk
    junctions store SPICE's depletion charge (storages ``NAME.cbd``,
    ``NAME.cbs``, from the bulk for n-type) of ``CBD`` (or ``CJ AD``) plus
    ``CJSW PD`` (``CBS``, ``AS``, ``PS`` for the source) with ``PB``, ``MJ``,
    ``FC``; one charge law per junction, so the sidewall's grading is ``MJ``
    (a warning when ``MJSW`` differs).  Meyer's gate capacitances (from
    ``TOX``) are not charge-conserving, so no energy is theirs: they are not
    modelled (a warning says so).  ``RD``, ``RS`` are series resistors to
    internal nodes.

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
    values = (Value("Vto", "V", "zero-bias threshold voltage (default 0, or from NSUB with TOX)", optional=True,
                    aliases=("VT0",)),
              Value("Kp", "A/V^2", "transconductance parameter (default 2e-5, or UO TOX)", check="positive",
                    optional=True),
              Value("Lambda", "1/V", "channel-length modulation", default=0.0, check="nonnegative"),
              Value("Gamma", "V^0.5", "body-effect coefficient (default 0, or from NSUB with TOX)",
                    check="nonnegative", optional=True),
              Value("Phi", "V", "surface potential (default 0.6, or from NSUB with TOX)", check="positive",
                    optional=True),
              Value("Tox", "m", "oxide thickness (derives KP, and GAMMA, PHI, VTO with NSUB)", check="nonnegative",
                    optional=True),
              Value("Uo", "cm^2/Vs", "surface mobility (default 600 with TOX)", check="positive", optional=True,
                    aliases=("U0",)),
              Value("Nsub", "1/cm^3", "substrate doping", check="positive", optional=True),
              Value("Nss", "1/cm^2", "surface state density", optional=True),
              Value("Tpg", "", "gate material: 1 opposite to the substrate, -1 same, 0 aluminium", optional=True),
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
              Value("Cbd", "F", "zero-bias bulk-drain junction capacitance", check="nonnegative", optional=True),
              Value("Cbs", "F", "zero-bias bulk-source junction capacitance", check="nonnegative", optional=True),
              Value("Cj", "F/m^2", "bulk junction bottom capacitance per area (with AD, AS)", check="nonnegative",
                    optional=True),
              Value("Cjsw", "F/m", "bulk junction sidewall capacitance per perimeter (with PD, PS)",
                    check="nonnegative", optional=True),
              Value("Mj", "", "bulk junction bottom grading coefficient", default=0.5, check="fraction"),
              Value("Mjsw", "", "bulk junction sidewall grading coefficient (MJ is used)", default=0.5,
                    check="fraction"),
              Value("Pb", "V", "bulk junction potential", default=0.8, check="positive"),
              Value("Fc", "", "forward-bias depletion coefficient", default=0.5, check="fraction"),
              Value("Ad", "m^2", "drain area", default=0.0, check="nonnegative"),
              Value("As", "m^2", "source area", default=0.0, check="nonnegative"),
              Value("Pd", "m", "drain perimeter", default=0.0, check="nonnegative"),
              Value("Ps", "m", "source perimeter", default=0.0, check="nonnegative"),
              Value("Vt", "V", "thermal voltage", default=0.02585, check="positive"),
              Value("Gmin", "S", "conductance across each port (SPICE GMIN)", default=1e-12,
                    check="nonnegative"))
    choices = (Choice("polarity", ("nmos", "pmos"), "transistor type (set by a .model card's type)"),)
    model = "NMOS"
    model_types = ("NMOS", "PMOS")
    # accepted on .model cards, without an effect here: Meyer and junction
    # capacitances, oxide and process parameters, noise, temperature
    model_ignored = ("LEVEL", "JS", "RSH",
                     "KF", "AF", "TNOM", "XJ", "NFS", "VMAX", "NEFF",
                     "UCRIT", "UEXP", "UTRA", "DELTA", "THETA", "ETA", "KAPPA", "XQC")
    summary = "MOSFET, n or p (SPICE level 1 Shichman-Hodges: body effect, CLM, bulk diodes, overlap capacitances)"

    def contribute(self) -> Contribution:
        out = Contribution()
        inner = self.series(out, {"d": "Rd", "s": "Rs"})
        d, g, s, b = inner["d"], inner["g"], inner["s"], inner["b"]
        sign = 1 if self.n_type else -1
        length = self.value("L") - (2 * self.given("Ld") if self.given("Ld") is not None else 0)
        derived = level1_parameters({k: self.spec.values.get(k) for k in _DERIVED_FROM}, sign,
                                    lambda e: float(sp.sympify(e).xreplace(self.defaults)))
        beta = derived["Kp"] * self.value("W") / length
        Is, vt, gmin = self.value("Is"), self.value("Vt"), self.value("Gmin")
        tied = b == s
        vbs = sp.Integer(0) if tied else _VBS
        ich = shichman_hodges(_VGS, _VDS, vbs, beta=beta, vto=sign * derived["Vto"], lam=self.value("Lambda"),
                              gamma=derived["Gamma"], phi=derived["Phi"])
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
        for tag, node, whole, area, perimeter in (("cbd", d, "Cbd", "Ad", "Pd"), ("cbs", s, "Cbs", "As", "Ps")):
            cap = self.given(whole)
            bottom, side = self.given("Cj"), self.given("Cjsw")
            cap = cap if cap is not None else (bottom * self.value(area) if bottom is not None else None)
            if side is not None:
                cap = side * self.value(perimeter) + (cap if cap is not None else 0)
            if cap is not None and node != b:
                self._bulk_junction(out, tag, b, node, cap, Is, vt, gmin)
        self._warn()
        return out

    def _warn(self) -> None:
        notes = []
        if self.given("Cjsw") is not None and self.value("Mjsw").xreplace(self.defaults) != \
                self.value("Mj").xreplace(self.defaults):
            notes.append("its sidewall junction charge is graded with MJ, not MJSW")
        if self.given("Tox") is not None:
            notes.append("Meyer's gate capacitances (TOX) are not modelled: not charge-conserving, they store no "
                         "energy (the overlap capacitances CGSO, CGDO, CGBO are)")
        if notes:
            warnings.warn(f"MOSFET {self.name}: " + "; ".join(notes) + " (see docs/spice-compatibility.md)",
                          NetlistWarning, stacklevel=2)

    def _bulk_junction(self, out: Contribution, tag: str, bulk: str, node: str, cap: sp.Expr, Is: sp.Expr,
                       vt: sp.Expr, gmin: sp.Expr) -> None:
        """SPICE's depletion charge of a bulk junction (bottom and sidewall together, grading ``MJ``)."""
        br = self.branch("storage", P_STORE_EFFORT, nodes=(bulk, node) if self.n_type else (node, bulk),
                         suffix=f".{tag}")
        q = sp.Symbol(f"q_{br.name}", real=True)
        H, law = junction_storage(q, cap, self.value("Pb"), self.value("Mj"), self.value("Fc"), sp.Integer(0), Is,
                                  vt, gmin, sp.Integer(1), sp.Integer(0))
        out.branches.append(br)
        out.storages.append(Storage((br.name,), (q,), H, (br.name,), (EFFORT,), (None,), quadratic=False,
                                    by_effort=law, stiff=True))


@register
class JFET(Device):
    """JFET ``J d g s [MODEL] [VTO=.. BETA=.. LAMBDA=.. IS=..] [polarity=njf|pjf]`` (SPICE level 1).

    Two dissipative ports of one device: gate-source (branch ``NAME.gs``:
    the gate-source and gate-drain junction currents, ``IS (exp(v / Vt) -
    1) + GMIN v`` each) and drain-source (``NAME.ds``: the channel current
    of :func:`jfet_drain_current` minus the gate-drain junction current).
    A p-channel device (``PJF`` card) has both branches reversed (``v_sg``,
    ``v_sd``) with the same ``VTO`` (SPICE's convention: a depletion JFET
    has ``VTO < 0`` whatever its channel; a MOSFET's ``VTO`` is mirrored
    instead).  The device receives

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
        Is, vt, gmin = self.value("Is"), self.value("Vt"), self.value("Gmin")
        # SPICE's VTO of a p-channel JFET is the n-channel one (depletion: negative), not mirrored
        ich = jfet_drain_current(_VGS, _VDS, beta=self.value("Beta"), vto=self.value("Vto"),
                                 lam=self.value("Lambda"), b=self.value("B"), pb=self.value("Pb"))
        igd = _junction(Is, _VGS - _VDS, vt, gmin)
        self.multiport(out, [("gs", g, s, _junction(Is, _VGS, vt, gmin) + igd), ("ds", d, s, ich - igd)],
                       [_VGS, _VDS])
        for tag, node, key in (("cgs", s, "Cgs"), ("cgd", d, "Cgd")):
            c = self.given(key)
            if c is not None:
                self.capacitor(out, tag, g, node, c)
        return out
