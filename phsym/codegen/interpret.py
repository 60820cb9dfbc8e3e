"""Generated loops run as Python, not compiled: ``PHSYM_JIT=0``.

A generated Newton-loop or sensitivity module (:mod:`phsym.codegen.newton`),
or an unrolled linear loop (:mod:`phsym.codegen.linear_gen`), is plain
Python, ``math`` and numpy under numba's ``@njit``.  With the
environment variable ``PHSYM_JIT`` set to ``0`` (or ``off``, ``no``,
``false``, ``interpret``) :func:`load` executes the same file with the
decorators dropped and every compiled helper it calls
(:mod:`phsym.codegen.kernels`) replaced by its Python function, so nothing
is compiled: a breakpoint in the cached ``phsym_gen_<key>.py`` stops in
pdb, and a short run starts at once instead of after a compile of seconds
to minutes (hundreds of times slower per step, though).

The generated code is compiled with ``error_model="numpy"``: a float
division by zero gives ``inf``/``nan``, ``math.exp`` overflows to ``inf``,
``math.log(0.0)`` is ``-inf``, a negative base to a fractional power is
``nan``.  Python raises there instead, so the interpreted code takes
``/``, ``//``, ``%`` and ``**`` through functions that fall back to numpy's
scalars on the exception (a literal nonzero divisor divides natively), runs
``math`` functions that fall back the same way, and its entry points ignore
numpy's floating-point warnings (the compiled code has none).  An integer
power is multiplied out in numba's order (Python's ``**`` calls libm's
``pow``, which can differ in the last bit).  Otherwise the arithmetic is
Python's IEEE doubles, libm's functions as numba calls them: on the tested
circuits the interpreted loop takes the compiled loop's steps bit for bit
(tests/test_interpret.py).

Law kernels passed to compiled code by address (:mod:`phsym.codegen.laws`),
the numeric engine and the ahead-of-time extensions always stay compiled.
"""
from __future__ import annotations

import __future__
import ast
import functools
import inspect
import math
import operator
import os
import sys
import textwrap
import types
from pathlib import Path
from typing import Callable, Dict

import numpy as np

__all__ = ["ENV", "LOOP", "enabled", "compiled_kernels", "load", "plain", "MATH"]

#: The environment variable that turns compilation of generated loops off.
ENV = "PHSYM_JIT"
_OFF = ("0", "off", "no", "false", "interpret")
#: The value that runs the generated loop as Python but calls the shared kernels compiled.
LOOP = "loop"


def enabled() -> bool:
    """Whether generated loops run interpreted (``PHSYM_JIT`` is ``0``, ``off``, ``no``, ``false``,
    ``interpret`` or ``loop``)."""
    return os.environ.get(ENV, "").strip().lower() in _OFF + (LOOP,)


def compiled_kernels() -> bool:
    """Whether an interpreted loop calls the shared kernels compiled (``PHSYM_JIT=loop``: they are
    compiled once per machine, not per circuit; a fit spends about a third of its interpreted time
    in the LU kernels run as Python)."""
    return os.environ.get(ENV, "").strip().lower() == LOOP


def _scalar(a):
    """``a`` as a numpy scalar, whose arithmetic gives inf/nan where Python's raises."""
    return np.int64(a) if type(a) is int else np.float64(a)


def _numpy(op, a, b):
    with np.errstate(all="ignore"):
        return op(_scalar(a), _scalar(b))


def _div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        # Python numbers: the IEEE quotient without a numpy scalar (a junction loop divides by zero
        # often enough for numpy's error state to cost a tenth of its interpreted run)
        if type(b) in (float, int) and type(a) in (float, int):
            a = float(a)
            if a != a:
                return a                        # nan: the hardware propagates the dividend's
            if a == 0.0:
                return math.inf - math.inf      # 0/0: the hardware's default nan, numba's bits
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return _numpy(operator.truediv, a, b)


def _floordiv(a, b):
    try:
        return a // b
    except ZeroDivisionError:
        return _numpy(operator.floordiv, a, b)


def _mod(a, b):
    try:
        return a % b
    except ZeroDivisionError:
        return _numpy(operator.mod, a, b)


def _integer_power(a, n: int):
    """``a ** n`` by squaring, the multiplications in numba's order (its power with an integer
    exponent: Python's ``**`` calls libm's ``pow``, which may round differently)."""
    invert, n, res = n < 0, abs(n), 1.0
    while n:
        if n & 1:
            res = res * a
        n >>= 1
        if n:
            a = a * a
    return _div(1.0, res) if invert else res


