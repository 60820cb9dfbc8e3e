"""``phsym.sweep``: many runs of one model at many parameter sets.

Design sweeps, tolerance (Monte Carlo) analyses and potentiometer
positions are tables of parameter sets (:mod:`phsym.simulation.sweeps.params`);
:func:`sweep` checks every name first, then runs the table on an executor
(:mod:`phsym.simulation.sweeps.exec`) and gathers a
:class:`~phsym.simulation.sweeps.result.SweepResult`.  Parameter changes never
regenerate code: every run uses the same compiled loop.
"""
from __future__ import annotations

import os
import weakref
from typing import Callable, Optional, Sequence

from ...common.parallel import in_process, is_dask_client
from ...errors import SimulationInputError
from ..signals import sample_rate
from .exec import ModelSpec, describe_executor, execute
from .params import check_names, parameter_table
from .result import SweepResult

__all__ = ["sweep"]


#: In-process simulators by model and settings: later sweeps of a model skip the per-simulator set-up
#: (parameter-free plan parts, the loop's first load); a few milliseconds, a lot for short sweeps.
_SIMULATORS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _simulator(model, fs: float, method: str, options: dict):
    from ..simulator import Simulator
    try:
        key = (fs, method, repr(sorted(options.items())))
        memo = _SIMULATORS.setdefault(model, {})
    except TypeError:           # not weakly referenceable or not hashable: no reuse
        return Simulator(model, fs, method, **options)
    sim = memo.get(key)
    if sim is None:
        sim = memo[key] = Simulator(model, fs, method, **options)
    return sim


def _check_executor(executor) -> None:
    from concurrent.futures import Executor
    if not (in_process(executor) or executor == "dask" or is_dask_client(executor) or isinstance(executor, Executor)):
        raise SimulationInputError(f"executor must be None, 'threads', 'serial', 'dask', a concurrent.futures."
                                   f"Executor or a dask Client, not {executor!r}")


def _check_outputs(model, outputs: Sequence[str]) -> None:
    """A wrong signal label fails here, not in every run."""
    if not hasattr(type(model), "structure") or not model.symbolic_ready:
        return          # a large model's labels are checked by its first run (no symbolic structure)
    from ...errors import StructureError
    from ...structure.probes import probe_map
    known = set(model.states) | set(model.inputs) | set(model.outputs) | {"H", "P_diss", "P_supplied", "balance"}
    for label in outputs:
        if label in known:
            continue
        try:
            if "(" not in label:
                raise StructureError(f"{label!r} is not a state, input or output")
            probe_map(model.structure, label)
        except StructureError as exc:
            raise SimulationInputError(f"outputs: {exc}") from None


def sweep(model_or_path, fs: float, params, *, u=None, duration: Optional[float] = None, x0=None,
          outputs: Optional[Sequence[str]] = None, method: str = "auto", executor=None,
          progress: Optional[Callable[[int, int], None]] = None, **options) -> SweepResult:
    """Simulate one model at many parameter sets, on every core or a cluster.

    Parameters
    ----------
    model_or_path : Model, str or pathlib.Path
        A model or a netlist file.
    fs : float
        Sample rate in Hz.
    params : mapping, sequence of mappings or pandas.DataFrame
        The runs: a dict name -> sequence (zipped, equal lengths),
        :func:`phsym.grid` (Cartesian product), :func:`phsym.sampling`
        (Monte Carlo), a list of dicts or a DataFrame with one row per run.
        Names are checked before any run starts.
    u : array_like or dict, optional
        Inputs of every run (see :meth:`phsym.simulation.Simulator.run`);
        netlist waveforms are the default.  Out-of-process executors pickle
        it (arrays and numbers, not lambdas).
    duration : float, optional
        Simulated time of every run in seconds.
    x0 : array_like, dict or "dc", optional
        Initial state of every run.
    outputs : sequence of str, optional
        Signals to keep (states, inputs, ``y(V1)``, probe labels such as
        ``v(out)``); default the netlist's probes, else the port outputs.
    method : str
        Scheme (see :class:`~phsym.simulation.Simulator`).
    executor : None, "threads", "serial", "dask", concurrent.futures.Executor or dask Client
        Where runs execute.  ``None`` (or ``"threads"``): this process,
        every core, one compiled loop stepping runs on threads (it releases
        the GIL); results are bit-identical to the same runs made one at a
        time.  ``"serial"``: one at a time.  A process pool or a
        ``dask.distributed.Client``: chunks of runs go to workers, each of
        which loads the netlist once and its generated loop from the cache.
        ``"dask"``: a local dask cluster with one worker process per core
        (started and closed by this call).
    progress : callable(done, total), optional
        Called as runs finish (in the calling thread).
    **options
        Passed to :class:`~phsym.simulation.Simulator` (``on_error``,
        ``tol``, ``maxit``, ``engine``, ...).

    Returns
    -------
    SweepResult
        Run ``i`` used the parameters ``result.values[i]``; a run that
        failed has its error in ``result.failures`` and NaN signals.

    Raises
    ------
    SimulationInputError
        Before any run: an unknown parameter name, a name fixed by the
        structure, unequal column lengths, an unknown executor.
    """
    from ...model import load     # sympy: a sweep builds (or reuses) the symbolic model
    _check_executor(executor)
    names, values = parameter_table(params)
    if values.shape[0] == 0:
        raise SimulationInputError("params holds no run")
    path = None
    if isinstance(model_or_path, (str, os.PathLike)):
        path = os.fspath(model_or_path)
        model = load(path)
    else:
        model = model_or_path
        path = getattr(getattr(model, "netlist", None), "file", None)
    names = check_names(model, names)
    fs = sample_rate(fs)
    local = in_process(executor)
    source = model if (local or path is None) else os.path.abspath(path)
    spec = ModelSpec(source, fs, method, dict(options), u, duration, x0, list(outputs) if outputs else None)
    sim = _simulator(model, fs, method, options) if local else None
    if outputs:
        _check_outputs(model, outputs)
    records, wall, blocks = execute(sim, spec, names, values, executor, progress)
    info = {"fs": fs, "method": method, "executor": describe_executor(executor), "wall_time": wall,
            "runs": int(values.shape[0]), "model": getattr(model, "name", str(model_or_path))}
    return SweepResult(names, values, records, info, blocks)
