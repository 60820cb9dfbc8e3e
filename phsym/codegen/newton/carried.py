"""What the generated loop carries from step to step besides the state and
Newton's unknowns: the layout of its work array ``ve`` (no sympy: the
simulator's warm start allocates it).

For the ``n`` storages solved through their effort (junction charges,
:attr:`phsym.codegen.steps.StepEquations.by_effort`, in state order) and
the ``n_p`` parameters:

* ``ve[j]``, ``ve[n + j]``: the effort at the end of the last step and the
  state it belongs to (written by :func:`phsym.codegen.newton.hoist.carry_lines` after a finished
  step, read by :func:`phsym.codegen.newton.hoist.start_lines`);
* ``ve[2 n + c]``: the value of parameter ``c`` the laws were computed with;
* one spare entry, then :data:`PER` entries per storage: the predictor's
  error records (:data:`RECORDS`, :mod:`phsym.codegen.newton.predictor`) and the
  step constants of the next step (:data:`CARRIED` at most,
  :func:`phsym.codegen.newton.hoist.carried_constants`).

NaN: nothing carried yet (a fresh array, a sweep's next parameter set).
"""
from __future__ import annotations

__all__ = ["RECORDS", "CARRIED", "PER", "size", "base"]

#: The predictor's error records per storage (half change, full change).
RECORDS = 2
#: Step constants carried per storage at most (a junction's exponential and grading power).
CARRIED = 4
#: Entries of ``ve`` per storage after the efforts, states and parameters.
PER = RECORDS + CARRIED


def size(n: int, n_p: int) -> int:
    """Length of ``ve`` for ``n`` storages solved through their effort and ``n_p`` parameters."""
    return (2 + PER) * n + n_p + 1


def base(j: int, n: int, n_p: int) -> int:
    """The first of the :data:`PER` entries of the ``j``-th storage."""
    return 2 * n + n_p + 1 + PER * j
