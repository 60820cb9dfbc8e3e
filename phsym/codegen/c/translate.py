"""C99 from the generated step module: the same statements, the same floats.

The generated numba module (:mod:`phsym.codegen.newton.module`) and the
kernels it calls (:mod:`phsym.codegen.kernels.generic`, the junction-charge
functions of :mod:`phsym.components.junction`) are written in a small subset
of Python: scalar arithmetic, ``math`` functions, loops over ``range``,
conditionals, arrays indexed by integers.  :class:`Translator` turns that
subset into C99 statement by statement, so the exported library runs the
step the simulator runs, operation for operation:

* a name's C type is inferred from its assignments (``long`` for integer
  counters and indices, ``int`` for flags, ``double`` otherwise; a tuple of
  floats, the step constants ``kc``, becomes a local ``double`` array);
* an array parameter indexed by two subscripts is a flat row-major pointer
  with its dimensions as hidden arguments (``Jm`` -> ``Jm, Jm_n0, Jm_n1``);
* a function returning a tuple (``junc``) writes it into a caller's array;
* ``x ** n`` with a literal integer ``n`` multiplies as numba does (square
  and multiply, :func:`POWI`), ``min``/``max`` keep Python's choice between
  equal or unordered arguments; the rest maps to ``libm`` (``exp``, ``log``,
  ``hypot``, ``pow``...), the functions numba calls.

Kernels are translated once per combination of argument kinds, as ``static``
functions with a common prefix.  Anything outside the subset raises
:class:`~phsym.errors.ExportError` naming the construct.
"""
from __future__ import annotations

import ast
import copy
import inspect
import textwrap
import zlib
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from ...errors import ExportError

__all__ = ["Translator", "POWI", "HELPERS"]

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

_MATH = {"exp": "exp", "log": "log", "sqrt": "sqrt", "log1p": "log1p", "expm1": "expm1", "hypot": "hypot",
         "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh",
         "atan": "atan", "atan2": "atan2", "asin": "asin", "acos": "acos", "fabs": "fabs", "pow": "pow",
         "floor": "floor", "ceil": "ceil", "log10": "log10", "erf": "erf", "copysign": "copysign"}
_PREDICATES = {"isfinite": "isfinite", "isnan": "isnan", "isinf": "isinf"}
_CONST = {"nan": "NAN", "inf": "INFINITY", "pi": "M_PI_PH", "e": "M_E_PH"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|", ast.RShift: ">>",
        ast.LShift: "<<"}
#: C keywords and libm names a Python local may not keep.
_RESERVED = {"auto", "case", "char", "const", "default", "do", "double", "enum", "extern", "float", "goto",
             "int", "long", "register", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
             "union", "unsigned", "void", "volatile", "inline", "restrict", "exp", "log", "pow", "sqrt",
             "abs", "fabs", "main", "hypot", "isfinite", "isnan", "NAN", "INFINITY", "fmin", "fmax", "log1p",
             "expm1", "erf", "floor", "ceil", "sin", "cos", "tan", "y0", "y1", "j0", "j1", "signbit"}
_PURE = set(_MATH) | set(_PREDICATES) | {"abs", "min", "max", "float", "int"}


class _Normalise(ast.NodeTransformer):
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


def _join(a: str, b: str) -> str:
    if a == b:
        return a
    if a in SCALARS and b in SCALARS:
        return "d" if "d" in (a, b) else "i"
    raise ExportError(f"C export: a name holds both {a} and {b} values")


def _ctype(kind: str) -> str:
    return {"d": "double", "i": "long", "b": "int"}[kind]


def _literal(v) -> str:
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


