"""Well-posedness of the network equations.

Topological errors (source loops and cut sets, floating nodes) are caught
while the tree is chosen.  Other ill-posed interconnections - typically
through ideal two-ports, e.g. a gyrator that turns a voltage source into a
current fixed against a current source - make the algebraic part of the
equations singular for *every* parameter value.  They are detected here:
with generic positive storage and dissipation coefficients the matrix pencil
``s E - (J - R) Q`` of the Dirac form must be regular (Kronecker), and a null
vector names the variables, hence the elements, that are over- or
under-determined.
"""
from __future__ import annotations

from typing import List, Mapping

import numpy as np
import sympy as sp

from ..errors import StructureError
from .dirac import Structure

__all__ = ["check_regular"]


def _pencil(S: Structure, values: Mapping[sp.Symbol, float], rng: np.random.Generator, s0: complex):
    """The pencil at ``s0``: a numpy array up to :data:`_SVD_ALWAYS` unknowns (a small netlist's load
    imports no scipy), else a scipy sparse matrix."""
    n = S.n_x + S.n_w + S.n_lambda
    q = np.ones(n)
    q[:S.n_x] = rng.uniform(0.5, 2.0, S.n_x)          # generic positive energy curvature
    r = np.zeros(n)
    r[S.n_x:S.n_x + S.n_w] = rng.uniform(0.5, 2.0, S.n_w)   # generic positive dissipation
    e = np.zeros(n)
    e[:S.n_x] = 1.0
    if n <= _SVD_ALWAYS:
        A = (S.J_numeric(values, dense=True)[:n, :n] - np.diag(r)) * q
        return s0 * np.diag(e) - A
    import scipy.sparse as sps
    Jn = S.J_numeric(values).tocsr()[:n, :n]
    A = (Jn - sps.diags(r)) @ sps.diags(q)
    return (s0 * sps.diags(e) - A).tocsc()


#: Pencils of at most this many unknowns are decided by their singular values alone.
_SVD_ALWAYS = 150


def check_regular(S: Structure, values: Mapping[sp.Symbol, float], seed: int = 0) -> None:
    """Raise :class:`StructureError` when the pencil of the structure is singular.

    Parameters
    ----------
    S : Structure
        The structure.
    values : mapping of sympy.Symbol to float
        Parameter values (two-port ratios enter the interconnection).
    seed : int
        Seed of the generic coefficients.
    """
    n = S.n_x + S.n_w + S.n_lambda
    if n == 0:
        return
    rng = np.random.default_rng(seed)
    s0 = complex(rng.uniform(0.3, 3.0), rng.uniform(0.3, 3.0))
    P = _pencil(S, values, rng, s0)
    # a sparse LU decides clear cases (a dense SVD of 600 unknowns took 3 s); the SVD decides the
    # rest up to 600 unknowns, as its singular values are the reliable rank test
    clear = False
    if n > _SVD_ALWAYS:
        from scipy.sparse.linalg import splu     # here: a netlist's load does not import scipy.linalg
        try:
            lu = splu(P.tocsc())
            d = np.abs(lu.U.diagonal())
            ratio = d.min() / max(d.max(), 1.0)
        except RuntimeError:
            ratio = 0.0
        singular = ratio <= 1e-12
        clear = ratio > 1e-6 or n > 600
    if not clear:
        sv = np.linalg.svd(P if isinstance(P, np.ndarray) else P.toarray(), compute_uv=False)
        singular = sv[-1] <= 1e-10 * max(sv[0], 1.0)
    if not singular:
        return
    elements = _null_elements(S, (P if isinstance(P, np.ndarray) else P.toarray()) if n <= 600 else None, values)
    raise StructureError(
        "the network equations are singular: some currents/voltages are fixed twice "
        "(a relation between inputs) or not at all", elements,
        hint="check two-ports (TF, GY) tying sources together, or sources fixing the same quantity")


def _null_elements(S: Structure, Pd, values) -> List[str]:
    if Pd is None:
        return []
    _, sv, Vh = np.linalg.svd(Pd)
    null = np.abs(Vh[-1])
    _, _, Uh = np.linalg.svd(Pd.conj().T)
    left = np.abs(Uh[-1])
    weight = null + left
    idx = np.nonzero(weight > 1e-6 * weight.max())[0]
    names = []
    for i in idx:
        el = S.variables[i].element
        if el and el not in names:
            names.append(el)
    # sources acting on the singular part
    Jn = S.J_numeric(values).tocsr()
    u = S.block("u")
    for k in range(u.start, u.stop):
        if np.any(np.abs(Jn[idx, k].toarray()) > 0) and S.variables[k].element not in names:
            names.append(S.variables[k].element)
    return names
