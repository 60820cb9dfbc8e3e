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
from .emit import Emitter
from .subset import (HELPERS, MATH, POWI, PREDICATES, RESERVED, SCALARS, Function, Normalise, ctype, join,
                     pure_call)

__all__ = ["Translator", "POWI", "HELPERS", "pure_call"]


class Translator(Emitter):
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
        self.done: Dict[Tuple, Function] = {}
        self.order: List[Function] = []
        self._active: Set[Tuple] = set()

    # ------------------------------------------------------------------ entry points
    def function(self, name: str, kinds: Dict[str, str], cname: Optional[str] = None,
                 dims: Optional[Dict[str, Tuple[str, ...]]] = None) -> Function:
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
    def _proto(self, f: Function) -> str:
        args = []
        for p in f.params:
            k = f.env[p]
            if k in SCALARS:
                args.append(f"{ctype(k)} {self._name(p)}")
            else:
                base = "double" if k[0] in "DT" else "long"
                const = "" if p in f.stored else "const "
                args.append(f"{const}{base} *{self._name(p)}")
                args += [f"long {p}_n{j}" for j in range(self._rank(k)) if self._hidden(f, p, j)]
        if f.ret_tuple:
            args.append("double *ret_")
        ret = "void" if f.ret_tuple or f.ret == "void" else ctype(f.ret)
        return f"static {ret} {f.cname}({', '.join(args) or 'void'})"

    @staticmethod
    def _rank(kind: str) -> int:
        return 2 if kind.endswith("2") else 1

    @staticmethod
    def _hidden(f: Function, p: str, j: int) -> bool:
        return (p, j) in f.hidden

    def _translate(self, node: ast.FunctionDef, kinds: Dict[str, str], cname: str,
                   dims: Dict[str, Tuple[str, ...]], key: Tuple) -> Function:
        key = key + tuple(sorted(kinds.items()))
        if key in self.done:
            return self.done[key]
        if key in self._active:
            raise ExportError(f"C export: recursive call of {node.name}")
        self._active.add(key)
        node = Normalise().visit(copy.deepcopy(node))
        f = Function(node, kinds, cname, dims)
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
                decl.append(f"    {ctype(k)} {self._name(name)} = 0;")
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
        return f"ph_{n}" if n in RESERVED else n

    # ------------------------------------------------------------------ inference
    def _infer(self, f: Function, body: Sequence[ast.stmt]) -> None:
        for _ in range(6):      # to a fixed point (a name assigned from one assigned later)
            before = dict(f.env)
            for s in body:
                for n in ast.walk(s):
                    self._infer_node(f, n)
            if f.env == before:
                break

    def _set(self, f: Function, name: str, k: Optional[str]) -> None:
        if k is None:
            return
        old = f.env.get(name)
        f.env[name] = k if old is None else join(old, k)

    def _infer_node(self, f: Function, n: ast.AST) -> None:
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
                    f.ret = k if f.ret == "void" else join(f.ret, k)

    def _kind(self, f: Function, e: ast.expr) -> Optional[str]:
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
            return None if a is None or b is None else join(a, b)
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
            if short in PREDICATES:
                return "b"
            if name in ("abs", "min", "max"):
                ks = [self._kind(f, a) for a in e.args]
                if any(k is None for k in ks):
                    return None
                out = ks[0]
                for k in ks[1:]:
                    out = join(out, k)
                return "i" if out == "b" else out
            if name == "float" or short in MATH:
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
    def _callee(self, f: Function, call: ast.Call) -> Optional[Function]:
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
