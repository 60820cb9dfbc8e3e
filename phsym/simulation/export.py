"""``phsym export``: a netlist as a dependency-free C99 library (and an LV2 plugin).

:func:`export_c` builds the simulator of a deck exactly as ``phsym
simulate`` does (its rate, scheme, Newton tolerance and start), takes the
generated step module of its Newton loop and writes ``NAME.h`` and
``NAME.c`` (:mod:`phsym.codegen.c.library`): the same step, translated
statement by statement, inside the block processing of
:class:`~phsym.simulation.stream.Stream`.  :func:`c_spec` gathers the
numbers (parameters, state scales, the initial state and Newton's start,
probe vectors, controls) from the simulator's plan.

The export's start is computed here: the DC operating point (or the
netlist's initial conditions, as the deck asks) for the chosen inputs at
zero and every other source at its value at ``t = 0``.  The library keeps it
as the answer for those values and as Newton's start of its own DC solve
(:func:`phsym.simulation.dcexport.dc_spec`, :mod:`phsym.codegen.c.dc`),
which ``NAME_reset`` runs for the parameters' set values and the first
sample runs again when its inputs differ.  Sources that are not inputs keep
their netlist waveform (:mod:`phsym.codegen.c.waveforms`).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

from ..codegen.c.library import Control, LibrarySpec, Output, c_identifier, library_sources
from ..codegen.c.lv2 import lv2_sources, plugin_uri
from ..codegen.cache import import_generated
from ..errors import ExportError, PhsymError, SignalError
from .dcexport import dc_spec
from .signals import initial_state

__all__ = ["ExportedLibrary", "export_c", "export_lv2", "c_spec", "exported_simulator"]


@dataclass
class ExportedLibrary:
    """What :func:`export_c` wrote.

    Attributes
    ----------
    name : str
        The C prefix (``NAME_init``...).
    header, source : pathlib.Path
        ``NAME.h`` and ``NAME.c``.
    spec : LibrarySpec
        The numbers the library was made of.
    inputs, outputs : list of str
        Input sources and output labels, in channel order.
    bundle : pathlib.Path or None
        The LV2 bundle directory (``DIR/lv2/NAME.lv2``; :func:`export_lv2`), built by ``make`` in ``DIR``.
    uri : str or None
        The plugin's URI.
    """

    name: str
    header: Path
    source: Path
    spec: LibrarySpec
    inputs: List[str]
    outputs: List[str]
    bundle: Optional[Path] = None
    uri: Optional[str] = None


def exported_simulator(deck: Union[str, Path], fs: Optional[float] = None):
    """``(model, simulator, x0)`` of a deck as ``phsym simulate`` builds them, on the generated loop.

    Parameters
    ----------
    deck : str or pathlib.Path
        Netlist file.
    fs : float, optional
        Sample rate (default: the deck's ``.tran`` step).
    """
    from ..model import load
    from ..netlist.cards import deck_settings
    from .simulator import Simulator
    deck = str(deck)
    settings = deck_settings(deck)
    fs, _, x0 = settings.run_defaults(deck, fs, None, None)
    model = load(deck)
    try:
        sim = Simulator(model, fs, engine="generated", **settings.simulator_options())
    except PhsymError as exc:
        raise ExportError(f"{deck}: the generated Newton loop cannot run this model ({exc.message})") from None
    return model, sim, x0


def _time_varying(plan, i: int) -> bool:
    t = np.linspace(0.0, 0.05, 257)
    w = plan._waveform(i, t)
    return w is not None and float(np.ptp(np.asarray(w, dtype=float))) > 0.0


def _control_range(sim, name: str, default: float) -> tuple:
    """A control's range: [0, 1] (a potentiometer's position) where the elements accept it, else a
    decade either side of its value."""
    def ok(v):
        try:
            sim._check_control(name, v, None)
            return True
        except PhsymError:
            return False
    if 0.0 <= default <= 1.0 and ok(0.0) and ok(1.0):
        return 0.0, 1.0
    lo, hi = sorted((default / 10.0, default * 10.0)) if default != 0.0 else (-1.0, 1.0)
    return (lo, hi) if ok(lo) and ok(hi) else (default, default)


def c_spec(deck: Union[str, Path], fs: Optional[float] = None, inputs: Optional[Sequence[str]] = None,
           outputs: Optional[Sequence[str]] = None, name: Optional[str] = None, block: int = 64) -> LibrarySpec:
    """The numbers and generated module of a deck's C library (see :func:`export_c`)."""
    model, sim, x0 = exported_simulator(deck, fs)
    plan = sim.plan()
    loop = plan.loop
    if getattr(loop, "KIND", "") != "generated":
        raise ExportError(f"{deck}: only the generated Newton loop is exported (this model runs on {loop.KIND})")
    summary = plan.summary
    names = list(summary.inputs)
    lower = {n.lower(): j for j, n in enumerate(names)}
    if inputs:
        chosen = []
        for n in inputs:
            if n.strip().lower() not in lower:
                raise ExportError(f"{deck}: no input source {n!r}; sources: {', '.join(names) or 'none'}")
            chosen.append(lower[n.strip().lower()])
    else:
        varying = [j for j in range(len(names)) if _time_varying(plan, j)]
        if not varying and names:
            varying = [0]
        chosen = varying[:1]
    fixed: Dict[int, float] = {}
    waves: Dict[int, tuple] = {}
    for j in range(len(names)):
        if j in chosen:
            continue
        wf = plan.waveforms[j]
        if isinstance(wf, Exception):
            raise ExportError(f"{deck}: source {names[j]}: {wf}")
        if wf is not None and str(wf[0]).lower() != "dc":
            waves[j] = (str(wf[0]), [float(v) for v in np.asarray(wf[1], dtype=float)])
        w = plan._waveform(j, np.zeros(1))
        fixed[j] = 0.0 if w is None else float(np.asarray(w, dtype=float).ravel()[0])
    # the start: as Stream does for the first sample, the chosen inputs at zero
    u0 = np.zeros(len(names))
    for j, v in fixed.items():
        u0[j] = v
    dc = None
    if isinstance(x0, str) and x0.strip().lower() == "dc":
        found = sim.dc_solution(u0, None)
        xstart, start = found if isinstance(found, tuple) else (found, None)
        xstart = np.asarray(xstart, dtype=float)
        dc = dc_spec(sim, u0, list(summary.controls), list(loop.unknowns), start, xstart)
    else:
        xstart, _ = initial_state(plan.x_ic, plan.x_ic_desc, summary.states, x0)
        start = plan.newton_start(np.asarray(xstart, dtype=float), u0)
    v0 = loop.carry(start)[0] if start else np.zeros(max(loop.n_v, 1))
    labels = list(outputs) if outputs else ([summary.probes[0].label] if summary.probes else list(summary.outputs))
    outs = [_output(plan, lab) for lab in labels]
    controls = []
    for j, c in enumerate(summary.controls):
        d = float(plan.values[c])
        lo, hi = _control_range(sim, c, d)
        controls.append(Control(c, len(names) + j, d, lo, hi))
    module = import_generated(loop.key)
    src = inspect.getsource(module)
    ns = {k: v for k, v in vars(module).items() if callable(v)}
    ws = loop.workspace()
    return LibrarySpec(name=c_identifier(name or Path(str(deck)).stem), origin=Path(str(deck)).name,
                       module_source=src, namespace=ns, scheme=plan.scheme, fs=float(plan.fs), n_x=len(summary.states),
                       n_v=loop.n_v, n_u=loop.n_u, n_e=loop.n_e, n_ve=int(ws[-1].shape[0]),
                       p=[float(v) for v in loop.p], xs=[float(v) for v in loop.xs], tol=loop.tol, maxit=loop.maxit,
                       x0=[float(v) for v in xstart], v0=[float(v) for v in v0],
                       increments=[bool(b) for b in loop._increments], columns=names + list(summary.controls),
                       inputs=chosen, fixed={j: v for j, v in fixed.items() if j not in waves}, waves=waves,
                       controls=controls, outputs=outs, block=int(block), dc=dc)


