"""Which kernels a law form needs, generated, cached and loaded.

A dissipative law form ``z(_v0, ...)`` has one kernel: the law and its
derivatives in its variables.  A storage form (its states ``_v0 ... _v{k-1}``,
and for a law solved through its effort the effort ``_v{k}``, with the
expressions ``[H]`` or ``[H, x(e), H(x, e)]``, see
:class:`~phsym.components.base.EffortLaw`) has a step kernel per scheme (the
discrete gradient of :func:`phsym.codegen.gradients.storage_gradients`, or the
effort step of :func:`phsym.codegen.gradients.effort_step`: the same formulas
the generated loop compiles), an energy kernel, and a gradient kernel for
the DC operating point and the state scales.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Dict, Tuple

from ...common.paths import atomic_write, cache_dir
from ...errors import BuildError
from ...structure.circuit.form import Form
from ..cache import cache_key, import_generated, load_module
from . import library, native

if TYPE_CHECKING:       # a kernel that is compiled already loads without the derivations (sympy)
    import sympy as sp
    from .source import KernelSpec

__all__ = ["Kernel", "law_kernel", "step_kernel", "energy_kernel", "gradient_kernel", "effort_state_kernel",
           "UnknownForm"]


class UnknownForm(BuildError):
    """A form known by its key alone (:attr:`~phsym.structure.circuit.form.Form.exprs` is ``None``)
    whose kernel is neither in the caches nor in the package's library: only the symbolic path can
    derive it."""


@dataclass(frozen=True)
class Kernel:
    """A loaded kernel.

    Attributes
    ----------
    key : str
        Cache key of its module.
    address : int
        Address of the compiled function (:mod:`.abi`).
    n_var, n_const, n_out : int
        Inputs that move with the unknowns, constant inputs, outputs.
    derivatives : bool
        Whether it writes the derivatives.
    width : int
        Entries of ``OUT`` per instance.
    module : object
        What owns the compiled code (kept alive): the generated module of a numba kernel, the
        :class:`ctypes.CDLL` of a C kernel (:mod:`.native`).
    n_pre : int
        Entries of ``W`` per instance, computed once per step by its ``prepare`` function (:mod:`.abi`).
    prepare : int
        Address of ``prepare`` (0: none).
    """

    key: str
    address: int
    n_var: int
    n_const: int
    n_out: int
    derivatives: bool
    width: int
    module: object
    n_pre: int = 0
    prepare: int = 0

    @property
    def in_width(self) -> int:
        """Entries of ``IN`` per instance."""
        return max(self.n_var + self.n_const, 1)


def _kernel(key: str, mod, n_var: int, n_const: int, n_out: int, derivatives: bool, width: int) -> Kernel:
    """The :class:`Kernel` of a loaded module."""
    n_pre = int(getattr(mod, "N_PRE", 0))
    return Kernel(key, int(mod.kernel.address), n_var, n_const, n_out, derivatives, width, mod, n_pre,
                  int(mod.prepare.address) if n_pre else 0)


def _compiled(key: str, n_var: int, n_const: int, n_out: int, derivatives: bool, width: int,
              n_pre: int) -> Kernel:
    """The :class:`Kernel` of the cached module ``key``: its C library, else numba's module
    (:func:`.native.compiled`; ``ImportError`` when neither is cached)."""
    owner, address, prepare = native.compiled(key, n_pre)
    return Kernel(key, address, n_var, n_const, n_out, derivatives, width, owner, n_pre, prepare)


_LOADED: Dict[str, Kernel] = {}


def kernel_source(spec: KernelSpec, source: str = "") -> str:
    """The module text of a kernel (:func:`.source.kernel_source`, imported on first use: it prints
    with sympy, which a kernel loaded from the caches does not need)."""
    from .source import kernel_source as text_of
    return text_of(spec, source)


def _load(spec: KernelSpec, source: str) -> Kernel:
    text = kernel_source(spec, source)
    key = cache_key(text.split('"""', 2)[2], "law")      # the header names the netlist: not part of the key
    hit = _LOADED.get(key)
    if hit is None:
        shape = (len(spec.var), len(spec.const), len(spec.outputs), spec.derivatives, spec.width)
        n_pre = int(re.search(r"^N_PRE = (\d+)$", text, re.M).group(1))
        if native.build(key, text) is not None:       # C where there is a compiler, numba otherwise
            hit = _compiled(key, *shape, n_pre)
        else:
            hit = _kernel(key, load_module(text, key), *shape)
        _LOADED[key] = hit
    return hit


