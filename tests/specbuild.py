"""Build models from element tuples without the netlist parser (test utility)."""
import sympy as sp

from phsym.model import Model
from phsym.netlist.spec import ElementSpec, Netlist, Parameter

MAIN = ("R", "C", "L", "m", "k", "c", "J", "n", "r")


def build(elements, ics=None):
    """``build([("R1", "resistor", ("a", "0"), {"R": 10}), ...])`` -> Model.

    Main values become parameters named after the element, others
    ``ELEMENT.key``.  ``ics`` maps element name -> IC value.
    """
    params, specs = {}, []
    for e in elements:
        name, kind, nodes = e[0], e[1], e[2]
        vals = {}
        for k, v in (e[3] if len(e) > 3 else {}).items():
            pname = name if k in MAIN else f"{name}.{k}"
            s = sp.Symbol(pname, real=True)
            params[pname] = Parameter(pname, s, float(v))
            vals[k] = s
        ic = (ics or {}).get(name)
        specs.append(ElementSpec(name, kind, tuple(nodes), vals,
                                 ic=None if ic is None else sp.Float(ic),
                                 refs=tuple(e[4]) if len(e) > 4 else ()))
    return Model(Netlist(specs, params, []))
