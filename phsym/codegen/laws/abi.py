"""The calling convention of every law kernel.

A kernel is a C-callable function ``kernel(n, P, IN, OUT, W)``, compiled
from C (:mod:`.native`) or by numba (:func:`numba.cfunc`), called by the numeric engine through its
address, so that one compiled engine drives kernels generated later
without being compiled again:

* ``n`` (int64): number of instances;
* ``P`` (double*): ``n x n_params`` placeholder values, row by row;
* ``IN`` (double*): ``n x (n_var + n_const)`` inputs per instance: first the
  inputs that move with Newton's unknowns (port voltages, state
  increments), then the constants of the step (start states, scales);
* ``OUT`` (double*): ``n x n_out (1 + n_var)`` outputs per instance: the
  ``n_out`` values, then their derivatives ``d out_m / d var_j`` row by row
  (``m`` major), or only the values for kernels without derivatives;
* ``W`` (double*): ``n x n_pre`` values computed from the constants and the
  placeholders alone (``n_pre`` may be 0: ``W`` is then not read).

A kernel with ``n_pre > 0`` comes with ``prepare(n, P, IN, OUT, W)`` of the
same signature: it reads the constants of ``IN`` and writes ``W`` (``OUT``
is not used).  The engine calls it once per step, the kernel at every
Newton iteration (:mod:`.hoist`: what a junction computes from its start
point is not computed again at each iteration).  An entry of ``W`` that
calls a junction function (the start point's energy of a discrete
gradient) is left NaN by ``prepare`` and computed by the kernel where an
iteration first reads it, then kept in ``W`` for the step.  ``W`` is an array of its
own, not more columns of ``IN``: the engine rebuilds ``IN`` at every
iteration, and ``W`` would cost as much to copy as it saves.
"""
from __future__ import annotations

__all__ = ["SIGNATURE", "out_width"]


def __getattr__(name: str):
    """``SIGNATURE``, numba's type of ``void kernel(int64 n, double* P, double* IN, double* OUT,
    double* W)``, made on first use: a process that loads C kernels (:mod:`.native`) imports no numba."""
    if name == "SIGNATURE":
        from numba import types
        ptr = types.CPointer(types.float64)
        return types.void(types.int64, ptr, ptr, ptr, ptr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def out_width(n_out: int, n_var: int, derivatives: bool) -> int:
    """Entries of ``OUT`` per instance.

    Parameters
    ----------
    n_out, n_var : int
        Outputs and unknown-dependent inputs.
    derivatives : bool
        Whether the kernel writes the derivatives.
    """
    return n_out * (1 + n_var) if derivatives else n_out
