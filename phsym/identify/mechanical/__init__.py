"""Mass, damping and stiffness matrices of ``M q'' + D q' + K q = L u`` from sampled data.

:class:`MechanicalEstimator` identifies them through the midpoint
(variational, Cayley-Tustin) model and/or the exact zero-order-hold model,
with M, K positive definite and D positive semidefinite by construction;
:mod:`.maps` holds the linear discrete <-> continuous midpoint maps.
"""
from .estimator import MechanicalEstimator, mechanical_phs
from .maps import discretise, midpoint_c2d, midpoint_d2c
from .network import NotANetworkError, network_netlist

__all__ = ["MechanicalEstimator", "mechanical_phs", "midpoint_c2d", "midpoint_d2c", "discretise", "network_netlist",
           "NotANetworkError"]
