"""The module text of one law kernel (calling convention: :mod:`.abi`)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Sequence, Tuple

import sympy as sp

from ...version import __version__
from ..printing import _share_inversions, assign
from .abi import out_width
from .hoist import hoist

__all__ = ["KernelSpec", "kernel_source", "split"]


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel computes.

    Attributes
    ----------
    what : str
        One line for the module header (the form and the kernel's job).
    var : tuple of sympy.Symbol
        Inputs that move with Newton's unknowns (derivatives are taken in them).
    const : tuple of sympy.Symbol
        Inputs constant over the step.
    params : tuple of sympy.Symbol
        Placeholders, in the order of a row of ``P``.
    outputs : tuple of sympy.Expr
        The values.
    derivatives : bool
        Whether the kernel also writes ``d outputs / d var``.
    """

    what: str
    var: tuple
    const: tuple
    params: tuple
    outputs: tuple
    derivatives: bool = True

    @property
    def width(self) -> int:
        """Entries of ``OUT`` per instance."""
        return out_width(len(self.outputs), len(self.var), self.derivatives)


def _loads(text: str, names: Sequence[sp.Symbol], array: str, base: str) -> List[str]:
    used = set(re.findall(r"\b(_[a-z]+\d+)\b", text))
    return [f"        {s} = {array}[{base} + {i}]" for i, s in enumerate(names) if str(s) in used]


def _targets(spec: KernelSpec) -> List[sp.Expr]:
    """The values, then (with derivatives) ``d value_m / d var_j`` (``m`` major)."""
    out = list(spec.outputs)
    if spec.derivatives:
        out += [sp.diff(e, v) for e in spec.outputs for v in spec.var]
    return out


def split(spec: KernelSpec) -> Tuple[List[sp.Expr], List[sp.Expr]]:
    """The kernel's targets (:func:`_targets`; junction energies through the charge law's power and
    exponential, :func:`~phsym.components.junction.energies_from`) in the moving inputs and the
    precomputed values ``_w<k>``, and the expressions of those (:func:`.hoist.hoist`).  Only a
    kernel with both moving and constant inputs is split: one without constants is not called once
    per step, one without moving inputs is evaluated once anyway.

    Parameters
    ----------
    spec : KernelSpec
        What the kernel computes.
    """
    from ...components.junction import energies_from
    targets = [energies_from(_share_inversions(sp.sympify(e))) for e in _targets(spec)]
    if not (spec.var and spec.const):
        return targets, []
    return hoist(targets, set(spec.const) | set(spec.params))


def _calls_junction(e: sp.Expr) -> bool:
    """Whether ``e`` calls a compiled junction function (powers and an exponential of its own): such a
    step constant is computed when an iteration first needs it, not by ``prepare`` (a discrete gradient
    needs the start point's energy only for increments past its Taylor form's threshold)."""
    from ...components.junction import JunctionEnergy, JunctionEnergyAt, JunctionEnergyFrom, JunctionVoltage
    return e.has(JunctionEnergy, JunctionEnergyAt, JunctionEnergyFrom, JunctionVoltage)


def _lazy_source(k: int, expr: sp.Expr, spec: KernelSpec) -> List[str]:
    """``_w<k>_at``: the step constant ``W[k]``, computed at its first use in the step (``prepare``
    leaves NaN there) and kept in ``W`` for the step's other iterations."""
    body: List[str] = []
    assign(body, [("w", expr)], " " * 8)
    code = "\n".join(body)
    return (['@njit(cache=True, error_model="numpy")',
             f"def _w{k}_at(P, IN, W, pb, ib, wb):",
             f'    """The step constant W[{k}] (NaN: not computed yet in this step)."""',
             f"    w = W[wb + {k}]",
             "    if w != w:"] + _loads(code, spec.params, "P", "pb") + _loads(code, spec.var + spec.const, "IN", "ib")
            + body + [f"        W[wb + {k}] = w", "    return w", "", ""])


