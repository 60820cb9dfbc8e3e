"""Code generation: structure-preserving steps as numba modules.

Shared by the generators: :mod:`.steps` (the symbolic step equations),
:mod:`.printing` (sympy -> Python), :mod:`.batch_driver` (a sweep's chunks
of runs in one call, appended to every generated module), :mod:`.cache`
(the on-disk module cache) and :mod:`.aot` (ahead-of-time compiled loops).

The generators: :mod:`.newton` (the one Newton loop template: simulator
modules, :mod:`.newton.module`; its per-step iteration, junction limiting,
Schur directions, step constants and predictor beside it; the same loop
with forward sensitivities for grey-box fitting, :mod:`.newton.sensitivity`)
and :mod:`.linear_gen` (unrolled linear loops).

:mod:`.kernels`: the compiled numba kernels generated modules and the
linear loops call (LU and Schur solves, junction charges, learned laws, a
sweep's summaries and signals, the CSR linear loop).
"""
from ..common.lazy import attach

__all__ = ["generate", "step_equations", "cache_dir", "cache_info", "clear_cache"]

# steps and newton import sympy: only on first use (a warm start never needs it)
__getattr__, __dir__ = attach(__name__, attributes={
    "generate": "newton.module", "step_equations": "steps", "cache_dir": "cache", "cache_info": "cache",
    "clear_cache": "cache"})
