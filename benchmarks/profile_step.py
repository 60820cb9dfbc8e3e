"""Where a generated step loop spends its time: perf samples by function and by stretch of ``run``'s code.

Run from the repository root (Linux, needs ``perf`` and ``objdump``)::

    PYTHONPATH=. python benchmarks/profile_step.py DECK [--fs 48000] [--seconds 20]

The deck's step module is compiled (or loaded from the cache) and stepped
once; then ``perf record`` samples this process while the loop steps
``--seconds`` of signal from the DC point.  A sample is booked to the
compiled function whose machine code holds it (``run``, ``resjac``,
``junc``, the kernels), to the libm function it is in (``exp``, ``pow``),
or to "other" (Python, the kernel).  ``run``'s samples are further split at
its calls of the module's own functions (``resjac``, ``junc``, the kernels):
each stretch of code is named by the function called at its end, in
address order, which follows the generated source closely enough to tell
the predictor, the Newton iteration and the step's end apart (read the
stretches beside the module's source, ``sim._gen.source``).
Sampling is statistical: shares move by a few percent between runs.
"""
from __future__ import annotations

import argparse
import collections
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from newton_loop import newton_simulator  # noqa: E402  (imports no phsym, no numba)


def _mapping_end(addr: int) -> int:
    """End of the memory mapping holding ``addr`` (machine code is read only up to it)."""
    for line in open("/proc/self/maps"):
        lo, hi = (int(t, 16) for t in line.split()[0].split("-"))
        if lo <= addr < hi:
            return hi
    raise RuntimeError(f"address {addr:#x} is not mapped")


def compiled_functions(module) -> dict:
    """``{name: address}`` of the module's compiled functions (``run``, ``resjac``, ``junc``, the kernels
    it imports): compiled on their own, or into ``run``'s library (named by the module's own names
    found in their mangled symbols)."""
    run = module.run
    cres = next(iter(run.overloads.values()))
    known = [n for n, obj in vars(module).items() if hasattr(obj, "overloads")]
    out = {n: c.library.get_pointer_to_function(c.fndesc.llvm_func_name)      # compiled on their own
           for n in known for c in getattr(module, n).overloads.values()}
    taken = set(out.values())
    # every other function of run's library (so that run's code ends where the next one starts): the
    # module's functions linked into it, their Python and C wrappers, numba's helpers
    for fn in cres.library._final_module.functions:
        if fn.is_declaration or (addr := cres.library.get_pointer_to_function(fn.name)) in taken:
            continue
        short = next((n for n in sorted(known, key=len, reverse=True) if f"{len(n)}{n}" in fn.name), None)
        wrapper = fn.name.startswith(("cpython.", "cfunc."))
        name = f"{short} (wrapper)" if short and wrapper else short if short and short not in out else \
            f"compiled helper {fn.name[:40]}"
        out[name if name not in out else f"{name} @{addr:#x}"] = addr
        taken.add(addr)
    return out


