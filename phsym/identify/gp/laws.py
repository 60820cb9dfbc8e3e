"""Learned storage laws: the posterior-mean Hamiltonian of an energy-variant
:class:`~phsym.identify.gp.EffortGP`, either as numbers
(:func:`numeric_law`, saved as ``.npz`` and read by a netlist's ``.table
NAME FILE.npz``: the generated code evaluates it by one compiled loop) or
written out in sympy (:func:`hamiltonian_expression`, an ordinary ``H={...}``
law whose size and compile time grow with the number of samples)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import numpy as np
import sympy as sp

from ...errors import IdentificationError

__all__ = ["hamiltonian_expression", "law_text", "numeric_law", "save_law"]


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


def numeric_law(gp, meta: Optional[Dict[str, str]] = None):
    """The learned Hamiltonian (posterior mean, up to a constant) as a
    :class:`~phsym.common.learned.LearnedLaw` over the Hamiltonian's inputs.

    The same function as :func:`hamiltonian_expression`, in the law's units:
    centres ``mean + scale x~_b``, length scales ``scale l``, gradient weights
    ``s_y s^2 beta_b / (l^2 scale)`` and the quadratic prior mean.

    Parameters
    ----------
    gp : EffortGP
        Fitted with ``variant="energy"``.
    meta : dict of str to str, optional
        Extra text kept in the file (the inputs' names are added when the
        estimator has ``names``).

    Returns
    -------
    phsym.common.learned.LearnedLaw

    Raises
    ------
    IdentificationError
        For a direct-variant or unfitted estimator.
    """
    from ...common.learned import LearnedLaw
    from .prior_mean import quadratic_form

    gp._check_fitted("posterior_")
    if gp.variant != "energy":
        raise IdentificationError("only variant='energy' learns a Hamiltonian")
    post = gp.posterior_
    lay = post.layout
    hin, loc, S = list(lay.hin), lay.local, list(lay.storage)
    ellH, s2 = lay.unpack(post.theta)[:2]
    mu, sc, sy = gp.x_mean_[hin], gp.x_scale_[hin], gp.y_scale_
    centers = mu + sc * post.X[:, hin]
    slopes = np.zeros_like(centers)
    for k, j in enumerate(S):
        slopes[:, loc[k]] = sy * s2 * post.beta[j] / (ellH[loc[k]] ** 2 * sc[loc[k]])
    linear = np.zeros(len(hin))
    linear[loc] = sy * gp.mean_[S]
    quad = sy * quadratic_form(gp.mean_slope_, S)[np.ix_(hin, hin)]
    info = {"source": "phsym.identify.EffortGP(variant='energy')", "samples": str(len(centers))}
    if gp.names is not None:
        info["inputs"] = ",".join(str(gp.names[i]) for i in hin)
    info.update(meta or {})
    return LearnedLaw(centers, np.zeros(len(centers)), slopes, ellH * sc, offset=mu, scale=sc, linear=linear,
                      quadratic=quad, kind="H", meta=info)


def save_law(gp, path: Any, meta: Optional[Dict[str, str]] = None) -> Path:
    """Write :func:`numeric_law` of ``gp`` to ``path`` (``.npz``).

    Use it in a netlist as ``.table NAME FILE.npz`` and ``H={NAME(q)}``.

    Parameters
    ----------
    gp : EffortGP
        Fitted with ``variant="energy"``.
    path : str or pathlib.Path
        Target file.
    meta : dict of str to str, optional
        Extra text kept in the file.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    return numeric_law(gp, meta).save(path)


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
