"""Circuits of any size (issue 34): phsym's cold start, memory and stepping against ngspice's whole run.

Run from the repository root (needs ngspice on PATH unless ``--no-ngspice``)::

    PYTHONPATH=. python benchmarks/bench_scale.py [--family ttl,rc_mesh] [--sizes 1,2,5 | --sizes ttl=1,2 ...] [--quick]
        [--engine auto] [--kernels warm|cold] [--steps N] [--timeout 300] [--memory 8] [--markdown]
        [--json out.json]

The families are :data:`phsym.benchmarks.FAMILIES` (TTL NAND chains, RTL
chains, RC meshes, diode ladders; the decks ngspice and phsym both read).
For each size, one deck file and two guarded child processes, one after
the other:

* **phsym** (``CHILD`` below): a fresh interpreter with the caches of
  ``--kernels`` (below; and ``PHSYM_AOT=0``: no background build) runs
  ``phsym.load(deck)``,
  ``phsym.simulation.Simulator(model, 1/h, engine=ENGINE, **options)``
  (the deck's ``.options`` as ``phsym simulate`` reads them) and
  ``sim.run(duration=h, x0=...)`` (the DC operating point unless ``UIC``):
  *first sample* is the time from the parent's spawn (interpreter start
  included) to the end of that first step.  The same simulator then runs
  the deck's whole ``.tran`` duration: *steps/s* is its number of steps
  over ``result.info["wall_time"]`` (the stepping, without compiling);
  the balance column is ``result.max_balance_error``; *long run, whole
  call* is the child's time after its first sample (that ``sim.run`` call
  whole: DC point, set-up, stepping, result; and the exit).  *Peak memory* is
  the child's ``ru_maxrss`` (``os.wait4``).
* **ngspice**: ``ngspice -b -r OUT.raw DECK`` on the same deck (``.tran h
  T 0 h``: its step never exceeds phsym's; ``.save`` keeps a few nodes),
  whole process timed, its ``ru_maxrss``; *ngspice steps/s* is ``T / h``
  over that time, so *phsym / ngspice* compares phsym's stepping with
  ngspice's whole run.

Kernels (``--kernels``, recorded in the JSON and the Markdown):

* ``warm`` (default), what a user of an installed phsym sees on a circuit
  new to phsym: before any measurement, one *primer* child per family
  chosen (``CHILD`` again, under the same guards, with ``--engine``'s engine
  and, when that is not ``numeric``, once more with ``engine="numeric"``)
  runs a different small circuit of the family's device kinds,
  :func:`primer_deck`: the family's deck built with another size and other
  values (:data:`PRIMERS`: TTL: 2 gates with 2.2 pF loads; RTL: 2 gates
  with 3.3 pF loads; RC mesh: 4 x 4 of 2.2 k and 0.47 nF; diode ladder: 4
  diodes at 3 V; 40 steps each).  All primers fill one shared ``PHSYM_CACHE_DIR`` and
  ``NUMBA_CACHE_DIR``: the numeric engine (compiled once per machine) and
  the law kernels of those device models (once per law form).  The filled
  caches are then set aside, and each measured child gets a fresh copy of
  them restored at the same paths (numba keys its cache by the source
  file's path, and the law kernels' modules live in ``PHSYM_CACHE_DIR``):
  no child sees another child's compiled circuit, and the measured deck is
  new to phsym (the generated loop is ``auto``'s choice only for a circuit
  it has compiled before, never here).  *cache files written* counts the
  files a measured child added to its copy (0: it compiled nothing).
* ``cold``: empty ``PHSYM_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` for every
  child, so each one compiles the numeric engine (minutes) besides its law
  kernels: a first run on a new machine, not a new circuit.

Guards: each child runs under ``RLIMIT_AS`` (``--memory`` GB, default 8)
and is killed with its process group after ``--timeout`` seconds (default
300); such a measurement is reported as ``> 300 s`` or ``> 8 GB`` with the
phase it reached, never left running.  Once phsym hits a guard in a
family, its larger sizes are not run (``--keep-going`` runs them);
ngspice still runs them.  An engine the code refuses is reported with the
code's message.

Growth exponents: least-squares slopes of ``log(quantity)`` against
``log(elements)`` over the sizes measured: phsym's load and first
sample, peak memory, time a step (``1 / steps/s``), ngspice's run and
memory (what a guard cut short is left out; a guarded run's load and first
sample count when it got past them).  Memory includes the interpreter's and the libraries' base
(about 0.1-0.3 GB), which flattens the slope over small sizes.

``--quick``: the families' quick sizes and at most 300 steps a run.
``--markdown``: a table for docs/benchmarks.md with the command, date and
machine.  ``--json FILE``: the raw measurements; ``--render FILE`` prints
a saved run's Markdown again (the table as this version draws it).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from phsym.benchmarks import FAMILIES, deck_size  # noqa: E402
from tests.decks.corpus import ngspice_version  # noqa: E402

#: the phsym child: argv = spawn time, deck path, engine; one JSON line a phase
CHILD = r"""
import json, sys, time
spawn, path, engine = float(sys.argv[1]), sys.argv[2], sys.argv[3]
def emit(**kw):
    print(json.dumps(kw), flush=True)
