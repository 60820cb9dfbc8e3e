"""Netlist language: text -> :class:`~phsym.netlist.spec.Netlist`."""
from .spec import (DATUM, KINDS, ElementSpec, Law, Netlist, Parameter,
                   ProbeSpec, Waveform)

__all__ = ["DATUM", "KINDS", "ElementSpec", "Law", "Netlist", "Parameter",
           "ProbeSpec", "Waveform", "parse_netlist", "load_netlist"]


def parse_netlist(text: str, file: "str | None" = None) -> Netlist:
    """Parse netlist text into a flattened :class:`Netlist`."""
    from .parser import parse_netlist as _parse
    return _parse(text, file=file)


def load_netlist(path) -> Netlist:
    """Read and parse a netlist file."""
    from .parser import load_netlist as _load
    return _load(path)