_SPECS: Dict[tuple, Kernel] = {}


#: File-name prefix of the index from a kernel's tag (kind, form key, scheme...) to its module.
INDEX_PREFIX = "phsym_law_"
_GENERATORS = ("source.py", "hoist.py", "build.py", "abi.py", "native.py", "../gradients.py", "../steps.py", "../printing.py")
_FINGERPRINT = []


def _index_file(tag: tuple) -> Path:
    """Where the module key of ``tag`` is remembered: the tag, phsym's version, the kernels' files
    (:func:`~phsym.codegen.cache.cache_key`) and the generators' sources make its name."""
    if not _FINGERPRINT:
        here = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for f in _GENERATORS:
            h.update((here / f).read_bytes())
        _FINGERPRINT.append(h.hexdigest())
    return cache_dir() / f"{INDEX_PREFIX}{cache_key(repr(tag), 'law-index', _FINGERPRINT[0])}.json"


def _indexed(tag: tuple):
    """The kernel of ``tag`` from a module compiled before, without deriving its formulas again
    (deriving a junction's effort step takes sympy seconds); ``None`` if not there or damaged."""
    try:
        meta = json.loads(_index_file(tag).read_text())
        shape = (int(meta["n_var"]), int(meta["n_const"]), int(meta["n_out"]), bool(meta["derivatives"]),
                 int(meta["width"]))
        if "n_pre" in meta:
            return _compiled(meta["key"], *shape, int(meta["n_pre"]))
        return _kernel(meta["key"], import_generated(meta["key"]), *shape)     # an index from before C kernels
    except (OSError, ValueError, KeyError, TypeError, ImportError, AttributeError):
        return None


def _memo(tag: tuple, make, source: str, form: Form) -> Kernel:
    hit = _SPECS.get(tag)
    if hit is None:
        hit = _indexed(tag)
        if hit is None and library.fetch(_index_file(tag).name):      # compiled with the package
            hit = _indexed(tag)
        if hit is None and not form.derivable:
            raise UnknownForm(f"no compiled kernel of the law form {form.key} ({tag[0]}) here, and no "
                              "expressions to derive it from: the model must be built symbolically")
        if hit is None:
            hit = _load(make(), source)
            meta = dict(key=hit.key, n_var=hit.n_var, n_const=hit.n_const, n_out=hit.n_out,
                        derivatives=hit.derivatives, width=hit.width, n_pre=hit.n_pre)
            try:
                atomic_write(_index_file(tag), lambda fh: fh.write(json.dumps(meta).encode()))
                library.store(_index_file(tag).name, hit.key)
            except OSError:
                pass        # a read-only cache: the formulas are derived again next time
        _SPECS[tag] = hit
    return hit


def _syms(prefix: str, n: int) -> Tuple["sp.Symbol", ...]:
    import sympy as sp
    return tuple(sp.Symbol(f"_{prefix}{i}", real=True) for i in range(n))


def law_kernel(form: Form, source: str = "") -> Kernel:
    """The kernel of a dissipative law form: ``z`` and ``dz / d _v_j``.

    Parameters
    ----------
    form : Form
        One expression in ``n_vars`` variables.
    source : str
        Element names, for the module header.
    """
    def make():
        from .source import KernelSpec
        return KernelSpec(f"the law z = {form.exprs[0]}", tuple(form.variables), (), tuple(form.params),
                          (form.exprs[0],))
    return _memo(("law", form.key), make, source, form)


def _storage(form: Form, n_states: int) -> SimpleNamespace:
    """A storage record in the form's symbols (what :mod:`phsym.codegen.gradients` reads); a junction's
    charge law written in its energy's placeholders (:func:`~phsym.components.junction.charge_law`)."""
    from ...components.base import EffortLaw
    from ...components.junction import charge_law
    xs = tuple(form.variables[:n_states])
    law = None
    if len(form.exprs) == 3:
        state = charge_law(form.exprs[1], form.exprs[2])
        law = EffortLaw(form.variables[n_states], form.exprs[1] if state is None else state, form.exprs[2])
    return SimpleNamespace(hamiltonian=form.exprs[0], states=xs, is_quadratic=False, by_effort=law)


