"""The junction voltages Newton limits (SPICE's ``pnjlim``), shared by every law that reads them.

A term ``K exp(c w + c0)`` of a law, with ``K``, ``c`` free of ``w`` and of the
law's other variables (:func:`phsym.codegen.newton.junctions.exp_terms`, the terms
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

from typing import TYPE_CHECKING, Dict, List, Mapping

import numpy as np

if TYPE_CHECKING:       # Slots is read by a snapshot's loop, without sympy
    import sympy as sp

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
    readers : ndarray of int64 (n_readers, 7)
        ``(junction, input position, OUT base, outputs, unknown-dependent inputs, input index,
        K index of the offset added to the input to give the junction's value (a start effort) or -1)``.
    tptr, rptr : ndarray of int64 (n_junctions + 1,)
        Where each junction's terms and readers start.
    """

    def __init__(self, terms: List[tuple], n: int, readers: List[tuple]):
        t = np.array(terms, dtype=float).reshape(-1, 6)
        col = lambda k: np.ascontiguousarray(t[:, k])      # noqa: E731  (contiguous: one compiled signature)
        self.terms = np.ascontiguousarray(t[:, 0].astype(np.int64))
        self.c, self.c0, self.vt, self.kabs, self.per_h = col(1), col(2), col(3), col(4), t[:, 5] > 0
        self.n = n
        self.readers = np.array(readers, dtype=np.int64).reshape(-1, 7)
        self.tptr = np.searchsorted(self.terms, np.arange(n + 1)).astype(np.int64)
        self.rptr = np.searchsorted(self.readers[:, 0], np.arange(n + 1)).astype(np.int64)

    def __len__(self) -> int:
        return self.n

    def vcrit(self, h: float) -> np.ndarray:
        """SPICE's critical voltage of each term at step ``h``."""
        k = np.where(self.per_h, self.kabs / h, self.kabs)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.vt * np.log(self.vt / (np.sqrt(2.0) * k))
        return np.ascontiguousarray(np.where(np.isfinite(out), out, np.inf))


def _terms(expr: sp.Expr, var: List[sp.Symbol], j: int, forward_only: bool) -> List[tuple]:
    import sympy as sp
    from ....codegen.newton.junctions import exp_terms
    out = []
    for arg, c, K in exp_terms(expr, var[j], [v for k, v in enumerate(var) if k != j]):
        if forward_only and c.could_extract_minus_sign():
            continue
        out.append((c, arg.xreplace({var[j]: 0}), sp.Abs(K)))
    return out


def _form_terms(form, which: int, j: int, forward_only: bool) -> tuple:
    """``(encoded, terms)``: the junction terms of variable ``j`` of expression ``which`` of a form,
    encoded (:mod:`phsym.codegen.laws.facts`: a form known by its key alone reads them from there),
    or as sympy expressions when they cannot be encoded."""
    from ....codegen.laws.facts import junction_terms
    derived = []

    def derive():
        # an effort law's state law x(e) reads the effort alone (its variable 1)
        var = form.variables if which == 0 else [form.variables[1]]
        derived.extend(_terms(form.exprs[which], var, j, forward_only))
        return derived
    encoded = junction_terms(form, j, forward_only, derive)
    if encoded is not None:
        return True, encoded
    return False, derived or derive()


def _term_values(terms: tuple, form, P: np.ndarray) -> List[tuple]:
    """``(c, c0, |K|)`` of each term at the placeholder values ``P``."""
    encoded, ts = terms
    if encoded:
        from ....codegen.laws.facts import evaluate
        return [tuple(evaluate(x, P) for x in t) for t in ts]
    sub = dict(zip(form.params, P))
    return [tuple(float(e.xreplace(sub)) for e in t) for t in ts]


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
    from ....structure.circuit.values import placeholder_values
    c, G, L = system.circuit, system.groups, system.L
    memo: Dict[tuple, list] = {}
    found: Dict[tuple, List[tuple]] = {}        # junction key -> its terms
    readers: Dict[tuple, List[tuple]] = {}      # junction key -> (pin, o0, n_out, n_var, j, koff)

    def key_of(var_input, koff):
        """The junction's value as a combination of unknowns and known values: the input plus its
        offset (a storage's effort ``s0 + dv`` read as ``v`` is the port voltage ``v``)."""
        zent, kent = var_input
        k: Dict[int, float] = {}
        for idx, coef in list(kent) + ([(koff, 1.0)] if koff >= 0 else []):
            k[idx] = k.get(idx, 0.0) + coef
        return (tuple(sorted(zent)), tuple(sorted((i, v) for i, v in k.items() if v != 0.0)))

    def visit(h, form, which, j, forward_only, var_input, koff, per_h, placeholders, label):
        key = key_of(var_input, koff)
        n_out, n_var = G.shape(h)
        readers.setdefault(key, []).append((G.inp(h, j), G.out(h, 0), n_out, n_var, j, koff))
        mk = (form.key, j, forward_only)
        if mk not in memo:
            memo[mk] = _form_terms(form, which, j, forward_only)
        if not memo[mk][1]:
            return
        P = placeholder_values([placeholders], values, [label])[0]
        for cc, c0, K in _term_values(memo[mk], form, P):
            if np.isfinite(cc) and cc != 0.0 and np.isfinite(c0) and np.isfinite(K):
                term = (cc, c0, 1.0 / abs(cc), K, 1.0 if per_h else 0.0)
                if term not in found.setdefault(key, []):
                    found[key].append(term)
    for (kind, i), h in inst.items():
        if kind == "d":
            if i in system.moved:       # a conductance a control moves: no junction
                continue
            d = c.dissipations[i]
            ins = [system.port_variable(i)] + [system.port_variable(p) for p in d.ports] + \
                [system.state_input(r) for r in d.reads]
            for j in range(d.form.n_vars):
                visit(h, d.form, 0, j, False, ins[j], -1, False, d.placeholders, d.element)
        else:
            s = c.storages[i]
            n_out, _ = G.shape(h)
            if s.by_effort and n_out > len(s.states):      # the effort's increment is the input
                visit(h, s.form, 1, 0, True, system.effort_input(s.states[0]),
                      L.k_effort(s.states[0]), True, s.placeholders, s.element)
    terms, rd = [], []
    for jn, (key, tl) in enumerate(found.items()):
        terms += [(jn,) + t for t in tl]
        rd += [(jn,) + r for r in readers[key]]
    return Slots(terms, len(found), rd)