def _pow(a, b):
    if type(b) is int and type(a) is not int:
        return _integer_power(a, b)
    try:
        r = a ** b
    except (ZeroDivisionError, OverflowError):
        return _numpy(operator.pow, float(a), b)
    return math.nan if type(r) is complex else r


_OPS = {ast.Div: "_phsym_div", ast.FloorDiv: "_phsym_floordiv", ast.Mod: "_phsym_mod", ast.Pow: "_phsym_pow"}
def _float(v):
    """An element read from a float64 array as a Python float (the same double; its arithmetic is
    several times faster than a numpy scalar's); other elements unchanged."""
    return float(v) if type(v) is np.float64 else v


_HELPERS = {"_phsym_div": _div, "_phsym_floordiv": _floordiv, "_phsym_mod": _mod, "_phsym_pow": _pow,
            "_phsym_float": _float, "_phsym_f64": np.float64}


def _math_pow(a, b):
    return _integer_power(float(a), b) if type(b) is int else math.pow(a, b)


def _log(x, base=None):
    return np.log(x) if base is None else np.log(x) / np.log(base)


#: numpy's counterparts of the ``math`` functions that raise on a domain error or an overflow.
_NUMPY = {"exp": np.exp, "expm1": np.expm1, "log": _log, "log10": np.log10, "log2": np.log2, "log1p": np.log1p,
          "sqrt": np.sqrt, "pow": np.power, "cosh": np.cosh, "sinh": np.sinh, "acos": np.arccos,
          "asin": np.arcsin, "acosh": np.arccosh, "atanh": np.arctanh, "fmod": np.fmod, "exp2": np.exp2,
          "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "ldexp": np.ldexp, "hypot": np.hypot}


def _fallback(fast: Callable, slow: Callable) -> Callable:
    @functools.wraps(fast)
    def f(*args):
        try:
            return fast(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            with np.errstate(all="ignore"):
                return slow(*args)
    return f


def _math() -> types.ModuleType:
    m = types.ModuleType("math", "math with numba's error_model='numpy' results where Python's raises "
                                 "(phsym.codegen.interpret)")
    for name in dir(math):
        if not name.startswith("_"):
            obj = getattr(math, name)
            if name == "pow":
                obj = _math_pow
            setattr(m, name, _fallback(obj, _NUMPY[name]) if name in _NUMPY else obj)
    return m


#: The ``math`` module interpreted code sees.
MATH = _math()


class _Arithmetic(ast.NodeTransformer):
    """``a / b`` to ``_phsym_div(a, b)`` (and ``//``, ``%``, ``**``); njit decorators dropped.

    ``public`` collects the names of the functions numba gives a Python entry point."""

    def __init__(self):
        self.public = []
        self._function = 0      # inside a function body (not a comprehension, lambda or class)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        name = _OPS.get(type(node.op))
        if name is None:
            return node
        right = node.right.value if isinstance(node.right, ast.Constant) else None
        if isinstance(node.op, ast.Div) and type(right) in (int, float) and right != 0:
            return node         # a nonzero literal divisor: Python's division is numba's (the hot path)
        if isinstance(node.op, ast.Pow) and type(right) is int and 0 < right <= 8 \
                and isinstance(node.left, ast.Name):
            return ast.copy_location(_squarings(node.left, right), node)
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), [node.left, node.right], []), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        name = _OPS.get(type(node.op))
        if name is None:
            return node
        load = _as_load(node.target)
        call = ast.copy_location(ast.Call(ast.Name(name, ast.Load()), [load, node.value], []), node)
        return ast.copy_location(ast.Assign([node.target], call), node)

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) and _constant_index(node.slice):
            if self._function:
                return ast.copy_location(_as_float(node), node)
            return ast.copy_location(ast.Call(ast.Name("_phsym_float", ast.Load()), [node], []), node)
        return node

    def _outside_function(self, node):
        saved, self._function = self._function, 0
        self.generic_visit(node)
        self._function = saved
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda = _outside_function
    visit_ClassDef = _outside_function

    def visit_FunctionDef(self, node):
        self._function += 1
        self.generic_visit(node)
        self._function -= 1
        kept = [d for d in node.decorator_list if not _is_njit(d)]
        if len(kept) < len(node.decorator_list) and not any(
                kw.arg == "no_cpython_wrapper" and getattr(kw.value, "value", False)
                for d in node.decorator_list if isinstance(d, ast.Call) for kw in d.keywords):
            self.public.append(node.name)
        node.decorator_list = kept
        return node


