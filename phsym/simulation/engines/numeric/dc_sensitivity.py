"""The derivative of the numeric engine's DC operating point with respect to parameters.

A grey-box fit from the DC point (``ParameterEstimator(x0="dc")``) needs
``dx_dc / dp``: the converged DC equations of :class:`~.dc.DCSystem`
(``F(z; u0, p) = 0``, states ``x(z, p)``) differentiated as
:mod:`.sensitivity` does a step: ``F_z dz/dp = -F_p`` with the partials by the
same fourth-order stencil over the circuit's numbers at ``p +- t``.
"""
from __future__ import annotations

from typing import Mapping, Sequence, Tuple

import numpy as np
import scipy.sparse.linalg as spla

from ....errors import IdentificationError
from .dc import DCSystem
from .newton import evaluate
from .operating import DCPoint, _Solver, _states, dc_point
from .sensitivity import REL_STEP, STENCIL, ValuesOf

__all__ = ["dc_point_sensitivity"]


def dc_point_sensitivity(c, values_of: ValuesOf, pvals: Mapping[str, float], free: Sequence[str], u0: np.ndarray,
                         x_fix: np.ndarray, xs: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The DC state and its derivative with respect to the free parameters.

    Differentiates the converged DC equations of :class:`~.dc.DCSystem` (``F(z; u0, p) = 0``,
    states ``x(z, p)``) as :class:`NumericSensitivity` does a step.

    Parameters
    ----------
    c : CircuitData
        The circuit.
    values_of : callable
        ``values_of({name: value})``: parameter values with these free parameters.
    pvals : mapping of str to float
        The free parameters.
    free : sequence of str
        Their order (columns).
    u0 : ndarray
        The inputs.
    x_fix : ndarray
        The state of the netlist's ICs (conserved combinations are taken from it).
    xs : ndarray
        State scales.

    Returns
    -------
    x : ndarray (n_x,)
    dx : ndarray (n_x, n_free)
    """
    values = values_of(pvals)
    point: DCPoint = dc_point(c, values, u0, x_fix, xs)
    S = point.system
    sol = _Solver(S, xs, u0)
    net = sol.net(0.0)
    L = S.L
    nz = L.n_z
    G = S.groups
    nin, nout = max(G.n_in, 1), max(G.n_out, 1)
    w = (np.zeros(nin), np.zeros(nin), np.zeros(nout), np.zeros(nz), np.zeros(S.J.nnz))
    wold = np.zeros(len(S.slots))

    def residual(net_, z, K):
        evaluate(z, K, net_, sol.lim, wold, False, *w)
        return w[3].copy(), w[4].copy()
    z, K = point.z, point.K
    _, Jx = residual(net, z, K)
    try:
        lu = spla.splu(S.J.matrix(Jx).tocsc())
    except RuntimeError:
        raise IdentificationError("singular DC operating point: use another x0") from None
    dx = np.zeros((c.n_x, len(free)))
    for j, f in enumerate(free):
        p = float(pvals[f])
        tp = REL_STEP * (abs(p) or 1.0)
        systems = []
        for m, _ in STENCIL:
            vm = values_of({**pvals, f: p + m * tp})
            Sm = DCSystem(c, vm, x_fix, S.held)
            systems.append((Sm, vm, _Solver(Sm, xs, u0).net(0.0)))
        Fp = sum(wt * residual(nt, z, K)[0] for (_, wt), (_, _, nt) in zip(STENCIL, systems)) / tp
        dz = -lu.solve(Fp)
        if not np.all(np.isfinite(dz)):
            raise IdentificationError("singular DC operating point: use another x0")
        # x(z, p): along (dz, 1) in (z, p)
        dx[:, j] = sum(wt * _states(Sm, z + m * tp * dz, vm)
                       for (m, wt), (Sm, vm, _) in zip(STENCIL, systems)) / tp
    return point.x, dx
