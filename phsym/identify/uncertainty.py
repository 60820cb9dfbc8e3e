"""Uncertainty of least-squares estimates from the Jacobian at the optimum.

For residuals ``r(theta)`` with Jacobian ``J`` the covariance of the
estimate is ``sigma^2 (J^T J)^{-1}`` (the Cramér-Rao bound for Gaussian
noise), ``sigma^2`` estimated from the residuals.  Computed through an SVD
of the column-scaled Jacobian, so near-null directions (parameters the data
do not determine) are detected instead of inverted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Mapping, Sequence, Tuple

import numpy as np

__all__ = ["Uncertainty", "uncertainty", "estimate_table"]


@dataclass
class Uncertainty:
    """Covariances and what they imply.

    Attributes
    ----------
    sigma2 : float
        Residual variance.
    covariance : ndarray
        Covariance of the physical parameters.
    std, relative_std : dict of str to float
        Standard deviations, absolute and relative.
    intervals : dict of str to (float, float)
        Confidence intervals (Student t; multiplicative for log parameters).
    unidentifiable : list of str
        Parameters above the relative-std threshold or in a near-null direction.
    condition : float
        Condition number of the column-scaled Jacobian.
    extra_std : ndarray
        Standard deviations of the extra unknowns (theta units).
    """

    sigma2: float
    covariance: np.ndarray
    std: Dict[str, float]
    relative_std: Dict[str, float]
    intervals: Dict[str, Tuple[float, float]]
    unidentifiable: List[str]
    condition: float
    extra_std: np.ndarray


def uncertainty(r: np.ndarray, jac: np.ndarray, names: Sequence[str], phys: np.ndarray, islog: np.ndarray,
                scale: np.ndarray, confidence: float, threshold: float) -> Uncertainty:
    """Covariance, confidence intervals and identifiability of an estimate.

    Parameters
    ----------
    r : ndarray
        Residuals at the optimum.
    jac : ndarray (n_res, n_free + n_extra)
        Jacobian with respect to ``theta`` (``log p`` or ``p / scale`` for the
        free parameters, then extra unknowns such as initial states).
    names : sequence of str
        Free parameter names.
    phys : ndarray
        Estimated physical values.
    islog, scale : ndarray
        The parametrisation of each free parameter.
    confidence : float
        Level of the intervals.
    threshold : float
        Relative standard deviation above which a parameter is flagged.
    """
    import scipy.stats as st
    nf = len(names)
    dof = max(r.size - jac.shape[1], 1)
    s2 = float(r @ r) / dof
    col = np.linalg.norm(jac, axis=0)
    col = np.where(col > 0, col, 1.0)
    _, sv, Vt = np.linalg.svd(jac / col, full_matrices=False)
    tiny = sv < max(sv[0] if sv.size else 0.0, 1e-300) * 1e-10
    inv_s2 = np.where(tiny, 0.0, 1.0 / np.where(tiny, 1.0, sv) ** 2)
    cov_theta = s2 * ((Vt.T * inv_s2) @ Vt) / np.outer(col, col)
    D = np.where(islog, phys, scale)          # d p / d theta
    cov = cov_theta[:nf, :nf] * np.outer(D, D)
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    q = float(st.t.ppf(0.5 + 0.5 * confidence, dof))
    intervals = {}
    for i, f in enumerate(names):
        if islog[i]:
            w = min(q * math.sqrt(max(cov_theta[i, i], 0.0)), 700.0)
            p = float(phys[i])                    # Python floats: an unbounded interval is inf, silently
            intervals[f] = (p * math.exp(-w), p * math.exp(w))
        else:
            intervals[f] = (float(phys[i] - q * std[i]), float(phys[i] + q * std[i]))
    rel = std / np.maximum(np.abs(phys), 1e-300)
    flagged = [f for f, x in zip(names, rel) if not x <= threshold]
    for k in np.nonzero(tiny)[0]:          # parameters spanning the (near) null space of J^T J
        vec = np.abs(Vt[k, :nf])
        for i in np.nonzero(vec > 0.3 * vec.max(initial=0.0))[0]:
            if names[i] not in flagged:
                flagged.append(names[i])
    return Uncertainty(s2, cov, dict(zip(names, map(float, std))), dict(zip(names, map(float, rel))), intervals,
                       flagged, float(sv[0] / sv[-1]) if sv.size and sv[-1] > 0 else float("inf"),
                       np.sqrt(np.maximum(np.diag(cov_theta[nf:, nf:]), 0.0)))


def estimate_table(params: Mapping[str, float], std: Mapping[str, float], relative_std: Mapping[str, float],
                   intervals: Mapping[str, Tuple[float, float]], unidentifiable: Sequence[str],
                   confidence: float) -> List[str]:
    """Lines of the table of estimates: value, standard deviation, relative standard deviation and
    confidence interval per parameter, ``(!)`` after the unidentifiable ones."""
    lines = [f"{'parameter':<12} {'estimate':>14} {'std':>11} {'rel.std':>9}  "
             f"{int(round(confidence * 100))}% confidence interval"]
    for f in params:
        lo, hi = intervals[f]
        flag = "  (!)" if f in unidentifiable else ""
        lines.append(f"{f:<12} {params[f]:>14.8g} {std[f]:>11.3g} "
                     f"{relative_std[f]:>9.2e}  [{lo:.8g}, {hi:.8g}]{flag}")
    return lines