def kernel_source(spec: KernelSpec, source: str = "") -> str:
    """Python source of a module defining the kernel ``kernel`` and its step preparation ``prepare``
    (numba ``cfunc`` functions, :mod:`.abi`).

    Parameters
    ----------
    spec : KernelSpec
        What the kernel computes.
    source : str
        Where the form came from (element names), for the header.
    """
    nv, nc, npar, no = len(spec.var), len(spec.const), len(spec.params), len(spec.outputs)
    moved, pre = split(spec)
    npre = len(pre)
    ni = nv + nc
    wsyms = tuple(sp.Symbol(f"_w{k}", real=True) for k in range(npre))
    lazy = [k for k, e in enumerate(pre) if _calls_junction(e)]
    body: List[str] = []
    assign(body, [(f"OUT[ob + {m}]", e) for m, e in enumerate(moved)], " " * 8)
    for k in lazy:
        body = [re.sub(rf"\b_w{k}\b", f"_w{k}_at(P, IN, W, pb, ib, wb)", b) for b in body]
    code = "\n".join(body)
    head = ["    for i in range(n):",
            f"        pb = i * {max(npar, 1)}",
            f"        ib = i * {max(ni, 1)}",
            f"        wb = i * {max(npre, 1)}"]
    lines = [f'"""Generated by phsym {__version__} (phsym.codegen.laws) from {source or "a law form"}: {spec.what}.',
             "",
             f"Placeholders P[i, :] = {', '.join(map(str, spec.params)) or '-'}; inputs IN[i, :] = "
             f"{', '.join(map(str, spec.var + spec.const)) or '-'} (the first {nv} move with Newton's unknowns)" +
             (f"; W[i, :] = {', '.join(map(str, wsyms))}, fixed over a step, written by prepare" if npre else "") + ";",
             f"outputs OUT[i, :{no}] = {no} value(s)" + (f", then their derivatives in the first {nv} inputs." if
                                                        spec.derivatives else "."),
             "Do not edit: phsym rewrites it from the law.",
             '"""',
             "import math",
             "from numba import njit",
             "from numba import cfunc",
             "from phsym.codegen.laws.abi import SIGNATURE",
             "",
             'KIND = "law"',
             f"WIDTH = {spec.width}",
             f"N_PRE = {npre}",
             "",
             "",
             '@cfunc(SIGNATURE, cache=True, error_model="numpy")',
             "def kernel(n, P, IN, OUT, W):"] + head + [f"        ob = i * {spec.width}"]
    lines += _loads(code, spec.params, "P", "pb") + _loads(code, spec.var + spec.const, "IN", "ib")
    lines += _loads(code, wsyms, "W", "wb")
    lines += body + [""]
    at = lines.index("def kernel(n, P, IN, OUT, W):") - 1      # helpers before the cfunc that compiles on import
    lines[at:at] = [ln for k in lazy for ln in _lazy_source(k, pre[k], spec)]
    if npre:
        body = [f"        W[wb + {k}] = math.nan" for k in lazy]
        assign(body, [(f"W[wb + {k}]", e) for k, e in enumerate(pre) if k not in lazy], " " * 8)
        code = "\n".join(body)
        lines += ["", '@cfunc(SIGNATURE, cache=True, error_model="numpy")',
                  "def prepare(n, P, IN, OUT, W):",
                  '    """The values W of the kernel, fixed over a step (OUT is not used)."""'] + head
        lines += _loads(code, spec.params, "P", "pb") + _loads(code, spec.var + spec.const, "IN", "ib") + body + [""]
    text = "\n".join(lines)
    if "junction_" in text:
        text = text.replace("from numba import njit\n", "from numba import njit\nfrom "
                            "phsym.codegen.kernels.junction import junction_energy, junction_energy_q, "
                            "junction_energy_v, junction_voltage\n", 1)
    if "learned_bumps(" in text:
        from ..kernels.learned import declare
        text = declare(text)
    return text
