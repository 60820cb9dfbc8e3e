"""Bipolar junction transistors: a resistive two-port with junction storages.

A BJT is two dissipative ports of one device, the base-emitter and the
base-collector junctions, whose laws read both junction voltages (a
multiport: :attr:`~phsym.components.base.Dissipation.couples`).  The
device receives ``v_be i_b + v_ce i_c``; see :class:`BJT` for where that is
non-negative.
"""
from __future__ import annotations

from typing import Tuple

import sympy as sp

from .base import EFFORT, P_STORE_EFFORT, Contribution, Storage
from .component import Choice, Value, register
from .junction import junction_storage
from .device import Device
from .element import DATUM

__all__ = ["BJT", "gummel_poon", "base_resistance"]

_VBE = sp.Symbol("v_be", real=True)
_VBC = sp.Symbol("v_bc", real=True)


def gummel_poon(vbe: sp.Expr, vbc: sp.Expr, *, Is, Bf, Br, Nf, Nr, Vt, Gmin, Vaf=None, Var=None, Ikf=None,
                Ikr=None, Ise=None, Ne=None, Isc=None, Nc=None) -> Tuple[sp.Expr, sp.Expr]:
    """Collector and base currents ``(i_c, i_b)`` of SPICE's Gummel-Poon model
    (level 1, static part), flowing into the collector and the base.

    ``i_be = Is (exp(v_be / (Nf Vt)) - 1) + Gmin v_be`` (and ``i_bc`` with
    ``Nr``), the base charge ``q_b = q_1 (1 + sqrt(1 + 4 q_2)) / 2`` with
    ``q_1 = 1 / (1 - v_bc / Vaf - v_be / Var)`` and ``q_2 = i_be / Ikf +
    i_bc / Ikr``; ``i_c = (i_be - i_bc) / q_b - i_bc / Br - i_cn``,
    ``i_b = i_be / Bf + i_en + i_bc / Br + i_cn`` with the leakage currents
    ``i_en = Ise (exp(v_be / (Ne Vt)) - 1)``, ``i_cn = Isc (exp(v_bc / (Nc
    Vt)) - 1)``.  A parameter given as ``None`` is absent (infinite Early
    voltages and knee currents, no leakage): Ebers-Moll.

    Parameters
    ----------
    vbe, vbc : sympy.Expr
        Junction voltages.
    Is, Bf, Br, Nf, Nr, Vt, Gmin : sympy.Expr
        Saturation current, forward and reverse current gains and emission
        coefficients, thermal voltage, conductance across each junction.
    Vaf, Var, Ikf, Ikr, Ise, Ne, Isc, Nc : sympy.Expr or None
        Early voltages, knee currents, leakage saturation currents and their
        emission coefficients.

    Examples
    --------
    >>> import sympy as sp
    >>> ic, ib = gummel_poon(sp.Symbol("vbe"), sp.Symbol("vbc"), Is=1, Bf=100, Br=1, Nf=1, Nr=1, Vt=1, Gmin=0)
    >>> ic
    -2*exp(vbc) + exp(vbe) + 1
    >>> sp.expand(ib)
    exp(vbc) + exp(vbe)/100 - 101/100
    """
    ibe = Is * (sp.exp(vbe / (Nf * Vt)) - 1) + Gmin * vbe
    ibc = Is * (sp.exp(vbc / (Nr * Vt)) - 1) + Gmin * vbc
    ien = sp.Integer(0) if Ise is None else Ise * (sp.exp(vbe / (Ne * Vt)) - 1)
    icn = sp.Integer(0) if Isc is None else Isc * (sp.exp(vbc / (Nc * Vt)) - 1)
    inv = sp.Integer(1) - (0 if Vaf is None else vbc / Vaf) - (0 if Var is None else vbe / Var)
    q2 = (0 if Ikf is None else ibe / Ikf) + (0 if Ikr is None else ibc / Ikr)
    # 1/q_b = (1/q_1) * 2 / (1 + sqrt(1 + 4 q_2)); without knees 1/q_b = 1/q_1
    over_qb = inv if q2 == 0 else inv * 2 / (1 + sp.sqrt(1 + 4 * q2))
    ic = (ibe - ibc) * over_qb - ibc / Br - icn
    ib = ibe / Bf + ien + ibc / Br + icn
    return ic, ib


