"""Dissipative components: one resistive port each, ``w z(w) >= 0``."""
from __future__ import annotations

from typing import Dict, Mapping

import numpy as np
import sympy as sp

from ..common.physics import KELVIN, thermal_voltage
from ..errors import StructureError
from .analogy import Mechanical
from .base import EFFORT, P_CCR, P_LINEAR, P_STORE_EFFORT, P_VCR, Contribution, Dissipation, Storage
from .component import Component, LawForm, Value, register
from .junction import breakdown_current, junction_storage

__all__ = ["check_passive", "Resistor", "Diode", "Damper", "RotationalDamper"]

_V = sp.Symbol("v", real=True)
_I = sp.Symbol("i", real=True)


def check_passive(name: str, law: sp.Expr, var: sp.Symbol, defaults: Mapping[sp.Symbol, float]) -> None:
    """Raise :class:`StructureError` unless ``var * law(var) >= 0``.

    Decided symbolically when sympy can, else on a logarithmic grid of both
    signs at the default parameter values.

    Parameters
    ----------
    name : str
        Element name (for the message).
    law : sympy.Expr
        The law in ``var``.
    var : sympy.Symbol
        Its variable.
    defaults : mapping of sympy.Symbol to float
        Parameter values.
    """
    power = sp.expand(var * law)
    numeric = power.subs({s: v for s, v in defaults.items()})
    if numeric.free_symbols - {var}:
        missing = sorted(str(s) for s in numeric.free_symbols - {var})
        raise StructureError(f"law of {name} uses unknown symbols {missing}", [name])
    try:
        nonneg = sp.ask(sp.Q.nonnegative(numeric), sp.Q.real(var))
    except Exception:  # sympy's assumption system may give up on any expression
        nonneg = None
    if nonneg:
        return
    f = sp.lambdify(var, numeric, modules="numpy")
    grid = np.concatenate([-np.logspace(-9, 3, 200), [0.0], np.logspace(-9, 3, 200)])
    with np.errstate(all="ignore"):
        vals = np.asarray(f(grid), dtype=float) * np.ones_like(grid)
    finite = np.isfinite(vals)
    bad = finite & (vals < -1e-12 * np.maximum(1.0, np.abs(vals).max(initial=0)))
    if bad.any():
        w = grid[np.argmax(bad)]
        raise StructureError(
            f"dissipation law of {name} is not passive: w*z(w) = {vals[np.argmax(bad)]:.3g} < 0 "
            f"at {var} = {w:.3g}", [name],
            hint="a resistive law must satisfy w * z(w) >= 0 (it may only absorb power)")


@register
class Resistor(Component):
    """Resistor ``R n+ n- value``, ``R n+ n- I={f(v)}`` or ``V={g(i)}``.

    Linear: ``v = R i`` (receiver convention).  ``I={f(v)}`` is
    voltage-controlled (``i = f(v)``), ``V={g(i)}`` current-controlled.
    Dissipated power ``v i >= 0`` (checked for nonlinear laws).

    Examples
    --------
    Each dissipative port has a variable ``w`` and a law ``z(w)``:

    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nR1 a b 1k\\nR2 b 0 I={v/100 + v**3}\\n")
    >>> [(d.element, d.z) for d in m.structure.dissipative]
    [('R1', R1*w_R1), ('R2', w_R2**3 + w_R2/100)]
    """

    kind = "resistor"
    letters = ("R",)
    values = (Value("R", "ohm", "resistance", main=True, check="positive"),)
    laws = (LawForm("I", "v", "current [A] of the voltage v [V] (voltage-controlled)"),
            LawForm("V", "i", "voltage [V] of the current i [A] (current-controlled)"))
    summary = "resistor (linear, or a passive law i = f(v) or v = g(i))"

    def contribute(self) -> Contribution:
        law = self.spec.law
        if law is None:
            R = self.value("R")
            d = Dissipation(self.name, self.name, "through", None, _I, True, coefficient=R)     # law R i on first read
            prio = P_LINEAR
        else:
            control = "across" if law.key == "I" else "through"
            linear = sp.degree(law.expr, law.variable) == 1 if law.expr.is_polynomial(law.variable) else False
            linear = linear and sp.simplify(law.expr.subs(law.variable, 0)) == 0
            check_passive(self.name, law.expr, law.variable, self.defaults)
            d = Dissipation(self.name, self.name, control, law.expr, law.variable, bool(linear))
            prio = P_LINEAR if linear else (P_VCR if control == "across" else P_CCR)
        return Contribution(branches=[self.branch("dissipation", prio)], dissipations=[d])


