"""Differential test: phsym against an independent modified nodal analysis (MNA).

Random R/L/C/K/V/I circuits (seeded) are built twice: as a phsym netlist and
as the MNA equations ``E_m x' + G_m x = B_m u`` written here from scratch
(unknowns: node potentials, voltage-source currents, inductor currents).  A
circuit is well posed when it has no loop of voltage sources only and no cut
set of current sources only; then the MNA pencil is regular and phsym must
accept it and agree with the reference

* on the transfer functions ``G(s)`` of every port at several complex ``s``,
  feedthrough included (``LinearPHS.transfer``);
* step by step on transients: the MNA equations discretised here by the
  theta rule in charge/flux variables give the same recursion as phsym's
  midpoint (Cayley-Tustin) and backward Euler steps, so outputs agree to
  round-off; the midpoint run's discrete power balance (feedthrough power
  included) must hold to round-off as well.

Port conventions (phsym's): ``V n+ n-`` has ``u = e(n+) - e(n-)`` and
``y`` = current delivered out of ``n+`` into the circuit; ``I n+ n-`` pushes
``u`` out of ``n+`` through the source into ``n-`` and ``y = e(n-) - e(n+)``.
"""
import warnings

import networkx as nx
import numpy as np
import pytest

import phsym
from phsym.errors import PhsymError

N_CIRCUITS = 240
N_TRANSIENT = 40          # circuits also simulated (the cheaper check is the transfer function)
S_POINTS = (0.37 + 1.3j, 2.1j, 4.0 + 0.5j, 0.05 + 0.0j)


def random_circuit(rng: np.random.Generator):
    """Element list ``(name, kind, a, b, value)`` and couplings ``(name, L1, L2, k)``."""
    n_nodes = int(rng.integers(1, 5))
    nodes = ["0"] + [f"n{i}" for i in range(1, n_nodes + 1)]
    kinds = "RRRCCLLVVII"
    pairs = [(nodes[i], nodes[int(rng.integers(0, i))]) for i in range(1, len(nodes))]   # spanning tree
    for _ in range(int(rng.integers(1, n_nodes + 3))):
        a, b = rng.choice(len(nodes), 2, replace=False)
        pairs.append((nodes[a], nodes[b]))
    elements, count = [], {}
    for a, b in pairs:
        kind = kinds[int(rng.integers(len(kinds)))]
        count[kind] = count.get(kind, 0) + 1
        value = float(np.round(rng.uniform(0.2, 3.0), 3))
        if rng.random() < 0.5:
            a, b = b, a
        elements.append((f"{kind}{count[kind]}", kind, a, b, value))
    inductors = [e[0] for e in elements if e[1] == "L"]
    couplings = []
    if len(inductors) >= 2 and rng.random() < 0.6:
        l1, l2 = rng.choice(inductors, 2, replace=False)
        couplings.append(("K1", str(l1), str(l2), float(np.round(rng.uniform(-0.9, 0.9), 3))))
    return elements, couplings


def netlist(elements, couplings) -> str:
    lines = [f"{n} {a} {b}" + ("" if k in "VI" else f" {v}") for n, k, a, b, v in elements]
    lines += [f"{n} {l1} {l2} {k}" for n, l1, l2, k in couplings]
    return "\n".join(lines) + "\n"


def well_posed(elements) -> bool:
    """No loop of voltage sources only, no cut set of current sources only."""
    vg = nx.MultiGraph()
    for n, k, a, b, _ in elements:
        if k == "V":
            if vg.has_node(a) and vg.has_node(b) and nx.has_path(vg, a, b):
                return False
            vg.add_edge(a, b)
    rest = nx.MultiGraph()
    rest.add_nodes_from(x for e in elements for x in e[2:4])
    rest.add_edges_from((a, b) for n, k, a, b, _ in elements if k != "I")
    return all(nx.has_path(rest, a, b) for n, k, a, b, _ in elements if k == "I")


