"""The circuit as data: the numeric, sparse view of a netlist's structure.

The symbolic :class:`~phsym.structure.dirac.Structure` writes the whole
network as one skew matrix ``J`` over a normal tree; that is what ``phsym
show``, ``check()`` and the generated loops read, and it grows faster than
the circuit.  This package is the other view, the one a circuit simulator
keeps: nodes, branches and their incidence as arrays, and the elements in
*groups* that share one law form (:mod:`.canonical`): all instances of a
diode model, of a capacitor, of a user law ``I={...}``.  The numeric engine
(:mod:`phsym.simulation.engines.numeric`) assembles its sparse step
equations from it; nothing here builds a matrix of sympy expressions.

* :mod:`.canonical`: a law with its parameters taken out (one form per law,
  its parameters as numbers per instance);
* :mod:`.data`: :class:`CircuitData`, the nodes, branches and element groups
  of a list of component records.
"""