def call_sites(addr: int, end: int, targets: dict) -> list:
    """``[(offset, callee)]`` of the calls of ``targets`` (address to name) in the code at ``addr``: numba
    loads a callee's address with ``movabs`` before ``call *%reg`` (calls through a register loaded
    otherwise, libm's among them, are not found and do not split the code)."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(ctypes.string_at(addr, end - addr))
        f.flush()
        asm = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", f"--adjust-vma={addr:#x}", f.name],
                             capture_output=True, text=True, check=True).stdout
    regs, sites = {}, []
    for line in asm.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)", line)
        if not m:
            continue
        at, ins = int(m.group(1), 16), m.group(2).strip()
        if (mv := re.match(r"movabs \$0x([0-9a-f]+),%(\w+)", ins)):
            regs[mv.group(2)] = int(mv.group(1), 16)
        elif (cl := re.match(r"call\s+\*%(\w+)", ins)):
            if regs.get(cl.group(1)) in targets and targets[regs[cl.group(1)]] != "run":
                sites.append((at - addr, targets[regs[cl.group(1)]]))
    return sites


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("deck", help="netlist")
    ap.add_argument("--fs", type=float, default=48000.0, help="sample rate [Hz] (default 48000)")
    ap.add_argument("--seconds", type=float, default=20.0, help="simulated seconds under perf (default 20)")
    args = ap.parse_args(argv)
    missing = [t for t in ("perf", "objdump") if shutil.which(t) is None]
    if missing or not os.path.exists("/proc/self/maps"):
        sys.exit(f"profile_step needs Linux with perf and objdump on PATH (missing: {', '.join(missing) or '/proc'})")
    if not (args.seconds > 0 and args.fs > 0):
        sys.exit("--seconds and --fs must be positive")
    # compiled here (not loaded from a cache): a loaded object has no symbol names for resjac and junc
    cache = tempfile.mkdtemp(prefix="phsym-profile-")
    os.environ["NUMBA_CACHE_DIR"] = cache
    os.environ["PHSYM_AOT"] = "0"
    try:
        profile(args)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def profile(args) -> None:
    """Compile, step under perf and print the tables (see the module docstring)."""
    sim, x0 = newton_simulator(args.deck, args.fs, "profile_step")
    sim.run(duration=0.01, x0=x0)
    funcs = compiled_functions(sim._gen.module)
    targets = {a: n for n, a in funcs.items()}
    starts = sorted((a, n) for n, a in funcs.items())
    ends = {n: min([b for b, _ in starts if b > a] + [_mapping_end(a)]) for a, n in starts}
    sites = call_sites(funcs["run"], ends["run"], targets)
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        rec = subprocess.Popen(["perf", "record", "-q", "-F", "2000", "-p", str(os.getpid()), "-o", data],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)     # perf attaches
        r = sim.run(duration=args.seconds, x0=x0)
        wall = r.info["wall_time"]      # the compiled loop's stepping alone
        rec.send_signal(signal.SIGINT)
        err = rec.communicate()[1]
        script = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True,
                                text=True).stdout
    if not script.strip():
        sys.exit(f"perf recorded no samples: {err.strip() or 'no message'}")
    booked, stretch = collections.Counter(), collections.Counter()
    bounds = [0] + [o for o, _ in sites] + [ends["run"] - funcs["run"]]
    names = [f"run, up to a call of {c}" for _, c in sites] + ["run, after its last call"]
    for line in script.splitlines():
        parts = line.split(None, 2)
        if not parts:
            continue
        ip = int(parts[0], 16)
        where = next((n for a, n in reversed(starts) if a <= ip < ends[n]), None)
        if where is None:
            sym = re.split(r"@|_fma", re.sub(r"^_*(ieee754_)?", "", parts[1] if len(parts) > 2 else ""))[0]
            where = f"libm {sym}" if "libm" in line else "other (Python, kernel)"
        booked[where] += 1
        if where == "run":
            off = ip - funcs["run"]
            k = next(i for i in range(len(bounds) - 1) if bounds[i] <= off < bounds[i + 1] or i == len(bounds) - 2)
            stretch[(k, names[k])] += 1
    steps = round(args.seconds * args.fs)
    stepping = sum(n for w, n in booked.items() if not w.startswith("other"))
    print(f"{args.deck} at {args.fs / 1e3:g} kHz: {steps} steps in {wall:.2f} s ({steps / wall:.3g} steps/s), "
          f"{float(r.iterations.mean()):.2f} Newton iterations a step; {stepping} samples in the loop\n")
    print("| where | samples | share of the loop |\n| --- | --- | --- |")
    for w, n in booked.most_common():
        if not w.startswith("other"):
            print(f"| {w} | {n} | {100 * n / max(stepping, 1):.1f} % |")
    print("\n| stretch of run (address order) | samples | share of the loop |\n| --- | --- | --- |")
    for (k, w), n in sorted(stretch.items()):
        if n >= 0.01 * stepping:
            print(f"| {k}: {w} | {n} | {100 * n / max(stepping, 1):.1f} % |")


if __name__ == "__main__":
    main()
