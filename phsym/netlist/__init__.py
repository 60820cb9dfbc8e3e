"""Netlist language: text -> :class:`~phsym.netlist.spec.Netlist`."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spec import Netlist

__all__ = ["DATUM", "KINDS", "ElementSpec", "Law", "Netlist", "Parameter",
           "ProbeSpec", "Waveform", "parse_netlist", "load_netlist"]

# The spec classes import sympy; load them on first use so that numeric
# submodules (shapes, numbers) stay cheap to import.
_SPEC = {"DATUM", "KINDS", "ElementSpec", "Law", "Netlist", "Parameter", "ProbeSpec", "Waveform"}


def __getattr__(name: str):
    if name in _SPEC:
        from . import spec
        value = getattr(spec, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'phsym.netlist' has no attribute {name!r}")


def parse_netlist(text: str, file: "str | None" = None) -> "Netlist":
    """Parse netlist text into a flattened :class:`Netlist`.

    Parameters
    ----------
    text : str
        Netlist source.
    file : str, optional
        File name used in error messages.
    """
    from .parser import parse_netlist as _parse
    return _parse(text, file=file)


def load_netlist(path) -> "Netlist":
    """Read and parse a netlist file.

    Parameters
    ----------
    path : str or pathlib.Path
        The netlist file.
    """
    from .parser import load_netlist as _load
    return _load(path)
