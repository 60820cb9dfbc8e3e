"""Compiled kernels of law forms: one per form, shared by every instance.

A *law form* (:mod:`phsym.structure.circuit.canonical`) is a law with its
parameters taken out: all diodes of one model, all instances of a user law
``H={q^4/4}``.  This package writes the compiled kernels the numeric engine
(:mod:`phsym.simulation.engines.numeric`) calls for a form, vectorised over
its instances: a dissipative law and its derivatives, a storage's discrete
gradient under each scheme (with the state increment of a law solved
through its effort), its energy, its gradient and Hessian for DC.  Each
kernel is a numba ``cfunc`` with the one signature of :mod:`.abi`, in a
generated module of the cache (:mod:`phsym.codegen.cache`), compiled once
per form and machine and then loaded: a new circuit whose laws are all known
compiles nothing.

* :mod:`.abi`: the kernels' calling convention (arrays and their layout);
* :mod:`.source`: the module text of a kernel;
* :mod:`.build`: which kernels a form needs, generated, cached and loaded.
"""
