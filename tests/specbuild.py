"""Build models from element tuples without the netlist parser (test utility)."""
import sympy as sp

from phsym.components import REGISTRY, ElementSpec
from phsym.model import Model
from phsym.netlist.spec import Netlist, Parameter


def build(elements, ics=None):
    """``build([("R1", "resistor", ("a", "0"), {"R": 10}), ...])`` -> Model.

    The kind's main value (its registry declaration) becomes a parameter
    named after the element, other values ``ELEMENT.key``.  ``ics`` maps
    element name -> IC value; a fifth tuple entry lists referenced elements.
    """
    params, specs = {}, []
    for e in elements:
        name, kind, nodes = e[0], e[1], e[2]
        main = REGISTRY[kind].main_value()
        vals = {}
        for k, v in (e[3] if len(e) > 3 else {}).items():
            pname = name if main is not None and k == main.key else f"{name}.{k}"
            s = sp.Symbol(pname, real=True)
            params[pname] = Parameter(pname, s, float(v))
            vals[k] = s
        ic = (ics or {}).get(name)
        specs.append(ElementSpec(name, kind, tuple(nodes), vals,
                                 ic=None if ic is None else sp.Float(ic),
                                 refs=tuple(e[4]) if len(e) > 4 else ()))
    return Model(Netlist(specs, params, []))