@register
class Diode(Component):
    """Junction diode ``D anode cathode [MODEL] [IS=.. N=.. VT=.. RS=.. CJO=.. TT=.. BV=..]`` (SPICE level 1).

    Voltage-controlled: ``i = Is (exp(v / (N Vt)) - 1) + Gmin v`` with
    ``v = e(anode) - e(cathode)``; thermal voltage ``Vt`` defaults to
    25.85 mV.  ``Gmin`` (default 1e-12 S, SPICE's GMIN, set for the whole
    deck by ``.options GMIN=``) is a conductance across the junction, as in
    SPICE: it keeps a floating node defined when every diode is off (a
    bridge rectifier), so Newton's Jacobian stays regular; its power
    ``Gmin v**2`` is part of the diode's dissipation.  Dissipated power
    ``v i >= 0``.  A series resistance ``RS``
    (given and non-zero) puts the junction between an internal node
    ``NAME#j`` and the cathode, and a linear resistor (branch ``NAME.rs``)
    between the anode and that node; ``i(NAME)`` is the diode current and
    ``v(NAME)`` the junction voltage.

    Reverse breakdown (``BV`` given): the law gains the passive term
    ``-IBV (exp(-(v + BV) / (N Vt)) - exp(-BV / (N Vt)))`` (``-IBV`` at
    ``v = -BV``; ``IBV`` defaults to 1 mA).  Depletion capacitance
    (``CJO`` given and non-zero; ``VJ`` default 1 V, ``M`` 0.5, ``FC``
    0.5): a nonlinear storage across the junction (element and branch
    ``NAME.cj``, state ``q_NAME.cj``, the depletion charge) whose energy
    ``H(q) = int v dq`` is SPICE's charge law inverted in closed form
    (:mod:`phsym.components.junction`), so the energy balance stays exact.
    Transit time (``TT`` given and non-zero): the same storage holds the
    whole junction charge ``q_dep(v) + TT i(v)``, with ``H = Q v - Phi(v)``
    and ``v(Q)`` computed by a safeguarded Newton iteration.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("V1 a 0\\nR1 a b 1k\\nD1 b 0 Is=1n N=2\\n")
    >>> m.structure.dissipative[1].z
    D1.Gmin*w_D1 + D1.Is*(exp(w_D1/(D1.N*D1.Vt)) - 1)
    >>> phsym.parse("V1 a 0\\nR1 a b 1k\\nD1 b 0 CJO=2p\\n").states
    ['q_D1.cj']
    """

    kind = "diode"
    letters = ("D",)
    terminals = ("anode", "cathode")
    values = (Value("Is", "A", "saturation current", default=1e-14, check="positive"),
              Value("N", "", "emission coefficient", default=1.0, check="positive"),
              Value("Vt", "V", "thermal voltage", default=0.02585, check="positive"),
              Value("Gmin", "S", "conductance across the junction (SPICE GMIN)", default=1e-12,
                    check="nonnegative"),
              Value("Rs", "ohm", "series resistance (internal node when given and non-zero)",
                    check="nonnegative", optional=True),
              Value("Cjo", "F", "zero-bias depletion capacitance (a storage when given and non-zero)",
                    check="nonnegative", optional=True, aliases=("CJ0", "CJ")),
              Value("Vj", "V", "junction potential (default 1)", check="positive", optional=True,
                    aliases=("PB",)),
              Value("Mj", "", "grading coefficient, 0 <= M < 1 (default 0.5)", check="fraction",
                    model_key="M", optional=True, aliases=("MJ",)),
              Value("Fc", "", "forward-bias depletion coefficient, 0 <= FC < 1 (default 0.5)",
                    check="fraction", optional=True),
              Value("Bv", "V", "reverse breakdown voltage (breakdown modelled when given)", check="positive",
                    optional=True),
              Value("Ibv", "A", "current at the breakdown voltage (default 1e-3)", check="positive",
                    optional=True, aliases=("IB",)),
              Value("Tt", "s", "transit time: diffusion charge TT i(v) (with the depletion charge when "
                    "given and non-zero)", check="nonnegative", optional=True))
    model = "D"
    # SPICE level-1 (and ngspice level-1 extension) parameters without an
    # effect here: noise, high
    # injection, temperature coefficients, sidewall and recombination terms
    model_ignored = ("FCS", "NBV", "IBVL", "NBVL", "KF", "AF", "TRS", "TRS1", "TRS2", "TBV1",
                     "TBV2", "TM1", "TM2", "TTT1", "TTT2", "CJP", "CJSW", "PHP", "MJSW", "CTA", "CTP", "TPB",
                     "TPHP", "JSW", "ISW", "NS", "ISR", "NR", "IKF", "IK", "IKR", "TIKF", "LEVEL", "AREA",
                     "PJ", "DSKIP", "RSW", "TLEV", "TLEVC", "GAP1", "GAP2",
                     # vendors' data in LTspice libraries (ratings, maker, kind)
                     "IAVE", "VPK", "IPK", "IRMS", "MFG", "TYPE")
    model_temperature = ("TNOM", "EG", "XTI")
    summary = "junction diode (SPICE level 1: Shockley law, RS, GMIN, junction charge CJO/TT, breakdown)"

    @classmethod
    def at_temperature(cls, symbols: Mapping[str, sp.Expr], card: Mapping[str, float], temp: float,
                       tnom: float) -> Dict[str, sp.Expr]:
        """SPICE level 1: ``IS(T) = IS (T/Tnom)**(XTI/N) exp((T/Tnom - 1) EG / (N k T / q))``.

        ``EG`` defaults to 1.11 eV, ``XTI`` to 3, the card's ``TNOM`` to the
        deck's; nothing changes when ``T = Tnom``.

        Parameters
        ----------
        symbols : mapping of str to sympy.Expr
            The card's values by key.
        card : mapping of str to float
            ``TNOM``, ``EG``, ``XTI`` as given on the card.
        temp : float
            Circuit temperature [degrees Celsius].
        tnom : float
            The deck's nominal temperature [degrees Celsius].
        """
        t_nom = card.get("TNOM", tnom)
        if t_nom == temp:
            return {}
        ratio = (temp + KELVIN) / (t_nom + KELVIN)
        eg, xti, n = card.get("EG", 1.11), card.get("XTI", 3.0), symbols["N"]
        factor = sp.Float(ratio) ** (xti / n) * sp.exp((ratio - 1) * eg / (n * thermal_voltage(temp)))
        return {"Is": symbols["Is"] * factor}

    def _given(self, key: str):
        """The value ``key`` when given and non-zero at the default parameters, else None."""
        val = self.spec.values.get(key)
        if val is None or sp.sympify(val).xreplace(self.defaults) == 0:
            return None
        return sp.sympify(val)

    def _optional(self, key: str, default: float) -> sp.Expr:
        val = self.spec.values.get(key)
        return sp.Float(default) if val is None else sp.sympify(val)

    def contribute(self) -> Contribution:
        Is, N, Vt, gmin = self.value("Is"), self.value("N"), self.value("Vt"), self.value("Gmin")
        law = Is * (sp.exp(_V / (N * Vt)) - 1) + gmin * _V
        bv = self._given("Bv")
        if bv is not None:
            law += breakdown_current(_V, bv, self._optional("Ibv", 1e-3), N * Vt)
        d = Dissipation(self.name, self.name, "across", law, _V, False)
        anode, cathode = self.spec.nodes
        out = Contribution()
        rs = self._given("Rs")
        inner = cathode
        if rs is None:
            inner = anode
            out.branches.append(self.branch("dissipation", P_VCR))
            out.dissipations.append(d)
        else:
            inner = f"{self.name}#j"
            series = self.branch("dissipation", P_LINEAR, nodes=(anode, inner), suffix=".rs")
            # its own port name (w_D1.rs), so the two laws keep distinct variables
            r = Dissipation(series.name, series.name, "through", None, _I, True, coefficient=rs)
            out.branches += [self.branch("dissipation", P_VCR, nodes=(inner, cathode)), series]
            out.dissipations += [d, r]
        cjo, tt = self._given("Cjo"), self._given("Tt")
        if cjo is not None or tt is not None:
            cap = self.branch("storage", P_STORE_EFFORT, nodes=(inner, cathode), suffix=".cj")
            q = sp.Symbol(f"q_{cap.name}", real=True)
            dep = (sp.Integer(0) if cjo is None else cjo, self._optional("Vj", 1.0), self._optional("Mj", 0.5),
                   self._optional("Fc", 0.5))
            # H(Q) = Q v - Phi(v) through compiled kernels: v(Q) in closed form
            # without TT, by a safeguarded Newton with it (components/junction.py);
            # the same H as depletion_energy's expression, with a fraction of its code
            H, law = junction_storage(q, *dep, sp.Integer(0) if tt is None else tt, Is, N * Vt, gmin,
                                      sp.Integer(1) if bv is None else bv,
                                      sp.Integer(0) if bv is None else self._optional("Ibv", 1e-3))
            out.branches.append(cap)
            out.storages.append(Storage((cap.name,), (q,), H, (cap.name,), (EFFORT,), (None,), quadratic=False,
                                        by_effort=law, stiff=True))
        return Contribution(branches=out.branches, storages=out.storages, dissipations=out.dissipations)


