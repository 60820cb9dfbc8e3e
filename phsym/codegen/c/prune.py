"""The generated ``run`` without the energy record: what a plugin's audio thread does not need.

Every step of the simulator's loop books the stored energy ``H``, the
dissipated, supplied, control and numerical powers (the power balance of
the run) besides the outputs.  :func:`without_record` removes those
stores from the function's syntax tree, replaces the finiteness test of
``H`` by one of the state (a step that leaves a non-finite state still
fails), and :func:`dead_code` then drops every assignment whose value
nothing reads any more (the energies' own subexpressions, an exponential
of a junction's energy), so the C compiler is not left to prove that a
``libm`` call has no effect.
"""
from __future__ import annotations

import ast
import copy
from typing import List, Sequence, Set

from .translate import pure_call

__all__ = ["without_record", "dead_code"]

#: Arrays of the energy record (``Hh``: H at the grid points, ``Pd``, ``Ps``, ``Pc``, ``Pn``: step powers).
RECORD = ("Hh", "Pd", "Ps", "Pc", "Pn")


def _stores_record(s: ast.stmt) -> bool:
    t = s.targets[0] if isinstance(s, ast.Assign) else getattr(s, "target", None)
    return isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in RECORD


def _energy_check(s: ast.stmt) -> bool:
    """``if not math.isfinite(hh):``: the test of the step's energy."""
    return isinstance(s, ast.If) and "isfinite(hh)" in ast.unparse(s.test)


def without_record(fn: ast.FunctionDef, n_x: int) -> ast.FunctionDef:
    """A copy of the generated ``run`` that books no energy or power.

    Parameters
    ----------
    fn : ast.FunctionDef
        The generated ``run``.
    n_x : int
        Number of states (the finiteness test reads them all).
    """
    fn = copy.deepcopy(fn)
    finite = " + ".join(f"x[{i}]" for i in range(n_x)) or "0.0"
    test = ast.parse(f"not math.isfinite({finite})", mode="eval").body

    def walk(body: List[ast.stmt]) -> List[ast.stmt]:
        out = []
        for s in body:
            if isinstance(s, (ast.Assign, ast.AugAssign)) and _stores_record(s):
                continue
            if _energy_check(s):
                s.test = test
            for field in ("body", "orelse"):
                if hasattr(s, field):
                    setattr(s, field, walk(getattr(s, field)))
            if isinstance(s, (ast.If, ast.For, ast.While)) and not s.body:
                s.body = [ast.Pass()]
            out.append(s)
        return out

    fn.body = walk(fn.body)
    return dead_code(fn)


def _reads(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _pure(e: ast.expr) -> bool:
    return all(pure_call(ast.unparse(c.func)) for c in ast.walk(e) if isinstance(c, ast.Call))


def dead_code(fn: ast.FunctionDef) -> ast.FunctionDef:
    """Drop assignments to local names that nothing reads afterwards (liveness, conservative at
    loops and jumps), until none is left.

    Parameters
    ----------
    fn : ast.FunctionDef
        Function to prune (modified in place and returned).
    """
    params = {a.arg for a in fn.args.args}
    while True:
        everything = _reads(fn)
        removed = [0]

        def suite(body: Sequence[ast.stmt], live: Set[str]) -> tuple:
            out: List[ast.stmt] = []
            for s in reversed(body):
                if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                        and s.targets[0].id not in params:
                    name = s.targets[0].id
                    if name not in live and _pure(s.value):
                        removed[0] += 1
                        continue
                    live = (live - {name}) | _reads(s.value)
                elif isinstance(s, ast.If):
                    b, lb = suite(s.body, set(live))
                    o, lo = suite(s.orelse, set(live))
                    s.body, s.orelse = (b or [ast.Pass()]), o
                    live = lb | lo | _reads(s.test)
                elif isinstance(s, (ast.For, ast.While)):
                    head = _reads(s.iter) if isinstance(s, ast.For) else _reads(s.test)
                    inside = live | _reads(s) | head
                    b, lb = suite(s.body, set(inside))
                    s.body = b or [ast.Pass()]
                    live = inside | lb
                elif isinstance(s, (ast.Break, ast.Continue, ast.Return)):
                    live = set(everything)
                else:
                    live = live | _reads(s)
                    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                        live.add(s.target.id)      # x += ... reads x
                out.append(s)
            return list(reversed(out)), live

        fn.body, _ = suite(fn.body, set())
        if not removed[0]:
            return fn
