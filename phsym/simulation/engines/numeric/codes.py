"""Numbers shared by the compiled Newton (:mod:`.newton`) and its Python callers, in a module that
does not import numba (a run on the ahead-of-time engine never does, :mod:`.engine`)."""
from __future__ import annotations

__all__ = ["REUSE", "STATUS"]

#: A Newton iteration after a scaled step at most this small (``max_i |d_i| / (|z_i| + s_i)``) reuses
#: the last factorization instead of refactoring: the Jacobian moved by about that fraction, so the
#: chord step leaves a residual about ``REUSE`` times the full step's, well below the balance's
#: rounding (measured on the scale benchmark's decks: the same iterations and balance, a ninth fewer
#: refactorizations at 1e-6; at 1e-4 a third fewer, but the balance error rose 50x; docs/benchmarks.md).
REUSE = 1e-6

#: Status codes of a solve (0: converged).
STATUS = {1: "Newton did not converge", 2: "non-finite residual", 3: "singular Newton Jacobian",
          4: "non-finite state", 5: "the LU factors need more room"}
