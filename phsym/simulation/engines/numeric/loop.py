""":class:`NumericLoop`: the numeric engine behind a :class:`~phsym.simulation.plan.RunPlan`.

It holds a :class:`~.system.StepSystem` (the circuit's step at one
parameter set and scheme), turns it into the flat arrays of the compiled
loop (:mod:`.stepping`) for a step ``h`` (once per ``h``: sub-steps use
others), and runs it with the interface of the generated loop
(``run(x, U, h, rec, progress, chunk, carry)``, ``carry(start)``), so that
plans, streams and results do not know which engine stepped.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional

import numpy as np

from ....errors import SimulationError
from ..arrays import RunArrays, stepping
from ..substeps import MAX_LEVELS, Substeps, subdivide
from . import engine
from .codes import REUSE, STATUS
from .layout import STATE
from .ordering import PIVOT_TOL, column_order
from .snapshot import FrozenSystem, pack

if TYPE_CHECKING:       # a snapshot's loop runs without the laws' derivations (sympy)
    from .step import StepSystem

__all__ = ["NumericLoop", "ATTEMPT", "net_arrays"]

#: Newton iterations a step gets before it is subdivided (at most ``maxit``).  A step that does
#: not converge in tens of iterations is one where the circuit switches within the step (a logic
#: edge through a chain of gates: hundreds of iterations, each moving junctions by their limits);
#: its halves converge in a few, as SPICE cuts its time step after ``ITL4`` iterations.
ATTEMPT = 50


def _csr(M) -> tuple:
    return (np.ascontiguousarray(M.indptr, dtype=np.int64), np.ascontiguousarray(M.indices, dtype=np.int64),
            np.ascontiguousarray(M.data, dtype=float))


def _triplets_csr(T, h: float) -> tuple:
    p, i, x = T.csr(h)
    return (np.ascontiguousarray(p, dtype=np.int64), np.ascontiguousarray(i, dtype=np.int64),
            np.ascontiguousarray(x, dtype=float))


def net_arrays(S: StepSystem, h: float) -> tuple:
    """The residual's and Jacobian's numbers of the step system ``S`` at ``h`` (the ``net`` of
    :func:`.newton.evaluate`)."""
    table, P = S.groups.arrays()
    return (_triplets_csr(S.IZ, h), _triplets_csr(S.IK, h), _triplets_csr(S.R, h), _triplets_csr(S.RO, h),
            _triplets_csr(S.RK, h), S.jacobian_constant(h), S.stamp_pos, S.stamp_src, S.stamp_coefficients(h),
            table, P)


class NumericLoop:
    """The numeric engine's loop of one step system (see the module docstring).

    Parameters
    ----------
    system : StepSystem
        The circuit's step.
    xs : ndarray
        State scales (Newton's test and the divided differences' threshold).
    tol : float
        Newton tolerance on the scaled step.
    maxit : int
        Newton iteration cap per step.
    flag : bool
        Record failed steps and go on instead of raising.
    stiff : str, optional
        How stiff storages step (``"backward_euler"``/``"scheme"``), ``None`` without any.
    """

    KIND = "numeric"

    def __init__(self, system: StepSystem, xs: np.ndarray, tol: float, maxit: int, flag: bool,
                 stiff: Optional[str] = None):
        self.system = S = system
        L = S.L
        c = S.circuit
        self.key = None
        self.compiled = "ahead of time" if engine.aot_ready() else "numba cache"
        self.compile_time = 0.0
        self.xs = np.ascontiguousarray(xs, dtype=float)
        self.tol, self.maxit, self.flag = float(tol), int(maxit), bool(flag)
        self.stiff = stiff
        self.numerical = S.stiff_end.shape[0] > 0
        self.states: List[str] = list(c.states)
        self.unknowns: List[str] = list(L.names)
        self._circuit = c
        self.n_u = len(c.ports)
        #: Node potentials at the head of a step's effort vector (a probe vector's layout, :meth:`.parts.NumericParts.probe`)
        self.n_nodes = L.n_nodes
        self.n_e = L.n_nodes + len(c.branches) + self.n_u
        self.subdivided: Dict[int, int] = {}
        self.linear = len(S.groups) == 0
        state_of = np.full(L.n_z, -1, dtype=np.int64)
        for i in range(c.n_x):
            if i not in L.effort_index:
                state_of[L.z_state(i)] = i
        effort_z = np.zeros(L.n_effort, dtype=np.int64)
        for i, m in L.effort_index.items():
            effort_z[m] = L.z_state(i)
        self._maps = (state_of, effort_z, L.n_nodes)
        self._by_h: Dict[float, tuple] = {}
        #: ``starter(x, u0)``: Newton's start of a run from the state ``x`` (set by the planner)
        self.starter = None
        self._q = None
        self._cap = 0
        #: Newton's chord threshold (:data:`.newton.REUSE`; 0: refactor every iteration)
        self.reuse = REUSE

    # ------------------------------------------------------------------ snapshot
    def to_arrays(self) -> tuple:
        """``(meta, arrays)`` describing this loop (a warm start's snapshot, :mod:`.snapshot`); the
        Newton start of the run that made it is the plan's (:attr:`RunPlan.x_start`)."""
        meta, arrays = pack(self.system)
        meta.update(kind=self.KIND, tol=self.tol, maxit=self.maxit, flag=self.flag, stiff=self.stiff)
        return meta, {"xs": self.xs, **arrays}

    @classmethod
    def from_arrays(cls, meta: dict, arrays: dict) -> "NumericLoop":
        """The loop described by :meth:`to_arrays` (its kernels load on first run).

        Parameters
        ----------
        meta : dict
            JSON-able description.
        arrays : dict of str to ndarray
            The loop's arrays.
        """
        return cls(FrozenSystem(meta, arrays), arrays["xs"], meta["tol"], meta["maxit"], meta["flag"],
                   stiff=meta.get("stiff"))

    # ------------------------------------------------------------------ arrays
    def _arrays(self, h: float) -> tuple:
        """``(net, lim, post)`` of the compiled loop at step ``h``."""
        hit = self._by_h.get(h)
        if hit is not None:
            return hit
        S = self.system
        net = net_arrays(S, h)
        sl = S.slots
        lim = (sl.terms, sl.c, sl.c0, sl.vt, sl.vcrit(h), sl.readers, sl.tptr, sl.rptr)
        etable, EP = S.energies.arrays()
        post = (_triplets_csr(S.DZ, h), _triplets_csr(S.DO, h), _triplets_csr(S.BZ, h), _triplets_csr(S.BO, h),
                _triplets_csr(S.BK, h), _triplets_csr(S.V, h), _triplets_csr(S.QL, h), etable, EP,
                S.energy_inputs, S.passive, S.active, S.sources, S.stiff_end)
        if len(self._by_h) > 8:
            self._by_h.clear()
        self._by_h[h] = out = (net, lim, post)
        return out

    def _lu(self, grow: bool = False) -> tuple:
        """The LU work arrays (grown when the factors need more room)."""
        S = self.system
        n, nnz = S.L.n_z, S.J.nnz
        if self._q is None:
            self._q = column_order(S.J)
        if grow or not self._cap:
            self._cap = max(self._cap * 2, 4 * nnz + 2 * n + 16)
        cap = self._cap
        i64 = np.int64
        return (S.J.indptr, S.J.indices, self._q, np.zeros(n + 1, i64), np.zeros(cap, i64), np.zeros(cap),
                np.zeros(n + 1, i64), np.zeros(cap, i64), np.zeros(cap), np.zeros(n, i64), np.zeros(n),
                np.zeros(2 * n, i64), np.zeros(n, i64), np.zeros(n), PIVOT_TOL)

    def _work(self) -> tuple:
        S = self.system
        L = S.L
        nz, nb = L.n_z, len(S.circuit.branches)
        return (np.zeros(L.n_k), np.ones(nz), np.zeros(max(S.groups.n_in, 1)), np.zeros(max(S.groups.n_in, 1)),
                np.zeros(max(S.groups.n_out, 1)), np.zeros(nz), np.zeros(S.J.nnz), np.zeros(nz),
                np.zeros(max(S.energies.n_in, 1)), np.zeros(S.energies.n_out), np.zeros(S.energies.n_out),
                np.zeros(nb), np.zeros(nb), np.zeros(S.circuit.n_x), np.zeros(self.n_u), np.zeros(2 * nz))

    # ------------------------------------------------------------------ carry
    def carry(self, start: Optional[Mapping[str, float]] = None) -> dict:
        """What the loop keeps between calls besides the state (passing the same carry to
        successive :meth:`run` calls continues one run exactly).

        Parameters
        ----------
        start : mapping of str to float, optional
            Newton's start for the first step by unknown name (``v(node)``, ``i(V1)``...; for a
            state solved through its effort, ``v(ELEMENT)`` is its effort at the start, carried from
            step to step); others start at zero (a zero state's efforts).
        """
        S = self.system
        L = S.L
        z = np.zeros(L.n_z)
        se = np.zeros(L.n_effort)
        efforts = {L.z_state(i): m for i, m in L.effort_index.items()}
        for i, name in enumerate(self.unknowns if start else ()):
            if i in efforts:
                se[efforts[i]] = start.get(name, 0.0)
            elif L.kinds[i] != STATE:
                z[i] = start.get(name, 0.0)
        return {"z": z, "zh": np.zeros((2, L.n_z)), "cnt": np.zeros(1, np.int64), "se": se,
                "wold": None, "wstart": None, "lustate": np.zeros(4, np.int64), "lu": None, "work": None}

    # ------------------------------------------------------------------ run
    def run(self, x: np.ndarray, U: np.ndarray, h: float, rec: bool, progress=None, chunk: int = 0,
            carry: Optional[dict] = None):
        """Step from ``x`` (overwritten with the final state) over the grid inputs ``U``.

        Parameters
        ----------
        x : ndarray
            Initial state.
        U : ndarray (N+1, n_u)
            Inputs on the grid.
        h : float
            Step.
        rec : bool
            Record the step vectors ``[potentials, branch currents, inputs]``.
        progress : callable(done, total), optional
            Called after each chunk.
        chunk : int
            Steps per compiled call.
        carry : dict, optional
            From :meth:`carry`, updated in place.
        """
        n_c = self.system.L.n_c
        if U.shape[1] == self.n_u and n_c:      # no control columns: the plan's values held
            U = np.hstack([U, np.tile(self.system.control_values, (U.shape[0], 1))])
        if U.shape[1] != self.n_u + n_c:
            raise SimulationError(f"the input array has {U.shape[1]} columns: this circuit has {self.n_u} "
                                  f"inputs and {n_c} controls")
        t0 = time.perf_counter()
        cr = self.carry() if carry is None else carry
        if cr["lu"] is None:
            cr["lu"] = self._lu()
            cr["work"] = self._work()
            cr["wold"] = np.zeros(len(self.system.slots))
            cr["wstart"] = np.zeros(len(self.system.slots))
            cr["init"] = True
        N = U.shape[0] - 1
        A = RunArrays.allocate(N, x, self.n_u, self.n_e, rec)
        info = np.zeros(4, np.int64)
        U = np.ascontiguousarray(U, dtype=float)
        mid = self.system.scheme != "backward_euler"
        self.subdivided = {}
        compiled_run = engine.entry("run")

        def compiled(xx, UU, hh, k0, k1, AA, flag):
            while True:
                net, lim, post = self._arrays(float(hh))
                bad = compiled_run(k0, k1, float(hh), mid, UU, xx, cr["se"], self.xs, cr["z"], cr["zh"], cr["cnt"],
                                   net, lim, cr["lu"], post, self._maps, self.tol, min(self.maxit, ATTEMPT),
                                   self.linear,
                                   flag, AA.X, AA.Y, AA.Hh, AA.Pd, AA.Ps, AA.Pn, AA.IT, AA.FL, AA.E, bool(rec), info,
                                   cr["wold"], cr["wstart"], cr["lustate"], cr["work"], cr.get("init", False),
                                   float(self.reuse))
                cr["init"] = False
                if bad >= 0 and info[1] == 5:       # the LU factors need more room: grow, take the step again
                    cr["lu"] = self._lu(grow=True)
                    cr["lustate"][0] = 0
                    self._restart(cr, AA.X[bad], xx, 1.0)
                    k0 = int(bad)
                    continue
                return int(bad)

        def steps(k0, k1):
            k = k0
            while True:     # called at least once: steps(0, 0) loads the loop and sets H[0]
                bad = compiled(x, U, h, k, k1, A, False)
                if bad < 0:
                    return -1
                if not self._subdivide(compiled, A, U, x, cr, info, bad, h, rec):
                    if not self.flag:
                        return bad
                    self._restart(cr, A.X[bad], x, 1.0)    # flagged: the step as the loop takes it
                    compiled(x, U, h, bad, bad + 1, A, True)
                k = bad + 1
                if k >= k1:
                    return -1

        def failure(bad: int) -> SimulationError:
            st, qi = int(info[1]), int(info[2])
            names = self.states if st == 4 else self.unknowns
            quantity = names[qi] if 0 <= qi < len(names) else None
            at = ""
            if quantity:
                owners = self._owners(quantity)
                at = f" at {quantity}" + (f" (element{'s' if len(owners) > 1 else ''} {', '.join(owners)})"
                                          if owners else "")
            return SimulationError(f"{STATUS.get(st, 'step failed')}{at}, also in {2 ** MAX_LEVELS} sub-steps",
                                   step=bad, time=(bad + 1) * h, quantity=quantity)
        steps(0, 0)
        #: the Newton Jacobian's factorizations so far in this carry's run (chord steps reuse one)
        self.factorizations = cr["lustate"][3:4]
        if not engine.aot_ready() and not self.ready():
            from .freshness import mark_engine_ready
            mark_engine_ready(engine.jit("run"))
        self.compile_time = time.perf_counter() - t0
        return A, stepping(steps, N, h, progress, chunk, failure)

    @staticmethod
    def ready() -> bool:
        """Whether the engine is compiled on this machine (a run compiles nothing of it; :func:`.engine.ready`)."""
        return engine.ready()

    def _owners(self, quantity: str, most: int = 6) -> List[str]:
        """The elements an unknown belongs to: those at a node ``v(n)``, the element of a state or
        current (for a failure's message)."""
        c = self._circuit
        if quantity.startswith("v(") and quantity[2:-1] in c.nodes:
            node = quantity[2:-1]
            found = list(dict.fromkeys(b.element for b in c.branches if node in (b.node_from, b.node_to)))
        else:
            found = [s.element for s in c.storages if any(c.states[i] == quantity for i in s.states)]
            if not found and quantity[1:2] == "(":
                found = [quantity[2:-1]]
        return found[:most] + (["..."] if len(found) > most else [])

    def _restart(self, cr: dict, x_at, x: np.ndarray, scale: float) -> None:
        """Back to the last converged step (``x_at``; ``None``: only rescale), state increments scaled."""
        z, zh = cr["z"], cr["zh"]
        slots = self._maps[0] >= 0
        if x_at is not None:
            x[:] = x_at
            z[:] = zh[0]
            cr["wold"][:] = cr["wstart"]
        z[slots] *= scale
        zh[0] = z
        cr["cnt"][0] = min(cr["cnt"][0], 1)

    def _subdivide(self, compiled, A, U, x, cr, info, k, h, rec) -> bool:
        """Take the failed step ``k`` in sub-steps (:mod:`phsym.simulation.substeps`); False (and ``info``
        naming the original failure) when that fails too."""
        failed = info.copy()
        self._restart(cr, A.X[k], x, 0.5)
        acc = Substeps(self.n_u, self.n_e, rec)
        ok = subdivide(lambda xx, UU, hh, k0, k1, AA: compiled(xx, UU, hh, k0, k1, AA, False),
                       lambda n, xx: RunArrays.allocate(n, xx, self.n_u, self.n_e, rec),
                       x, lambda x_at, scale: self._restart(cr, x_at, x, scale), U[k], U[k + 1], h, acc)
        if not ok:
            info[:] = failed
            return False
        A.X[k + 1] = x
        A.Hh[k + 1] = acc.H_end
        A.Pd[k], A.Ps[k], A.Pc[k], A.Pn[k] = acc.Pd / h, acc.Ps / h, acc.Pc / h, acc.Pn / h
        A.Y[k] = acc.Y[:A.Y.shape[1]] / h
        if rec:
            A.E[k] = acc.E[:A.E.shape[1]] / h
        A.IT[k], A.FL[k] = acc.iterations, 0
        # the next step's predictor: this step's increments
        z = cr["z"]
        slots = self._maps[0] >= 0
        z[slots] = (A.X[k + 1] - A.X[k])[self._maps[0][slots]]
        z[self._maps[1]] = 0.0      # an effort's increment starts from no change (as the generated loop)
        cr["zh"][0] = z
        cr["cnt"][0] = 1
        self.subdivided[k] = acc.count
        return True