import phsym
from phsym.errors import PhsymError
from phsym.netlist.cards import deck_settings
from phsym.simulation import Simulator
deck = deck_settings(path)
x0 = None if deck.x0 == "ic" else deck.x0          # as `phsym simulate DECK`: DC point unless UIC
model = phsym.load(path)
emit(phase="load", t=time.time() - spawn)
try:
    sim = Simulator(model, deck.tran.fs, engine=engine, **deck.simulator_options())
except PhsymError as exc:
    emit(phase="refused", message=str(exc))
    sys.exit(3)
emit(phase="simulator", t=time.time() - spawn)
first = sim.run(duration=deck.tran.step, x0=x0)
emit(phase="first", t=time.time() - spawn, engine=str(first.info.get("engine")), scheme=str(first.info.get("scheme")),
     states=int(first.x.shape[1]))
res = sim.run(duration=deck.tran.stop, x0=x0)
emit(phase="run", t=time.time() - spawn, steps=int(res.t_step.size), wall=float(res.info["wall_time"]), balance=res.max_balance_error,
     iterations=float(res.iterations.mean()) if res.iterations.size else 0.0,
     failed=int(res.info.get("failed_steps", 0)))
"""

#: words in a child's error output that mean it ran out of its address space
MEMORY_SIGNS = ("MemoryError", "bad_alloc", "out of memory", "Cannot allocate memory", "ArrayMemoryError",
                "pthread_create failed")    # OpenBLAS cannot map a thread's stack


def guarded(cmd: Sequence[str], *, cwd: Path, env: Dict[str, str], timeout: float, memory_gb: float) -> dict:
    """Run ``cmd`` under ``RLIMIT_AS`` and a timeout; its wall time, peak memory and output.

    Parameters
    ----------
    cmd : sequence of str
        The command.
    cwd : Path
        Its working directory; its output goes to ``stdout.txt`` and ``stderr.txt`` there.
    env : dict
        Its environment.
    timeout : float
        Seconds before the process group is killed.
    memory_gb : float
        Address-space limit in GB.

    Returns
    -------
    dict
        ``wall`` [s], ``maxrss`` [bytes], ``status`` (``ok``, ``timeout``,
        ``memory`` or ``failed``), ``code`` (exit code or ``-signal``),
        ``stdout``, ``stderr``.
    """
    limit = int(memory_gb * 2**30)

    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    with open(out, "w") as fo, open(err, "w") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=fo, stderr=fe, preexec_fn=limits,
                                start_new_session=True)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)     # the child's own process group (start_new_session)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    try:                                                # nothing of the group outlives the measurement
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
    code = proc.returncode
    if timed_out.is_set():
        state = "timeout"
    elif code != 0 and any(s in stderr or s in stdout for s in MEMORY_SIGNS):
        state = "memory"
    else:
        state = "ok" if code == 0 else "failed"
    return dict(wall=wall, maxrss=usage.ru_maxrss * 1024, status=state, code=code, stdout=stdout, stderr=stderr)


def _phases(stdout: str) -> Dict[str, dict]:
    phases = {}
    for line in stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "phase" in rec:
            phases[rec["phase"]] = rec
    return phases


def _files(folder: Path) -> set:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else set()


def child_env(caches: Path) -> Dict[str, str]:
    """The environment of a phsym child whose caches are under ``caches``."""
    return dict(os.environ, PHSYM_CACHE_DIR=str(caches / "phsym_cache"), NUMBA_CACHE_DIR=str(caches / "numba_cache"),
                PHSYM_AOT="0",
                PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def restore(primed: Path, caches: Path) -> None:
    """A fresh copy of the primed caches at ``caches`` (whatever a previous child left there is removed)."""
    if caches.exists():
        shutil.rmtree(caches)
    shutil.copytree(primed, caches)                 # copy2: numba's index compares the sources' stamps


def measure_phsym(deck: Path, engine: str, timeout: float, memory_gb: float,
                  kernels: Optional[Path] = None) -> dict:
    """One phsym child on ``deck``; see the module docstring.

    ``kernels``: ``None`` for empty caches in the child's own folder (``--kernels cold``), else a
    pair ``(primed, caches)`` of folders: the primed caches are copied to ``caches`` first
    (``--kernels warm``).
    """
    work = Path(tempfile.mkdtemp(prefix="phsym_", dir=deck.parent))
    if kernels is None:
        caches = work
    else:
        primed, caches = kernels
        restore(primed, caches)
    before = {d: _files(caches / d) for d in ("phsym_cache", "numba_cache")}
    run = guarded([sys.executable, "-c", CHILD, repr(time.time()), str(deck), engine], cwd=work,
                  env=child_env(caches), timeout=timeout, memory_gb=memory_gb)
    ph = _phases(run["stdout"])
    rec = dict(status=run["status"], wall=run["wall"], maxrss=run["maxrss"], reached=list(ph)[-1] if ph else "start")
    new = {d: sorted(_files(caches / d) - before[d]) for d in before}
    rec["cache_written"] = {d: len(v) for d, v in new.items()}
    rec["numba_compiled"] = sorted({Path(f).name.split(".")[0] for f in new["numba_cache"] if f.endswith(".nbc")})[:40]
    if "refused" in ph:
        rec.update(status="refused", message=ph["refused"]["message"])
    elif run["status"] in ("failed", "memory"):
        tail = [ln for ln in run["stderr"].strip().splitlines() if ln.strip()]
        rec["message"] = tail[-1][:300] if tail else f"exit code {run['code']}"
    if "first" in ph:
        rec.update(first=ph["first"]["t"], engine=ph["first"]["engine"], scheme=ph["first"]["scheme"],
                   states=ph["first"]["states"])
    if "load" in ph:
        rec["load"] = ph["load"]["t"]
    if "run" in ph:
        r = ph["run"]
        rec.update(steps=r["steps"], rate=r["steps"] / r["wall"] if r["wall"] > 0 else math.inf,
                   run_call=r["t"] - ph["first"]["t"],
                   balance=r["balance"], iterations=r["iterations"], failed_steps=r["failed"])
    return rec


#: each family's primer (``--kernels warm``): size, builder options, what it is in words
PRIMERS = {"ttl": (2, dict(cload=2.2e-12), "TTL: 2 gates with 2.2 pF loads"),
           "rtl": (2, dict(cload=3.3e-12), "RTL: 2 gates with 3.3 pF loads"),
           "rc_mesh": (4, dict(r=2.2e3, c=0.47e-9), "RC mesh: 4 x 4 of 2.2 k and 0.47 nF"),
           "diode_ladder": (4, dict(amplitude=3.0), "diode ladder: 4 diodes at 3 V")}


def primer_deck(family: str) -> str:
    """The small circuit that primes the kernels of ``family`` (``--kernels warm``): the family's
    device models in a deck of another size and other values than any the benchmark measures by
    default (:data:`PRIMERS`), 40 steps."""
    size, options, _ = PRIMERS[family]
    return FAMILIES[family].build(size, steps=40, **options)


def prime(names: Sequence[str], engine: str, tmp: Path, timeout: float, memory_gb: float) -> dict:
    """Fill one shared pair of caches with the primers of ``names`` and set it aside (``--kernels warm``).

    Returns
    -------
    dict
        ``primed`` (the folder set aside), ``caches`` (where each child gets its copy), ``runs``
        (each primer child: family, engine, status, wall time, peak memory, message), ``files``
        and ``bytes`` of the primed caches.
    """
    caches, primed = tmp / "kernels", tmp / "primed"
    runs = []
    for fam in names:
        deck = tmp / f"primer_{fam}.cir"
        deck.write_text(primer_deck(fam))
        for eng in dict.fromkeys([engine, "numeric"]):
            work = Path(tempfile.mkdtemp(prefix="primer_", dir=tmp))
            run = guarded([sys.executable, "-c", CHILD, repr(time.time()), str(deck), eng], cwd=work,
                          env=child_env(caches), timeout=timeout, memory_gb=memory_gb)
            ph = _phases(run["stdout"])
            rec = dict(family=fam, engine=eng, status=run["status"], wall=round(run["wall"], 2),
                       maxrss=run["maxrss"], ran=ph.get("first", {}).get("engine"))
            if "refused" in ph:
                rec.update(status="refused", message=ph["refused"]["message"])
            elif run["status"] != "ok":
                tail = [ln for ln in run["stderr"].strip().splitlines() if ln.strip()]
                rec["message"] = tail[-1][:300] if tail else f"exit code {run['code']}"
            runs.append(rec)
            print(json.dumps(dict(primer=rec)), file=sys.stderr, flush=True)
    caches.mkdir(exist_ok=True)
    shutil.copytree(caches, primed)
    files = [p for p in primed.rglob("*") if p.is_file()]
    return dict(primed=primed, caches=caches, runs=runs, files=len(files), bytes=sum(p.stat().st_size for p in files))


def measure_ngspice(deck: Path, timeout: float, memory_gb: float) -> dict:
    """ngspice's whole run on ``deck`` (``ngspice -b -r``), guarded; its wall time, peak memory and time points."""
    raw = deck.with_suffix(".raw")
    run = guarded(["ngspice", "-b", "-r", raw.name, deck.name], cwd=deck.parent, env=dict(os.environ),
                  timeout=timeout, memory_gb=memory_gb)
    rec = dict(status=run["status"], wall=run["wall"], maxrss=run["maxrss"])
    text = run["stdout"] + run["stderr"]
    if run["status"] == "ok" and ("too small" in text or "aborted" in text.lower() or not raw.exists()):
        rec.update(status="failed", message="ngspice stopped: " + next(
            (ln.strip() for ln in text.splitlines() if "too small" in ln or "abort" in ln.lower()), "no raw file"))
    if raw.exists():
        with open(raw, "rb") as f:
            head = f.read(4096).decode("latin-1")
        points = [ln.split(":", 1)[1].strip() for ln in head.splitlines() if ln.startswith("No. Points:")]
        if points and points[0].isdigit():              # a killed run leaves the header unfinished
            rec["points"] = int(points[0])
        raw.unlink()
    return rec


