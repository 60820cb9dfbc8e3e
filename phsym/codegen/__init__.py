"""Code generation: structure-preserving steps as numba modules.

:mod:`.steps` (the symbolic step equations), :mod:`.newton` (the one Newton
loop template: simulator modules; its predictor in :mod:`.predictor`),
:mod:`.sensitivity` (the same loop with forward sensitivities, for grey-box
fitting), :mod:`.printing` (sympy -> Python), :mod:`.kernels` (shared numba
helpers: LU, linear loops), :mod:`.linear_gen` (unrolled linear loops),
:mod:`.cache` (the on-disk module cache) and :mod:`.aot` (ahead-of-time
compiled loops).
"""
from ..common.lazy import attach

__all__ = ["generate", "step_equations", "cache_dir", "cache_info", "clear_cache"]

# steps and newton import sympy: only on first use (a warm start never needs it)
__getattr__, __dir__ = attach(__name__, attributes={
    "generate": "newton", "step_equations": "steps", "cache_dir": "cache", "cache_info": "cache",
    "clear_cache": "cache"})
