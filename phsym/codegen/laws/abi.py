"""The calling convention of every law kernel.

A kernel is a C-callable function ``kernel(n, P, IN, OUT)`` compiled by
numba (:func:`numba.cfunc`), called by the numeric engine through its
address, so that one compiled engine drives kernels generated later
without being compiled again:

* ``n`` (int64): number of instances;
* ``P`` (double*): ``n x n_params`` placeholder values, row by row;
* ``IN`` (double*): ``n x (n_var + n_const)`` inputs per instance: first the
  inputs that move with Newton's unknowns (port voltages, state
  increments), then the constants of the step (start states, scales);
* ``OUT`` (double*): ``n x n_out (1 + n_var)`` outputs per instance: the
  ``n_out`` values, then their derivatives ``d out_m / d var_j`` row by row
  (``m`` major), or only the values for kernels without derivatives.
"""
from __future__ import annotations

from numba import types

__all__ = ["SIGNATURE", "out_width"]

#: ``void kernel(int64 n, double* P, double* IN, double* OUT)``
SIGNATURE = types.void(types.int64, types.CPointer(types.float64), types.CPointer(types.float64),
                       types.CPointer(types.float64))


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