def step_kernel(form: Form, n_states: int, scheme: str, end: bool = False, source: str = "") -> Kernel:
    """The step kernel of a storage form under ``scheme``.

    Inputs ``_d0 ...`` (the state increments, or the effort's increment of a law solved
    through its effort), then ``_x0 ...`` (states at the step's start), ``_xs0 ...`` (their
    scales) and ``_se0`` (the effort at the step's start, efforts only).  Outputs the
    discrete gradient of each state, and for an effort law the state's increment.

    Parameters
    ----------
    form : Form
        The storage's form.
    n_states : int
        Its number of states.
    scheme : str
        ``discrete_gradient``, ``midpoint`` or ``backward_euler``.
    end : bool
        The gradient at the step's end (a stiff storage, see :func:`phsym.codegen.gradients.storage_gradients`).
    source : str
        Element names, for the module header.
    """
    # a form with three expressions is solved through its effort (``[H, x(e), H(x, e)]``)
    effort = form.n_vars > n_states and (scheme != "midpoint" or end)

    def make():
        import sympy as sp
        from ..gradients import effort_step, storage_gradients
        from .source import KernelSpec
        st = _storage(form, n_states)
        V, X, XS = _syms("d", n_states), _syms("x", n_states), _syms("xs", n_states)
        if effort:
            s0 = sp.Symbol("_se0", real=True)
            g, dx = effort_step(st, X[0], V[0], XS[0], s0, scheme, {}, end)
            return KernelSpec(f"{scheme} step{' to the end' if end else ''} of H = {form.exprs[0]} through its "
                              f"effort (outputs: gradient, state increment)", V, X + XS + (s0,), tuple(form.params),
                              (g, dx))
        g = storage_gradients(st, scheme, X, V, XS, end)
        return KernelSpec(f"{scheme} step{' to the end' if end else ''} of H = {form.exprs[0]} (outputs: the "
                          f"discrete gradient of each state)", V, X + XS, tuple(form.params), tuple(g))
    return _memo(("step", form.key, n_states, scheme, end, effort), make, source, form)


def energy_kernel(form: Form, n_states: int, through_effort: bool, source: str = "") -> Kernel:
    """The energy kernel of a storage form: inputs ``_x0 ...`` (and the effort ``_e0`` when
    ``through_effort``: the energy ``H(x, e)`` of an effort law), output ``H``.

    Parameters
    ----------
    form : Form
        The storage's form.
    n_states : int
        Its number of states.
    through_effort : bool
        Through the carried effort (a law solved through its effort).
    source : str
        Element names, for the module header.
    """
    def make():
        import sympy as sp
        from .source import KernelSpec
        X = _syms("x", n_states)
        sub = dict(zip(form.variables[:n_states], X))
        if through_effort:
            e = sp.Symbol("_e0", real=True)
            sub[form.variables[n_states]] = e
            return KernelSpec(f"the energy H(x, e) = {form.exprs[2]}", (), X + (e,), tuple(form.params),
                              (form.exprs[2].xreplace(sub),), derivatives=False)
        return KernelSpec(f"the energy H = {form.exprs[0]}", (), X, tuple(form.params),
                          (form.exprs[0].xreplace(sub),), derivatives=False)
    return _memo(("energy", form.key, n_states, through_effort), make, source, form)


def gradient_kernel(form: Form, n_states: int, source: str = "") -> Kernel:
    """The gradient kernel of a storage form: inputs ``_x0 ...``, outputs ``dH/dx_j`` and the Hessian.

    Parameters
    ----------
    form : Form
        The storage's form.
    n_states : int
        Its number of states.
    source : str
        Element names, for the module header.
    """
    def make():
        import sympy as sp
        from .source import KernelSpec
        X = _syms("x", n_states)
        H = form.exprs[0].xreplace(dict(zip(form.variables[:n_states], X)))
        return KernelSpec(f"the gradient of H = {form.exprs[0]}", X, (), tuple(form.params),
                          tuple(sp.diff(H, x) for x in X))
    return _memo(("gradient", form.key, n_states), make, source, form)


def effort_state_kernel(form: Form, source: str = "") -> Kernel:
    """The state law ``x(e)`` of an effort law form and its derivative: input ``_e0``.

    Parameters
    ----------
    form : Form
        A one-state storage form solved through its effort.
    source : str
        Element names, for the module header.
    """
    def make():
        import sympy as sp
        from .source import KernelSpec
        e = sp.Symbol("_e0", real=True)
        return KernelSpec(f"the state x(e) = {form.exprs[1]}", (e,), (), tuple(form.params),
                          (form.exprs[1].xreplace({form.variables[1]: e}),))
    return _memo(("state", form.key), make, source, form)