# ---------------------------------------------------------------- reporting
def growth(xs: Sequence[float], ys: Sequence[Optional[float]]) -> Optional[float]:
    """Least-squares slope of ``log y`` against ``log x`` over the pairs with ``y`` measured (at least two sizes)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if y is not None and y > 0 and x > 0]
    if len({p[0] for p in pts}) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)


#: the phase a child was in, from the last phase it finished
IN_PHASE = {"start": "load", "load": "Simulator", "simulator": "first step", "first": "run", "run": "exit"}


def _guard_text(rec: dict, timeout: float, memory_gb: float) -> Optional[str]:
    where = f" (in {IN_PHASE.get(rec['reached'], rec['reached'])})" if rec.get("reached") else ""
    if rec["status"] == "timeout":
        return f"> {timeout:g} s{where}"
    if rec["status"] == "memory":
        return f"> {memory_gb:g} GB{where}"
    if rec["status"] in ("refused", "failed"):
        return f"{rec['status']}: {rec.get('message', '')}".replace("|", "/")
    if rec["status"] == "skipped":
        return "not run (a smaller size hit a guard)"
    return None


def _g(v: Optional[float], fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def row(r: dict, timeout: float, memory_gb: float) -> str:
    """One Markdown table row of a size's measurements."""
    p, n = r.get("phsym"), r.get("ngspice")
    cells = [r["family"], str(r["size"]), str(r["elements"]), str(r["nodes"]), str(r.get("steps_deck", "-"))]
    if p is None:
        cells += ["-"] * 8
    else:
        guard = _guard_text(p, timeout, memory_gb)
        first = _g(p.get("first"), ".2f") if "first" in p else (guard or "-")
        rate = _g(p.get("rate"), ".3g") if "rate" in p else (guard if "first" in p else "-")
        mem = "-" if p["status"] in ("skipped", "refused") else \
            _g(p["maxrss"] / 2**30, ".2f") + {"timeout": " (killed)", "memory": " (at the limit)"}.get(p["status"], "")
        after = p["wall"] - p["first"] if "rate" in p else None
        cells += [_g(p.get("load"), ".2f"), first, _g(after, ".2f"), mem, rate, p.get("engine", "-"),
                  _g(p.get("balance"), ".1e"),
                  _g(p.get("iterations"), ".2f")]
    if n is None:
        cells += ["-"] * 3
    else:
        guard = _guard_text(n, timeout, memory_gb)
        cells += [guard or f"{n['wall']:.2f}", _g(n["maxrss"] / 2**20, ".0f"),
                  "-" if guard else _g(r["steps_deck"] / n["wall"], ".3g")]
    ratio = p and n and p.get("rate") and n["status"] == "ok" and p["rate"] / (r["steps_deck"] / n["wall"])
    cells.append(_g(ratio or None, ".2g"))
    written = (p or {}).get("cache_written")
    cells.append("-" if written is None else str(sum(written.values())))
    return "| " + " | ".join(cells) + " |"


