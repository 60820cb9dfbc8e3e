"""Lazy attributes of a package: submodules and names imported on first use.

``import phsym`` must stay cheap (sympy, scipy and numba take seconds to
import, and a warm simulation needs none of them), yet every subpackage and
public name should be reachable as an attribute.  A package calls
:func:`attach` once and hands the result to its module namespace::

    __getattr__, __dir__ = attach(__name__, submodules=["netlist"],
                                  attributes={"Model": "model"})
"""
from __future__ import annotations

import importlib
import sys
from typing import Callable, Dict, Iterable, List, Mapping, Tuple

__all__ = ["attach", "issparse", "lazy_field"]


def attach(package: str, submodules: Iterable[str] = (),
           attributes: Mapping[str, str] = ()) -> Tuple[Callable[[str], object], Callable[[], List[str]]]:
    """Module ``__getattr__`` and ``__dir__`` resolving names on first access.

    Parameters
    ----------
    package : str
        ``__name__`` of the package.
    submodules : iterable of str
        Submodules reachable as attributes (``phsym.identify``).
    attributes : mapping of str to str
        Public name -> submodule (relative to ``package``) that defines it.

    Returns
    -------
    (callable, callable)
        The package's ``__getattr__`` and ``__dir__``.

    Examples
    --------
    >>> import phsym
    >>> phsym.identify.__name__
    'phsym.identify'
    """
    subs = set(submodules)
    attrs: Dict[str, str] = dict(attributes)

    def __getattr__(name: str) -> object:
        if name in subs:
            value: object = importlib.import_module(f"{package}.{name}")
        elif name in attrs:
            value = getattr(importlib.import_module(f"{package}.{attrs[name]}"), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)      # later lookups skip this hook
        return value

    def __dir__() -> List[str]:
        return sorted(set(vars(sys.modules[package])) | subs | set(attrs))

    return __getattr__, __dir__


def issparse(M) -> bool:
    """Whether ``M`` is a scipy sparse matrix, without importing scipy: none can be before
    :mod:`scipy.sparse` is imported (0.3 s of a fresh process, which a small circuit's run skips).

    Parameters
    ----------
    M : object
        A matrix.
    """
    sps = sys.modules.get("scipy.sparse")
    return sps is not None and bool(sps.issparse(M))


def lazy_field(name: str, build):
    """A dataclass field read as a property: the value given, or ``build(self)`` (kept) when ``None`` was
    given and the record can build it (the symbolic forms of a linear element, made on first read).

    Set it on the class after the dataclass is made (its generated ``__init__`` assigns through it).

    Parameters
    ----------
    name : str
        The field's name (its value is kept as ``_name``).
    build : callable
        ``build(record)``: the value, or ``None`` when the record has nothing to build it from.
    """
    slot = "_" + name

    def get(self):
        v = getattr(self, slot)
        if v is None:
            v = build(self)
            if v is not None:
                setattr(self, slot, v)
        return v

    def put(self, value) -> None:
        setattr(self, slot, value)

    return property(get, put)
