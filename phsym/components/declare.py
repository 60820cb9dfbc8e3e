"""Declarations a component kind makes: its values (:class:`Value`), laws
(:class:`LawForm`) and word options (:class:`Choice`), and the value
constraints (:data:`CHECKS`).  Re-exported by :mod:`phsym.components.component`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

__all__ = ["Value", "LawForm", "Choice", "CHECKS"]

from ..common.constraints import CHECKS, problem


@dataclass(frozen=True)
class Value:
    """A value an element accepts (``R=1k``, ``IS=2.5n``...).

    Attributes
    ----------
    key : str
        Keyword as written in the netlist (case-insensitive) and key of
        :attr:`ElementSpec.values`.
    unit : str
        Physical unit (for docs).
    doc : str
        What the value is.
    default : float or None
        Default when not given (``None``: required, unless a law replaces it).
    main : bool
        The value may be given positionally after the nodes (``R1 a b 1k``);
        its parameter is named after the element, the others ``NAME.key``.
    check : str or None
        Constraint at every parameter set: a key of :data:`CHECKS`.
    model_key : str or None
        Name of the value on a SPICE ``.model`` card (default: ``key``
        upper-cased) when the kind declares :attr:`Component.model`.
    optional : bool
        Without a default: absent from :attr:`ElementSpec.values` (and no
        parameter is made) unless given (a diode's series resistance).
    aliases : tuple of str
        Other names of the value on a ``.model`` card (SPICE's ``CJ0`` for ``CJO``).
    structural : bool
        The value shapes the structure (a number of cells, a fitted
        exponent): it is a number fixed when the netlist is read (an
        expression is evaluated at the parameter defaults), not a parameter
        that a run could override.
    """

    key: str
    unit: str
    doc: str
    default: Optional[float] = None
    main: bool = False
    check: Optional[str] = None
    model_key: Optional[str] = None
    optional: bool = False
    aliases: Tuple[str, ...] = ()
    structural: bool = False

    def problem(self, value: float) -> Optional[str]:
        """Why ``value`` is not acceptable (``None`` when it is).

        Parameters
        ----------
        value : float
            The numeric value.
        """
        return problem(self.check, value)


@dataclass(frozen=True)
class LawForm:
    """A law an element accepts instead of its main value (``H={q**2/2}``).

    Attributes
    ----------
    key : str
        ``"H"`` (stored energy of the state), ``"I"`` (current of the
        voltage) or ``"V"`` (voltage of the current); for storages also the
        effort of the state (``V={f(q)}`` for a capacitor).
    variable : str
        Name of the variable the expression is written in (``q``, ``v``...).
    doc : str
        What the law gives, with units.
    effort : bool
        The law is a storage's effort ``dH/dx`` (the energy is its integral
        from 0), not its energy.
    """

    key: str
    variable: str
    doc: str
    effort: bool = False


@dataclass(frozen=True)
class Choice:
    """A word-valued option of an element (``analogy=impedance``, ``taper=log``).

    Attributes
    ----------
    key : str
        Keyword (case-insensitive) and key of :attr:`ElementSpec.choices`.
    options : tuple of str
        Accepted words (lower case); the first is the default.
    doc : str
        What the option selects.
    """

    key: str
    options: Tuple[str, ...]
    doc: str

    @property
    def default(self) -> str:
        """The first option."""
        return self.options[0]
