"""The numbers of a circuit's coefficients and placeholders at a parameter set, without importing sympy.

A placeholder (:mod:`.canonical`) or a linear coefficient is an expression
of parameter symbols, evaluated here per parameter set; a circuit described
without sympy holds the numbers themselves, which pass through unchanged.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ...errors import StructureError

if TYPE_CHECKING:
    import sympy as sp

__all__ = ["placeholder_values", "linear_hessians"]


_LAMBDAS: Dict["sp.Expr", Tuple[object, list]] = {}


def _arithmetic(expr: "sp.Expr", values: Mapping["sp.Symbol", float]) -> Optional[float]:
    """The value of a sum / product / power of numbers and symbols (``1/C1``: one per capacitor, too
    many distinct expressions to compile each), or ``None`` for anything else."""
    if isinstance(expr, (int, float)):
        return float(expr)
    if expr.is_Rational or expr.is_Float:
        return float(expr)
    if expr.is_Symbol:
        return float(values[expr])
    if expr.is_Pow:
        b, e = _arithmetic(expr.base, values), _arithmetic(expr.exp, values)
        if b is None or e is None:
            return None
        r = b ** e
        return float("nan") if isinstance(r, complex) else r
    if expr.is_Mul or expr.is_Add:
        out = 1.0 if expr.is_Mul else 0.0
        for a in expr.args:
            v = _arithmetic(a, values)
            if v is None:
                return None
            out = out * v if expr.is_Mul else out + v
        return out
    return None


def _value(expr: "sp.Expr", values: Mapping["sp.Symbol", float]) -> float:
    if isinstance(expr, (int, float)):      # a circuit described without sympy holds its numbers
        return float(expr)
    if len(expr.args) <= 4:
        v = _arithmetic(expr, values)
        if v is not None:
            return v
    hit = _LAMBDAS.get(expr)
    if hit is None:
        import sympy as sp
        syms = sorted(expr.free_symbols, key=str)
        hit = _LAMBDAS[expr] = (sp.lambdify(syms, expr, "math"), syms)
    fn, syms = hit
    return float(fn(*[float(values[s]) for s in syms]))


def placeholder_values(rows: Sequence[Sequence["sp.Expr"]], values: Mapping["sp.Symbol", float],
                       elements: Sequence[str] = ()) -> np.ndarray:
    """The numbers of the placeholders of many instances of one form.

    Parameters
    ----------
    rows : sequence of sequence of sympy.Expr or float
        Per instance, what its placeholders stand for (from :func:`~.canonical.canonical`), or their
        numbers.
    values : mapping of sympy.Symbol to float
        Parameter values.
    elements : sequence of str
        The instances' element names (for the error message).

    Returns
    -------
    numpy.ndarray (n_instances, n_params)

    Raises
    ------
    StructureError
        For a placeholder that is not a finite real number at these values.
    """
    n = len(rows[0]) if rows else 0
    out = np.empty((len(rows), n))
    for i, row in enumerate(rows):
        for j, ex in enumerate(row):
            try:
                v = _value(ex, values)
            except (KeyError, TypeError, ValueError, ArithmeticError):
                v = float("nan")
            if not np.isfinite(v):
                name = elements[i] if i < len(elements) else f"instance {i}"
                raise StructureError(f"a value of {name} is not a finite real number: {ex}", [name] if elements else [],
                                     hint="check the element's values and the parameters they use")
            out[i, j] = v
    return out


def linear_hessians(storages: Sequence, values: Mapping["sp.Symbol", float]) -> List[Optional[np.ndarray]]:
    """``Q`` (``n x n``) of each linear storage (``None`` for the others), in one pass.

    The storages given by a compliance (a capacitor's ``C``: ``Q = 1 / C``)
    are evaluated together as numbers, without a sympy ``1 / C`` each.

    Parameters
    ----------
    storages : sequence of StorageItem
        The circuit's storages (:attr:`~phsym.structure.circuit.data.CircuitData.storages`).
    values : mapping of sympy.Symbol to float
        Parameter values.

    Raises
    ------
    StructureError
        For an entry that is not a finite real number at these values.
    """
    out: List[Optional[np.ndarray]] = [None] * len(storages)
    by_compliance = [k for k, s in enumerate(storages) if s.linear and s.compliance is not None]
    if by_compliance:
        C = placeholder_values([[storages[k].compliance] for k in by_compliance], values,
                               [storages[k].element for k in by_compliance])[:, 0]
        with np.errstate(divide="ignore"):
            Q = 1.0 / C
        for k, q in zip(by_compliance, Q):
            # a zero compliance: the sympy entry's own evaluation and message
            out[k] = np.array([[q]]) if np.isfinite(q) else None
    for k, s in enumerate(storages):
        if s.linear and out[k] is None:
            Qk = placeholder_values([[e for row in s.hessian for e in row]], values, [s.element])[0]
            out[k] = Qk.reshape(len(s.states), len(s.states))
    return out
