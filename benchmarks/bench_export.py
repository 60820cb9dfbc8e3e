"""The exported C library against the numba loop, a hand-written loop and ngspice (ns per sample).

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_export.py [--seconds 1] [--fs 48000] [--decks a,b]

For each bundled audio netlist (and the common-emitter stage of
``bench_bjt_hand.py``, which has a hand-written numba loop), one second of its
own input waveform at 48 kHz:

* the exported C (``phsym export --c``) compiled with ``-O2`` and with
  ``-O3 -march=native``, without the energy record, called through ctypes
  on the whole second (best of five fresh instances);
* the simulator's generated numba loop (``Stream.process`` on the same
  input, energy record included, the stream's Python bookkeeping too; best
  of five);

Times are the thread's CPU time (``time.thread_time``), not wall time: on a
shared machine the wall time of the same run varied threefold.
* the hand-written numba loop of ``bench_bjt_hand.py`` where one exists;
* ngspice (``ngspice -b``, the whole process, wall time) where it reads the deck.

``--reset`` times ``NAME_reset`` instead: the DC operating point solved in C
after ``NAME_set_param`` (wall time, median and largest of 20 resets).

It checks that the C and numba outputs agree (largest difference relative
to the output's range) and prints a markdown table: ns per sample and the
real-time factor (``1 / (fs * time per sample)``).
"""
from __future__ import annotations

import argparse
import ctypes
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from phsym.simulation.export import export_c, exported_simulator  # noqa: E402

DECKS = ["netlists/diode_clipper.cir", "netlists/overdrive.cir", "netlists/triode_preamp.cir",
         "netlists/triode_volume.cir", "netlists/triodeamp.cir", "netlists/bjt_common_emitter.cir",
         "tests/decks/opamp_diode_clipper.cir", "bjt_hand"]
OUTPUT = {"triodeamp": "v(vout)", "opamp_diode_clipper": "v(o)", "bjt_hand": "v(out)"}
DBL = ctypes.POINTER(ctypes.c_double)


def _c_time(lib, tmp: Path, flags, x: np.ndarray, fs: float, runs: int = 5):
    so = tmp / f"lib{lib.name}{abs(hash(tuple(flags)))}.so"
    subprocess.run(["cc", "-std=c99", *flags, "-shared", "-fPIC", "-o", str(so), str(lib.source), "-lm"], check=True)
    dll = ctypes.CDLL(str(so))
    f = lambda n: getattr(dll, f"{lib.name}_{n}")      # noqa: E731
    f("state_size").restype = ctypes.c_ulong
    f("init").argtypes = [ctypes.c_void_p, ctypes.c_double]
    f("process_double").argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    best, y = np.inf, np.zeros(len(x))
    for _ in range(runs):
        buf = ctypes.create_string_buffer(f("state_size")())
        f("init")(buf, fs)
        ins = (DBL * 1)(x.ctypes.data_as(DBL))
        outs = (DBL * 1)(y.ctypes.data_as(DBL))
        t0 = time.thread_time()
        f("process_double")(buf, ins, outs, len(x))
        best = min(best, time.thread_time() - t0)
    return best, y


def _hand(seconds: float, fs: float):
    """The hand-written loop of bench_bjt_hand.py on its stage: seconds for the run (best of three)."""
    import bench_bjt_hand as bh
    import phsym
    model = phsym.parse(bh.NETLIST)
    sim = phsym.Simulator(model, fs, engine="generated")       # its DC start names the loop's port variables
    res = sim.run(duration=seconds, x0="dc")
    x0, h = res.x[0], res.info["h"]
    vin = res.u[:, model.inputs.index("VIN")].copy()
    order = [model.states.index(s) for s in ("q_C1", "q_CE", "q_C2")]
    vc0 = float(sim.dc_solution(res.u[0])[1]["w_Q1.bc"])
    vb0 = vin[0] - x0[order[0]] / bh.C1
    out = np.zeros((vin.shape[0], 3))
    bh.hand_loop(x0[order].copy(), vin, h, vb0 - vc0, out)
    best = np.inf
    for _ in range(5):
        t0 = time.thread_time()
        bh.hand_loop(x0[order].copy(), vin, h, vb0 - vc0, out)
        best = min(best, time.thread_time() - t0)
    return best


def _ngspice(path: Path, fs: float, seconds: float):
    try:
        from bench_spice import _ngspice as ng
        from tests.decks import corpus
        wall, t, _ = ng(path, corpus.signal_nodes(path), 1.0 / fs, seconds, False)
        return wall if t is not None else None
    except Exception:       # a deck in phsym's own syntax (triode, ideal op-amp, pot): ngspice refuses it
        return None


