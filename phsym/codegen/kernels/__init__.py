"""Compiled numba kernels the generated modules (and the linear loops) call.

Generated source imports them by dotted path, and
:mod:`phsym.codegen.cache` hashes the files of those it calls into every
module's key: :mod:`.generic` (dense LU, Schur directions, sparse
triangular solves, the input of a step, the sparse linear loop),
:mod:`.junction` (junction charges with transit time), :mod:`.learned`
(learned laws: the bump sum and the module constants), :mod:`.sweep` (a
run's summaries and signals for a sweep's batch path) and
:mod:`.linear_csr` (the dense linear loop of large models, on the nonzeros
of its matrices).

Nothing is imported here: each module loads numba on first use.
"""
