"""SPICE level-1 diode junction laws in port-Hamiltonian form: the depletion
charge as a storage with its energy, the reverse breakdown as a passive
dissipative term.

Depletion charge (SPICE level 1, grading ``M``, contact potential ``VJ``,
forward-bias coefficient ``FC``)::

    q(v) = CJO VJ / (1 - M) (1 - (1 - v/VJ)**(1 - M))                 v < FC VJ
    q(v) = q(FC VJ) + CJO / F2 (F3 (v - FC VJ) + M / (2 VJ) (v**2 - (FC VJ)**2))   above

with ``F2 = (1 - FC)**(1 + M)``, ``F3 = 1 - FC (1 + M)``; ``dq/dv`` is
``CJO (1 - v/VJ)**-M`` below ``FC VJ`` and its tangent line above, so
``q(v)`` is increasing and invertible.  A storage needs the energy as a
function of its state, the charge: :func:`depletion_energy` inverts
``q(v)`` in closed form on both pieces and integrates ``H(q) = int_0^q
v(s) ds`` (so ``dH/dq = v`` exactly and the discrete power balance stays
exact).  With ``a = (1 - M)`` and ``Q0 = CJO VJ / a``::

    v(q) = VJ (1 - (1 - q/Q0)**(1/a))
    H(q) = VJ q - CJO VJ**2 / (2 - M) (1 - (1 - q/Q0)**((2 - M)/a))            q < q(FC VJ)

and above, with ``dv = v - FC VJ = 2 D / (B + sqrt(B**2 + 4 A D))``, ``D = q -
q(FC VJ)``, ``A = CJO M / (2 VJ F2)``, ``B = CJO (1 - FC) / F2``::

    H(q) = H(q_fc) + CJO / F2 (F3 (v**2 - vf**2) / 2 + M (v**3 - vf**3) / (3 VJ)).

The diode's storage is the sympy function :class:`JunctionEnergy` (``H =
Q v - Phi(v)``, the same energy written through the voltage), which
generated loops evaluate with compiled kernels: far less code to compile
than the expanded expression, and it also holds the transit-time charge.
"""
from __future__ import annotations

import sympy as sp

from .base import EffortLaw
from .junction_charge import charge_energy, charge_energy_from, charge_voltage

__all__ = ["depletion_energy", "depletion_charge", "breakdown_current", "JunctionVoltage", "JunctionEnergy",
           "JunctionEnergyAt", "JunctionEnergyFrom", "energy_from", "energies_from", "charge_law", "junction_storage"]


def depletion_charge(v, cjo, vj, m, fc):
    """SPICE's depletion charge ``q(v)`` (a sympy expression, for tests and docs).

    Parameters
    ----------
    v : sympy.Expr
        Junction voltage.
    cjo, vj, m, fc : sympy.Expr
        Zero-bias capacitance, contact potential, grading coefficient,
        forward-bias coefficient.
    """
    a = 1 - m
    vf = fc * vj
    f2, f3 = (1 - fc) ** (1 + m), 1 - fc * (1 + m)
    q_fc = cjo * vj / a * (1 - (1 - fc) ** a)
    low = cjo * vj / a * (1 - (1 - v / vj) ** a)
    high = q_fc + cjo / f2 * (f3 * (v - vf) + m / (2 * vj) * (v ** 2 - vf ** 2))
    return sp.Piecewise((low, v < vf), (high, True))


