"""The one case-insensitive name lookup of phsym.

Netlist names (elements, parameters, sources) are case-insensitive, as in
SPICE; the spelling of the definition is kept for display.  Every lookup of a
user-given name (a parameter override, an input, a state, a signal label)
goes through :class:`NameTable`, so the rule and the "unknown name" message
are the same everywhere.
"""
from __future__ import annotations

from typing import Dict, Generic, Iterable, Iterator, Mapping, Optional, Tuple, Type, TypeVar

from ..errors import PhsymError, UnknownNameError

__all__ = ["NameTable", "DATUM"]

#: The datum (ground, reference) node's name.
DATUM = "0"

V = TypeVar("V")


class NameTable(Mapping[str, V], Generic[V]):
    """Mapping with case-insensitive keys; an exact-case match wins.

    Parameters
    ----------
    items : iterable of (str, value) or mapping, optional
        Initial entries, in order.
    what : str
        What the names are ("parameter", "input"...), for messages.

    Examples
    --------
    >>> t = NameTable({"R1": 0, "C1": 1}, what="element")
    >>> t["r1"], t.spelling("c1")
    (0, 'C1')
    >>> t.lookup("L1")
    Traceback (most recent call last):
    ...
    phsym.errors.PhsymError: unknown element 'L1'; known: R1, C1
    """

    def __init__(self, items: "Iterable[Tuple[str, V]] | Mapping[str, V]" = (), what: str = "name"):
        self.what = what
        self._exact: Dict[str, V] = {}
        self._lower: Dict[str, Tuple[str, V]] = {}
        pairs = items.items() if isinstance(items, Mapping) else items
        for name, value in pairs:
            self.set(name, value)

    def copy(self) -> "NameTable[V]":
        """A new table with the same entries (for nested scopes)."""
        new: NameTable[V] = NameTable(what=self.what)
        new._exact, new._lower = dict(self._exact), dict(self._lower)
        return new

    def set(self, name: str, value: V, exact_only: bool = False) -> None:
        """Define ``name`` (``exact_only``: found only in this exact spelling).

        Parameters
        ----------
        name : str
            The name as defined.
        value : object
            Its value.
        exact_only : bool
            Do not match other spellings (law variables such as ``q`` must not
            shadow a parameter ``Q``).
        """
        self._exact[name] = value
        if not exact_only:
            self._lower[name.lower()] = (name, value)

    def _find(self, name: str) -> Optional[Tuple[str, V]]:
        if not isinstance(name, str):
            return None
        if name in self._exact:
            return name, self._exact[name]
        return self._lower.get(name.lower())

    def __getitem__(self, name: str) -> V:
        hit = self._find(name)
        if hit is None:
            raise UnknownNameError(f"unknown {self.what} {name!r}")
        return hit[1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._exact)

    def __len__(self) -> int:
        return len(self._exact)

    def spelling(self, name: str) -> Optional[str]:
        """The defined spelling of ``name`` (``None`` when unknown).

        Parameters
        ----------
        name : str
            Any spelling.
        """
        hit = self._find(name)
        return None if hit is None else hit[0]

    def lookup(self, name: str, error: Type[PhsymError] = PhsymError, hint: str = "") -> V:
        """The value of ``name``, or ``error`` listing the known names.

        Parameters
        ----------
        name : str
            Any spelling.
        error : type
            Exception class raised for an unknown name.
        hint : str
            Appended to the message.
        """
        hit = self._find(name)
        if hit is None:
            known = ", ".join(self._exact) or "none"
            raise error(f"unknown {self.what} {name!r}; known: {known}" + (f" ({hint})" if hint else ""))
        return hit[1]
