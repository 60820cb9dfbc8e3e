"""Statements and expressions of the Python subset as C (the :class:`~.translate.Translator`'s half that
writes; the other half types names and resolves calls)."""
from __future__ import annotations

import ast
from typing import Optional

from ...errors import ExportError
from .subset import BIN, CMP, CONST, MATH, PREDICATES, SCALARS, Function, ctype, literal

__all__ = ["Emitter"]


class Emitter:
    """C source of statements and expressions (mixed into :class:`~.translate.Translator`)."""

    def _stmt(self, f: Function, s: ast.stmt, ind: str) -> None:
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
                    L.append(f"{ind}    {ctype(k if k in SCALARS else 'd')} ph_t{j} = {self._expr(f, b)};")
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
            op = BIN.get(type(s.op)) or {ast.Div: "/"}.get(type(s.op))
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

    def _target(self, f: Function, t: ast.expr) -> str:
        if isinstance(t, ast.Name):
            return self._name(t.id)
        if isinstance(t, ast.Subscript):
            return self._subscript(f, t)
        raise ExportError(f"C export: assignment to {ast.unparse(t)}")

    def _subscript(self, f: Function, e: ast.Subscript) -> str:
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
    def _cond(self, f: Function, e: ast.expr) -> str:
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

    def _expr(self, f: Function, e: ast.expr) -> str:
        if isinstance(e, ast.Constant):
            return literal(e.value)
        if isinstance(e, ast.Name):
            if e.id in self.globals:
                return f"{self.prefix}{e.id}"
            if e.id in ("True", "False"):
                return "1" if e.id == "True" else "0"
            return self._name(e.id)
        if isinstance(e, ast.Attribute):
            base = ast.unparse(e.value)
            if base in ("math", "np", "numpy") and e.attr in CONST:
                if e.attr in ("pi", "e"):
                    return literal(3.141592653589793 if e.attr == "pi" else 2.718281828459045)
                return CONST[e.attr]
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
                if type(op) not in CMP:
                    raise ExportError(f"C export: comparison in {ast.unparse(e)}")
                parts.append(f"{self._expr(f, left)} {CMP[type(op)]} {self._expr(f, right)}")
                left = right
            return "(" + " && ".join(parts) + ")"
        if isinstance(e, ast.IfExp):
            return f"({self._cond(f, e.test)} ? {self._expr(f, e.body)} : {self._expr(f, e.orelse)})"
        if isinstance(e, ast.Call):
            return self._call(f, e)
        raise ExportError(f"C export: unsupported expression {ast.unparse(e)}")

    def _binop(self, f: Function, e: ast.BinOp) -> str:
        a, b = self._expr(f, e.left), self._expr(f, e.right)
        ka, kb = self._kind(f, e.left), self._kind(f, e.right)
        if isinstance(e.op, ast.Div):      # Python's true division: always in doubles
            if ka in ("i", "b"):
                a = f"{literal(float(e.left.value))}" if isinstance(e.left, ast.Constant) else f"(double){a}"
            if kb in ("i", "b"):
                b = f"{literal(float(e.right.value))}" if isinstance(e.right, ast.Constant) else f"(double){b}"
            return f"({a} / {b})"
        if isinstance(e.op, ast.Pow):
            n = self._intliteral(e.right)
            if ka in ("i", "b") and kb in ("i", "b"):
                raise ExportError(f"C export: integer power {ast.unparse(e)}")
            if n is not None:
                if n == 1:
                    return f"(1.0 * {a})"
                return f"ph_powi({a}, {n})"
            return f"pow({a}, {b})"
        if isinstance(e.op, ast.FloorDiv) or isinstance(e.op, ast.Mod):
            raise ExportError(f"C export: operator in {ast.unparse(e)}")
        op = BIN.get(type(e.op))
        if op is None:
            raise ExportError(f"C export: operator in {ast.unparse(e)}")
        return f"({a} {op} {b})"

    @staticmethod
    def _intliteral(e: ast.expr) -> Optional[int]:
        if isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool):
            return e.value
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
                and isinstance(e.operand.value, int):
            return -e.operand.value
        return None

    def _call(self, f: Function, e: ast.Call, out: Optional[str] = None) -> str:
        name = ast.unparse(e.func)
        short = name.split(".")[-1]
        args = [self._expr(f, a) for a in e.args]
        if name.startswith(("math.", "np.")) and short in PREDICATES:
            return f"{PREDICATES[short]}({args[0]})"
        if name.startswith("math.") and short in MATH:
            return f"{MATH[short]}({', '.join(args)})"
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