def depletion_energy(q: sp.Symbol, cjo, vj, m, fc) -> sp.Expr:
    """Energy ``H(q) = int_0^q v(s) ds`` of the depletion charge (module docstring).

    Parameters
    ----------
    q : sympy.Symbol
        The junction's depletion charge (the state).
    cjo, vj, m, fc : sympy.Expr
        Zero-bias capacitance [F], contact potential [V], grading
        coefficient (0 <= M < 1), forward-bias coefficient (0 <= FC < 1).
    """
    a = 1 - m
    q0 = cjo * vj / a
    vf = fc * vj
    f2, f3 = (1 - fc) ** (1 + m), 1 - fc * (1 + m)
    q_fc = q0 * (1 - (1 - fc) ** a)
    low = vj * q - cjo * vj ** 2 / (2 - m) * (1 - (1 - q / q0) ** ((2 - m) / a))
    h_fc = vj * q_fc - cjo * vj ** 2 / (2 - m) * (1 - (1 - fc) ** (2 - m))
    A, B, D = cjo * m / (2 * vj * f2), cjo * (1 - fc) / f2, q - q_fc
    v = vf + 2 * D / (B + sp.sqrt(B ** 2 + 4 * A * D))
    high = h_fc + cjo / f2 * (f3 * (v ** 2 - vf ** 2) / 2 + m * (v ** 3 - vf ** 3) / (3 * vj))
    return sp.Piecewise((low, q < q_fc), (high, True))


def breakdown_current(v: sp.Symbol, bv, ibv, nvt) -> sp.Expr:
    """Reverse breakdown current ``-IBV (exp(-(v + BV)/(N Vt)) - exp(-BV/(N Vt)))``.

    ``-IBV`` at ``v = -BV`` (as SPICE's level-1 breakdown branch, whose
    internal breakdown voltage is fitted to pass through that point), zero at
    ``v = 0`` and increasing, so ``v i >= 0``: a passive term added to the
    diode's law.

    Parameters
    ----------
    v : sympy.Symbol
        Junction voltage.
    bv, ibv, nvt : sympy.Expr
        Breakdown voltage (positive), current at breakdown, ``N Vt``.
    """
    return -ibv * (sp.exp(-(v + bv) / nvt) - sp.exp(-bv / nvt))


# ------------------------------------------------------------------ diffusion charge (TT)
# The junction charge with transit time, Q(v) = q_dep(v) + TT i(v) (i: the
# whole diode law), has no closed-form inverse.  The storage keeps the charge
# Q as its state and its energy H(Q) = Q v - Phi(v), v = v(Q), Phi(v) =
# int_0^v Q(s) ds (so dH/dQ = v exactly); v(Q) is computed by a safeguarded
# Newton iteration on the increasing Q(v).  ``charge_voltage`` and
# ``charge_energy`` are plain Python on floats (:mod:`.junction_charge`; numba
# compiles the same functions for generated loops: phsym.codegen.kernels.junction);
# the sympy functions JunctionVoltage and JunctionEnergy carry their derivatives.


def _charge_expr(v, P):
    """Symbolic ``Q(v)`` of the junction with transit time (``P``: the ten parameters)."""
    cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv = P
    cur = i_s * (sp.exp(v / nvt) - 1) + gmin * v - ibv * (sp.exp(-(v + bv) / nvt) - sp.exp(-bv / nvt))
    return depletion_charge(v, cjo, vj, m, fc) + tt * cur


def _phi_expr(v, P):
    """Symbolic ``Phi(v) = int_0^v Q(s) ds``."""
    cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv = P
    a, vf = 1 - m, fc * vj
    f2, f3, q0 = (1 - fc) ** (1 + m), 1 - fc * (1 + m), cjo * vj / (1 - m)
    low = q0 * v - q0 * vj / (2 - m) * (1 - (1 - v / vj) ** (2 - m))
    q_fc = q0 * (1 - (1 - fc) ** a)
    phi_f = q0 * vf - q0 * vj / (2 - m) * (1 - (1 - fc) ** (2 - m))
    dv = v - vf
    high = phi_f + q_fc * dv + cjo / f2 * (f3 * dv ** 2 / 2 + m / (2 * vj) * ((v ** 3 - vf ** 3) / 3 - vf ** 2 * dv))
    eb = sp.exp(-bv / nvt)
    diff = tt * (i_s * (nvt * (sp.exp(v / nvt) - 1) - v) + gmin * v ** 2 / 2
                 + ibv * nvt * (sp.exp(-(v + bv) / nvt) - eb) + ibv * v * eb)
    return sp.Piecewise((low, v < vf), (high, True)) + diff


