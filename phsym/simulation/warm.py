"""Warm start: a netlist simulated before runs again without sympy.

Building a model (sympy, networkx) and importing scipy cost more than a second
in a fresh process, while the compiled loop of a cached netlist loads in a
fraction of that.  After :func:`simulate` has run a netlist *file* with its
own parameter values, it stores a snapshot: everything the run loop needs in
numbers (parameter array, state scales, initial state from the ICs, waveform
arguments, the dense linear matrices or the name of the generated module)
plus the names and probe maps a :class:`~phsym.simulation.SimulationResult`
needs.  The next :func:`simulate` of the same file text, sample rate, method
and options loads the snapshot and steps at once.

The snapshot key covers the netlist text, the sample rate, the method, the
options, phsym's version and the size and modification time of phsym's own
source files, so an edited netlist or an updated phsym never reuses an old
snapshot.  Runs with parameter overrides or ``x0="dc"``, sparse linear models
and :class:`~phsym.model.Model` objects take the symbolic path.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional

import numpy as np

from .engine import RECORD_LIMIT, DenseLinearLoop, NewtonLoop, apply_x0
from .result import SimulationResult
from .signals import check_steps, grid_points, input_array, sample_rate

__all__ = ["simulate", "ModelSummary", "Snapshot", "snapshot_key", "SNAPSHOT_PREFIX"]

SNAPSHOT_PREFIX = "phsym_run_"
_FORMAT = 1
_FINGERPRINT: Optional[str] = None


def _code_fingerprint() -> str:
    """Version plus size and mtime of phsym's source files (stat only: a few ms)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        from .. import __version__
        root = Path(__file__).resolve().parent.parent
        h = hashlib.sha256(f"{__version__}\0{_FORMAT}".encode())
        for p in sorted(root.rglob("*.py")) + sorted(root.rglob("*.lark")):
            st = p.stat()
            h.update(f"{p.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


def snapshot_key(text: bytes, fs: float, method: str, options: Mapping[str, object]) -> str:
    """Key of the snapshot of a netlist run.

    Parameters
    ----------
    text : bytes
        Netlist file contents.
    fs : float
        Sample rate.
    method : str
        Scheme name as given.
    options : mapping
        Simulator options.
    """
    h = hashlib.sha256(_code_fingerprint().encode())
    for part in (text, repr(float(fs)).encode(), str(method).lower().encode(),
                 repr(sorted((str(k), repr(v)) for k, v in options.items())).encode()):
        h.update(part)
        h.update(b"\0")
    return h.hexdigest()[:24]


class _Probe(NamedTuple):
    label: str


class ModelSummary:
    """Names and probe maps of a model: what a result needs, without sympy.

    Stands in for :class:`~phsym.model.Model` as ``result.model`` after a
    warm start; :meth:`full_model` builds the real model on demand.

    Parameters
    ----------
    name : str
        Model name.
    states, inputs, outputs : list of str
        Names as in :class:`~phsym.model.Model`.
    probe_vectors : dict of str to ndarray
        Declared probes: ``probe = efforts @ vector``.
    path : str
        Netlist file (for :meth:`full_model`).
    """

    def __init__(self, name: str, states: List[str], inputs: List[str], outputs: List[str],
                 probe_vectors: Dict[str, np.ndarray], path: str):
        self.name, self.states, self.inputs, self.outputs = name, list(states), list(inputs), list(outputs)
        self._vectors = {k: np.asarray(v, dtype=float) for k, v in probe_vectors.items()}
        self.probes = [_Probe(k) for k in probe_vectors]
        self.path = path
        self._model = None

    def full_model(self):
        """The :class:`~phsym.model.Model` of the netlist (built on first call)."""
        if self._model is None:
            from ..model import load
            self._model = load(self.path)
        return self._model

    def probe_vector(self, label: str) -> np.ndarray:
        """Vector ``c`` with ``probe = efforts @ c`` (undeclared labels build the model).

        Parameters
        ----------
        label : str
            Probe label such as ``v(out)`` or ``i(R1)``.
        """
        if label not in self._vectors:
            self._vectors[label] = _probe_vector(self.full_model(), label)
        return self._vectors[label]

    def __repr__(self) -> str:
        return f"<ModelSummary {self.name!r} (warm start of {self.path})>"


def _probe_vector(model, label: str) -> np.ndarray:
    from .probes import probe_coefficients
    values = model.parameter_values(None)
    ce, cf = probe_coefficients(model, label, values)
    if np.any(cf):
        ce = ce + model.structure.J_numeric(values).T @ cf
    return np.asarray(ce, dtype=float)


class Snapshot:
    """Numbers of one netlist run (see the module docstring).

    Parameters
    ----------
    meta : dict
        JSON-able description (names, engine, options, waveforms...).
    arrays : dict of str to ndarray
        Parameter array, scales, initial state, probe vectors, matrices.
    """

    def __init__(self, meta: Dict[str, object], arrays: Dict[str, np.ndarray]):
        self.meta = meta
        self.arrays = arrays

    # ------------------------------------------------------------ capture
    @classmethod
    def capture(cls, sim, path: str) -> Optional["Snapshot"]:
        """Snapshot of ``sim`` (a :class:`~phsym.simulation.Simulator`) with the
        netlist's own parameter values; ``None`` where a warm start does not apply.

        Parameters
        ----------
        sim : Simulator
            A simulator that has just run.
        path : str
            The netlist file.
        """
        from ..netlist.waveforms import waveform_arguments
        from .initial import resolve_x0, state_scales
        model, S = sim.model, sim.model.structure
        values = model.parameter_values(None)
        x_ic, ic_desc = resolve_x0(S, model.states, values, None, None)
        arrays: Dict[str, np.ndarray] = {"x_ic": x_ic}
        waves = []
        for port in S.ports:
            if port.waveform is None:
                waves.append(None)
                continue
            try:
                from ..netlist.waveforms import evaluate_waveform
                evaluate_waveform(port.waveform, np.zeros(1), values)   # validates the arguments
            except Exception:
                return None
            waves.append([port.waveform.shape.lower(), waveform_arguments(port.waveform, values).tolist()])
        probes = [p.label for p in model.probes]
        for i, label in enumerate(probes):
            arrays[f"probe_{i}"] = _probe_vector(model, label)
        meta: Dict[str, object] = {
            "format": _FORMAT, "path": str(path), "name": model.name, "states": model.states,
            "inputs": model.inputs, "outputs": model.outputs, "probes": probes, "waveforms": waves,
            "x0": ic_desc, "fs": sim.fs, "scheme": sim.scheme, "tol": sim.tol, "maxit": sim.maxit,
            "on_error": sim.on_error, "record_efforts": sim.record_efforts, "n_e": S.size,
            "values": {name: float(values[sym]) for name, sym in model.parameter_symbols.items()},
        }
        if sim.engine == "linear":
            eng = sim.linear_engine(values)
            if eng.sparse:
                return None
            loop = eng.dense_loop()
            meta.update(engine="linear-dense", mid=loop.mid, key=loop.key)
            for name in DenseLinearLoop.ARRAYS:
                arrays[name] = getattr(loop, name)
        else:
            g = sim._gen
            meta.update(engine="newton", module=g.module.__name__, key=g.key, n_v=g.n_v, n_u=g.n_u,
                        unknowns=g.unknowns)
            arrays["p"] = np.array([values[s] for s in sim.param_symbols], dtype=float)
            arrays["xs"] = state_scales(S, values)
        return cls(meta, arrays)

    # ------------------------------------------------------------ storage
    @staticmethod
    def file(key: str) -> Path:
        """Path of the snapshot with ``key`` in the cache directory.

        Parameters
        ----------
        key : str
            See :func:`snapshot_key`.
        """
        from ..codegen.cache import cache_dir
        return cache_dir() / f"{SNAPSHOT_PREFIX}{key}.npz"

    def save(self, key: str) -> None:
        """Write atomically (temporary file, then :func:`os.replace`).

        Parameters
        ----------
        key : str
            See :func:`snapshot_key`.
        """
        from ..codegen.cache import atomic_write
        atomic_write(self.file(key), lambda fh: np.savez(fh, meta=np.array(json.dumps(self.meta)), **self.arrays))

    @classmethod
    def load(cls, key: str) -> Optional["Snapshot"]:
        """The snapshot with ``key``, or ``None`` if missing or unreadable.

        Parameters
        ----------
        key : str
            See :func:`snapshot_key`.
        """
        path = cls.file(key)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                arrays = {k: data[k] for k in data.files if k != "meta"}
        except Exception:     # corrupt or truncated: the symbolic path rewrites it
            return None
        return cls(meta, arrays) if meta.get("format") == _FORMAT else None

    # ---------------------------------------------------------------- run
    def summary(self) -> ModelSummary:
        """The :class:`ModelSummary` for results of this snapshot."""
        m = self.meta
        vectors = {label: self.arrays[f"probe_{i}"] for i, label in enumerate(m["probes"])}
        return ModelSummary(m["name"], m["states"], m["inputs"], m["outputs"], vectors, m["path"])

    def run(self, u=None, duration: Optional[float] = None, x0=None,
            progress: Optional[Callable[[int, int], None]] = None, chunk: int = 0) -> Optional[SimulationResult]:
        """Simulate like :meth:`Simulator.run` (without parameter overrides).

        Returns ``None`` when the compiled module is gone from the cache.

        Parameters
        ----------
        u, duration, x0, progress, chunk
            As for :meth:`phsym.simulation.Simulator.run`.
        """
        m, a = self.meta, self.arrays
        aot = None
        if m["engine"] == "newton":
            from ..codegen import aot as _aot
            module = aot = _aot.load(m["key"])     # no numba import at all
            if module is None:
                try:
                    from ..codegen.cache import cache_dir
                    d = str(cache_dir())
                    if d not in sys.path:
                        sys.path.insert(0, d)
                    module = importlib.import_module(m["module"])
                except Exception:
                    return None
                _aot.start_background(m["key"])
        fs = float(m["fs"])
        h = 1.0 / fs
        n_points = grid_points(duration, fs)
        waves = m["waveforms"]

        def waveform(i, t):
            if waves[i] is None:
                return None
            from ..netlist.shapes import evaluate_shape
            return evaluate_shape(waves[i][0], np.asarray(waves[i][1]), t)
        U = input_array(m["inputs"], u, n_points, h, waveform)
        N = check_steps(U, fs, duration)
        x, x0_desc = apply_x0(a["x_ic"], m["x0"], m["states"], x0)
        rec = m["record_efforts"]
        rec = bool(N * m["n_e"] <= RECORD_LIMIT if rec == "auto" else rec)
        info = {"h": h, "fs": fs, "scheme": m["scheme"], "engine": m["engine"], "x0": x0_desc,
                "values": dict(m["values"]), "key": m.get("key"), "warm_start": True}
        if m["engine"] == "newton":
            loop = NewtonLoop(module, m["n_v"], m["n_u"], m["n_e"], m["states"], m["unknowns"], aot=aot is not None)
            info["compiled"] = "ahead of time" if aot is not None else "numba cache"
            A, wall = loop.run(x, U, a["p"], a["xs"], h, m["tol"], m["maxit"], m["on_error"] == "flag", rec,
                               progress, chunk)
        else:
            loop = DenseLinearLoop(*(a[k] for k in DenseLinearLoop.ARRAYS), m["mid"], aot=True)
            A, wall = loop.run(x, U, h, rec, progress, chunk)
            info["key"], info["compiled"] = loop.key, loop.compiled
        info["wall_time"], info["compile_time"] = wall, loop.compile_time
        info["failed_steps"] = int(np.count_nonzero(A.FL))
        return SimulationResult(self.summary(), np.arange(N + 1) * h, A.X, U, A.Y, A.Hh, A.Pd, A.Ps, A.IT, A.FL,
                                A.E if rec else None, None, info)


def simulate(model, fs: float, u=None, duration: Optional[float] = None, x0=None,
             params: Optional[Mapping[str, float]] = None, method: str = "auto",
             progress: Optional[Callable[[int, int], None]] = None, warm_start: bool = True,
             **options) -> SimulationResult:
    """One call: build (or load) the simulator and run it.

    A netlist file run before with the same text, rate, method and options
    (and no parameter overrides) starts from its snapshot, without building
    the symbolic model (see :mod:`phsym.simulation.warm`).

    Parameters
    ----------
    model : Model, str or path
        A model or a netlist file.
    fs : float
        Sample rate in Hz.
    u, duration, x0, params : see :meth:`Simulator.run`
        Inputs, length, initial state and parameter overrides.
    method : str
        Scheme (see :class:`~phsym.simulation.Simulator`).
    progress : callable(done, total), optional
        Called after each chunk of steps.
    warm_start : bool
        Use and fill the snapshot cache (default True).
    **options
        Passed to :class:`~phsym.simulation.Simulator`.
    """
    fs = sample_rate(fs)
    is_file = isinstance(model, (str, os.PathLike)) and Path(model).suffix.lower() != ".json"
    eligible = (warm_start and is_file and not params
                and not (isinstance(x0, str) and x0.lower() == "dc"))
    key = None
    if eligible:
        try:
            text = Path(model).read_bytes()
        except OSError:
            eligible = False     # the symbolic path reports the missing file
        else:
            key = snapshot_key(text, fs, method, options)
            snap = Snapshot.load(key)
            if snap is not None:
                res = snap.run(u=u, duration=duration, x0=x0, progress=progress)
                if res is not None:
                    return res
    from .simulator import Simulator
    if not hasattr(model, "structure"):
        from ..model import load
        model_path, model = model, load(model)
    sim = Simulator(model, fs, method, **options)
    res = sim.run(u=u, duration=duration, x0=x0, params=params, progress=progress)
    if eligible and key is not None:
        try:
            snap = Snapshot.capture(sim, str(model_path))
            if snap is not None:
                snap.save(key)
                if snap.meta.get("key"):      # Newton loop or unrolled linear loop
                    from ..codegen import aot
                    aot.start_background(snap.meta["key"])
        except OSError:
            pass     # a read-only cache only costs the next run its warm start
    return res