def base_resistance(i: sp.Expr, vbe: sp.Expr, vbc: sp.Expr, *, Rb, Rbm, Irb=None, Is, Nf, Nr, Vt, Gmin, Vaf=None,
                    Var=None, Ikf=None, Ikr=None) -> sp.Expr:
    """SPICE's base resistance of the base current ``i``: ``RBM + (RB - RBM) / q_b`` (the base
    charge of :func:`gummel_poon`), or with ``IRB`` the current-crowding law ``RBM + 3 (RB -
    RBM) (tan z - z) / (z tan(z)**2)``, ``z = (sqrt(1 + 144 x / pi**2) - 1) / (24 sqrt(x) / pi**2)``,
    ``x = max(i / IRB, 1e-9)``.

    Parameters
    ----------
    i, vbe, vbc : sympy.Expr
        Base current (into the base) and the junction voltages.
    Rb, Rbm, Irb : sympy.Expr
        Zero-bias and minimum base resistance, the current where it is halfway.
    Is, Nf, Nr, Vt, Gmin, Vaf, Var, Ikf, Ikr : sympy.Expr
        As for :func:`gummel_poon`.

    Examples
    --------
    >>> import sympy as sp
    >>> r = base_resistance(sp.Float(1e-12), 0, 0, Rb=100, Rbm=10, Irb=1e-3, Is=1e-16, Nf=1, Nr=1, Vt=0.025, Gmin=0)
    >>> round(float(r), 6)      # no current: RB
    100.0
    """
    if Irb is not None:
        x = sp.Max(i / Irb, 1e-9)
        z = (sp.sqrt(1 + 144 * x / sp.pi ** 2) - 1) / (24 / sp.pi ** 2 * sp.sqrt(x))
        return Rbm + 3 * (Rb - Rbm) * (sp.tan(z) - z) / (z * sp.tan(z) ** 2)
    ibe = Is * (sp.exp(vbe / (Nf * Vt)) - 1) + Gmin * vbe
    ibc = Is * (sp.exp(vbc / (Nr * Vt)) - 1) + Gmin * vbc
    q1 = 1 / (sp.Integer(1) - (0 if Vaf is None else vbc / Vaf) - (0 if Var is None else vbe / Var))
    q2 = (0 if Ikf is None else ibe / Ikf) + (0 if Ikr is None else ibc / Ikr)
    qb = q1 if q2 == 0 else q1 * (1 + sp.sqrt(1 + 4 * q2)) / 2
    return Rbm + (Rb - Rbm) / qb