class MNA:
    """``E_m x' + G_m x = B_m u``, ``y = C_m x + D_m u`` of a circuit (phsym port conventions)."""

    def __init__(self, elements, couplings):
        nodes = sorted({x for e in elements for x in e[2:4]} - {"0"})
        self.sources = [e for e in elements if e[1] in "VI"]
        vs = [e for e in elements if e[1] == "V"]
        ls = [e for e in elements if e[1] == "L"]
        nn, nv, nl, m = len(nodes), len(vs), len(ls), len(self.sources)
        n = nn + nv + nl
        idx = {x: i for i, x in enumerate(nodes)}
        G, E = np.zeros((n, n)), np.zeros((n, n))
        B, C, D = np.zeros((n, m)), np.zeros((m, n)), np.zeros((m, m))

        def inc(node):      # incidence entry of a node (the datum has none)
            return [] if node == "0" else [idx[node]]

        for name, kind, a, b, val in elements:
            if kind in "RC":
                M = G if kind == "R" else E
                g = 1.0 / val if kind == "R" else val
                for p, sp_ in ((a, 1), (b, -1)):
                    for q, sq in ((a, 1), (b, -1)):
                        for i in inc(p):
                            for j in inc(q):
                                M[i, j] += sp_ * sq * g
        self.branch = {}
        for j, (name, kind, a, b, val) in enumerate(vs + ls):
            r = nn + j
            self.branch[name] = r
            for i in inc(a):           # branch current leaves a, enters b
                G[i, r] += 1.0
                G[r, i] -= 1.0         # row: -(e_a - e_b) (+ u or + s L i) = 0
            for i in inc(b):
                G[i, r] -= 1.0
                G[r, i] += 1.0
        L = {name: val for name, kind, a, b, val in ls}
        for name in L:
            E[self.branch[name], self.branch[name]] += L[name]
        for _, l1, l2, k in couplings:
            mutual = k * np.sqrt(L[l1] * L[l2])
            E[self.branch[l1], self.branch[l2]] += mutual
            E[self.branch[l2], self.branch[l1]] += mutual
        for p, (name, kind, a, b, val) in enumerate(self.sources):
            if kind == "V":            # -(e_a - e_b) + u = 0; y = -(current into n+)
                B[self.branch[name], p] = -1.0
                C[p, self.branch[name]] = -1.0
            else:                      # u leaves a, enters b; y = e_b - e_a
                for i in inc(a):
                    B[i, p] -= 1.0
                    C[p, i] -= 1.0
                for i in inc(b):
                    B[i, p] += 1.0
                    C[p, i] += 1.0
        self.E, self.G, self.B, self.C, self.D = E, G, B, C, D
        self.names = [e[0] for e in self.sources]

    def regular(self, s: complex = 0.37 + 1.3j) -> bool:
        """Whether the pencil ``s E_m + G_m`` is regular (tested at one generic ``s``)."""
        sv = np.linalg.svd(s * self.E + self.G, compute_uv=False)
        return sv.size == 0 or sv[-1] > 1e-10 * sv[0]

    def transfer(self, s: complex) -> np.ndarray:
        """``y = G(s) u``."""
        X = np.linalg.solve(s * self.E + self.G, self.B)
        return self.C @ X + self.D

    def theta_steps(self, u: np.ndarray, h: float, theta: float) -> np.ndarray:
        """Step outputs of the theta rule in charge/flux variables ``q = E_m x``:
        ``(q_{k+1} - q_k)/h + G_m xbar = B_m ubar`` with ``E_m xbar = q_k + theta (q_{k+1} - q_k)``,
        ``ubar = u_k + theta (u_{k+1} - u_k)`` (midpoint: 1/2, backward Euler: 1)."""
        K = self.E / (theta * h) + self.G
        q = np.zeros(self.E.shape[0])
        out = []
        for k in range(u.shape[0] - 1):
            ub = u[k] + theta * (u[k + 1] - u[k])
            xb = np.linalg.solve(K, self.B @ ub + q / (theta * h))
            q = q + (self.E @ xb - q) / theta
            out.append(self.C @ xb + self.D @ ub)
        return np.array(out)


