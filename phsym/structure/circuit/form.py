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

if TYPE_CHECKING:
    import sympy as sp

__all__ = ["Form", "VAR", "PAR"]

#: Names of the positional variables and placeholders of a form.
VAR, PAR = "_v", "_p"


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
        from .canonical import _var
        return [_var(i) for i in range(self.n_vars)]

    @property
    def params(self) -> List["sp.Symbol"]:
        """The placeholders ``_p0, ...`` (sympy symbols)."""
        from .canonical import _par
        return [_par(i) for i in range(self.n_params)]

    @property
    def derivable(self) -> bool:
        """Whether the expressions are here (kernels can be derived, not only loaded)."""
        return self.exprs is not None
