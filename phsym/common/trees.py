"""Small expression trees as JSON: numbers, indexed placeholders and a few operations.

A fact derived with sympy (a law form's junction terms,
:mod:`phsym.codegen.laws.facts`) is kept as such a tree and evaluated by
:func:`evaluate` without sympy, on every path that reads it.
"""
from __future__ import annotations

import math
from typing import List, Sequence

__all__ = ["encode", "evaluate", "valid", "PAR"]

#: Name prefix of the placeholders ``_p0, _p1, ...`` (:mod:`phsym.structure.circuit.form`).
PAR = "_p"

_UNARY = {"exp": math.exp, "log": math.log, "abs": abs, "sqrt": math.sqrt}


def encode(expr, n_params: int) -> list:
    """A sympy expression of the placeholders ``_p0 ...`` as a tree of lists (JSON).

    Nodes: ``["n", x]`` a number, ``["p", i]`` placeholder ``i``, ``["+", ...]``,
    ``["*", ...]``, ``["^", base, exp]`` and ``[f, arg]`` for ``f`` in ``exp``,
    ``log``, ``abs``, ``sqrt``.

    Parameters
    ----------
    expr : sympy.Expr
        The expression.
    n_params : int
        The form's number of placeholders.

    Raises
    ------
    ValueError
        For anything else (the fact is then not kept).
    """
    import sympy as sp
    e = sp.sympify(expr)
    if e.is_Number:
        if not e.is_real:
            raise ValueError(f"not a real number: {e}")
        return ["n", float(e)]
    if e.is_Symbol:
        name = e.name
        if name.startswith(PAR) and name[len(PAR):].isdigit() and int(name[len(PAR):]) < n_params:
            return ["p", int(name[len(PAR):])]
        raise ValueError(f"not a placeholder: {name}")
    if e.is_Add or e.is_Mul:
        return ["+" if e.is_Add else "*"] + [encode(a, n_params) for a in e.args]
    if e.is_Pow:
        return ["^", encode(e.base, n_params), encode(e.exp, n_params)]
    for name, cls in (("exp", sp.exp), ("log", sp.log), ("abs", sp.Abs)):
        if isinstance(e, cls) and len(e.args) == 1:
            return [name, encode(e.args[0], n_params)]
    raise ValueError(f"cannot encode {type(e).__name__}")


def evaluate(tree: list, P: Sequence[float]) -> float:
    """The value of an encoded tree (:func:`encode`) at the placeholder values ``P``.

    Non-finite and non-real results are ``nan`` or ``inf``, as the caller's
    tests of finiteness expect.
    """
    op = tree[0]
    if op == "n":
        return float(tree[1])
    if op == "p":
        return float(P[tree[1]])
    args = [evaluate(a, P) for a in tree[1:]]
    try:
        if op == "+":
            return _sum(args)
        if op == "*":
            out = 1.0
            for a in args:
                out *= a
            return out
        if op == "^":
            r = args[0] ** args[1]
            return float("nan") if isinstance(r, complex) else float(r)
        return float(_UNARY[op](args[0]))
    except OverflowError:
        return float("inf")
    except (ValueError, ZeroDivisionError):
        return float("nan")


def _sum(args: List[float]) -> float:
    out = 0.0       # left to right, as the trees are written
    for a in args:
        out += a
    return out


def valid(tree, n_params: int) -> bool:
    """Whether a tree read from a file is one :func:`encode` writes (no other operation, no index
    outside the placeholders)."""
    if not isinstance(tree, list) or not tree:
        return False
    op, args = tree[0], tree[1:]
    if op == "n":
        return len(args) == 1 and isinstance(args[0], (int, float)) and not isinstance(args[0], bool)
    if op == "p":
        return len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool) \
            and 0 <= args[0] < n_params
    if op in ("+", "*"):
        return len(args) >= 1 and all(valid(a, n_params) for a in args)
    if op == "^":
        return len(args) == 2 and all(valid(a, n_params) for a in args)
    return op in _UNARY and len(args) == 1 and valid(args[0], n_params)