class _Function:
    """One Python function being translated (its environment and output lines)."""

    def __init__(self, node: ast.FunctionDef, kinds: Dict[str, str], cname: str, dims: Dict[str, Tuple[str, ...]]):
        self.node, self.cname = node, cname
        self.params = [a.arg for a in node.args.args]
        self.env: Dict[str, str] = dict(kinds)
        self.dims: Dict[str, Tuple[str, ...]] = dict(dims)     # array -> C expressions of its dimensions
        self.ret = "void"
        self.ret_tuple = 0
        self.lines: List[str] = []


class Translator:
    """Translate the functions of a generated module (and the kernels they call) to C.

    Parameters
    ----------
    source : str
        The module's Python source.
    namespace : dict
        Names the module's calls resolve to (kernel functions, imported in
        the module); their Python source is translated on demand.
    prefix : str
        Prefix of every emitted C function (the library's name and ``_``).
    transform : callable(str, ast.FunctionDef) -> ast.FunctionDef, optional
        Applied to each module function before translation (by name).
    """

    def __init__(self, source: str, namespace: Dict[str, object], prefix: str,
                 transform: Optional[Callable[[str, ast.FunctionDef], ast.FunctionDef]] = None):
        self.tree = ast.parse(source)
        self.namespace = dict(namespace)
        self.prefix = prefix
        self.transform = transform
        self.defs: Dict[str, ast.FunctionDef] = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        self.globals: Dict[str, List[int]] = {}
        self.global_lines: List[str] = []
        for n in self.tree.body:
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and ast.unparse(n.value.func) == "np.array":
                name = n.targets[0].id
                vals = [int(ast.literal_eval(e)) for e in n.value.args[0].elts]
                self.globals[name] = vals
                self.global_lines.append(f"static const long {prefix}{name}[{max(len(vals), 1)}] = "
                                         f"{{{', '.join(map(str, vals)) or '0'}}};")
        self.done: Dict[Tuple, _Function] = {}
        self.order: List[_Function] = []
        self._active: Set[Tuple] = set()

    # ------------------------------------------------------------------ entry points
    def function(self, name: str, kinds: Dict[str, str], cname: Optional[str] = None,
                 dims: Optional[Dict[str, Tuple[str, ...]]] = None) -> _Function:
        """Translate the module function ``name`` with its parameters' kinds (``D1``, ``D2``, ``d``...).

        Parameters
        ----------
        name : str
            Function of the module.
        kinds : dict of str to str
            Kind of each parameter.
        cname : str, optional
            C name (default: prefix + name).
        dims : dict, optional
            Fixed dimensions of array parameters (C expressions); others are hidden arguments.
        """
        node = self.defs.get(name)
        if node is None:
            raise ExportError(f"C export: the generated module has no function {name!r}")
        if self.transform is not None:
            node = self.transform(name, node)
        return self._translate(node, kinds, cname or f"{self.prefix}{name}", dims or {}, key=("mod", name, cname))

    def source(self, guards: Optional[Dict[str, str]] = None) -> str:
        """Every translated function, callees first (``static``).

        Parameters
        ----------
        guards : dict of str to str, optional
            C function name -> preprocessor condition its prototype and definition are compiled under.
        """
        guards = guards or {}
        names = [f.cname for f in self.order]
        if len(set(names)) != len(names):
            raise ExportError(f"C export: a function was typed two ways ({sorted(n for n in names if names.count(n) > 1)})")

        by_name = {f.cname: f for f in self.order}

        def reach(root: str) -> Set[str]:
            seen, todo = set(), [root]
            while todo:
                n = todo.pop()
                if n not in seen and n in by_name:
                    seen.add(n)
                    todo += list(by_name[n].calls)
            return seen
        # a function only some guarded roots call is compiled under their conditions (no unused statics)
        roots = {r: reach(r) for r in guards}
        free = [f.cname for f in self.order if f.cname not in guards
                and not any(f.cname in r for r in roots.values())]
        for r in free:
            roots[r] = reach(r)

        def condition(name: str) -> Optional[str]:
            users = [r for r, seen in roots.items() if name in seen]
            if any(r not in guards for r in users):
                return None
            return " || ".join(f"({guards[r]})" for r in users) or None

        def guarded(cond: Optional[str], lines: List[str]) -> List[str]:
            return [f"#if {cond}"] + lines + ["#endif"] if cond else lines
        protos: List[str] = []
        body: List[str] = []
        for f in self.order:
            cond = condition(f.cname)
            protos += guarded(cond, [self._proto(f) + ";"])
            body += guarded(cond, [self._proto(f), "{"] + f.lines + ["}"]) + [""]
        glob: List[str] = []
        for name, line in zip(self.globals, self.global_lines):
            users = [f.cname for f in self.order if any(f"{self.prefix}{name}" in ln for ln in f.lines)]
            if users:
                conds = [condition(u) for u in users]
                glob += guarded(None if None in conds else " || ".join(f"({c})" for c in conds), [line])
        return "\n".join(glob + [""] + protos + [""] + body)

    # ------------------------------------------------------------------ functions
    def _proto(self, f: _Function) -> str:
        args = []
        for p in f.params:
            k = f.env[p]
            if k in SCALARS:
                args.append(f"{_ctype(k)} {self._name(p)}")
            else:
                base = "double" if k[0] in "DT" else "long"
                const = "" if p in f.stored else "const "
                args.append(f"{const}{base} *{self._name(p)}")
                args += [f"long {p}_n{j}" for j in range(self._rank(k)) if self._hidden(f, p, j)]
        if f.ret_tuple:
            args.append("double *ret_")
        ret = "void" if f.ret_tuple or f.ret == "void" else _ctype(f.ret)
        return f"static {ret} {f.cname}({', '.join(args) or 'void'})"

    @staticmethod
    def _rank(kind: str) -> int:
        return 2 if kind.endswith("2") else 1

    @staticmethod
    def _hidden(f: _Function, p: str, j: int) -> bool:
        return (p, j) in f.hidden

    def _translate(self, node: ast.FunctionDef, kinds: Dict[str, str], cname: str,
                   dims: Dict[str, Tuple[str, ...]], key: Tuple) -> _Function:
        key = key + tuple(sorted(kinds.items()))
        if key in self.done:
            return self.done[key]
        if key in self._active:
            raise ExportError(f"C export: recursive call of {node.name}")
        self._active.add(key)
        node = _Normalise().visit(copy.deepcopy(node))
        f = _Function(node, kinds, cname, dims)
        f.hidden = set()
        f.calls = set()
        f.stored = {n.value.id for n in ast.walk(node) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
                    and isinstance(n.value, ast.Name)}
        shapes = {(n.value.value.id, int(ast.literal_eval(n.slice))) for n in ast.walk(node)
                  if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape"
                  and isinstance(n.value.value, ast.Name)}
        for p in f.params:
            k = kinds.get(p)
            if k is None:
                raise ExportError(f"C export: no kind for parameter {p} of {node.name}")
            if k not in SCALARS and p not in dims:
                # hidden dimensions: the row length of a 2-D array, and any the function reads
                for j in range(self._rank(k)):
                    if (p, j) in shapes or j == 1:
                        f.hidden.add((p, j))
                f.dims[p] = tuple(f"{p}_n{j}" for j in range(self._rank(k)))
        body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        self._infer(f, body)
        for call in (n for s in body for n in ast.walk(s) if isinstance(n, ast.Call)):
            name = ast.unparse(call.func)
            if name in self.defs or (name in self.namespace and name not in ("abs", "min", "max", "float", "int")):
                callee = self._callee(f, call)
                f.stored |= {a.id for p, a in zip(callee.params, call.args)
                             if isinstance(a, ast.Name) and p in callee.stored}
        params = set(f.params)
        decl = []
        for name, k in sorted(f.env.items()):
            if name in params:
                continue
            if k in SCALARS:
                decl.append(f"    {_ctype(k)} {self._name(name)} = 0;")
            elif k.startswith("T"):
                decl.append(f"    double {self._name(name)}[{k[1:]}] = {{0}};")
        f.lines = decl + [f"    (void){self._name(p)};" for p in f.params] + [
            f"    (void){p}_n{j};" for p, j in sorted(f.hidden)]
        for s in body:
            self._stmt(f, s, "    ")
        self._active.discard(key)
        self.done[key] = f
        self.order.append(f)
        return f

    @staticmethod
    def _name(n: str) -> str:
        return f"ph_{n}" if n in _RESERVED else n

    # ------------------------------------------------------------------ inference
    def _infer(self, f: _Function, body: Sequence[ast.stmt]) -> None:
        for _ in range(6):      # to a fixed point (a name assigned from one assigned later)
            before = dict(f.env)
            for s in body:
                for n in ast.walk(s):
                    self._infer_node(f, n)
            if f.env == before:
                break

    def _set(self, f: _Function, name: str, k: Optional[str]) -> None:
        if k is None:
            return
        old = f.env.get(name)
        f.env[name] = k if old is None else _join(old, k)

    def _infer_node(self, f: _Function, n: ast.AST) -> None:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    self._set(f, t.id, self._kind(f, n.value))
                elif isinstance(t, ast.Tuple):
                    vals = n.value.elts if isinstance(n.value, ast.Tuple) else None
                    if vals is None or len(vals) != len(t.elts):
                        raise ExportError(f"C export: unsupported tuple assignment {ast.unparse(n)}")
                    for a, b in zip(t.elts, vals):
                        if isinstance(a, ast.Name):
                            self._set(f, a.id, self._kind(f, b))
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            self._set(f, n.target.id, self._kind(f, n.value))
        elif isinstance(n, ast.For):
            if isinstance(n.target, ast.Name):
                self._set(f, n.target.id, "i")
        elif isinstance(n, ast.Return) and n.value is not None:
            if isinstance(n.value, ast.Tuple):
                f.ret_tuple = len(n.value.elts)
            else:
                k = self._kind(f, n.value)
                if k is not None:
                    f.ret = k if f.ret == "void" else _join(f.ret, k)

    def _kind(self, f: _Function, e: ast.expr) -> Optional[str]:
        """Kind of an expression (None: not known yet)."""
        if isinstance(e, ast.Constant):
            return "b" if isinstance(e.value, bool) else ("i" if isinstance(e.value, int) else "d")
        if isinstance(e, ast.Name):
            if e.id in self.globals:
                return "I1"
            return f.env.get(e.id)
        if isinstance(e, ast.Tuple):
            return f"T{len(e.elts)}"
        if isinstance(e, ast.BinOp):
            a, b = self._kind(f, e.left), self._kind(f, e.right)
            if isinstance(e.op, ast.Div):
                return "d"
            if a is None or b is None:
                return None
            if isinstance(e.op, ast.Pow):
                return "i" if a in "ib" and b in "ib" else "d"
            return "i" if a in ("i", "b") and b in ("i", "b") else "d"
        if isinstance(e, ast.UnaryOp):
            return "b" if isinstance(e.op, ast.Not) else self._kind(f, e.operand)
        if isinstance(e, (ast.Compare, ast.BoolOp)):
            return "b"
        if isinstance(e, ast.IfExp):
            a, b = self._kind(f, e.body), self._kind(f, e.orelse)
            return None if a is None or b is None else _join(a, b)
        if isinstance(e, ast.Subscript):
            if isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
                return "i"
            k = self._kind(f, e.value)
            if k is None:
                return None
            return "i" if k[0] == "I" else "d"
        if isinstance(e, ast.Attribute):
            return "d"      # math.nan, math.inf
        if isinstance(e, ast.Call):
            name = ast.unparse(e.func)
            short = name.split(".")[-1]
            if short in _PREDICATES:
                return "b"
            if name in ("abs", "min", "max"):
                ks = [self._kind(f, a) for a in e.args]
                if any(k is None for k in ks):
                    return None
                out = ks[0]
                for k in ks[1:]:
                    out = _join(out, k)
                return "i" if out == "b" else out
            if name == "float" or short in _MATH:
                return "d"
            if name == "int":
                return "i"
            callee = self._callee(f, e)
            if callee is None:
                return None
            if callee.ret_tuple:
                return f"T{callee.ret_tuple}"
            return None if callee.ret == "void" else callee.ret
        raise ExportError(f"C export: unsupported expression {ast.unparse(e)}")

    # ------------------------------------------------------------------ calls
    def _callee(self, f: _Function, call: ast.Call) -> Optional[_Function]:
        """The translated function a call resolves to (translating it), or None when an argument's kind
        is not known yet."""
        name = ast.unparse(call.func)
        kinds = [self._kind(f, a) for a in call.args]
        if any(k is None for k in kinds):
            return None
        if call.keywords:
            raise ExportError(f"C export: keyword arguments in {ast.unparse(call)}")
        if name in self.defs:
            node = self.defs[name]
            if self.transform is not None:
                node = self.transform(name, node)
            cname, key = f"{self.prefix}{name}", ("mod", name, None)
        else:
            obj = self.namespace.get(name)
            if obj is None:
                raise ExportError(f"C export: call of unknown function {name}")
            py = getattr(obj, "py_func", obj)
            try:
                node = ast.parse(textwrap.dedent(inspect.getsource(py))).body[0]
            except (OSError, TypeError) as exc:
                raise ExportError(f"C export: no source for {name}: {exc}") from None
            self.namespace.update({k: v for k, v in py.__globals__.items() if callable(v)})
            cname, key = f"{self.prefix}k_{py.__name__}", ("kern", py.__module__, py.__name__)
        params = [a.arg for a in node.args.args]
        if len(params) != len(call.args):
            raise ExportError(f"C export: {name} takes {len(params)} arguments, {len(call.args)} given")
        pk = {}
        for p, k in zip(params, kinds):
            if k.startswith("T"):
                k = "D1"
            elif k in ("i", "b") and not self._int_param(node, p):
                k = "d"         # an integer literal passed to a float parameter (a charge law's BV)
            pk[p] = k
        if key[0] == "kern":
            cname = f"{cname}_{zlib.crc32('_'.join(pk.values()).encode()) % 10 ** 6}"
        return self._translate(node, pk, cname, {}, key)

    @staticmethod
    def _int_param(node: ast.FunctionDef, p: str) -> bool:
        """Whether a scalar parameter is used as an integer: an index, a loop bound, a flag."""
        for n in ast.walk(node):
            if isinstance(n, ast.Subscript) or (isinstance(n, ast.Call) and ast.unparse(n.func) == "range"):
                if any(isinstance(a, ast.Name) and a.id == p for a in ast.walk(n.slice if isinstance(
                        n, ast.Subscript) else n)):
                    return True
            if isinstance(n, (ast.If, ast.While)) and isinstance(n.test, ast.Name) and n.test.id == p:
                return True
            if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and isinstance(n.operand, ast.Name) \
                    and n.operand.id == p:
                return True
        return False

    # ------------------------------------------------------------------ statements
    def _stmt(self, f: _Function, s: ast.stmt, ind: str) -> None:
        L = f.lines
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:     # a = b = value: the value once, then each target
                if not all(isinstance(t, ast.Name) for t in s.targets):
                    raise ExportError(f"C export: chained assignment {ast.unparse(s)}")
                last = s.targets[-1]
                self._stmt(f, ast.Assign([last], s.value), ind)
                for t in s.targets[:-1]:
                    self._stmt(f, ast.Assign([t], ast.Name(last.id, ast.Load())), ind)
                return
            t = s.targets[0]
            if isinstance(t, ast.Tuple):
                # every value first, then the targets (Python's tuple assignment)
                L.append(f"{ind}{{")
                for j, b in enumerate(s.value.elts):
                    k = self._kind(f, b)
                    L.append(f"{ind}    {_ctype(k if k in SCALARS else 'd')} ph_t{j} = {self._expr(f, b)};")
                for j, a in enumerate(t.elts):
                    L.append(f"{ind}    {self._target(f, a)} = ph_t{j};")
                L.append(f"{ind}}}")
                return
            if isinstance(t, ast.Name) and f.env.get(t.id, "").startswith("T"):
                if isinstance(s.value, ast.Tuple):
                    for j, e in enumerate(s.value.elts):
                        L.append(f"{ind}{self._name(t.id)}[{j}] = {self._expr(f, e)};")
                    return
                if isinstance(s.value, ast.Call):
                    L.append(f"{ind}{self._call(f, s.value, out=self._name(t.id))};")
                    return
                raise ExportError(f"C export: tuple value {ast.unparse(s)}")
            L.append(f"{ind}{self._target(f, t)} = {self._expr(f, s.value)};")
        elif isinstance(s, ast.AugAssign):
            op = _BIN.get(type(s.op)) or {ast.Div: "/"}.get(type(s.op))
            if op is None:
                raise ExportError(f"C export: operator in {ast.unparse(s)}")
            if op == ">>":
                L.append(f"{ind}{self._target(f, s.target)} >>= {self._expr(f, s.value)};")
            else:
                L.append(f"{ind}{self._target(f, s.target)} {op}= {self._expr(f, s.value)};")
        elif isinstance(s, ast.If):
            L.append(f"{ind}if ({self._cond(f, s.test)}) {{")
            for b in s.body:
                self._stmt(f, b, ind + "    ")
            if s.orelse:
                L.append(f"{ind}}} else {{")
                for b in s.orelse:
                    self._stmt(f, b, ind + "    ")
            L.append(f"{ind}}}")
        elif isinstance(s, ast.For):
            it = s.iter
            if not (isinstance(it, ast.Call) and ast.unparse(it.func) == "range" and isinstance(s.target, ast.Name)):
                raise ExportError(f"C export: loop {ast.unparse(s.iter)} (only range loops)")
            a = [self._expr(f, x) for x in it.args]
            lo, hi, step = ("0", a[0], "1") if len(a) == 1 else (a[0], a[1], "1") if len(a) == 2 else a
            i = self._name(s.target.id)
            neg = step.startswith("-") or step.startswith("(-")
            L.append(f"{ind}for ({i} = {lo}; {i} {'>' if neg else '<'} {hi}; {i} += {step}) {{")
            for b in s.body:
                self._stmt(f, b, ind + "    ")
            L.append(f"{ind}}}")
            if s.orelse:
                raise ExportError("C export: for ... else")
        elif isinstance(s, ast.While):
            L.append(f"{ind}while ({self._cond(f, s.test)}) {{")
            for b in s.body:
                self._stmt(f, b, ind + "    ")
            L.append(f"{ind}}}")
        elif isinstance(s, ast.Break):
            L.append(f"{ind}break;")
        elif isinstance(s, ast.Continue):
            L.append(f"{ind}continue;")
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, ast.Return):
            if s.value is None:
                L.append(f"{ind}return;")
            elif isinstance(s.value, ast.Tuple):
                for j, e in enumerate(s.value.elts):
                    L.append(f"{ind}ret_[{j}] = {self._expr(f, e)};")
                L.append(f"{ind}return;")
            else:
                L.append(f"{ind}return {self._expr(f, s.value)};")
        elif isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant):
                return
            if not isinstance(s.value, ast.Call):
                raise ExportError(f"C export: statement {ast.unparse(s)}")
            L.append(f"{ind}{self._call(f, s.value)};")
        else:
            raise ExportError(f"C export: unsupported statement {ast.unparse(s)}")

    def _target(self, f: _Function, t: ast.expr) -> str:
        if isinstance(t, ast.Name):
            return self._name(t.id)
        if isinstance(t, ast.Subscript):
            return self._subscript(f, t)
        raise ExportError(f"C export: assignment to {ast.unparse(t)}")

    def _subscript(self, f: _Function, e: ast.Subscript) -> str:
        if isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
            arr = e.value.value.id
            j = int(ast.literal_eval(e.slice))
            if arr in self.globals:
                return str(len(self.globals[arr]))
            return f"({f.dims[arr][j]})"
        if not isinstance(e.value, ast.Name):
            raise ExportError(f"C export: subscript of {ast.unparse(e.value)}")
        name = e.value.id
        idx = e.slice
        if isinstance(idx, ast.Slice):
            raise ExportError(f"C export: slice {ast.unparse(e)}")
        cname = f"{self.prefix}{name}" if name in self.globals else self._name(name)
        if isinstance(idx, ast.Tuple):
            r, c = (self._expr(f, x) for x in idx.elts)
            return f"{cname}[({r}) * {f.dims[name][1]} + ({c})]"
        return f"{cname}[{self._expr(f, idx)}]"

    # ------------------------------------------------------------------ expressions
    def _cond(self, f: _Function, e: ast.expr) -> str:
        s = self._expr(f, e)
        return s[1:-1] if s.startswith("(") and s.endswith(")") and self._balanced(s[1:-1]) else s

    @staticmethod
    def _balanced(s: str) -> bool:
        depth = 0
        for ch in s:
            depth += ch == "("
            depth -= ch == ")"
            if depth < 0:
                return False
        return depth == 0

    def _expr(self, f: _Function, e: ast.expr) -> str:
        if isinstance(e, ast.Constant):
            return _literal(e.value)
        if isinstance(e, ast.Name):
            if e.id in self.globals:
                return f"{self.prefix}{e.id}"
            if e.id in ("True", "False"):
                return "1" if e.id == "True" else "0"
            return self._name(e.id)
        if isinstance(e, ast.Attribute):
            base = ast.unparse(e.value)
            if base in ("math", "np", "numpy") and e.attr in _CONST:
                if e.attr in ("pi", "e"):
                    return _literal(3.141592653589793 if e.attr == "pi" else 2.718281828459045)
                return _CONST[e.attr]
            raise ExportError(f"C export: attribute {ast.unparse(e)}")
        if isinstance(e, ast.Subscript):
            return self._subscript(f, e)
        if isinstance(e, ast.UnaryOp):
            if isinstance(e.op, ast.Not):
                return f"(!{self._expr(f, e.operand)})"
            if isinstance(e.op, ast.USub):
                return f"(-{self._expr(f, e.operand)})"
            if isinstance(e.op, ast.UAdd):
                return self._expr(f, e.operand)
            raise ExportError(f"C export: operator in {ast.unparse(e)}")
        if isinstance(e, ast.BinOp):
            return self._binop(f, e)
        if isinstance(e, ast.BoolOp):
            op = " && " if isinstance(e.op, ast.And) else " || "
            return "(" + op.join(self._expr(f, v) for v in e.values) + ")"
        if isinstance(e, ast.Compare):
            parts, left = [], e.left
            for op, right in zip(e.ops, e.comparators):
                if type(op) not in _CMP:
                    raise ExportError(f"C export: comparison in {ast.unparse(e)}")
                parts.append(f"{self._expr(f, left)} {_CMP[type(op)]} {self._expr(f, right)}")
                left = right
            return "(" + " && ".join(parts) + ")"
        if isinstance(e, ast.IfExp):
            return f"({self._cond(f, e.test)} ? {self._expr(f, e.body)} : {self._expr(f, e.orelse)})"
        if isinstance(e, ast.Call):
            return self._call(f, e)
        raise ExportError(f"C export: unsupported expression {ast.unparse(e)}")

    def _binop(self, f: _Function, e: ast.BinOp) -> str:
        a, b = self._expr(f, e.left), self._expr(f, e.right)
        ka, kb = self._kind(f, e.left), self._kind(f, e.right)
        if isinstance(e.op, ast.Div):      # Python's true division: always in doubles
            if ka in ("i", "b"):
                a = f"{_literal(float(e.left.value))}" if isinstance(e.left, ast.Constant) else f"(double){a}"
            if kb in ("i", "b"):
                b = f"{_literal(float(e.right.value))}" if isinstance(e.right, ast.Constant) else f"(double){b}"
            return f"({a} / {b})"
        if isinstance(e.op, ast.Pow):
            n = self._int_literal(e.right)
            if ka in ("i", "b") and kb in ("i", "b"):
                raise ExportError(f"C export: integer power {ast.unparse(e)}")
            if n is not None:
                if n == 1:
                    return f"(1.0 * {a})"
                return f"ph_powi({a}, {n})"
            return f"pow({a}, {b})"
        if isinstance(e.op, ast.FloorDiv) or isinstance(e.op, ast.Mod):
            raise ExportError(f"C export: operator in {ast.unparse(e)}")
        op = _BIN.get(type(e.op))
        if op is None:
            raise ExportError(f"C export: operator in {ast.unparse(e)}")
        return f"({a} {op} {b})"

    @staticmethod
    def _int_literal(e: ast.expr) -> Optional[int]:
        if isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool):
            return e.value
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
                and isinstance(e.operand.value, int):
            return -e.operand.value
        return None

    def _call(self, f: _Function, e: ast.Call, out: Optional[str] = None) -> str:
        name = ast.unparse(e.func)
        short = name.split(".")[-1]
        args = [self._expr(f, a) for a in e.args]
        if name.startswith(("math.", "np.")) and short in _PREDICATES:
            return f"{_PREDICATES[short]}({args[0]})"
        if name.startswith("math.") and short in _MATH:
            return f"{_MATH[short]}({', '.join(args)})"
        if name == "abs":
            return f"{'labs' if self._kind(f, e.args[0]) in ('i', 'b') else 'fabs'}({args[0]})"
        if name in ("min", "max"):
            ks = [self._kind(f, a) for a in e.args]
            fn = ("ph_i" if all(k in ("i", "b") for k in ks) else "ph_f") + name
            out_s = args[0]
            for a in args[1:]:
                out_s = f"{fn}({out_s}, {a})"
            return out_s
        if name == "float":
            return f"((double){args[0]})"
        if name == "int":
            return f"((long){args[0]})"
        callee = self._callee(f, e)
        if callee is None:
            raise ExportError(f"C export: cannot type the call {ast.unparse(e)}")
        cargs = []
        for p, a, node in zip(callee.params, args, e.args):
            k = callee.env[p]
            cargs.append(a)
            if k not in SCALARS:
                src = node.id if isinstance(node, ast.Name) else None
                for j in range(self._rank(k)):
                    if (p, j) in callee.hidden:
                        if src in self.globals:
                            cargs.append(str(len(self.globals[src])))
                        elif src is not None and src in f.dims:
                            cargs.append(f.dims[src][j])
                        elif src is not None and f.env.get(src, "").startswith("T"):
                            cargs.append(f.env[src][1:])
                        else:
                            raise ExportError(f"C export: unknown shape of {ast.unparse(node)}")
        f.calls.add(callee.cname)
        if callee.ret_tuple:
            if out is None:
                raise ExportError(f"C export: tuple result of {name} not assigned")
            cargs.append(out)
        return f"{callee.cname}({', '.join(cargs)})"


def pure_call(name: str) -> bool:
    """Whether a call of ``name`` (as written in the source) has no effect but its value."""
    return name.split(".")[-1] in _PURE or name.startswith("junction_")
