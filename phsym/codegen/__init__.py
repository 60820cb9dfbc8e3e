"""Code generation: per-step equations of structure-preserving schemes as numba modules.

See :mod:`phsym.codegen.generate` (symbolic -> Python source), :mod:`phsym.codegen.cache`
(on-disk module cache) and :mod:`phsym.codegen.kernels` (shared numba helpers).
"""
from .cache import cache_dir, cache_info, clear_cache

__all__ = ["SCHEMES", "generate", "cache_dir", "cache_info", "clear_cache"]


def __getattr__(name: str):
    # generate imports sympy: only on first use (a warm start never needs it)
    if name in ("SCHEMES", "generate"):
        from . import generate as _g
        value = getattr(_g, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'phsym.codegen' has no attribute {name!r}")
