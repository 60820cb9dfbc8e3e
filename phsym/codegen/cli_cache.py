"""``phsym cache info|clear``: inspect or empty the generated-code cache."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``cache`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser("cache", help="show or clear the generated-code cache",
                              description="Generated simulator modules live in $PHSYM_CACHE_DIR "
                                          "(default ~/.cache/phsym) with numba's compiled code.")
    p.add_argument("action", choices=["info", "clear"])
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym cache``; returns the exit status."""
    from .cache import cache_info, clear_cache
    if args.action == "clear":
        n = clear_cache()
        print(f"removed {n} files from {cache_info()['directory']}")
        return 0
    info = cache_info()
    print(f"directory: {info['directory']}")
    print(f"generated modules: {info['modules']}")
    print(f"files: {info['files']}, {info['bytes'] / 1e6:.2f} MB")
    return 0