HEADER = ("| family | size | elements | nodes | steps | phsym loaded [s] | phsym first sample [s] | "
          "phsym long run, whole call [s] | phsym peak memory [GB] | phsym steps/s | engine | balance | "
          "Newton it./step | ngspice whole run [s] | ngspice peak [MB] | ngspice steps/s | phsym / ngspice | "
          "cache files written |\n" + "|" + " --- |" * 18)


def exponents(rows: List[dict]) -> List[str]:
    """Growth exponents of each family (slopes against the number of elements)."""
    out = []
    for fam in dict.fromkeys(r["family"] for r in rows):
        R = [r for r in rows if r["family"] == fam]
        xs = [r["elements"] for r in R]

        def ok(r, side, key):
            """A quantity the run completed (a guarded run's memory is only a lower bound)."""
            m = r.get(side)
            if not m or m.get(key) is None or (key in ("maxrss", "wall") and m["status"] != "ok"):
                return None
            return m[key]

        fits = {"phsym loaded": growth(xs, [ok(r, "phsym", "load") for r in R]),
                "phsym first sample": growth(xs, [ok(r, "phsym", "first") for r in R]),
                "phsym peak memory": growth(xs, [ok(r, "phsym", "maxrss") for r in R]),
                "phsym time a step": growth(xs, [1 / v if (v := ok(r, "phsym", "rate")) else None for r in R]),
                "ngspice whole run": growth(xs, [ok(r, "ngspice", "wall") for r in R]),
                "ngspice peak memory": growth(xs, [ok(r, "ngspice", "maxrss") for r in R])}
        out.append(f"* {fam}: " + ", ".join(f"{k} n^{v:.2f}" for k, v in fits.items() if v is not None)
                   + ("" if any(v is not None for v in fits.values()) else "fewer than two sizes measured"))
    return out


