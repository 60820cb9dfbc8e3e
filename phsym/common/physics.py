"""Physical constants (exact SI values) shared by the netlist and the components."""
from __future__ import annotations

__all__ = ["BOLTZMANN_OVER_Q", "KELVIN", "MU0", "thermal_voltage"]

#: k / q [V/K] from the exact SI values of k and q.
BOLTZMANN_OVER_Q = 1.380649e-23 / 1.602176634e-19
#: 0 degrees Celsius in kelvin.
KELVIN = 273.15

#: Vacuum permeability [H/m] (CODATA 2018: 4 pi 1e-7 (1 + 5.5e-10)).
MU0 = 1.25663706212e-6


def thermal_voltage(celsius: float) -> float:
    """``k T / q`` [V] at ``celsius`` degrees Celsius.

    Parameters
    ----------
    celsius : float
        Temperature in degrees Celsius.
    """
    return BOLTZMANN_OVER_Q * (celsius + KELVIN)
