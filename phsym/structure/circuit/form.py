"""A law form as data (:class:`Form`), without sympy.

:func:`~.canonical.canonical` makes forms from laws (sympy); the numeric
engine reads a form's key, its numbers of variables and placeholders, and,
only when its kernels must be derived, its expressions.  A form known by
its key alone (``exprs`` is ``None``: a circuit described without sympy)
finds its kernels in the caches or the package's library
(:mod:`phsym.codegen.laws.build`) or not at all.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Tuple

from ...common.trees import PAR

if TYPE_CHECKING:
    import sympy as sp

__all__ = ["Form", "VAR", "PAR", "variable", "placeholder"]

#: Name prefix of the positional variables of a form (its placeholders': :data:`PAR`).
VAR = "_v"

_MADE: dict = {}


def _symbol(prefix: str, i: int) -> "sp.Symbol":
    """The real symbol ``{prefix}{i}`` (the first ones made once per process, on first use)."""
    got = _MADE.get((prefix, i))
    if got is None:
        import sympy as sp
        got = sp.Symbol(f"{prefix}{i}", real=True)
        if i < 256:
            _MADE[(prefix, i)] = got
    return got


def variable(i: int) -> "sp.Symbol":
    """A form's positional variable ``_v{i}``."""
    return _symbol(VAR, i)


def placeholder(i: int) -> "sp.Symbol":
    """A form's placeholder ``_p{i}``."""
    return _symbol(PAR, i)


@dataclass(frozen=True)
class Form:
    """A law form (see :mod:`.canonical`).

    Attributes
    ----------
    exprs : tuple of sympy.Expr, or None
        The expressions in ``_v0 ... _v{n_vars-1}`` and ``_p0 ... _p{n_params-1}``; ``None`` for a
        form known by its key alone (its kernels can be loaded, not derived).
    n_vars, n_params : int
        Number of variables and of placeholders.
    key : str
        Digest of the expressions (and phsym's version): equal keys, equal forms.
    """

    exprs: Optional[Tuple["sp.Expr", ...]]
    n_vars: int
    n_params: int
    key: str

    @property
    def variables(self) -> List["sp.Symbol"]:
        """The positional variables ``_v0, ...`` (sympy symbols)."""
        return [variable(i) for i in range(self.n_vars)]

    @property
    def params(self) -> List["sp.Symbol"]:
        """The placeholders ``_p0, ...`` (sympy symbols)."""
        return [placeholder(i) for i in range(self.n_params)]

    @property
    def derivable(self) -> bool:
        """Whether the expressions are here (kernels can be derived, not only loaded)."""
        return self.exprs is not None
