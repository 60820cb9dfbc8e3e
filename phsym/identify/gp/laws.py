"""Learned storage laws as expressions: the posterior-mean Hamiltonian of an
energy-variant :class:`~phsym.identify.gp.EffortGP` written in sympy, so that
it can be the ``H={...}`` law of a storage element in a netlist and be
differentiated, compiled and simulated like any hand-written law."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import sympy as sp

from ...errors import IdentificationError

__all__ = ["hamiltonian_expression", "law_text"]


def hamiltonian_expression(gp, symbols: Sequence[sp.Symbol], digits: int = 17) -> sp.Expr:
    """The learned Hamiltonian (posterior mean, up to a constant) as a sympy expression.

    ``H(x) = s_y [ sum_b s^2 beta_b . (x~ - x~_b) / l^2 exp(-|x~ - x~_b|_l^2 / 2)
    + mu . x~ + x~^T Q x~ / 2 ]`` with ``x~ = (x - mean) / scale`` over the
    Hamiltonian's inputs: one Gaussian bump per training sample plus the
    quadratic prior mean.

    Parameters
    ----------
    gp : EffortGP
        Fitted with ``variant="energy"``.
    symbols : sequence of sympy.Symbol
        One symbol per input of ``H`` (the differential states with the
        default ``hamiltonian_inputs``), in state order.
    digits : int
        Significant digits of the numeric coefficients.

    Returns
    -------
    sympy.Expr

    Raises
    ------
    IdentificationError
        For a direct-variant or unfitted estimator or a wrong number of symbols.
    """
    gp._check_fitted("posterior_")
    if gp.variant != "energy":
        raise IdentificationError("only variant='energy' learns a Hamiltonian")
    post = gp.posterior_
    lay = post.layout
    hin, loc = lay.hin, lay.local
    if len(symbols) != len(hin):
        raise IdentificationError(f"the Hamiltonian has {len(hin)} inputs (states {list(hin)}), "
                                  f"got {len(symbols)} symbols")
    ellH, s2 = lay.unpack(post.theta)[:2]
    S = np.array(lay.storage, int)
    f = lambda v: sp.Float(float(v), digits)          # noqa: E731
    xs = [(sym - f(gp.x_mean_[j])) / f(gp.x_scale_[j]) for sym, j in zip(symbols, hin)]
    Xt = post.X[:, hin]
    terms = []
    for b in range(Xt.shape[0]):
        r2 = sum((x - f(Xt[b, i])) ** 2 / f(ellH[i] ** 2) for i, x in enumerate(xs))
        lin = sum(f(s2 * post.beta[S[k], b] / ellH[loc[k]] ** 2) * (xs[loc[k]] - f(Xt[b, loc[k]]))
                  for k in range(len(S)))
        terms.append(lin * sp.exp(-r2 / 2))
    mean = sum(f(gp.mean_[j]) * xs[list(hin).index(j)] for j in S)
    # quadratic part of the prior mean: (1/2) x~^T Q x~ with (Q x~)_S = slope[S] x~
    slope = gp.mean_slope_
    quad = 0
    for a, j in enumerate(S):
        for i_loc, i in enumerate(hin):
            c = slope[j, i]
            if c != 0.0:
                weight = 0.5 if i in S else 1.0        # S x S terms appear twice in x^T Q x
                quad += f(weight * c) * xs[list(hin).index(j)] * xs[i_loc]
    return f(gp.y_scale_) * (sp.Add(*terms) + mean + quad)


def law_text(expr: sp.Expr, variable: str) -> str:
    """``expr`` as the text of a netlist law in ``variable`` (``H={...}``).

    Parameters
    ----------
    expr : sympy.Expr
        A law in one symbol.
    variable : str
        The law's variable as the netlist writes it (``q`` for a capacitor,
        ``phi`` for an inductor, ...).

    Returns
    -------
    str
        For example ``"H={0.5*q**2}"``.
    """
    (sym,) = expr.free_symbols
    return "H={" + sp.sstr(expr.subs(sym, sp.Symbol(variable, real=True)), full_prec=True) + "}"
