"""Mass-spring-damper networks <-> (M, D, K, L): the netlist of an identified system.

A network of masses (each tied to the datum), springs and dampers between
masses or to the wall has a diagonal M and K, D of the form *graph
Laplacian plus a non-negative diagonal*: off-diagonal entries ``<= 0`` (a
spring ``k = -K[i, j]`` between masses i and j) and non-negative row sums
(a spring ``k = sum_j K[i, j]`` from mass i to the wall).  Forces enter
through columns of L that are a unit vector (force on one mass) or
``e_a - e_b`` (a force between two masses, mobility analogy of
:doc:`components`).
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from ...errors import IdentificationError

__all__ = ["network_netlist", "NotANetworkError"]


class NotANetworkError(IdentificationError):
    """The matrices are not those of a mass-spring-damper network (the message says why)."""


def _fmt(x: float) -> str:
    return f"{x:.12g}"


def _laplacian_edges(A: np.ndarray, name: str, tol: float) -> tuple:
    """Edges ``(i, j, value)`` (j = -1: to the wall) of ``A = Laplacian + diag``, or the reasons it is not."""
    n = A.shape[0]
    scale = max(float(np.max(np.abs(A))), 1e-300)
    edges, problems = [], []
    for i in range(n):
        for j in range(i + 1, n):
            if A[i, j] > tol * scale:
                problems.append(f"{name}[{i},{j}] = {A[i, j]:.4g} > 0 (no spring or damper pulls two masses together)")
            elif A[i, j] < -tol * scale:
                edges.append((i, j, -float(A[i, j])))
    for i in range(n):
        row = float(A[i].sum() - sum(A[i, j] for j in range(n) if j != i and abs(A[i, j]) <= tol * scale))
        if row < -tol * scale:
            problems.append(f"row {i} of {name} sums to {row:.4g} < 0 (a negative element to the wall)")
        elif row > tol * scale:
            edges.append((i, -1, row))
    return edges, problems


def network_netlist(M: np.ndarray, D: np.ndarray, K: np.ndarray, L: Optional[np.ndarray] = None, *,
                    tol: float = 1e-6, title: str = "identified mass-spring-damper network",
                    input_names: Optional[Sequence[str]] = None) -> str:
    """phsym netlist of masses, springs, dampers and force sources with these matrices.

    Node ``vi`` is the velocity of mass i (mobility analogy); ``Fj`` applies
    input j.  Entries smaller than ``tol`` times the largest entry of their
    matrix count as zero.

    Parameters
    ----------
    M, D, K : numpy.ndarray
        Mass, damping and stiffness matrices.
    L : numpy.ndarray, optional
        Input matrix (identity by default).
    tol : float
        Relative threshold below which an entry counts as zero.
    title : str
        ``.title`` line.
    input_names : sequence of str, optional
        Names of the force sources (default ``F1 ..``).

    Returns
    -------
    str
        Netlist text.

    Raises
    ------
    NotANetworkError
        M is not diagonal, K or D is not a Laplacian plus a non-negative
        diagonal, or a column of L is not a force on one mass or between two.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[3.0, -1.0], [-1.0, 1.0]])
    >>> print(network_netlist(np.diag([1.0, 2.0]), 0.1 * K, K).strip())
    .title identified mass-spring-damper network
    F1 v1 0 force
    F2 v2 0 force
    M1 v1 0 mass m=1
    M2 v2 0 mass m=2
    K1_2 v1 v2 spring k=1
    K1 v1 0 spring k=2
    B1_2 v1 v2 damper c=0.1
    B1 v1 0 damper c=0.2
    .end
    """
    M, D, K = (np.asarray(a, dtype=float) for a in (M, D, K))
    n = M.shape[0]
    L = np.eye(n) if L is None else np.asarray(L, dtype=float).reshape(n, -1)
    problems: List[str] = []
    mscale = float(np.max(np.abs(np.diag(M))))
    off = M - np.diag(np.diag(M))
    if np.max(np.abs(off), initial=0.0) > tol * mscale:
        i, j = np.unravel_index(np.argmax(np.abs(off)), off.shape)
        problems.append(f"M is not diagonal (M[{i},{j}] = {M[i, j]:.4g}): not point masses")
    if np.min(np.diag(M)) <= 0:
        problems.append("M has a non-positive diagonal entry")
    k_edges, pk = _laplacian_edges(K, "K", tol)
    d_edges, pd = _laplacian_edges(D, "D", tol)
    problems += pk + pd
    lscale = max(float(np.max(np.abs(L))), 1e-300)
    forces = []
    for c in range(L.shape[1]):
        col = np.where(np.abs(L[:, c]) > tol * lscale, L[:, c], 0.0)
        nz = np.flatnonzero(col)
        if nz.size == 1:
            a, b, g = nz[0], None, col[nz[0]]
        elif nz.size == 2 and abs(col[nz[0]] + col[nz[1]]) <= tol * lscale:
            a, b = (nz[0], nz[1]) if col[nz[0]] > 0 else (nz[1], nz[0])
            g = abs(col[nz[0]])
        else:
            problems.append(f"column {c} of L is not a force on one mass or between two masses")
            continue
        if abs(g - 1.0) > tol:
            problems.append(f"column {c} of L has gain {g:.4g}, not 1 (a force source applies its input unscaled)")
            continue
        forces.append((c, a, b))
    if problems:
        raise NotANetworkError("not a mass-spring-damper network: " + "; ".join(problems))
    names = list(input_names) if input_names is not None else [f"F{c + 1}" for c in range(L.shape[1])]
    lines = [f".title {title}"]
    for c, a, b in forces:
        lines.append(f"{names[c]} v{a + 1} {'0' if b is None else f'v{b + 1}'} force")
    lines += [f"M{i + 1} v{i + 1} 0 mass m={_fmt(M[i, i])}" for i in range(n)]
    for edges, letter, kind, key in ((k_edges, "K", "spring", "k"), (d_edges, "B", "damper", "c")):
        for i, j, v in edges:
            if j < 0:
                lines.append(f"{letter}{i + 1} v{i + 1} 0 {kind} {key}={_fmt(v)}")
            else:
                lines.append(f"{letter}{i + 1}_{j + 1} v{i + 1} v{j + 1} {kind} {key}={_fmt(v)}")
    lines.append(".end")
    return "\n".join(lines) + "\n"