def bench(deck: str, tmp: Path, fs: float, seconds: float) -> dict:
    name = Path(deck).stem
    if deck == "bjt_hand":
        import bench_bjt_hand as bh
        path = tmp / "bjt_hand.cir"
        path.write_text(bh.NETLIST)
    else:
        path = ROOT / deck
    out = OUTPUT.get(name, "v(out)")
    lib = export_c(path, tmp / name, fs=fs, outputs=[out])
    _, sim, x0 = exported_simulator(path, fs)
    plan = sim.plan()
    n = int(round(seconds * fs))
    col = lib.spec.inputs[0]
    x = np.ascontiguousarray(plan._waveform(col, np.arange(n) / fs), dtype=float)
    row = dict(deck=name, n_x=lib.spec.n_x, n_v=lib.spec.n_v, n=n)
    row["c_o2"], y2 = _c_time(lib, tmp, ["-O2"], x, fs)
    row["c_o3"], y3 = _c_time(lib, tmp, ["-O3", "-march=native"], x, fs)
    walls = []
    for _ in range(5):
        s = sim.stream(x0=x0, signals=[out])
        t0 = time.thread_time()
        ref = s.process({lib.inputs[0]: x})
        walls.append(time.thread_time() - t0)
    row["numba"] = min(walls)
    scale = max(np.ptp(ref), 1e-12)
    row["agree_o2"] = float(np.max(np.abs(y2 - ref)) / scale)
    row["agree_o3"] = float(np.max(np.abs(y3 - ref)) / scale)
    row["hand"] = _hand(seconds, fs) if deck == "bjt_hand" else None
    row["ngspice"] = _ngspice(path, fs, seconds) if deck != "bjt_hand" else None
    return row


def reset_times(deck: str, tmp: Path, fs: float, runs: int = 20) -> dict:
    """Wall time of ``NAME_reset`` with a DC solve in C (the first control moved 1 % and 60 %
    alternately, so every reset solves; -O2), and the export's own DC solve for comparison."""
    path = ROOT / deck
    t0 = time.perf_counter()
    lib = export_c(path, tmp / Path(deck).stem, fs=fs)
    export_s = time.perf_counter() - t0
    so = tmp / f"lib{lib.name}_reset.so"
    subprocess.run(["cc", "-std=c99", "-O2", "-shared", "-fPIC", "-o", str(so), str(lib.source), "-lm"], check=True)
    dll = ctypes.CDLL(str(so))
    f = lambda n: getattr(dll, f"{lib.name}_{n}")      # noqa: E731
    f("state_size").restype = ctypes.c_ulong
    f("init").argtypes = [ctypes.c_void_p, ctypes.c_double]
    f("set_param").argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_double]
    buf = ctypes.create_string_buffer(f("state_size")())
    f("init")(buf, fs)
    ctl = lib.spec.controls[0]
    times = []
    for k in range(runs):
        f("set_param")(buf, 0, ctl.default * (1.6 if k % 2 else 1.01))
        t = time.perf_counter()
        f("reset")(buf)
        times.append(time.perf_counter() - t)
        if f("dc_status")(buf) != 1:
            raise RuntimeError(f"{deck}: the DC solve in C failed")
    return dict(deck=Path(deck).stem, median=float(np.median(times)), max=max(times), export=export_s)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--fs", type=float, default=48000.0)
    ap.add_argument("--decks", help="comma-separated deck paths (default: the audio netlists)")
    ap.add_argument("--reset", action="store_true",
                    help="time NAME_reset's DC solve in C after set_param instead (decks with a control)")
    args = ap.parse_args(argv)
    if args.reset:
        decks = args.decks.split(",") if args.decks else ["netlists/triode_volume.cir", "netlists/overdrive.cir",
                                                          "tests/decks/export/export_waves.cir"]
        with tempfile.TemporaryDirectory() as tmp:
            rows = [reset_times(d, Path(tmp), args.fs) for d in decks]
        print("| deck | NAME_reset with a DC solve, median / max (us) | export (s) |\n| --- | --- | --- |")
        for r in rows:
            print(f"| {r['deck']} | {r['median'] * 1e6:.0f} / {r['max'] * 1e6:.0f} | {r['export']:.1f} |")
        return
    decks = args.decks.split(",") if args.decks else DECKS
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for d in decks:
            rows.append(bench(d, Path(tmp), args.fs, args.seconds))
            print(rows[-1], file=sys.stderr, flush=True)
    ns = lambda t, n: "n/a" if t is None else f"{t / n * 1e9:.0f} ({1.0 / (args.fs * t / n):.0f}x)"  # noqa: E731
    print(f"fs = {args.fs:g} Hz, {args.seconds:g} s per deck; ns per sample (real-time factor)\n")
    print("| deck | states / unknowns | C -O2 | C -O3 -march=native | numba loop (with record) | hand numba | "
          "ngspice | C vs numba (rel.) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['deck']} | {r['n_x']} / {r['n_v']} | {ns(r['c_o2'], r['n'])} | {ns(r['c_o3'], r['n'])} | "
              f"{ns(r['numba'], r['n'])} | {ns(r['hand'], r['n'])} | {ns(r['ngspice'], r['n'])} | "
              f"{max(r['agree_o2'], r['agree_o3']):.1e} |")


if __name__ == "__main__":
    main()
