"""The :class:`Component` base class and the registry of component kinds.

A component kind is one class that declares everything about it: how a
netlist line names it (letters, kind keyword, terminals, keywords with
units, defaults and constraints, the laws it accepts, the SPICE ``.model``
type, what ``IC=`` means), and what it contributes to the port-Hamiltonian
structure (:meth:`Component.contribute`).  The netlist parser, the model's
value checks, the docs table (:mod:`phsym.components.table`) and the test
helpers read these declarations from the :data:`REGISTRY`.

Adding a kind is one decorated class::

    @register
    class Heater(Component):
        \"\"\"Heating resistor ``H1 a b heater R=10``: v = R i.\"\"\"
        kind = "heater"
        keywords = ("heater",)
        values = (Value("R", "ohm", "resistance", main=True, check="positive"),)
        summary = "a resistor by another name"

        def contribute(self):
            ...
"""
from __future__ import annotations

from typing import ClassVar, Dict, Iterator, List, Mapping, Optional, Tuple, Type

import sympy as sp

from ..errors import StructureError
from .base import Branch, Contribution
from .declare import CHECKS, Choice, LawForm, Value
from .element import ElementSpec

__all__ = ["Value", "LawForm", "Choice", "Component", "Registry", "REGISTRY", "register", "CHECKS"]