def _output(plan, label: str) -> Output:
    summary = plan.summary
    if label in summary.states:
        return Output(label, "x", list(summary.states).index(label))
    if label in summary.outputs:
        return Output(label, "y", list(summary.outputs).index(label))
    if label in summary.inputs:
        return Output(label, "u", list(summary.inputs).index(label))
    if "(" in label and label.endswith(")"):
        try:
            c = np.asarray(plan.probe_vector(label), dtype=float)
        except PhsymError as exc:
            raise ExportError(f"output {label}: {exc.message}") from None
        return Output(label, "e", coefs=[(i, float(v)) for i, v in enumerate(c)])
    raise SignalError(f"{label!r} is not a state, input, output or probe of {summary.name}")


def export_c(deck: Union[str, Path], directory: Union[str, Path], fs: Optional[float] = None,
             inputs: Optional[Sequence[str]] = None, outputs: Optional[Sequence[str]] = None,
             name: Optional[str] = None, block: int = 64) -> ExportedLibrary:
    """Write the C99 library of a netlist: ``DIR/NAME.h`` and ``DIR/NAME.c``.

    Parameters
    ----------
    deck : str or pathlib.Path
        Netlist file.
    directory : str or pathlib.Path
        Output directory (created).
    fs : float, optional
        Sample rate the export is made at (default: the deck's ``.tran`` step); ``NAME_init`` takes
        the rate, but only this one is checked against the simulator.
    inputs : sequence of str, optional
        Sources fed by the audio inputs (default: the deck's first time-varying source).  Every
        other source keeps its netlist value or waveform.
    outputs : sequence of str, optional
        Signal labels of the outputs (default: the first probe, else the port outputs).
    name : str, optional
        C prefix (default: the netlist's file name).
    block : int
        Samples per call of the step loop inside ``NAME_process``.

    Returns
    -------
    ExportedLibrary

    Examples
    --------
    >>> import tempfile
    >>> lib = export_c("netlists/diode_clipper.cir", tempfile.mkdtemp(), fs=48000)
    >>> lib.header.name, lib.inputs, lib.outputs
    ('diode_clipper.h', ['Vin'], ['v(out)'])
    """
    if int(block) < 1:
        raise ExportError(f"block must be at least 1 sample, got {block}")
    spec = c_spec(deck, fs, inputs, outputs, name, block)
    h, c = library_sources(spec)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    hp, cp = out / f"{spec.name}.h", out / f"{spec.name}.c"
    hp.write_text(h)
    cp.write_text(c)
    return ExportedLibrary(spec.name, hp, cp, spec, [spec.columns[j] for j in spec.inputs],
                           [o.label for o in spec.outputs])