def _partial(builder, v, args, k):
    """d builder(v, P) / d P[k] at ``P = args`` (``k`` counts from 0; ``-1``: d / dv).  The derivative
    in symbols is taken once per builder and ``k`` (sympy's ``diff`` of the Piecewise charge took
    tens of milliseconds, at every derivative of a junction law) and then given ``v`` and ``args``."""
    got = _PARTIALS.get((builder, k))
    if got is None:
        D = tuple(sp.Dummy(f"p{i}") for i in range(10))
        vd = sp.Dummy("v")
        got = _PARTIALS[(builder, k)] = (D, vd, sp.diff(builder(vd, D), vd if k < 0 else D[k]))
    D, vd, expr = got
    return expr.xreplace({**dict(zip(D, args)), vd: v})


_PARTIALS: dict = {}


class JunctionVoltage(sp.Function):
    """``v(Q)``: the voltage whose junction charge ``q_dep(v) + TT i(v)`` is ``Q``
    (arguments: ``Q`` and the ten parameters of :func:`charge_voltage`)."""

    nargs = 11

    def fdiff(self, argindex=1):
        args = self.args[1:]
        c = _partial(_charge_expr, self, args, -1)
        if argindex == 1:
            return 1 / c
        return -_partial(_charge_expr, self, args, argindex - 2) / c

    @staticmethod
    def _imp_(*a):
        return charge_voltage(*(float(x) for x in a))

    def _eval_evalf(self, prec):
        if all(a.is_number for a in self.args):
            return sp.Float(charge_voltage(*(float(a) for a in self.args)), prec)
        return None


class JunctionEnergy(sp.Function):
    """``H(Q) = Q v(Q) - Phi(v(Q))``: the energy of the junction charge with transit time."""

    nargs = 11

    def fdiff(self, argindex=1):
        v = JunctionVoltage(*self.args)
        if argindex == 1:
            return v
        return -_partial(_phi_expr, v, self.args[1:], argindex - 2)

    @staticmethod
    def _imp_(*a):
        f = [float(x) for x in a]
        return charge_energy(f[0], charge_voltage(*f), *f[1:])

    def _eval_evalf(self, prec):
        if all(a.is_number for a in self.args):
            return sp.Float(JunctionEnergy._imp_(*self.args), prec)
        return None


class JunctionEnergyAt(sp.Function):
    """``H = Q v - Phi(v)``, the junction charge's energy written through the charge ``Q`` and a
    voltage ``v`` (arguments: ``Q``, ``v`` and the ten parameters of :func:`charge_voltage`),
    printed as the compiled ``junction_energy_v``.

    At ``v = v(Q)`` it is ``H(Q)``, and it is stationary in ``v`` there
    (``dH/dv = Q - Q(v)``): a voltage a rounding off changes it only to second
    order, so energies of the same charge computed through different voltages
    agree to rounding (the discrete power balance of a step solved for the
    voltage, :mod:`phsym.codegen.steps`).
    """

    nargs = 12

    def fdiff(self, argindex=1):
        Q, v, args = self.args[0], self.args[1], self.args[2:]
        if argindex == 1:
            return v
        if argindex == 2:
            return Q - _charge_expr(v, args)
        return -_partial(_phi_expr, v, args, argindex - 3)

    @staticmethod
    def _imp_(*a):
        return charge_energy(*(float(x) for x in a))


class JunctionEnergyFrom(sp.Function):
    """``H = Q v - Phi(v)`` as :class:`JunctionEnergyAt`, with the depletion charge and exponential at
    ``v`` as arguments (see :func:`energy_from`), printed as the compiled ``junction_energy_q``."""

    nargs = 16

    @staticmethod
    def _imp_(*a):
        return charge_energy_from(*(float(x) for x in a))