@register
class BJT(Device):
    """Bipolar transistor ``Q c b e [s] [MODEL] [IS=.. BF=.. ...] [polarity=npn|pnp]`` (SPICE Gummel-Poon, level 1).

    Two dissipative ports of one device, both voltage-controlled: the
    base-emitter junction (branch ``NAME.be``, from base to emitter) and the
    base-collector junction (``NAME.bc``, from base to collector), with
    ``w_NAME.be = v_be`` and ``w_NAME.bc = v_bc`` (``v_eb``, ``v_cb`` for a
    PNP, whose branches run the other way).  The port currents are
    ``i_c + i_b`` (leaving at the emitter) and ``-i_c``, with ``i_c``,
    ``i_b`` from :func:`gummel_poon`.  The device receives

        ``P = v_be i_b + v_ce i_c = (v_be - v_bc)(i_be - i_bc) / q_b
        + v_be (i_be / BF + i_en) + v_bc (i_bc / BR + i_cn)``,

    which is ``>= 0`` (the transistor is passive and takes its power from
    the supply) whenever ``NF = NR`` (then ``i_be - i_bc`` has the sign of
    ``v_be - v_bc``) and ``q_b > 0`` (``v_bc / VAF + v_be / VAR < 1``).
    With ``NF != NR`` it can be slightly negative near ``v_be = v_bc``;
    ``phsym show`` reports the sampled check.

    ``RB``, ``RC``, ``RE`` (given and non-zero) are resistors (branches
    ``NAME.rb`` ...) to internal nodes ``NAME#b`` ...; with ``RBM`` or
    ``IRB`` the base resistance follows :func:`base_resistance` (a passive
    law of the base current that reads the junction voltages).  ``CJS``
    (``VJS``, ``MJS``) is the collector-substrate depletion charge (storage
    ``NAME.cjs``) to the substrate node, the fourth node of ``Q c b e s
    MODEL`` or the datum.  ``CJE``,
    ``CJC`` (depletion) and ``TF``, ``TR`` (diffusion charge ``TF i_be``,
    ``TR i_bc``) are junction storages ``NAME.cje``, ``NAME.cjc`` with
    energy ``int v dq`` (:mod:`phsym.components.junction`); SPICE divides
    the diffusion charge by ``q_b``, here it is not (exact without Early
    voltages and knee currents).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 c 0 5\\nV2 b 0 0.7\\nQ1 c b 0 BF=50\\n")
    >>> [d.element for d in m.structure.dissipative]
    ['Q1.be', 'Q1.bc']
    >>> m.structure.dissipative[1].z.has(m.structure.dissipative[0].w)
    True
    """

    kind = "bjt"
    letters = ("Q",)
    terminals = ("collector", "base", "emitter")
    values = (Value("Is", "A", "transport saturation current", default=1e-16, check="positive"),
              Value("Bf", "", "ideal forward current gain", default=100.0, check="positive"),
              Value("Br", "", "ideal reverse current gain", default=1.0, check="positive"),
              Value("Nf", "", "forward emission coefficient", default=1.0, check="positive"),
              Value("Nr", "", "reverse emission coefficient", default=1.0, check="positive"),
              Value("Vaf", "V", "forward Early voltage (infinite when absent or 0, as SPICE)", check="nonnegative",
                    optional=True, aliases=("VA",)),
              Value("Var", "V", "reverse Early voltage (infinite when absent or 0)", check="nonnegative",
                    optional=True, aliases=("VB",)),
              Value("Ikf", "A", "forward knee current (infinite when absent or 0)", check="nonnegative",
                    optional=True, aliases=("IK",)),
              Value("Ikr", "A", "reverse knee current (infinite when absent or 0)", check="nonnegative",
                    optional=True),
              Value("Ise", "A", "base-emitter leakage saturation current", check="nonnegative",
                    optional=True, aliases=("C2",)),
              Value("Ne", "", "base-emitter leakage emission coefficient (default 1.5)", check="positive",
                    optional=True),
              Value("Isc", "A", "base-collector leakage saturation current", check="nonnegative",
                    optional=True, aliases=("C4",)),
              Value("Nc", "", "base-collector leakage emission coefficient (default 2)", check="positive",
                    optional=True),
              Value("Rb", "ohm", "base resistance (at zero current)", check="nonnegative", optional=True),
              Value("Rbm", "ohm", "minimum base resistance (default RB)", check="nonnegative", optional=True),
              Value("Irb", "A", "base current where the base resistance is halfway to RBM", check="positive",
                    optional=True),
              Value("Rc", "ohm", "collector resistance", check="nonnegative", optional=True),
              Value("Re", "ohm", "emitter resistance", check="nonnegative", optional=True),
              Value("Cje", "F", "base-emitter zero-bias depletion capacitance", check="nonnegative",
                    optional=True),
              Value("Vje", "V", "base-emitter built-in potential (default 0.75)", check="positive",
                    optional=True, aliases=("PE",)),
              Value("Mje", "", "base-emitter grading coefficient (default 0.33)", check="fraction",
                    optional=True, aliases=("ME",)),
              Value("Cjc", "F", "base-collector zero-bias depletion capacitance", check="nonnegative",
                    optional=True),
              Value("Vjc", "V", "base-collector built-in potential (default 0.75)", check="positive",
                    optional=True, aliases=("PC",)),
              Value("Mjc", "", "base-collector grading coefficient (default 0.33)", check="fraction",
                    optional=True, aliases=("MC",)),
              Value("Fc", "", "forward-bias depletion coefficient (default 0.5)", check="fraction",
                    optional=True),
              Value("Cjs", "F", "collector-substrate zero-bias depletion capacitance", check="nonnegative",
                    optional=True, aliases=("CCS", "CSUB")),
              Value("Vjs", "V", "substrate junction built-in potential (default 0.75)", check="positive",
                    optional=True, aliases=("PS",)),
              Value("Mjs", "", "substrate junction grading coefficient (default 0)", check="fraction",
                    optional=True, aliases=("MS",)),
              Value("Tf", "s", "forward transit time", check="nonnegative", optional=True),
              Value("Tr", "s", "reverse transit time", check="nonnegative", optional=True),
              Value("Vt", "V", "thermal voltage", default=0.02585, check="positive"),
              Value("Gmin", "S", "conductance across each junction (SPICE GMIN)", default=1e-12,
                    check="nonnegative"))
    choices = (Choice("polarity", ("npn", "pnp"), "transistor type (set by a .model card's type)"),)
    model = "NPN"
    model_types = ("NPN", "PNP")
    # accepted on .model cards, without an effect here: current-dependent
    # base resistance, transit-time modulation, substrate junction, excess
    # phase, noise, temperature coefficients
    model_ignored = ("XTF", "VTF", "ITF", "PTF", "XCJC",
                     "XTB", "EG", "XTI", "KF", "AF", "TNOM", "LEVEL", "NK", "ISS", "NS", "QUASIMOD", "RCO",
                     "VO", "GAMMA", "QCO", "VG", "CN", "D", "MFG", "VCEO", "ICRATING", "IAVE", "VCEMAX",
                     "IB", "TYPE", "BVCBO", "BVBE", "TRE1", "TRE2", "TRB1", "TRB2", "TRC1", "TRC2",
                     "TRM1", "TRM2", "TBF1", "TBF2", "TBR1", "TBR2", "TIKF1", "TIKF2", "TIKR1", "TIKR2",
                     "TIRB1", "TIRB2", "TNC1", "TNC2", "TNE1", "TNE2", "TNF1", "TNF2", "TNR1", "TNR2",
                     "TVAF1", "TVAF2", "TVAR1", "TVAR2", "CTC", "CTE", "CTS", "TVJC", "TVJE", "TVJS",
                     "TITF1", "TITF2", "TTF1", "TTF2", "TTR1", "TTR2", "TMJE1", "TMJE2", "TMJC1", "TMJC2",
                     "TMJS1", "TMJS2", "TNS1", "TNS2", "TIS1", "TIS2", "TISE1", "TISE2", "TISC1", "TISC2",
                     "TLEV", "TLEVC", "NKF", "AREA", "AREAB", "AREAC", "BVBC", "BVCE")
    summary = "bipolar transistor, NPN or PNP (SPICE Gummel-Poon level 1: Early, knee, leakage, RB/RC/RE, junction charge)"

    optional_terminals = ("substrate",)

    def contribute(self) -> Contribution:
        out = Contribution()
        inner = self.series(out, {"c": "Rc", "b": "Rb", "e": "Re"})
        val = {k: self.given(k) for k in ("Vaf", "Var", "Ikf", "Ikr", "Ise", "Isc")}
        Is, Nf, Nr, Vt, gmin = (self.value(k) for k in ("Is", "Nf", "Nr", "Vt", "Gmin"))
        self._modulated_base(out, inner, Is, Nf, Nr, Vt, gmin, val)
        self._substrate(out, inner["c"])
        ic, ib = gummel_poon(_VBE, _VBC, Is=Is, Bf=self.value("Bf"), Br=self.value("Br"), Nf=Nf, Nr=Nr, Vt=Vt,
                             Gmin=gmin, Ne=self.opt("Ne", 1.5), Nc=self.opt("Nc", 2.0), **val)
        b, c, e = inner["b"], inner["c"], inner["e"]
        self.multiport(out, [("be", b, e, ic + ib), ("bc", b, c, -ic)], [_VBE, _VBC])
        fc = self.opt("Fc", 0.5)
        for tag, node, cj, vj, mj, tt, n in (("e", e, "Cje", "Vje", "Mje", "Tf", Nf),
                                             ("c", c, "Cjc", "Vjc", "Mjc", "Tr", Nr)):
            cap, tau = self.given(cj), self.given(tt)
            if (cap is None and tau is None) or node == b:      # a shorted junction stores nothing
                continue
            br = self.branch("storage", P_STORE_EFFORT, nodes=(b, node) if self.n_type else (node, b),
                             suffix=f".cj{tag}")
            q = sp.Symbol(f"q_{br.name}", real=True)
            H, law = junction_storage(q, sp.Integer(0) if cap is None else cap, self.opt(vj, 0.75),
                                      self.opt(mj, 0.33), fc, sp.Integer(0) if tau is None else tau, Is, n * Vt, gmin,
                                      sp.Integer(1), sp.Integer(0))
            out.branches.append(br)
            out.storages.append(Storage((br.name,), (q,), H, (br.name,), (EFFORT,), (None,), quadratic=False,
                                        by_effort=law, stiff=True))
        return out

    def _modulated_base(self, out: Contribution, inner, Is, Nf, Nr, Vt, gmin, val) -> None:
        """The base resistor's law with ``RBM`` (and ``IRB``): :func:`base_resistance`."""
        rb, rbm, irb = self.given("Rb"), self.given("Rbm"), self.given("Irb")
        if rb is None or (rbm is None and irb is None):
            return
        d = next(d for d in out.dissipations if d.branch == f"{self.name}.rb")
        i = d.variable
        law = base_resistance(i, _VBE, _VBC, Rb=rb, Rbm=rbm if rbm is not None else rb, Irb=irb, Is=Is, Nf=Nf,
                              Nr=Nr, Vt=Vt, Gmin=gmin, **{k: val[k] for k in ("Vaf", "Var", "Ikf", "Ikr")}) * i
        b = inner["b"]
        ports = {_VBE: (f"{self.name}.be", inner["e"]), _VBC: (f"{self.name}.bc", inner["c"])}
        law = law.xreplace({v: 0 for v, (_name, node) in ports.items() if node == b})
        d.law, d.linear = law, False
        d.couples = tuple((v, name) for v, (name, node) in ports.items() if law.has(v))

    def _substrate(self, out: Contribution, collector: str) -> None:
        """The collector-substrate depletion charge ``CJS`` (substrate: the fourth node, else the datum)."""
        cap = self.given("Cjs")
        sub = self.spec.nodes[3] if len(self.spec.nodes) > 3 else DATUM
        if cap is None or sub == collector:
            return
        br = self.branch("storage", P_STORE_EFFORT, nodes=(sub, collector) if self.n_type else (collector, sub),
                         suffix=".cjs")
        q = sp.Symbol(f"q_{br.name}", real=True)
        H, law = junction_storage(q, cap, self.opt("Vjs", 0.75), self.opt("Mjs", 0.0), sp.Integer(0), sp.Integer(0),
                                  self.value("Is"), self.value("Vt"), self.value("Gmin"), sp.Integer(1), sp.Integer(0))
        out.branches.append(br)
        out.storages.append(Storage((br.name,), (q,), H, (br.name,), (EFFORT,), (None,), quadratic=False,
                                    by_effort=law, stiff=True))