def _as_float(read: ast.Subscript) -> ast.expr:
    """:func:`_float` of ``read`` written out in a function body, without a call (a fit's interpreted
    loop reads millions of elements): ``(float(t) if type(t := read) is float64 else t)``."""
    tmp = ast.NamedExpr(ast.Name("_phsym_t", ast.Store()), read)
    test = ast.Compare(ast.Call(ast.Name("type", ast.Load()), [tmp], []), [ast.Is()],
                       [ast.Name("_phsym_f64", ast.Load())])
    return ast.IfExp(test, ast.Call(ast.Name("float", ast.Load()), [ast.Name("_phsym_t", ast.Load())], []),
                     ast.Name("_phsym_t", ast.Load()))


def _constant_index(index) -> bool:
    """``a[3]`` or ``a[1, 2]``: a read of one element at a literal index (read once into a local)."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(i, ast.Constant) and type(i.value) is int for i in items)


def _squarings(base: ast.Name, n: int) -> ast.expr:
    """``base ** n`` (a variable to a small literal power) written out as :func:`_integer_power`
    multiplies (an int base too: its products are numba's int power)."""
    res, a = None, ast.Name(base.id, ast.Load())
    while n:
        if n & 1:
            res = a if res is None else ast.BinOp(res, ast.Mult(), a)
        n >>= 1
        if n:
            a = ast.BinOp(a, ast.Mult(), a)
    return res


def _as_load(target):
    """The target of an augmented assignment read (``x[i]`` of ``x[i] /= a``)."""
    node = ast.parse(ast.unparse(target), mode="eval").body
    for n in ast.walk(node):
        ast.copy_location(n, target)
    return node


def _is_njit(d) -> bool:
    f = d.func if isinstance(d, ast.Call) else d
    return (isinstance(f, ast.Name) and f.id in ("njit", "jit")) or \
        (isinstance(f, ast.Attribute) and f.attr in ("njit", "jit"))


def _compile(tree: ast.Module, filename: str):
    t = _Arithmetic()
    tree = ast.fix_missing_locations(t.visit(tree))
    return compile(tree, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True), t.public


def _prepare(ns: dict, kernels: bool = False) -> None:
    """Plain functions for the compiled helpers in ``ns`` (unless ``kernels``: then they stay
    compiled), and the helpers' arithmetic."""
    for name, obj in list(ns.items()):
        if obj is math:
            ns[name] = MATH
        elif _dispatcher(obj) and not kernels:
            ns[name] = plain(obj)
    ns.update(_HELPERS)


def _dispatcher(obj) -> bool:
    return callable(obj) and inspect.isfunction(getattr(obj, "py_func", None))


_PLAIN: Dict[int, Callable] = {}
_NAMESPACES: Dict[str, dict] = {}


def plain(dispatcher) -> Callable:
    """The Python function of a compiled (numba) function, with the arithmetic of :func:`load` and
    every compiled function it calls plain too (compiled once per process, in a copy of its module's
    globals).

    Parameters
    ----------
    dispatcher : numba dispatcher
        An ``@njit`` function (anything with ``py_func``).
    """
    f = dispatcher.py_func
    hit = _PLAIN.get(id(f))
    if hit is not None:
        return hit
    modname = f.__module__
    ns = _NAMESPACES.get(modname)
    if ns is None:
        ns = _NAMESPACES[modname] = dict(vars(sys.modules[modname]))
        _prepare(ns)        # may come back here for other functions of the module: ns is registered
    lines, first = inspect.getsourcelines(f)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    code, _ = _compile(tree, inspect.getsourcefile(f) or "<unknown>")
    local: dict = {}
    exec(code, ns, local)
    fn = local[f.__name__]
    _PLAIN[id(f)] = fn
    return fn


def _entry(fn: Callable) -> Callable:
    """A function Python calls: numpy's floating-point warnings off, as the compiled code raises none."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    return call


def load(path: Path, name: str, kernels: bool = False) -> types.ModuleType:
    """The generated module at ``path`` as Python: its functions are not compiled.

    The module is not registered in :data:`sys.modules` (the compiled one may
    be there under ``name``); its attribute ``INTERPRETED`` is True and its
    functions' code names ``path``, so pdb and tracebacks show the file.

    Parameters
    ----------
    path : pathlib.Path
        The module's file (checked by the caller).
    name : str
        Module name.
    kernels : bool
        Call the shared kernels it imports compiled (:func:`compiled_kernels`), not as Python.
    """
    source = Path(path).read_text()
    code, public = _compile(ast.parse(source, filename=str(path)), str(path))
    ns: dict = {"__name__": name, "__file__": str(path), "__builtins__": __builtins__}
    exec(code, ns)
    _prepare(ns, kernels)
    mod = types.ModuleType(name, ns.get("__doc__"))
    mod.__dict__.update(ns)
    for fname in public:
        setattr(mod, fname, _entry(ns[fname]))
    mod.INTERPRETED = True
    return mod
