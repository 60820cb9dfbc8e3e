"""Normal tree selection and the fundamental loop matrix.

A spanning tree is chosen greedily by branch priority (Kruskal with a
union-find).  With tree branches T and links L, Kirchhoff's laws read
``v_L = M v_T`` and ``i_T = -M^T i_L``; the Dirac structure of the network is
``c = S a`` with ``a = (v_T, i_L)``, ``c = (i_T, v_L)`` and the skew matrix
``S = [[0, -M^T], [M, 0]]``.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np
import scipy.sparse as sps

from ..components.base import Branch
from ..errors import StructureError

__all__ = ["select_tree", "loop_matrix"]


class _UnionFind:
    def __init__(self):
        self.parent: Dict[str, str] = {}

    def find(self, a: str) -> str:
        p = self.parent.setdefault(a, a)
        while p != a:
            self.parent[a] = self.parent.setdefault(p, p)
            a, p = p, self.parent[p]
        return a

    def union(self, a: str, b: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[ra] = rb
        return True


def select_tree(branches: Sequence[Branch]) -> np.ndarray:
    """Choose a spanning forest by priority.

    Parameters
    ----------
    branches : sequence of Branch
        In model order; ties in priority keep this order.

    Returns
    -------
    numpy.ndarray of bool
        ``in_tree[k]`` for each branch.
    """
    order = sorted(range(len(branches)), key=lambda k: (branches[k].priority, k))
    uf = _UnionFind()
    in_tree = np.zeros(len(branches), dtype=bool)
    for k in order:
        br = branches[k]
        if uf.union(br.node_from, br.node_to):
            in_tree[k] = True
    return in_tree


def loop_matrix(branches: Sequence[Branch], in_tree: np.ndarray) -> Tuple[sps.csr_matrix, List[List[int]]]:
    """Fundamental loop matrix ``M`` (links x tree branches) with ``v_L = M v_T``.

    Parameters
    ----------
    branches : sequence of Branch
    in_tree : numpy.ndarray of bool

    Returns
    -------
    M : scipy.sparse.csr_matrix of int
        Shape (n_links, n_tree), entries in {-1, 0, 1}; rows follow the order
        of links in ``branches``, columns the order of tree branches.
    paths : list of list of int
        For each link, the indices (into ``branches``) of the tree branches of
        its fundamental loop.
    """
    tree_idx = [k for k in range(len(branches)) if in_tree[k]]
    link_idx = [k for k in range(len(branches)) if not in_tree[k]]
    col = {k: j for j, k in enumerate(tree_idx)}
    adj: Dict[str, List[Tuple[str, int]]] = {}
    for k in tree_idx:
        b = branches[k]
        adj.setdefault(b.node_from, []).append((b.node_to, k))
        adj.setdefault(b.node_to, []).append((b.node_from, k))
    parent: Dict[str, Tuple[str, int]] = {}
    depth: Dict[str, int] = {}
    for root in list(adj):
        if root in depth:
            continue
        depth[root] = 0
        stack = [root]
        while stack:
            n = stack.pop()
            for m, k in adj[n]:
                if m not in depth:
                    depth[m] = depth[n] + 1
                    parent[m] = (n, k)
                    stack.append(m)
    rows, cols, vals = [], [], []
    paths: List[List[int]] = []
    for r, k in enumerate(link_idx):
        b = branches[k]
        a, z = b.node_from, b.node_to
        if a not in depth or z not in depth:
            raise StructureError(f"branch {b.name} is not connected to the tree", [b.element])
        # v_link = e(a) - e(z) = sum over the tree path a -> z of signed tree voltages
        up_a: List[Tuple[int, int]] = []   # (branch, sign) walking from a upwards
        up_z: List[Tuple[int, int]] = []
        x, y = a, z
        while depth[x] > depth[y]:
            p, kk = parent[x]
            up_a.append((kk, 1 if branches[kk].node_from == x else -1))
            x = p
        while depth[y] > depth[x]:
            p, kk = parent[y]
            up_z.append((kk, -1 if branches[kk].node_from == y else 1))
            y = p
        while x != y:
            p, kk = parent[x]
            up_a.append((kk, 1 if branches[kk].node_from == x else -1))
            x = p
            p, kk = parent[y]
            up_z.append((kk, -1 if branches[kk].node_from == y else 1))
            y = p
        path = up_a + up_z
        paths.append([kk for kk, _ in path])
        for kk, s in path:
            rows.append(r)
            cols.append(col[kk])
            vals.append(s)
    M = sps.csr_matrix((np.array(vals, dtype=np.int64), (rows, cols)),
                       shape=(len(link_idx), len(tree_idx)))
    return M, paths
