"""The declarations of the plain kinds as data: what :mod:`.plain` needs to read their lines without
importing the components (which import sympy).

The component classes (:data:`phsym.components.REGISTRY`) are the source of
these declarations; this module is a copy that tests compare with them
(tests/test_plain_deck.py), so a kind changed there fails until it is
changed here.  Only the kinds whose elements the symbolic build describes by
numbers (:data:`phsym.structure.circuit.kinds.KINDS`) are here, with the
registry's name prefixes and kind keywords (a line selecting another kind
is not plain).
"""
from __future__ import annotations

from typing import Dict, NamedTuple, Optional, Tuple

__all__ = ["PlainValue", "PlainKind", "PLAIN_KINDS", "LETTERS", "KEYWORDS", "MODEL_TYPES"]


class PlainValue(NamedTuple):
    """One declared value (:class:`phsym.components.Value`'s fields that reading a line needs)."""

    key: str
    default: Optional[float]
    check: Optional[str]
    main: bool
    optional: bool
    model_key: Optional[str]
    aliases: Tuple[str, ...]


class PlainKind(NamedTuple):
    """One kind's declaration: terminals, values, ``.model`` type, law keys, IC, source."""

    kind: str
    terminals: int
    values: Tuple[PlainValue, ...]
    model: Optional[str]
    laws: Tuple[str, ...]
    ic: bool
    source: bool


def _v(key, default=None, check="positive", main=False, optional=False, model_key=None, aliases=()):
    return PlainValue(key, default, check, main, optional, model_key, tuple(aliases))


#: The plain kinds by kind name.
PLAIN_KINDS: Dict[str, PlainKind] = {
    "resistor": PlainKind("resistor", 2, (_v("R", main=True),), None, ("I", "V"), False, False),
    "capacitor": PlainKind("capacitor", 2, (_v("C", main=True),), None, ("H", "V"), True, False),
    "inductor": PlainKind("inductor", 2, (_v("L", main=True),), None, ("H", "I"), True, False),
    "diode": PlainKind("diode", 2, (
        _v("Is", 1e-14), _v("N", 1.0), _v("Vt", 0.02585), _v("Gmin", 1e-12, "nonnegative"),
        _v("Rs", None, "nonnegative", optional=True), _v("Cjo", None, "nonnegative", optional=True, aliases=("CJ0", "CJ")),
        _v("Vj", None, optional=True, aliases=("PB",)), _v("Mj", None, "fraction", optional=True, model_key="M", aliases=("MJ",)),
        _v("Fc", None, "fraction", optional=True), _v("Bv", None, optional=True),
        _v("Ibv", None, optional=True, aliases=("IB",)), _v("Tt", None, "nonnegative", optional=True)),
        "D", (), False, False),
    "vsource": PlainKind("vsource", 2, (), None, (), False, True),
    "isource": PlainKind("isource", 2, (), None, (), False, True),
}

#: Every registered name prefix (lower case) and its kind: the longest prefix of a name selects it.
LETTERS: Dict[str, str] = {
    "b": "behavioral", "c": "capacitor", "d": "diode", "e": "vcvs", "f": "cccs", "g": "vccs", "gy": "gyrator",
    "h": "ccvs", "i": "isource", "j": "jfet", "k": "coupling", "l": "inductor", "m": "mosfet", "p": "potentiometer",
    "q": "bjt", "r": "resistor", "s": "switch", "t": "tline", "tf": "transformer", "v": "vsource", "w": "cswitch"}

#: Every registered kind keyword (lower case): a line with one after its nodes is of that kind.
KEYWORDS = frozenset((
    "ammeter", "angular_velocity", "beam", "coil", "contact", "damper", "entropy_flow", "fcapacitor", "felt",
    "finductor", "flux_rate", "force", "heat_capacity", "heat_transfer", "inertia", "joule", "learn",
    "magnetic_resistance", "mass", "mmf", "opamp", "rdamper", "reluctance", "spring", "temperature", "torque",
    "torsion", "triode", "variable_gap", "velocity"))

#: ``.model`` types (lower case) of the plain kinds, and the kind each selects.
MODEL_TYPES: Dict[str, str] = {k.model.lower(): k.kind for k in PLAIN_KINDS.values() if k.model}
