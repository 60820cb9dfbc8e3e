"""The Python subset the C translation covers: value kinds, names, literals (:mod:`.translate`)."""
from __future__ import annotations

import ast
from typing import Dict, List, Tuple

from ...errors import ExportError

__all__ = ["SCALARS", "POWI", "HELPERS", "Normalise", "Function", "join", "ctype", "literal", "pure_call",
           "MATH", "PREDICATES", "CONST", "CMP", "BIN", "RESERVED"]

#: Kinds of values: scalars ``d`` (double), ``i`` (long), ``b`` (int flag); arrays ``D1``, ``D2``
#: (double, 1-D / 2-D), ``I1``, ``I2`` (long); ``T<n>``: a local tuple of n doubles.
SCALARS = ("d", "i", "b")

#: ``x ** n`` for an integer ``n`` as numba computes it (its literal-exponent power: square and multiply).
POWI = """static inline double ph_powi(double a, long n)
{
    double r = 1.0;
    long e = n < 0 ? -n : n;
    while (e != 0) {
        if (e & 1)
            r = r * a;
        e >>= 1;
        a = a * a;
    }
    return n < 0 ? 1.0 / r : r;
}"""

#: Python's two-argument min and max (the first argument wins ties and NaN comparisons), libm-free.
HELPERS = POWI + """
static inline double ph_fmin(double a, double b) { return b < a ? b : a; }
static inline double ph_fmax(double a, double b) { return b > a ? b : a; }
static inline long ph_imin(long a, long b) { return b < a ? b : a; }
static inline long ph_imax(long a, long b) { return b > a ? b : a; }"""

MATH = {"exp": "exp", "log": "log", "sqrt": "sqrt", "log1p": "log1p", "expm1": "expm1", "hypot": "hypot",
         "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh",
         "atan": "atan", "atan2": "atan2", "asin": "asin", "acos": "acos", "fabs": "fabs", "pow": "pow",
         "floor": "floor", "ceil": "ceil", "log10": "log10", "erf": "erf", "copysign": "copysign"}
PREDICATES = {"isfinite": "isfinite", "isnan": "isnan", "isinf": "isinf"}
CONST = {"nan": "NAN", "inf": "INFINITY", "pi": "M_PI_PH", "e": "M_E_PH"}
CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|", ast.RShift: ">>",
        ast.LShift: "<<"}
#: C keywords and libm names a Python local may not keep.
RESERVED = {"auto", "case", "char", "const", "default", "do", "double", "enum", "extern", "float", "goto",
             "int", "long", "register", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
             "union", "unsigned", "void", "volatile", "inline", "restrict", "exp", "log", "pow", "sqrt",
             "abs", "fabs", "main", "hypot", "isfinite", "isnan", "NAN", "INFINITY", "fmin", "fmax", "log1p",
             "expm1", "erf", "floor", "ceil", "sin", "cos", "tan", "y0", "y1", "j0", "j1", "signbit"}
PURE = set(MATH) | set(PREDICATES) | {"abs", "min", "max", "float", "int"}


class Normalise(ast.NodeTransformer):
    """``a, b = (x, y) if c else (z, w)`` -> ``a, b = (x if c else z, y if c else w)`` (pure operands)."""

    def visit_Assign(self, node: ast.Assign) -> ast.Assign:
        v = node.value
        if isinstance(node.targets[0], ast.Tuple) and isinstance(v, ast.IfExp) and isinstance(v.body, ast.Tuple) \
                and isinstance(v.orelse, ast.Tuple) and len(v.body.elts) == len(v.orelse.elts):
            node.value = ast.Tuple([ast.IfExp(v.test, a, b) for a, b in zip(v.body.elts, v.orelse.elts)], ast.Load())
        return self.generic_visit(node)

    def visit_For(self, node: ast.For) -> ast.For:
        # a loop counter gets a name of its own: the generated loop reuses ``r`` for a float elsewhere
        if isinstance(node.target, ast.Name):
            old = node.target.id
            stored = any(isinstance(n, ast.Name) and n.id == old and isinstance(n.ctx, ast.Store)
                         for b in node.body for n in ast.walk(b))
            if not stored:
                new = f"{old}_l"
                node.target.id = new
                for b in node.body:
                    for n in ast.walk(b):
                        if isinstance(n, ast.Name) and n.id == old:
                            n.id = new
        return self.generic_visit(node)


def join(a: str, b: str) -> str:
    if a == b:
        return a
    if a in SCALARS and b in SCALARS:
        return "d" if "d" in (a, b) else "i"
    raise ExportError(f"C export: a name holds both {a} and {b} values")


def ctype(kind: str) -> str:
    return {"d": "double", "i": "long", "b": "int"}[kind]


def literal(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "NAN"
        if v in (float("inf"), float("-inf")):
            return "INFINITY" if v > 0 else "(-INFINITY)"
        return repr(v) if ("e" in repr(v) or "." in repr(v)) else repr(v) + ".0"
    raise ExportError(f"C export: constant {v!r} is not a number")


class Function:
    """One Python function being translated (its environment and output lines)."""

    def __init__(self, node: ast.FunctionDef, kinds: Dict[str, str], cname: str, dims: Dict[str, Tuple[str, ...]]):
        self.node, self.cname = node, cname
        self.params = [a.arg for a in node.args.args]
        self.env: Dict[str, str] = dict(kinds)
        self.dims: Dict[str, Tuple[str, ...]] = dict(dims)     # array -> C expressions of its dimensions
        self.ret = "void"
        self.ret_tuple = 0
        self.lines: List[str] = []


def pure_call(name: str) -> bool:
    """Whether a call of ``name`` (as written in the source) has no effect but its value."""
    return name.split(".")[-1] in PURE or name.startswith("junction_")