def energy_from(Q, v, *P) -> sp.Expr:
    """``JunctionEnergyAt(Q, v, *P)`` written through the subexpressions the charge law ``Q(v)`` holds
    (its depletion charge and ``exp(v / (N Vt))``): beside the charge at the same ``v`` (a step's end,
    where the efforts are) the energy then costs no power or exponential of its own.

    Parameters
    ----------
    Q, v : sympy.Expr
        The junction's charge and voltage.
    *P : sympy.Expr
        The ten parameters of :func:`charge_voltage`.
    """
    cjo, vj, m, fc, tt, i_s, nvt = (sp.sympify(a) for a in P[:7])
    ex = sp.Integer(0) if tt == 0 else sp.exp(v / nvt)
    return JunctionEnergyFrom(Q, v, depletion_charge(v, cjo, vj, m, fc), ex, (1 - fc) ** (1 - m),
                              (1 - fc) ** (-1 - m), *P)


def energies_from(expr: sp.Expr) -> sp.Expr:
    """``expr`` with every :class:`JunctionEnergyAt` written through :func:`energy_from`: beside the
    charge law at the same voltage, common-subexpression elimination then shares its power and
    exponential.  Apply it after taking derivatives (:class:`JunctionEnergyFrom` has none).

    Parameters
    ----------
    expr : sympy.Expr
        Any expression.
    """
    return expr.replace(lambda e: isinstance(e, JunctionEnergyAt), lambda e: energy_from(*e.args))


def charge_law(state: sp.Expr, energy: sp.Expr):
    """The charge law ``Q(v)`` of an effort law whose energy is ``JunctionEnergyAt(Q, v, *P)``, written
    in the energy's own ``P`` (:func:`_charge_expr`), or ``None`` for another law.

    ``state`` is the same law with the numbers of ``P`` folded (the law's template); in a law form
    (:mod:`phsym.structure.circuit.canonical`) its constants are placeholders of their own, so that
    the charge and the energy share no subexpression.  Written in ``P``, the charge at a voltage and
    the energy there (:func:`energies_from`) share the depletion power and the exponential.  A
    parameter whose number is zero drops its terms from ``state`` but not from the law in ``P``,
    where ``0 * exp(...)`` would be NaN once the exponential overflows: then ``None``.

    Parameters
    ----------
    state : sympy.Expr
        The law's charge ``Q(v)`` as the law holds it.
    energy : sympy.Expr
        The law's energy through charge and voltage.
    """
    if not isinstance(energy, JunctionEnergyAt):
        return None
    v = energy.args[1]
    law = _charge_expr(v, energy.args[2:])

    def exps(e):
        return len([a for a in e.atoms(sp.exp) if a.has(v)])
    return law if exps(law) == exps(state) else None


def junction_storage(q: sp.Symbol, *P) -> "tuple[sp.Expr, EffortLaw]":
    """Energy ``H(Q)`` of a junction charge with state ``q`` and the same law through its voltage.

    Parameters
    ----------
    q : sympy.Symbol
        The charge state, named ``q_<branch>``; the voltage is ``v_<branch>``.
    *P : sympy.Expr
        The ten parameters of :func:`charge_voltage`.

    Examples
    --------
    >>> import sympy as sp
    >>> H, law = junction_storage(sp.Symbol("q_D1.cj"), 4e-12, 1, 0.5, 0.5, 0, 1e-14, 0.025, 0, 1, 0)
    >>> law.effort
    v_D1.cj
    >>> round(float(law.state.subs(law.effort, -1.0)) * 1e12, 9)    # 2 CJO VJ (1 - sqrt(2)) at -1 V, in pC
    -3.313708499
    """
    v = sp.Symbol("v_" + q.name.split("_", 1)[-1], real=True)
    P = tuple(sp.sympify(a) for a in P)
    charge = _CHARGES.get(P)
    if charge is None:      # built once per parameter set (tens of ms): a chain of gates has one model
        if len(_CHARGES) > 1024:
            _CHARGES.clear()
        charge = _CHARGES[P] = _charge_expr(_VJ, P)
    return JunctionEnergy(q, *P), EffortLaw(v, energy=JunctionEnergyAt(q, v, *P), template=(_VJ, charge))


_CHARGES: dict = {}
_VJ = sp.Symbol("_v_junction", real=True)
