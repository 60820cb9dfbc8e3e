"""The sparse LU's column order and pivot threshold: set up in Python before the compiled LU
(:mod:`.sparse`) runs, without numba."""
from __future__ import annotations

import numpy as np

__all__ = ["PIVOT_TOL", "SMALL", "column_order"]

#: Threshold of partial pivoting: the diagonal (row ``q[k]``) is kept when it is at least this
#: fraction of the column's largest candidate (KLU's default); :func:`.sparse.lu_refactor` asks for a new
#: factorization when a pivot falls below the same fraction.
PIVOT_TOL = 1e-3


#: Unknowns up to which :func:`column_order` runs its own minimum degree (small circuits: no scipy
#: import, 0.3 s of a fresh process); above, SuperLU's.
SMALL = 64


def _minimum_degree(n: int, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Minimum degree on the pattern of ``A^T + A`` (the elimination graph kept exactly; ties to the
    highest index, as SuperLU's ordering breaks them): the columns in the order they are eliminated."""
    adj = [set() for _ in range(n)]
    for c in range(n):
        for r in indices[indptr[c]:indptr[c + 1]].tolist():
            if r != c:
                adj[r].add(c)
                adj[c].add(r)
    alive = set(range(n))
    order = []
    while alive:
        v = min(alive, key=lambda i: (len(adj[i]), -i))
        order.append(v)
        alive.discard(v)
        nb = adj[v]
        for a in nb:        # eliminating v joins its neighbours into a clique
            adj[a].discard(v)
            adj[a] |= nb - {a}
    return np.asarray(order, dtype=np.int64)


def column_order(A) -> np.ndarray:
    """Fill-reducing column order ``q`` of a square sparse matrix (minimum degree on ``A^T + A``):
    ``q[k]`` is the column in position ``k``.

    Parameters
    ----------
    A : scipy.sparse matrix or Compressed
        The matrix, or a compressed pattern (``shape``, ``indptr``, ``indices``; its values are
        not read).  Up to :data:`SMALL` unknowns the order is computed here; above, by SuperLU
        (the pattern given a dominant diagonal, so that it completes on any pattern).
    """
    n = A.shape[0]
    if n <= 2:
        return np.arange(n, dtype=np.int64)
    if n <= SMALL:
        C = A.tocsc() if hasattr(A, "tocsc") else A
        return _minimum_degree(n, np.asarray(C.indptr), np.asarray(C.indices))
    import scipy.sparse as sps
    from scipy.sparse.linalg import splu
    if not hasattr(A, "tocsc"):
        A = A.matrix(np.ones(A.nnz))
    P = sps.csc_matrix(A, copy=True)
    P.data = np.abs(P.data) + 1.0
    P = (P + sps.identity(n, format="csc") * (abs(P).sum() + 1.0)).tocsc()
    lu = splu(P, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    perm_c = np.asarray(lu.perm_c, dtype=np.int64)
    q = np.empty(n, dtype=np.int64)
    q[perm_c] = np.arange(n, dtype=np.int64)
    return q
