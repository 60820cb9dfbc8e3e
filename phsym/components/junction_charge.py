"""The junction charge with transit time on floats: its voltage ``v(Q)`` and its energy ``H(Q) = Q v -
Phi(v)`` (see :mod:`.junction`, whose sympy functions :class:`~.junction.JunctionVoltage` and
:class:`~.junction.JunctionEnergy` call these and carry the derivatives).

Plain Python on floats with :mod:`math` only: numba compiles the same functions for generated loops
(:mod:`phsym.codegen.kernels.junction`) and the C law kernels get their translation
(:mod:`phsym.codegen.laws.native`), without importing sympy.

Without transit time the depletion charge inverts in closed form: with ``CJO = 1p``, ``VJ = 0.8``,
``M = 0.5``, ``Q = 0.3 pC`` is reached at ``v = VJ (1 - (1 - Q / (2 CJO VJ))**2) = 0.271875 V``, and
``H(Q) = int_0^Q v(s) ds = 0.0421875 pJ``:

>>> P = (1e-12, 0.8, 0.5, 0.5, 0.0, 1e-15, 0.025, 0.0, 1.0, 0.0)
>>> v = charge_voltage(0.3e-12, *P)
>>> round(v, 12), round(charge_energy(0.3e-12, v, *P) * 1e12, 12)
(0.271875, 0.0421875)
"""
from __future__ import annotations

import math

__all__ = ["charge_voltage", "charge_energy", "charge_energy_from"]


def charge_voltage(Q, cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv):
    """Junction voltage ``v`` with ``q_dep(v) + TT i(v) = Q`` (float in, float out): closed
    form without transit time, else a safeguarded Newton iteration.

    Parameters
    ----------
    Q : float
        Junction charge.
    cjo, vj, m, fc : float
        Depletion parameters (``cjo = 0``: none).
    tt, i_s, nvt, gmin, bv, ibv : float
        Transit time, saturation current, ``N Vt``, GMIN, breakdown voltage
        and current (``ibv = 0``: no breakdown).
    """
    a = 1.0 - m
    vf = fc * vj
    f2 = (1.0 - fc) ** (1.0 + m)
    f3 = 1.0 - fc * (1.0 + m)
    q_fc = cjo * vj / a * (1.0 - (1.0 - fc) ** a)
    eb = math.exp(-bv / nvt)
    if tt == 0.0 and cjo > 0.0:     # the depletion charge alone: its closed-form inverse
        if Q < q_fc:
            return vj * (1.0 - (1.0 - Q / (cjo * vj / a)) ** (1.0 / a))
        A, B, D = cjo * m / (2.0 * vj * f2), cjo * (1.0 - fc) / f2, Q - q_fc
        return vf + 2.0 * D / (B + math.sqrt(B * B + 4.0 * A * D))
    if Q == 0.0:
        return 0.0
    # Each part of the charge alone brackets v: the parts have the sign of v,
    # so where one part alone reaches Q the whole charge is at least Q (an
    # upper bound for Q > 0, a lower one for Q < 0), and v = 0 bounds the
    # other side.  Newton then starts at the bound nearest the root (from
    # above on the convex forward branch: monotone, a few iterations).
    lo, hi = (0.0, math.nan) if Q > 0.0 else (math.nan, 0.0)
    if cjo > 0.0:       # the depletion charge alone, both pieces in closed form
        if Q < q_fc:
            vd = vj * (1.0 - (1.0 - Q / (cjo * vj / a)) ** (1.0 / a))
        else:
            A, B, D = cjo * m / (2.0 * vj * f2), cjo * (1.0 - fc) / f2, Q - q_fc
            vd = vf + 2.0 * D / (B + math.sqrt(B * B + 4.0 * A * D))
        if Q > 0.0:
            hi = vd
        else:
            lo = vd
    if Q > 0.0 and tt * i_s > 0.0:      # the diffusion charge alone
        vt = nvt * math.log1p(Q / (tt * i_s))
        hi = vt if not (hi <= vt) else hi
    v = hi if Q > 0.0 else lo
    if math.isnan(v):
        v = 0.0
    v = max(v, -1e3)     # a breakdown makes the charge of -1 kV absurd: start no further
    # rtsafe: Newton inside the bracket [lo, hi] (completed by doubling steps
    # when a bound is missing), bisection when Newton leaves it or does not
    # halve its step
    grow, dxold = 1.0, math.inf
    for _ in range(400):
        if v < vf:
            qd = cjo * vj / a * (1.0 - (1.0 - v / vj) ** a)
            cd = cjo * (1.0 - v / vj) ** (-m)
        else:
            qd = q_fc + cjo / f2 * (f3 * (v - vf) + m / (2.0 * vj) * (v * v - vf * vf))
            cd = cjo / f2 * (f3 + m * v / vj)
        ex = math.exp(min(v / nvt, 700.0))
        eb2 = math.exp(min(-(v + bv) / nvt, 700.0))
        r = qd + tt * (i_s * (ex - 1.0) + gmin * v - ibv * (eb2 - eb)) - Q
        c = cd + tt * (i_s * ex / nvt + gmin + ibv * eb2 / nvt)
        if r == 0.0:
            return v
        if r > 0.0:
            hi = v
        else:
            lo = v
        if math.isnan(lo) or math.isnan(hi):    # still bracketing
            grow *= 2.0
            v = v - grow if r > 0.0 else v + grow
            continue
        vn = v - r / c if c > 0.0 else math.nan
        if not (lo < vn < hi) or abs(vn - v) > 0.5 * dxold:
            vn = 0.5 * (lo + hi)
        dxold = abs(vn - v)
        if dxold <= 1e-15 * (1.0 + abs(v)) or hi - lo <= 1e-15 * (1.0 + abs(v)):
            return vn
        v = vn
    return v


