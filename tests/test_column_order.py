"""The small circuits' own minimum-degree column order (phsym.simulation.engines.numeric.ordering),
against a hand derivation and against SuperLU's minimum degree."""
import numpy as np
import pytest
import scipy.sparse as sps
from scipy.sparse.linalg import splu

from phsym.simulation.engines.numeric.ordering import SMALL, column_order


def _fill(A, q) -> int:
    """Entries of the Cholesky factor of the pattern of A^T + A eliminated in the order q (the
    elimination graph, counted independently of the ordering's own code)."""
    n = A.shape[0]
    S = (abs(A) + abs(A).T).tocsr()
    adj = [set(S.indices[S.indptr[i]:S.indptr[i + 1]].tolist()) - {i} for i in range(n)]
    done, fill = set(), 0
    for v in q.tolist():
        nb = adj[v] - done
        fill += len(nb)
        for a in nb:
            adj[a] |= nb - {a}
        done.add(v)
    return fill


def _superlu_order(A):
    n = A.shape[0]
    P = sps.csc_matrix(abs(A) + sps.identity(n) * (abs(A).sum() + 1.0))
    lu = splu(P, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    q = np.empty(n, dtype=np.int64)
    q[np.asarray(lu.perm_c)] = np.arange(n)
    return q


def test_an_arrow_matrix_eliminates_its_hub_last():
    """By hand: every leaf of a star has degree 1 and the hub n - 1; eliminating a leaf adds no
    edge, so the hub (here column 3) stays until the last leaves, and the factor has no fill."""
    n = 12
    A = sps.lil_matrix((n, n))
    for i in range(n):
        A[i, i] = 1.0
        A[3, i] = A[i, 3] = 1.0
    A = sps.csc_matrix(A)
    q = column_order(A)
    assert sorted(q.tolist()) == list(range(n))
    assert q.tolist().index(3) >= n - 2          # the hub ties with the last leaf only
    assert _fill(A, q) == n - 1                  # the star's own edges, no fill
    assert _fill(A, np.arange(n)) > _fill(A, q)  # the natural order fills the whole trailing block


@pytest.mark.parametrize("seed", range(8))
def test_small_orders_fill_like_superlus_minimum_degree(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, SMALL + 1))
    A = sps.random(n, n, density=3.0 / n, random_state=seed, format="lil")
    for i in range(n):
        A[i, i] = 0.0 if i % 5 == 0 else 1.0     # MNA-like: source rows without a diagonal
        A[i, (i + 1) % n] = 1.0
    A = sps.csc_matrix(A)
    q = column_order(A)
    assert sorted(q.tolist()) == list(range(n))
    ours, theirs, natural = _fill(A, q), _fill(A, _superlu_order(A)), _fill(A, np.arange(n))
    assert ours <= 1.25 * theirs + 2 and ours <= natural
