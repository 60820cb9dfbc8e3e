"""Structure checks of a large model in floating point, on its branch graph and element values.

The symbolic checks (:func:`phsym.structure.checks.check_structure`) need
the symbolic Dirac structure, which sympy builds in minutes and gigabytes for
thousands of branches.  The same statements hold for every circuit phsym
builds, and are checked here numerically at the default parameters, in time
and memory linear in the number of branches:

* ``J skew``: the interconnection of the branches in fundamental-loop form,
  ``[v_L; i_T] = [[0, M], [-M^T, 0]] [i_L; v_T]`` (``M`` the loop matrix of
  the normal tree, :func:`phsym.graph.loop_matrix`), assembled as a sparse
  matrix, satisfies ``J + J^T = 0`` exactly;
* ``Tellegen``: for random node potentials ``e`` and random link currents,
  the branch voltages ``A^T e`` obey ``v_L = M v_T`` and the branch currents
  ``(-M^T i_L, i_L)`` obey ``A i = 0`` (``A`` the incidence matrix, built
  independently of ``M``), and their power sums to zero;
* ``power balance``: the same powers summed per role (storages, dissipations,
  sources, two-ports) balance: ``dH/dt + P_diss - y^T u = 0`` in branch
  terms;
* ``dissipation passive``, ``R PSD``: every linear resistance-like
  coefficient is non-negative and every nonlinear one-port law satisfies
  ``w z(w) >= 0`` on a grid (:func:`phsym.components.dissipation.check_passive`);
* ``Q^T E PSD``: the Hessian of every quadratic storage is positive
  semi-definite at the defaults.
"""
from __future__ import annotations

from typing import Dict, Mapping, Sequence

import numpy as np
import sympy as sp

from ..common.bounded import NotReal, nonreal_points, real_value
from ..components.dissipation import check_passive
from ..errors import StructureError
from ..graph import loop_matrix

__all__ = ["numeric_checks", "complex_laws"]


def _incidence(branches, nodes: Sequence[str]) -> "scipy.sparse.csr_matrix":
    """Node-branch incidence (datum row dropped): +1 where a branch leaves a node, -1 where it enters."""
    import scipy.sparse as sps      # here and below: loading a small netlist needs no scipy
    index = {n: k for k, n in enumerate(nodes)}
    rows, cols, vals = [], [], []
    for j, b in enumerate(branches):
        for node, sign in ((b.node_from, 1), (b.node_to, -1)):
            if node in index:
                rows.append(index[node])
                cols.append(j)
                vals.append(sign)
    return sps.csr_matrix((np.array(vals, dtype=float), (rows, cols)), shape=(len(nodes), len(branches)))


def _value(expr, values: Mapping[sp.Symbol, float]) -> float:
    try:
        return real_value(sp.sympify(expr), values)
    except NotReal:
        return float("nan")


def numeric_checks(branches, in_tree: np.ndarray, records, values: Mapping[sp.Symbol, float],
                   seed: int = 0) -> Dict[str, bool]:
    """The structure checks of :func:`~phsym.structure.checks.check_structure`, numerically.

    Parameters
    ----------
    branches : sequence of Branch
        The graph's branches (:func:`phsym.graph.branches_of`).
    in_tree : numpy.ndarray of bool
        Its normal tree.
    records : tuple
        ``(storages, dissipations, ports, twoports)`` of the model.
    values : mapping of sympy.Symbol to float
        Parameter values.
    seed : int
        Seed of the random test vectors.

    Returns
    -------
    dict of str to bool
        The keys of the symbolic checks (see the module docstring).
    """
    import scipy.sparse as sps
    storages, dissipations, _, _ = records
    rng = np.random.default_rng(seed)
    n = len(branches)
    tree = np.flatnonzero(in_tree)
    links = np.flatnonzero(~np.asarray(in_tree, dtype=bool))
    M, _ = loop_matrix(branches, in_tree)
    M = M.astype(float)
    out: Dict[str, bool] = {}
    J = sps.bmat([[None, M], [-M.T, None]], format="csr") if len(links) and len(tree) else \
        sps.csr_matrix((len(links) + len(tree),) * 2)
    out["J skew"] = bool(abs(J + J.T).max() == 0) if J.nnz else True

    nodes = sorted({b.node_from for b in branches} | {b.node_to for b in branches} - {"0"})
    A = _incidence(branches, nodes)
    e = rng.standard_normal(len(nodes))
    v = A.T @ e                                 # KVL by construction
    i = np.zeros(n)
    i_links = rng.standard_normal(len(links))
    i[links] = i_links
    i[tree] = -(M.T @ i_links)                  # currents the loop matrix implies
    scale = 1.0 + np.abs(v).max(initial=0) * np.abs(i).max(initial=0) * max(n, 1)
    kvl = np.abs(v[links] - M @ v[tree]).max(initial=0) <= 1e-9 * (1 + np.abs(v).max(initial=0))
    kcl = np.abs(A @ i).max(initial=0) <= 1e-9 * (1 + np.abs(i).max(initial=0))
    p = v * i
    out["Tellegen"] = bool(kvl and kcl and abs(p.sum()) <= 1e-9 * scale)
    roles: Dict[str, float] = {}
    for b, pk in zip(branches, p):
        roles[b.role] = roles.get(b.role, 0.0) + pk
    # dH/dt (storages) + P_diss (dissipations) = power delivered by the sources and two-ports
    balance = roles.get("storage", 0.0) + roles.get("dissipation", 0.0) \
        - (-roles.get("source_effort", 0.0) - roles.get("source_flow", 0.0) - roles.get("twoport", 0.0))
    out["power balance"] = bool(kvl and kcl and abs(balance) <= 1e-9 * scale)

    passive, r_psd = True, True
    for d in dissipations:
        if d.couples or d.reads or d.nullator:
            continue        # multiports: their passivity was decided when the element was built
        if d.linear:
            c = _value(sp.sympify(d.law).xreplace({d.variable: 1}), values)
            r_psd &= bool(c >= 0)
            passive &= bool(c >= 0)
        else:
            try:
                check_passive(d.element, d.law, d.variable, values)
            except StructureError:
                passive = False
    out["dissipation passive"] = passive
    out["R PSD"] = r_psd

    ok = True
    for st in storages:
        if not st.is_quadratic:
            continue
        if st.hessian is not None and len(st.states) == 1:
            Hn = np.array([[_value(st.hessian, values)]])
        else:
            H = sp.sympify(st.hamiltonian)
            Hn = np.array([[_value(sp.diff(H, a, b), values) for b in st.states] for a in st.states])
        if not np.all(np.isfinite(Hn)):
            ok = False
            continue
        ok &= bool(np.min(np.linalg.eigvalsh(0.5 * (Hn + Hn.T))) >= -1e-9 * max(1.0, np.abs(Hn).max()))
    out["Q^T E PSD"] = ok
    return out


def complex_laws(elements, values: Mapping[sp.Symbol, float]) -> Dict[str, list]:
    """Laws of ``elements`` (netlist element specs) that leave the real numbers somewhere on
    :data:`phsym.common.bounded.GRID` (0 excluded) at ``values``: element name -> those points."""
    out = {}
    for spec in elements:
        law = spec.law
        if law is None or getattr(law, "learn", False) or not law.expr.free_symbols <= set(values) | {law.variable}:
            continue
        bad = [x for x in nonreal_points(law.expr, law.variable, values) if x != 0.0]
        if bad:
            out[spec.name] = bad
    return out