def machine() -> str:
    """``nproc``, CPU model, RAM, Python, ngspice, load average."""
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    ram = next((int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                if ln.startswith("MemTotal")), 0) / 2**20
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores (`nproc`), {cpu}, {ram:.0f} GB RAM, Python {platform.python_version()}, "
            f"{ngspice_version() or 'no ngspice'}; load average {load}")


def parser() -> argparse.ArgumentParser:
    """The command line (also read back from a saved run by ``--render``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", help=f"comma-separated families (default: all of {', '.join(FAMILIES)})")
    ap.add_argument("--sizes", action="append", default=[],
                    help="comma-separated sizes for every family chosen, or FAMILY=1,2,5 for one (repeatable; "
                         "default: each family's sizes)")
    ap.add_argument("--quick", action="store_true", help="the quick sizes and at most 300 steps a run")
    ap.add_argument("--engine", default="auto", help="Simulator(..., engine=ENGINE) (default auto)")
    ap.add_argument("--kernels", choices=("warm", "cold"), default="warm",
                    help="warm (default): every phsym child gets a copy of caches primed on another small circuit "
                         "of the same device kinds; cold: empty caches (each child compiles the numeric engine)")
    ap.add_argument("--steps", type=int, help="steps of each run (default: the deck's duration)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a child may run (default 300)")
    ap.add_argument("--memory", type=float, default=8.0, help="address space of a child in GB (default 8)")
    ap.add_argument("--keep-going", action="store_true", help="run larger sizes after phsym hit a guard")
    ap.add_argument("--no-ngspice", action="store_true", help="phsym only")
    ap.add_argument("--no-phsym", action="store_true", help="ngspice only")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown section for docs/benchmarks.md")
    ap.add_argument("--json", help="write the raw measurements to this file")
    ap.add_argument("--render", metavar="JSON", help="print the Markdown of a run saved with --json, run nothing")
    return ap


def report(saved: dict, markdown: bool = True) -> str:
    """The table and growth exponents of a run (``saved`` as ``--json`` writes it), with its command and machine."""
    args = parser().parse_args(saved["argv"])
    lines = []
    if markdown:
        command = "PYTHONPATH=. python benchmarks/bench_scale.py " + " ".join(shlex.quote(a) for a in saved["argv"])
        kernels = saved.get("kernels", "cold")          # runs saved before --kernels had empty caches
        lines += [f"Command: `{command}`, started {saved['started']} (engine `{args.engine}`, kernels "
                  f"`{kernels}`, guards {args.timeout:g} s and {args.memory:g} GB a child).", "",
                  f"Machine: {saved['machine']} at the start; {saved.get('end_load', '?')} at the end.", ""]
        if kernels == "warm":
            p = saved.get("primer", {})
            runs = "; ".join(f"{r['family']} ({r['engine']}{'' if r.get('ran') in (None, r['engine']) else ' -> ' + r['ran']}"
                             f"): {r['status']}, {r['wall']:.1f} s"
                             + (f", {r['message']}" if r.get("message") else "") for r in p.get("runs", []))
            lines += [f"Kernels `warm`: before the measurements, primer children ({runs}) compiled the numeric "
                      f"engine and the law kernels of each family's device models on other small circuits "
                      f"(`primer_deck`, 40 steps each: "
                      f"{'; '.join(PRIMERS[f][2] for f in dict.fromkeys(r['family'] for r in p.get('runs', [])))}) "
                      f"into one pair of caches "
                      f"({p.get('files', '?')} files, {p.get('bytes', 0) / 2**20:.1f} MB); each measured phsym "
                      f"child started from a fresh copy of them, so its deck was a new circuit of known device "
                      f"kinds.  *cache files written*: what the child added to its copy (0: it compiled "
                      f"nothing).", ""]
        else:
            lines += ["Kernels `cold`: every phsym child started with empty `PHSYM_CACHE_DIR` and "
                      "`NUMBA_CACHE_DIR`, so it compiled the numeric engine and its law kernels.", ""]
    lines += [HEADER] + [row(r, args.timeout, args.memory) for r in saved["rows"]]
    lines += ["", "Growth exponents (least squares of log quantity against log elements; what a guard cut short "
                  "is left out):"] + exponents(saved["rows"])
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(argv)
    if args.render:
        print(report(json.loads(Path(args.render).read_text())))
        return
    names = args.family.split(",") if args.family else list(FAMILIES)
    unknown = [f for f in names if f not in FAMILIES]
    chosen = {}
    for spec in args.sizes:
        fam, _, values = spec.rpartition("=")
        unknown += [fam] if fam and fam not in FAMILIES else []
        chosen[fam] = [int(v) for v in values.split(",") if v]
    if args.family is None and args.sizes and "" not in chosen:
        names = [f for f in names if f in chosen]          # --sizes FAMILY=... alone chooses those families
    if unknown:
        ap.error(f"unknown family {', '.join(unknown)}: one of {', '.join(FAMILIES)}")
    if not args.no_ngspice and not ngspice_version():
        raise SystemExit("ngspice is not on PATH (apt-get install ngspice), or run with --no-ngspice")
    saved = dict(started=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine=machine(), argv=argv,
                 kernels=args.kernels, rows=[])
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        kernels = None
        if args.kernels == "warm" and not args.no_phsym:
            p = prime(names, args.engine, Path(tmp), args.timeout, args.memory)
            kernels = (p.pop("primed"), p.pop("caches"))
            saved["primer"] = p
        for fam in names:
            family = FAMILIES[fam]
            sizes = chosen.get(fam, chosen.get("", list(family.quick if args.quick else family.sizes)))
            guarded_at = None
            for size in sizes:
                steps = args.steps or (300 if args.quick else None)
                text = family.build(size) if steps is None else _capped(family, size, steps)
                deck = Path(tmp) / f"{fam}_{size}.cir"
                deck.write_text(text)
                tran = next(ln for ln in text.splitlines() if ln.startswith(".tran")).split()
                count = deck_size(fam, size)
                r = dict(family=fam, size=size, elements=count.elements, nodes=count.nodes, bjts=count.bjts,
                         diodes=count.diodes, steps_deck=round(float(tran[2]) / float(tran[1])))
                if not args.no_phsym:
                    if guarded_at is not None and not args.keep_going:
                        r["phsym"] = dict(status="skipped", maxrss=0, wall=0.0)
                    else:
                        r["phsym"] = measure_phsym(deck, args.engine, args.timeout, args.memory, kernels)
                        if r["phsym"]["status"] in ("timeout", "memory"):
                            guarded_at = size
                if not args.no_ngspice:
                    r["ngspice"] = measure_ngspice(deck, args.timeout, args.memory)
                saved["rows"].append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
    saved["end_load"] = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    if args.json:
        Path(args.json).write_text(json.dumps(saved, indent=1))
    print(report(saved, args.markdown))


def _capped(family, size: int, steps: int) -> str:
    """A family's deck with its run cut to at most ``steps`` steps."""
    full = family.build(size)
    tran = next(ln for ln in full.splitlines() if ln.startswith(".tran")).split()
    n = round(float(tran[2]) / float(tran[1]))
    return full if n <= steps else family.build(size, steps=steps)


if __name__ == "__main__":
    main()