def export_lv2(deck: Union[str, Path], directory: Union[str, Path], fs: Optional[float] = None,
               inputs: Optional[Sequence[str]] = None, outputs: Optional[Sequence[str]] = None,
               name: Optional[str] = None, build: bool = False) -> ExportedLibrary:
    """Write an LV2 plugin of a netlist: the C library, the plugin wrapper, ``lv2/NAME.lv2/*.ttl`` and a
    ``Makefile`` building ``lv2/NAME.lv2/NAME.so`` (``make -C DIR``; needs ``lv2-dev``); hosts find the
    bundle with ``LV2_PATH=DIR/lv2``.

    Parameters
    ----------
    deck, directory, fs, inputs, outputs, name
        As for :func:`export_c`.
    build : bool
        Run ``make`` in ``directory`` (raises :class:`~phsym.errors.ExportError` when it fails).

    Returns
    -------
    ExportedLibrary
        With ``bundle`` and ``uri`` set.
    """
    lib = export_c(deck, directory, fs, inputs, outputs, name)
    out = Path(directory)
    for rel, text in lv2_sources(lib.spec).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    lib.bundle, lib.uri = out / "lv2" / f"{lib.name}.lv2", plugin_uri(lib.name)
    if build:
        import subprocess
        try:
            r = subprocess.run(["make", "-C", str(out)], capture_output=True, text=True)
        except OSError as exc:
            raise ExportError(f"cannot run make to build the plugin: {exc}") from None
        if r.returncode != 0:
            raise ExportError(f"building {lib.bundle} failed (is lv2-dev installed?):\n{r.stderr.strip()[-2000:]}")
    return lib