@register
class Damper(Mechanical, Component):
    """Damper ``B1 a b damper c=0.5 [analogy=impedance]``: force ``F = c
    (v(a) - v(b))`` transmitted from ``a`` to ``b``; dissipates ``c v**2``.
    In the impedance analogy ``e(a) - e(b)`` is the force and the velocity
    ``F / c`` flows through it.

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("F1 v 0 force\\nM1 v 0 mass m=4\\nB1 v 0 damper c=2\\n")
    >>> m.structure.dissipative[0].z
    B1*w_B1
    """

    kind = "damper"
    keywords = ("damper",)
    domain = "translational"
    terminals = ("a", "b")
    values = (Value("c", "N s/m", "damping coefficient", main=True, check="positive"),)
    summary = "linear damper between two velocity nodes"

    def contribute(self) -> Contribution:
        c = self.value("c")
        d = Dissipation(self.name, self.name, "across", _V / c if self.impedance else c * _V, _V, True)
        return Contribution(branches=[self.branch("dissipation", P_LINEAR)], dissipations=[d])


@register
class RotationalDamper(Damper):
    """Rotational damper ``B1 a b rdamper c=0.1``: torque ``c (w(a) - w(b))``."""

    kind = "rdamper"
    keywords = ("rdamper",)
    domain = "rotational"
    values = (Value("c", "N m s/rad", "damping coefficient", main=True, check="positive"),)
    summary = "linear rotational damper between two angular-velocity nodes"