class Component:
    """Base class of every component kind (see the module docstring).

    Parameters
    ----------
    spec : ElementSpec
        The element as the netlist describes it.
    defaults : mapping of sympy.Symbol to float
        Default parameter values (for checks that need numbers).

    Attributes
    ----------
    kind : str
        Canonical kind name (``"capacitor"``).
    letters : tuple of str
        Name prefixes that select the kind (``("C",)``, ``("TF",)``).
    keywords : tuple of str
        Kind keywords that may follow the nodes (``M1 v 0 mass m=1``).
    domain : str
        ``"electrical"``, ``"translational"``, ``"rotational"``, ``"magnetic"`` or ``"any"``.
    terminals : tuple of str
        Names of the node arguments, in order.
    optional_terminals : tuple of str
        Terminals a line may add after ``terminals`` (a BJT's substrate:
        ``Q1 c b e s MODEL``); such a node is read when a model name follows it.
    refs : tuple of str
        Kinds of the elements named after the nodes (``K1 L1 L2``: inductors).
    senses : str or None
        Kind the referenced elements become when read (``F1 a b Vs 2``: the
        0 V source ``Vs`` becomes an ``ammeter``, whose current the law reads).
    variadic_refs : bool
        The element names any number of elements of the kind ``refs[0]``
        (a behavioural source reads the currents of several sources).
    values : tuple of Value
        Accepted values.
    laws : tuple of LawForm
        Accepted laws.
    choices : tuple of Choice
        Accepted word options.
    model : str or None
        SPICE ``.model`` type whose cards the element may name (``"D"``).
    model_types : tuple of str
        Every ``.model`` type the kind accepts when there are several
        (``NPN``, ``PNP``); the kind then declares a ``polarity`` choice
        whose options are these types in lower case, and a card sets it.
    model_temperature : tuple of str
        ``.model`` parameters (numbers, upper case) of the temperature law
        :meth:`at_temperature` (diode: ``TNOM``, ``EG``, ``XTI``).
    model_ignored : tuple of str
        SPICE parameters a ``.model`` card of that type may set that phsym
        does not implement (upper case): accepted, named in one warning,
        ignored.  Any other unknown parameter is an error.
    ic : str or None
        Meaning of ``IC=`` (``None``: not accepted).
    source : bool
        The element is a port with a waveform (``V``, ``I``...).
    absolute_input : str
        For a source whose value is an absolute quantity when its second
        terminal is the datum and must then stay positive: its unit
        (``"K"`` for a temperature bath).  Empty for the others.
    grounded : bool
        One terminal must be the datum (masses in the mobility analogy).
    summary : str
        One line for the docs table.
    """

    kind: ClassVar[str] = ""
    letters: ClassVar[Tuple[str, ...]] = ()
    keywords: ClassVar[Tuple[str, ...]] = ()
    domain: ClassVar[str] = "electrical"
    terminals: ClassVar[Tuple[str, ...]] = ("n+", "n-")
    optional_terminals: ClassVar[Tuple[str, ...]] = ()
    refs: ClassVar[Tuple[str, ...]] = ()
    senses: ClassVar[Optional[str]] = None
    variadic_refs: ClassVar[bool] = False
    values: ClassVar[Tuple[Value, ...]] = ()
    laws: ClassVar[Tuple[LawForm, ...]] = ()
    choices: ClassVar[Tuple[Choice, ...]] = ()
    model: ClassVar[Optional[str]] = None
    model_types: ClassVar[Tuple[str, ...]] = ()
    model_temperature: ClassVar[Tuple[str, ...]] = ()
    model_ignored: ClassVar[Tuple[str, ...]] = ()
    ic: ClassVar[Optional[str]] = None
    source: ClassVar[bool] = False
    absolute_input: ClassVar[str] = ""
    grounded: ClassVar[bool] = False
    summary: ClassVar[str] = ""

    def __init__(self, spec: ElementSpec, defaults: Mapping[sp.Symbol, float]):
        self.spec = spec
        self.defaults = defaults

    # ---------------------------------------------------------- declarations
    @classmethod
    def main_value(cls) -> Optional[Value]:
        """The positional value, if any."""
        return next((v for v in cls.values if v.main), None)

    @classmethod
    def is_grounded(cls, choices: Mapping[str, str]) -> bool:
        """Whether one terminal must be the datum, given the element's word options.

        Parameters
        ----------
        choices : mapping of str to str
            The options given.
        """
        return cls.grounded

    @classmethod
    def law_form(cls, key: str) -> Optional[LawForm]:
        """The accepted law with ``key``, if any.

        Parameters
        ----------
        key : str
            Law keyword (case-insensitive).
        """
        return next((f for f in cls.laws if f.key.lower() == key.lower()), None)

    @classmethod
    def usage(cls) -> str:
        """How a netlist line of this kind is written (for hints and docs)."""
        head = (cls.letters[0] + "<name>") if cls.letters else "NAME"
        parts = [head, *cls.terminals, *(f"<{r}>" for r in cls.refs)]
        if cls.keywords and not cls.letters:
            parts.append(cls.keywords[0])
        if cls.model:
            parts.append("[MODEL]")
        if cls.source:
            parts.append("[DC v | SIN(...) | PULSE(...) | PWL(...)]")
        main = cls.main_value()
        opts = []
        for v in cls.values:
            if v is main:
                parts.append("VALUE" if not cls.keywords or cls.letters else f"{v.key}=VALUE")
            else:
                opts.append(f"[{v.key}=..]")
        parts += opts
        if cls.ic:
            parts.append("[IC=..]")
        parts += [f"[{c.key}={'|'.join(c.options)}]" for c in cls.choices]
        if cls.laws:
            parts.append("| " + " | ".join(f"{f.key}={{f({f.variable})}}" for f in cls.laws))
        return " ".join(parts)

    @classmethod
    def at_temperature(cls, symbols: Mapping[str, sp.Expr], card: Mapping[str, float], temp: float,
                       tnom: float) -> Dict[str, sp.Expr]:
        """Values of a ``.model`` card that change at the circuit temperature (default: none).

        Parameters
        ----------
        symbols : mapping of str to sympy.Expr
            The card's values by key (parameter symbols).
        card : mapping of str to float
            The card's :attr:`model_temperature` parameters that were given.
        temp : float
            Circuit temperature [degrees Celsius] (``.temp`` / ``TEMP``, default 27).
        tnom : float
            Nominal temperature [degrees Celsius] (``.options TNOM``, default 27).

        Returns
        -------
        dict of str to sympy.Expr
            Replacement expressions by value key.
        """
        return {}

    # ------------------------------------------------------------- contribution
    @property
    def name(self) -> str:
        """Element name."""
        return self.spec.name

    def choice(self, key: str) -> str:
        """The element's word option ``key`` (its default when not given).

        Parameters
        ----------
        key : str
            A declared choice key.
        """
        c = next(c for c in self.choices if c.key == key)
        return self.spec.choices.get(key, c.default)

    @property
    def node_domain(self) -> str:
        """Domain of this element's nodes (the class's :attr:`domain` unless an option changes it)."""
        return self.domain

    def value(self, key: str) -> sp.Expr:
        """The element's value ``key`` as a sympy expression in parameter symbols.

        Parameters
        ----------
        key : str
            A declared value key.
        """
        try:
            return sp.sympify(self.spec.values[key])
        except KeyError:
            raise StructureError(f"element {self.name} has no value {key!r}", [self.name]) from None

    def branch(self, role: str, priority: int, nodes: Optional[Tuple[str, str]] = None,
               suffix: str = "") -> Branch:
        """A branch of this element (receiver convention ``nodes[0] -> nodes[1]``).

        Parameters
        ----------
        role : str
            See :class:`~phsym.components.base.Branch`.
        priority : int
            Tree-selection priority.
        nodes : (str, str), optional
            Default: the first two terminals.
        suffix : str
            Appended to the element name (two-ports: ``.p``, ``.s``).
        """
        a, b = nodes if nodes is not None else self.spec.nodes[:2]
        return Branch(self.name + suffix, self.name, self.spec.kind, a, b, self.node_domain, role, priority)

    def contribute(self) -> Contribution:
        """Branches, storages, dissipations, ports... of this element."""
        raise NotImplementedError(f"{type(self).__name__} does not define contribute()")


