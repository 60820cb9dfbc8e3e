"""Initial estimates of ``(M, D, K[, L])`` and conversions between the two discrete models."""
from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from ...errors import IdentificationError
from .equation_error import equation_error, natural_frequencies, noise_band
from .lm import levenberg_marquardt
from .maps import discretise
from .oe import OutputError
from .param import Parametrisation
from .subspace import moesp
from .zoh_start import arx_zoh, d2c_second_order, tustin_second_order

__all__ = ["initial_estimates", "converted", "race"]


def initial_estimates(spec: Union[str, Mapping[str, Any]], n: int, u: np.ndarray, qpos: np.ndarray, h: float,
                      L: Optional[np.ndarray]) -> Dict[str, Tuple[np.ndarray, ...]]:
    """Initial estimates ``{name: (M, D, K, L)}`` (see ``MechanicalEstimator(init=...)``).

    Parameters
    ----------
    spec : str or mapping
        ``"auto"``, ``"midpoint"``, ``"zoh"``, ``"subspace"``, ``"ls"`` or a mapping with ``M, D, K[, L]``.
    n : int
        Degrees of freedom.
    u : numpy.ndarray
        Inputs (N, m).
    qpos : numpy.ndarray
        Positions (N, n).
    h : float
        Sampling time.
    L : numpy.ndarray or None
        Known input matrix (None: estimated).

    Returns
    -------
    dict
        Finite starts by origin.
    """
    if isinstance(spec, Mapping):
        try:
            M, D, K = (np.asarray(spec[k], dtype=float) for k in "MDK")
        except KeyError as exc:
            raise IdentificationError(f"init mapping lacks {exc}") from None
        Lh = L if L is not None else np.asarray(spec.get("L", np.eye(n)), dtype=float)
        return {"user": (M, D, K, Lh)}
    if spec not in ("auto", "midpoint", "zoh", "subspace", "ls"):
        raise IdentificationError(f"unknown init {spec!r}; use 'auto', 'midpoint', 'zoh', 'subspace', 'ls' "
                                  "or a mapping")
    if spec == "ls":
        return {"ls": equation_error(u, qpos, h, L)}
    out = {}
    fc = 1.5 * noise_band(qpos, h)
    if spec in ("auto", "midpoint"):
        M, D, K, Lh = equation_error(u, qpos, h, L, cutoff=fc)
        fc2 = 2.0 * float(np.max(natural_frequencies(_spd(M), _spd(K)))) / (2 * np.pi)
        if np.isfinite(fc2) and fc2 > 0:
            M, D, K, Lh = equation_error(u, qpos, h, L, cutoff=max(fc2, fc / 3))
        out["midpoint"] = (M, D, K, Lh)
    if spec in ("auto", "zoh"):
        if L is None:
            if spec == "zoh":
                raise IdentificationError("init='zoh' needs a known input_matrix")
        else:
            try:
                with np.errstate(all="ignore"):
                    out["zoh"] = (*d2c_second_order(*arx_zoh(u, qpos, h, fc), h, L), L)
            except (np.linalg.LinAlgError, ValueError):
                if spec == "zoh":
                    raise IdentificationError("the ARX + d2c start failed (singular realisation)") from None
    if spec in ("auto", "subspace"):
        if L is None:
            if spec == "subspace":
                raise IdentificationError("init='subspace' needs a known input_matrix")
        else:
            try:
                with np.errstate(all="ignore"):
                    out["subspace"] = (*d2c_second_order(*moesp(u, qpos, 2 * n), h, L), L)
            except (IdentificationError, np.linalg.LinAlgError, ValueError):
                if spec == "subspace":
                    raise IdentificationError("the subspace + d2c start failed") from None
    return {k: v for k, v in out.items() if all(np.all(np.isfinite(a)) for a in v)}


def converted(par: Parametrisation, theta: np.ndarray, h: float, src: str, dst: str) -> Optional[np.ndarray]:
    """Parameters whose ``dst`` model has the poles of the ``src`` model at theta (None if that fails).

    Midpoint from ZOH by the inverse Cayley transform, ZOH from midpoint by
    the matrix logarithm: at coarse sampling the two models need different
    ``(M, D, K)`` (frequency warping), and the converted start saves most
    of the second refinement's iterations.

    Parameters
    ----------
    par : Parametrisation
        The parameter map.
    theta : numpy.ndarray
        Parameters of the ``src`` model.
    h : float
        Sampling time.
    src, dst : {"midpoint", "zoh"}
        Discretisations.

    Returns
    -------
    numpy.ndarray or None
    """
    M, D, K, L, _ = par.unpack(theta)
    n = M.shape[0]
    Ad, B0, B1 = discretise(M, D, K, L, h, src)
    Cq = np.hstack([np.eye(n), np.zeros((n, n))])
    to = tustin_second_order if dst == "midpoint" else d2c_second_order
    try:
        with np.errstate(all="ignore"):
            th = par.pack(*to(Ad, B0 + B1, Cq, h, L), L)
    except (np.linalg.LinAlgError, ValueError):
        return None
    return th if np.all(np.isfinite(th)) else None


def _spd(A: np.ndarray) -> np.ndarray:
    """A symmetric matrix with its eigenvalues clipped to be positive."""
    A = 0.5 * (A + A.T)
    w, V = np.linalg.eigh(A)
    return (V * np.maximum(w, 1e-8 * max(abs(w).max(), 1e-300))) @ V.T


def race(starts: Mapping[str, Tuple[Tuple[np.ndarray, ...], Dict[str, float]]], par: Parametrisation,
         model: Callable[[str], OutputError]) -> Tuple[str, str, np.ndarray, int]:
    """The start to refine: the one lowest after one Gauss-Newton step, not at the start.

    A start's cost says little about the basin it lies in: on the 8-DOF
    system at h = 0.001 the ARX + d2c start fitted the data better than the
    equation-error start but needed 49 Levenberg-Marquardt iterations (6
    from the other), and at h = 0.05 the best-fitting start of one model
    converged to a local minimum ten times above the others'.  One step from
    each start (in the model that fits it best) ranked them right in every
    case examined, for one normal-equation evaluation per start.

    Parameters
    ----------
    starts : mapping
        ``{name: ((M, D, K, L), {kind: cost at the start})}``, finite costs only.
    par : Parametrisation
        The parameter map (packing a start sets its normalisation: the
        winner is packed again last).
    model : callable
        ``kind -> OutputError`` of that discretisation.

    Returns
    -------
    tuple
        ``(name, kind, theta after the step, residual evaluations used)``.
    """
    best = None
    evals = 0
    for name, (cand, costs) in starts.items():
        kind = min(costs, key=costs.get)
        oe = model(kind)
        with np.errstate(all="ignore"):
            sol = levenberg_marquardt(oe.residuals, None, par.pack(*cand), max_iter=1, normal=oe.normal_equations)
        evals += oe.n_evals
        if np.isfinite(sol["cost"]) and (best is None or sol["cost"] < best[3]):
            best = (name, kind, sol["x"], sol["cost"])
    if best is None:
        raise IdentificationError("no start gives a finite output error")
    par.pack(*starts[best[0]][0])
    return best[0], best[1], best[2], evals