def charge_energy(Q, v, cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv):
    """``H(Q) = Q v - Phi(v)`` with ``v = charge_voltage(Q, ...)`` given (parameters as there).

    Parameters
    ----------
    Q : float
        Junction charge.
    v : float
        Its voltage.
    cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv : float
        See :func:`charge_voltage`.
    """
    a = 1.0 - m
    vf = fc * vj
    q0 = cjo * vj / a
    if v < vf:
        phi = q0 * v - q0 * vj / (2.0 - m) * (1.0 - (1.0 - v / vj) ** (2.0 - m))
    else:       # (the powers of the parameters only here: a compiled step calls this per Newton iteration)
        f2 = (1.0 - fc) ** (1.0 + m)
        f3 = 1.0 - fc * (1.0 + m)
        q_fc = q0 * (1.0 - (1.0 - fc) ** a)
        phi_f = q0 * vf - q0 * vj / (2.0 - m) * (1.0 - (1.0 - fc) ** (2.0 - m))
        dv = v - vf
        phi = (phi_f + q_fc * dv + cjo / f2 * (f3 * dv * dv / 2.0
                                               + m / (2.0 * vj) * ((v ** 3 - vf ** 3) / 3.0 - vf * vf * dv)))
    if tt != 0.0:       # (0 * inf is nan where the exponentials overflow)
        pd = i_s * (nvt * math.expm1(v / nvt) - v) + gmin * v * v / 2.0
        if ibv != 0.0:
            eb = math.exp(-bv / nvt)
            pd += ibv * nvt * (math.exp(-(v + bv) / nvt) - eb) + ibv * v * eb
        phi += tt * pd
    return Q * v - phi


def charge_energy_from(Q, v, qd, ex, g1, rf2, cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv):
    """:func:`charge_energy` from what the charge law already computed at ``v``: the depletion charge
    ``qd = q_dep(v)``, ``ex = exp(v / nvt)`` (unused without transit time), ``g1 = (1 - fc)**(1 - m)``
    and ``rf2 = (1 - fc)**(-1 - m)`` (the forms the charge law holds); no power or exponential of its own
    but the breakdown's.

    Below ``FC VJ`` the depletion part uses ``(1 - v/VJ)**(2 - M) = (1 - v/VJ) (1 - qd / Q0)``, so
    ``Phi = Q0 v - VJ / (2 - M) (Q0 - (1 - v/VJ) (Q0 - qd))`` (no division by ``Q0``: ``cjo = 0``
    gives zero).

    Parameters
    ----------
    Q, v : float
        Junction charge and voltage.
    qd, ex, g1, rf2 : float
        As above.
    cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv : float
        See :func:`charge_voltage`.
    """
    q0 = cjo * vj / (1.0 - m)
    vf = fc * vj
    if v < vf:
        phi = q0 * v - vj / (2.0 - m) * (q0 - (1.0 - v / vj) * (q0 - qd))
    else:
        dv = v - vf
        phi = (q0 * vf - q0 * vj / (2.0 - m) * (1.0 - (1.0 - fc) * g1) + q0 * (1.0 - g1) * dv
               + cjo * rf2 * ((1.0 - fc * (1.0 + m)) * dv * dv / 2.0
                             + m / (2.0 * vj) * ((v ** 3 - vf ** 3) / 3.0 - vf * vf * dv)))
    if tt != 0.0:
        pd = i_s * (nvt * (ex - 1.0) - v) + gmin * v * v / 2.0
        if ibv != 0.0:
            eb = math.exp(-bv / nvt)
            pd += ibv * nvt * (math.exp(-(v + bv) / nvt) - eb) + ibv * v * eb
        phi += tt * pd
    return Q * v - phi