class Registry(Mapping[str, Type[Component]]):
    """Component kinds by kind name, with the lookups the parser needs."""

    def __init__(self) -> None:
        self._kinds: Dict[str, Type[Component]] = {}
        self._keywords: Dict[str, Type[Component]] = {}      # parsing asks per word of every line
        self._letters: Dict[str, Type[Component]] = {}       # ... and per element name

    def __getitem__(self, kind: str) -> Type[Component]:
        return self._kinds[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def add(self, cls: Type[Component]) -> None:
        """Register ``cls`` (its kind, letters and keywords must be new).

        Parameters
        ----------
        cls : type
            A :class:`Component` subclass with ``kind`` set.
        """
        if not cls.kind or cls.kind in self._kinds:
            raise StructureError(f"component kind {cls.kind!r} of {cls.__name__} is empty or registered twice")
        for other in self._kinds.values():
            clash = ({s.lower() for s in cls.letters} & {s.lower() for s in other.letters}) | \
                    ({s.lower() for s in cls.keywords} & {s.lower() for s in other.keywords})
            if clash:
                raise StructureError(f"{cls.__name__} reuses {sorted(clash)} of {other.__name__}")
        self._kinds[cls.kind] = cls
        self._keywords.update((k.lower(), cls) for k in cls.keywords)
        self._letters.update((k.lower(), cls) for k in cls.letters)

    def remove(self, kind: str) -> None:
        """Unregister ``kind`` (for toy components in tests).

        Parameters
        ----------
        kind : str
            Kind name.
        """
        cls = self._kinds.pop(kind, None)
        if cls is not None:
            for k in cls.keywords:
                self._keywords.pop(k.lower(), None)
            for k in cls.letters:
                self._letters.pop(k.lower(), None)

    def by_keyword(self, word: str) -> Optional[Type[Component]]:
        """The kind whose kind keyword is ``word`` (case-insensitive).

        Parameters
        ----------
        word : str
            A word after the nodes.
        """
        return self._keywords.get(word.lower())

    def by_name(self, name: str) -> Optional[Type[Component]]:
        """The kind selected by an element name's prefix (the longest prefix wins).

        Parameters
        ----------
        name : str
            Element name as written.
        """
        low = name.lower()
        for size in range(min(len(low), max(map(len, self._letters), default=0)), 0, -1):
            found = self._letters.get(low[:size])
            if found is not None:
                return found
        return None

    def by_model(self, model_type: str) -> List[Type[Component]]:
        """Kinds accepting SPICE ``.model`` cards of ``model_type``.

        Parameters
        ----------
        model_type : str
            Card type (``D``, ``NPN``...), case-insensitive.
        """
        low = model_type.lower()
        return [c for c in self._kinds.values()
                if c.model and low in (t.lower() for t in (c.model_types or (c.model,)))]

    def all_letters(self) -> List[str]:
        """Every name prefix, for hints."""
        return sorted({s for c in self._kinds.values() for s in c.letters}, key=lambda s: (len(s), s))

    def all_keywords(self) -> List[str]:
        """Every kind keyword, for hints."""
        return [k for c in self._kinds.values() for k in c.keywords]


#: The component kinds phsym knows (filled by :func:`register`).
REGISTRY = Registry()


def register(cls: Type[Component]) -> Type[Component]:
    """Class decorator: add a component kind to :data:`REGISTRY`.

    Parameters
    ----------
    cls : type
        A :class:`Component` subclass with its declarations.
    """
    if cls.contribute is Component.contribute:
        raise StructureError(f"component kind {cls.__name__} does not define contribute()")
    REGISTRY.add(cls)
    return cls
