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
"""
from __future__ import annotations

import sympy as sp

__all__ = ["depletion_energy", "depletion_charge", "breakdown_current"]


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