def circuits(n: int = N_CIRCUITS, seed: int = 20261123):
    rng = np.random.default_rng(seed)
    return [random_circuit(rng) for _ in range(n)]


def _build(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # dangling nodes are warnings
        return phsym.parse(text)


def _order(model, ref):
    """Permutation of phsym's inputs into the reference's order."""
    names = [str(u).lower() for u in model.inputs]
    return [names.index(n.lower()) for n in ref.names]


def test_reference_conventions():
    """The MNA reference on closed forms: V1 || R1 with I1 into their node."""
    ref = MNA([("V1", "V", "a", "0", 0), ("R1", "R", "a", "0", 2.0), ("I1", "I", "0", "a", 0)], [])
    # y(V1) = u_V / R - u_I (KCL at a), y(I1) = e(a) = u_V
    assert np.allclose(ref.transfer(1j).real, [[0.5, -1.0], [1.0, 0.0]], atol=1e-14)


def test_random_circuits_agree_with_mna():
    accepted, posed, failures = 0, 0, []
    for i, (elements, couplings) in enumerate(circuits()):
        text = netlist(elements, couplings)
        ok = well_posed(elements)
        assert MNA(elements, couplings).regular() == ok, f"circuit {i}: the reference disagrees\n{text}"
        posed += ok
        try:
            model = _build(text)
            lin = model.linearize()
        except PhsymError as exc:
            if ok:
                failures.append(f"circuit {i} rejected: {exc}\n{text}")
            continue
        accepted += 1
        assert ok, f"circuit {i} is ill posed but accepted:\n{text}"
        ref = MNA(elements, couplings)
        if not ref.sources:
            continue
        p = _order(model, ref)
        for s in S_POINTS:
            Gp = lin.transfer(s)[np.ix_(p, p)]
            Gr = ref.transfer(s)
            err = np.max(np.abs(Gp - Gr)) / max(1.0, np.max(np.abs(Gr)))
            assert err < 1e-9, f"circuit {i}, s = {s}: |G - G_mna| = {err:.2e}\n{text}{Gp}\n{Gr}"
    print(f"\nwell posed {posed}/{N_CIRCUITS}, accepted {accepted}, well posed but rejected {len(failures)}")
    assert not failures, f"{len(failures)} well-posed circuits rejected; first:\n" + failures[0]
    assert posed > N_CIRCUITS // 2


@pytest.mark.parametrize("method, theta", [("midpoint", 0.5), ("backward_euler", 1.0)])
def test_random_transients_agree_with_mna(method, theta):
    rng = np.random.default_rng(7)
    h, n = 0.05, 120
    checked = 0
    for i, (elements, couplings) in enumerate(circuits()):
        if checked == N_TRANSIENT:
            break
        if not well_posed(elements) or not any(e[1] in "VI" for e in elements):
            continue
        text = netlist(elements, couplings)
        model = _build(text)
        ref = MNA(elements, couplings)
        m = len(ref.sources)
        u = np.zeros((n + 1, m))
        u[1:] = rng.standard_normal((n, m))          # u_0 = 0: the zero state is consistent
        p = _order(model, ref)
        up = np.empty_like(u)
        up[:, p] = u
        res = phsym.Simulator(model, fs=1.0 / h, method=method, linear_solver="sparse").run(up)
        y_ref = ref.theta_steps(u, h, theta)
        y = res.y[:, p]
        err = np.max(np.abs(y - y_ref)) / max(1.0, np.max(np.abs(y_ref)))
        assert err < 1e-8, f"circuit {i}: transient differs by {err:.2e}\n{text}"
        if theta == 0.5:          # backward Euler dissipates numerically
            assert res.max_balance_error < 1e-9, f"circuit {i}: power balance {res.max_balance_error:.2e}\n{text}"
        checked += 1
    assert checked == N_TRANSIENT
