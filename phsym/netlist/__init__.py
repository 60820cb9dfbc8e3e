"""Netlist language: text -> :class:`~phsym.netlist.spec.Netlist`.

The language is defined over the component registry
(:data:`phsym.components.REGISTRY`): element lines are read with each kind's
declaration.
"""
from __future__ import annotations

from ..common.lazy import attach

__all__ = ["Netlist", "Parameter", "ProbeSpec", "parse_netlist", "load_netlist"]

# The parser imports sympy and the components: load on first use, so that
# numeric submodules (shapes, numbers) stay cheap to import on a warm start.
__getattr__, __dir__ = attach(__name__, attributes={
    "Netlist": "spec", "Parameter": "spec", "ProbeSpec": "spec",
    "parse_netlist": "parser", "load_netlist": "parser"})
