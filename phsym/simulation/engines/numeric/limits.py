"""The junction voltages Newton limits (SPICE's ``pnjlim``), shared by every law that reads them.

A term ``K exp(c w + c0)`` of a law, with ``K``, ``c`` free of ``w`` and of the
law's other variables (:func:`phsym.codegen.junctions.exp_terms`, the terms
the generated loop limits), makes its input ``w`` a junction.  Between
Newton iterations the junction's value is limited as SPICE limits a
junction voltage, in the term's own scale ``s = (c w + c0) / |c|`` with
``Vt = 1 / |c|`` and ``Vcrit = Vt ln(Vt / (sqrt(2) |K|))``; every kernel
that reads the same combination of unknowns (a transistor's base-emitter
voltage in both of its port laws) is evaluated at the limited value, and its
outputs are linearised there (``out + D (w - w_lim)``), as SPICE stamps a
device at its limited voltage.  An iteration that limited any junction is
not converged.  A storage solved through its effort is limited the same way
on its effort (start effort plus the unknown increment), with its forward
terms' ``K / h`` in place of ``K``, as the generated loop does.
"""
from __future__ import annotations

from typing import Dict, List, Mapping

import numpy as np
import sympy as sp

from ....codegen.junctions import exp_terms
from ....structure.circuit.canonical import placeholder_values

__all__ = ["Slots", "junction_slots"]


class Slots:
    """The limited junctions of a system.

    Attributes
    ----------
    terms : ndarray of int64 (n_terms,)
        The junction of each term (terms of one junction are consecutive).
    c, c0, vt, kabs : ndarray
        Per term: ``c``, ``c0``, ``Vt = 1/|c|``, ``|K|``.
    per_h : ndarray of bool
        Per term: a storage's, whose ``|K| / h`` counts.
    koff : ndarray of int64 (n_junctions,)
        Index in ``K`` of the offset added to the input (a start effort), or -1.
    readers : ndarray of int64 (n_readers, 6)
        ``(junction, input position, OUT base, outputs, unknown-dependent inputs, input index)``.
    tptr, rptr : ndarray of int64 (n_junctions + 1,)
        Where each junction's terms and readers start.
    """

    def __init__(self, terms: List[tuple], koff: List[int], readers: List[tuple]):
        t = np.array(terms, dtype=float).reshape(-1, 6)
        col = lambda k: np.ascontiguousarray(t[:, k])      # noqa: E731  (contiguous: one compiled signature)
        self.terms = np.ascontiguousarray(t[:, 0].astype(np.int64))
        self.c, self.c0, self.vt, self.kabs, self.per_h = col(1), col(2), col(3), col(4), t[:, 5] > 0
        self.koff = np.array(koff, dtype=np.int64)
        self.readers = np.array(readers, dtype=np.int64).reshape(-1, 6)
        n = self.koff.shape[0]
        self.tptr = np.searchsorted(self.terms, np.arange(n + 1)).astype(np.int64)
        self.rptr = np.searchsorted(self.readers[:, 0], np.arange(n + 1)).astype(np.int64)

    def __len__(self) -> int:
        return self.koff.shape[0]

    def vcrit(self, h: float) -> np.ndarray:
        """SPICE's critical voltage of each term at step ``h``."""
        k = np.where(self.per_h, self.kabs / h, self.kabs)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.vt * np.log(self.vt / (np.sqrt(2.0) * k))
        return np.ascontiguousarray(np.where(np.isfinite(out), out, np.inf))


def _terms(expr: sp.Expr, var: List[sp.Symbol], j: int, forward_only: bool) -> List[tuple]:
    out = []
    for arg, c, K in exp_terms(expr, var[j], [v for k, v in enumerate(var) if k != j]):
        if forward_only and c.could_extract_minus_sign():
            continue
        out.append((c, arg.xreplace({var[j]: 0}), sp.Abs(K)))
    return out


def junction_slots(system, inst: Dict[tuple, object], values: Mapping[sp.Symbol, float]) -> Slots:
    """The limited junctions of a :class:`~.system.System`'s kernel instances.

    Parameters
    ----------
    system : System
        The equations (circuit, layout, groups).
    inst : dict
        Instance of each nonlinear element (``("d", j)``, ``("s", i)``).
    values : mapping of sympy.Symbol to float
        Parameter values.
    """
    c, G, L = system.circuit, system.groups, system.L
    memo: Dict[tuple, list] = {}
    found: Dict[tuple, List[tuple]] = {}        # input key -> its terms
    koffs: Dict[tuple, int] = {}
    readers: Dict[tuple, List[tuple]] = {}      # input key -> (pin, o0, n_out, n_var, j)

    def key_of(var_input, koff):
        zent, kent = var_input
        return (tuple(sorted(zent)), tuple(sorted(kent)), koff)

    def visit(h, form, expr, var, j, forward_only, var_input, koff, per_h, placeholders, label):
        key = key_of(var_input, koff)
        n_out, n_var = G.shape(h)
        readers.setdefault(key, []).append((G.inp(h, j), G.out(h, 0), n_out, n_var, j))
        koffs[key] = koff
        mk = (form.key, j, forward_only)
        if mk not in memo:
            memo[mk] = _terms(expr, var, j, forward_only)
        if not memo[mk]:
            return
        P = dict(zip(form.params, placeholder_values([placeholders], values, [label])[0]))
        for cc, c0, K in memo[mk]:
            cv, c0v, Kv = (float(e.xreplace(P)) for e in (cc, c0, K))
            if np.isfinite(cv) and cv != 0.0 and np.isfinite(c0v) and np.isfinite(Kv):
                term = (cv, c0v, 1.0 / abs(cv), Kv, 1.0 if per_h else 0.0)
                if term not in found.setdefault(key, []):
                    found[key].append(term)
    for (kind, i), h in inst.items():
        if kind == "d":
            d = c.dissipations[i]
            var = d.form.variables
            ins = [system.port_variable(i)] + [system.port_variable(p) for p in d.ports] + \
                [system.state_input(r) for r in d.reads]
            for j in range(len(var)):
                visit(h, d.form, d.form.exprs[0], var, j, False, ins[j], -1, False, d.placeholders, d.element)
        else:
            s = c.storages[i]
            n_out, _ = G.shape(h)
            if s.by_effort and n_out > len(s.states):      # the effort's increment is the unknown
                v = s.form.variables
                visit(h, s.form, s.form.exprs[1], [v[1]], 0, True, ([(L.z_state(s.states[0]), 1.0)], []),
                      L.k_effort(s.states[0]), True, s.placeholders, s.element)
    terms, koff, rd = [], [], []
    for key, tl in found.items():
        jn = len(koff)
        koff.append(koffs[key])
        terms += [(jn,) + t for t in tl]
        rd += [(jn,) + r for r in readers[key]]
    return Slots(terms, koff, rd)
