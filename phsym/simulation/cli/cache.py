"""``phsym cache info|clear|build``: inspect, empty or fill the generated-code cache."""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``cache`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser(
        "cache", help="show, clear or fill the generated-code cache",
        description="Generated simulator modules, warm-start snapshots and ahead-of-time compiled "
                    "extensions live in $PHSYM_CACHE_DIR (default ~/.cache/phsym) with numba's "
                    "compiled code.  'build FILE' simulates one step of a netlist and compiles its "
                    "loop ahead of time now, so that the next 'phsym simulate FILE' with the same "
                    "--fs and --method starts without numba; 'build' without a FILE compiles the "
                    "numeric engine (once per machine: every later circuit of known device kinds "
                    "then compiles nothing); 'build --package' compiles it into the installed "
                    "package's own directory, where every user and every numba cache finds it "
                    "(run it once after installing phsym).")
    p.add_argument("action", choices=["info", "clear", "build"])
    p.add_argument("file", nargs="?", help="netlist (for build)")
    p.add_argument("--fs", default="48k", help="sample rate for build (default 48k)")
    p.add_argument("--method", default="auto", help="scheme for build (default auto)")
    p.add_argument("--package", action="store_true",
                   help="build: compile the numeric engine into the package's directory (not the user's cache)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym cache``; returns the exit status."""
    from ...codegen.cache import cache_info, clear_cache
    if args.action == "clear":
        n = clear_cache()
        print(f"removed {n} files from {cache_info()['directory']}")
        return 0
    if args.action == "build":
        return _build(args)
    info = cache_info()
    print(f"directory: {info['directory']}")
    print(f"generated modules: {info['modules']}")
    print(f"warm-start snapshots: {info['snapshots']}")
    print(f"ahead-of-time extensions: {info['compiled']}")
    print(f"files: {info['files']}, {info['bytes'] / 1e6:.2f} MB")
    return 0


def _build(args: argparse.Namespace) -> int:
    import os
    before = os.environ.get("PHSYM_AOT")
    os.environ["PHSYM_AOT"] = "0"       # build here, not in the background
    try:
        return _build_here(args)
    finally:        # called in-process (tests, scripts): later runs start their background builds again
        if before is None:
            os.environ.pop("PHSYM_AOT", None)
        else:
            os.environ["PHSYM_AOT"] = before


def _build_here(args: argparse.Namespace) -> int:
    from ...errors import PhsymError
    from ...netlist.numbers import parse_number
    if args.package:
        return _build_package()
    if not args.file:
        from ..engines.numeric.warmup import warm
        if not warm():
            raise PhsymError("the numeric engine did not compile into numba's cache (a read-only cache?)")
        print("numeric engine compiled (numba's cache): new circuits of known device kinds compile nothing")
        return 0
    from ..run import simulate
    fs = parse_number(args.fs)
    res = simulate(args.file, fs, duration=1.0 / fs, method=args.method)
    key = res.info.get("key")
    if key is None:
        print(f"{args.file}: {res.info['engine']} engine: no generated loop to compile ahead of time")
        return 0
    from ...codegen import aot
    path = aot.build(key)
    print(f"{args.file}: snapshot stored, loop compiled ahead of time to {path}")
    return 0


def _build_package() -> int:
    """Compile the numeric engine and the law kernels of its warm-up deck into the package's directory."""
    from ...errors import BuildError
    from ...codegen.laws.library import LIBRARY
    from ..engines.numeric.freshness import package_cache
    from ..engines.numeric.warmup import build_package
    if not build_package():
        raise BuildError(f"the numeric engine did not compile into {package_cache()}: the package directory "
                         "must be writable by this user (run it as the user who installed phsym); 'phsym cache "
                         "build' compiles into your own cache")
    print(f"numeric engine compiled into {package_cache()}, law kernels of its device kinds into {LIBRARY}: "
          "every user's new circuits of these kinds compile nothing")
    return 0
