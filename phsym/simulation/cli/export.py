"""``phsym export FILE --c DIR`` / ``--lv2 DIR``: a netlist as a C99 library or an LV2 plugin."""
from __future__ import annotations

import argparse
from typing import Any, List, Optional

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``export`` subcommand (``func`` default: :func:`run`)."""
    p = subparsers.add_parser(
        "export", help="write a dependency-free C99 library or an LV2 plugin of a netlist",
        description="Write the generated Newton loop of a netlist as C99 (NAME.h, NAME.c: libm only, no "
                    "allocation after init) with --c, or an LV2 plugin bundle (the library, the .ttl files "
                    "and a Makefile; make -C DIR builds NAME.lv2/NAME.so against lv2-dev) with --lv2. "
                    "docs/realtime.md describes the API.")
    p.add_argument("file", help="netlist file")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--c", metavar="DIR", dest="c_dir", help="write the C library into DIR")
    g.add_argument("--lv2", metavar="DIR", dest="lv2_dir", help="write an LV2 plugin into DIR")
    p.add_argument("--fs", help="sample rate (e.g. 48k); default: 1/TSTEP of the .tran card")
    p.add_argument("--inputs", help="sources fed by the audio inputs, comma-separated (default: the first "
                                    "time-varying source); other sources keep their netlist values and waveforms")
    p.add_argument("--outputs", help="signal labels of the outputs, comma-separated (default: the first probe, "
                                     "else the port outputs)")
    p.add_argument("--name", help="C prefix of the library (default: the netlist's file name)")
    p.add_argument("--build", action="store_true", help="with --lv2: also run make in DIR")
    p.set_defaults(func=run)
    return p


def _list(text: Optional[str]) -> Optional[List[str]]:
    if not text:
        return None
    out, depth, cur = [], 0, ""
    for ch in text:         # v(a,b) holds a comma
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [s for s in out + [cur.strip()] if s]


def run(args: argparse.Namespace) -> int:
    """Execute ``phsym export``; returns the exit status."""
    from .simulate import _number
    from ..export import export_c, export_lv2
    fs = _number(args.fs) if args.fs else None
    common = dict(fs=fs, inputs=_list(args.inputs), outputs=_list(args.outputs), name=args.name)
    if args.c_dir:
        lib = export_c(args.file, args.c_dir, **common)
        print(f"{lib.header} {lib.source}: inputs {', '.join(lib.inputs) or 'none'}; outputs "
              f"{', '.join(lib.outputs)}; parameters {', '.join(c.name for c in lib.spec.controls) or 'none'}")
        return 0
    lib = export_lv2(args.file, args.lv2_dir, build=args.build, **common)
    print(f"{lib.bundle} ({lib.uri}): inputs {', '.join(lib.inputs) or 'none'}; outputs {', '.join(lib.outputs)}; "
          f"{'built' if args.build else 'build it with: make -C ' + str(args.lv2_dir)}")
    return 0
