"""Code generation: per-step equations of structure-preserving schemes as numba modules.

See :mod:`phsym.codegen.generate` (symbolic -> Python source), :mod:`phsym.codegen.cache`
(on-disk module cache) and :mod:`phsym.codegen.kernels` (shared numba helpers).
"""
from .cache import cache_dir, cache_info, clear_cache
from .generate import SCHEMES, generate

__all__ = ["SCHEMES", "generate", "cache_dir", "cache_info", "clear_cache"]
