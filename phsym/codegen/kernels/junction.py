"""Compiled junction-charge functions for generated loops (diodes with transit time ``TT``).

The same Python functions as :mod:`phsym.components.junction_charge`
(``charge_voltage``: ``v(Q)`` by safeguarded Newton; ``charge_energy``:
``H = Q v - Phi(v)``; ``charge_energy_from``: the same from the depletion
charge and exponential the charge law computes), compiled by numba; the
printer writes the sympy functions ``JunctionVoltage``, ``JunctionEnergy``,
``JunctionEnergyAt`` and ``JunctionEnergyFrom`` as calls to them.
"""
from __future__ import annotations

from numba import njit

from ...components.junction_charge import charge_energy, charge_energy_from, charge_voltage

__all__ = ["junction_voltage", "junction_energy", "junction_energy_v", "junction_energy_q"]

junction_voltage = njit(cache=True, error_model="numpy")(charge_voltage)
junction_energy_v = njit(cache=True, error_model="numpy")(charge_energy)
junction_energy_q = njit(cache=True, error_model="numpy")(charge_energy_from)


@njit(cache=True, error_model="numpy")
def junction_energy(Q, cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv):
    """``H(Q)`` of the junction charge (see :func:`phsym.components.junction_charge.charge_energy`)."""
    v = junction_voltage(Q, cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv)
    return junction_energy_v(Q, v, cjo, vj, m, fc, tt, i_s, nvt, gmin, bv, ibv)
