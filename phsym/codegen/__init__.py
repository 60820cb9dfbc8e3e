"""Code generation: per-step equations of structure-preserving schemes as numba modules.

See :mod:`phsym.codegen.steps` (symbolic -> Python source), :mod:`phsym.codegen.cache`
(on-disk module cache), :mod:`phsym.codegen.kernels` (shared numba helpers) and
:mod:`phsym.codegen.aot` (ahead-of-time compiled loops).
"""
from .cache import cache_dir, cache_info, clear_cache

__all__ = ["SCHEMES", "generate", "step_equations", "cache_dir", "cache_info", "clear_cache"]

_FROM_STEPS = ("SCHEMES", "generate", "step_equations")


def __getattr__(name: str):
    # steps imports sympy: only on first use (a warm start never needs it)
    if name in _FROM_STEPS:
        import importlib
        mod = importlib.import_module(".steps", __name__)
        for n in _FROM_STEPS:
            globals()[n] = getattr(mod, n)
        return globals()[name]
    raise AttributeError(f"module 'phsym.codegen' has no attribute {name!r}")
