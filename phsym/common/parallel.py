"""Ordered map of independent tasks over the executors phsym accepts.

``executor`` is ``None``/``"serial"`` (one after the other, here),
``"threads"`` or a :class:`~concurrent.futures.ThreadPoolExecutor` (this
process; work that releases the GIL runs in parallel), any other
:class:`concurrent.futures.Executor` (arguments are pickled), a
``dask.distributed.Client``, or ``"dask"`` (a local cluster of one worker
process per core, started and closed here).  dask is imported only for the
last two.
"""
from __future__ import annotations

import contextlib
import gc
import os
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from typing import Any, Callable, List, Optional, Sequence, Type

from ..errors import MissingDependencyError, PhsymError

__all__ = ["map_tasks", "is_dask_client", "in_process", "local_dask", "single_blas_thread", "settled_heap",
           "paused_collection"]


def single_blas_thread():
    """Context limiting BLAS to one thread (with threadpoolctl when installed; else no change).

    Parallel runs are the parallelism: a multi-threaded BLAS under each of them
    oversubscribes the cores, and on a busy machine its spinning threads made
    the small dense solves of a linear plan 3x slower (measured, 2 cores).
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return contextlib.nullcontext()
        _CONTROLLER = ThreadpoolController()      # scanning the loaded libraries costs 2 ms: once
    return _CONTROLLER.limit(limits=1, user_api="blas")


#: threadpoolctl's view of the loaded BLAS libraries (built on first use).
_CONTROLLER = None


@contextlib.contextmanager
def settled_heap():
    """Context leaving the objects that exist on entry out of garbage collection (:func:`gc.freeze`).

    A model holds some 200 000 sympy objects, and a full collection walks
    them all (0.15 s on the 2-core test machine); building the plans of a
    thousand parameter sets triggers one, a seventh of a millisecond per
    run of a sweep.  Objects made inside are collected as usual; the frozen
    ones return to the collector on exit.  Nothing is frozen when something
    else froze objects already (undoing that is its owner's business).
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def paused_collection():
    """Context with the cyclic garbage collector off (a build that allocates much and frees little).

    Loading a deck of 30 000 elements makes millions of sympy objects and
    little garbage, yet the collector's full passes walk the growing heap
    again and again: 40 % of the load of the 100 x 100 RC mesh (measured
    CPU time, 12.2 s -> 7.1 s).  Garbage made inside is collected after
    exit as usual.

    A build that left more than :data:`SETTLE_ABOVE` new objects is moved
    out of the collector's reach at exit (:func:`gc.freeze`): its objects
    live as long as the model, and every later full pass would walk them
    again (1.0-1.3 s each after the load of the 100 x 100 mesh, one at the
    load's end and one during the first run).  Refcounting still frees
    what such a model drops; only reference cycles wait.  The next large
    build first returns the frozen objects to the collector and collects
    them once, so cyclic garbage left by a model a process has let go of
    is reclaimed then: at most one large build's cycles wait at a time.
    """
    global _FROZEN
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        if gc.get_count()[0] > SETTLE_ABOVE:
            if _FROZEN and gc.get_freeze_count():
                gc.unfreeze()
                gc.collect()
            gc.freeze()
            _FROZEN = True


#: Whether :func:`paused_collection` froze a large build's objects (and so may unfreeze them).
_FROZEN = False
#: New container objects above which :func:`paused_collection` freezes the heap at exit (smaller
#: builds are left to the collector as usual).
SETTLE_ABOVE = 500_000


def is_dask_client(executor: Any) -> bool:
    """Whether ``executor`` is a ``dask.distributed.Client`` (without importing dask).

    Parameters
    ----------
    executor : object
        Anything.
    """
    return (type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor, "submit")
            and hasattr(executor, "gather"))


def in_process(executor: Any) -> bool:
    """Whether tasks of ``executor`` run in this process (nothing pickled).

    Parameters
    ----------
    executor : object
        See the module docstring.
    """
    return executor is None or executor in ("serial", "threads") or isinstance(executor, ThreadPoolExecutor)


def local_dask():
    """``(client, cluster)`` of a local dask cluster: one single-threaded worker process per core."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise MissingDependencyError("executor='dask' needs dask.distributed (pip install 'phsym[dask]')") from exc
    cluster = LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster), cluster


def map_tasks(fn: Callable, items: Sequence, executor: Any = None,
              progress: Optional[Callable[[int, int], None]] = None, error: Type[PhsymError] = PhsymError) -> List:
    """``[fn(item) for item in items]`` on ``executor``, in item order.

    Parameters
    ----------
    fn : callable
        The task (picklable for out-of-process executors: a module-level function).
    items : sequence
        One argument per task.
    executor : object
        See the module docstring.
    progress : callable(done, total), optional
        Called in this thread as tasks finish.
    error : type
        Exception class for an unknown executor (a PhsymError subclass).

    Raises
    ------
    PhsymError
        ``error`` for an unknown executor (before any task starts).  A task's own exception propagates.
    """
    if not (in_process(executor) or executor == "dask" or is_dask_client(executor)
            or isinstance(executor, Executor)):
        raise error(f"executor must be None, 'serial', 'threads', 'dask', a concurrent.futures.Executor or "
                    f"a dask Client, not {executor!r}")
    items = list(items)
    n = len(items)
    out: List[Any] = [None] * n
    if executor is None or executor == "serial":
        for i, it in enumerate(items):
            out[i] = fn(it)
            if progress:
                progress(i + 1, n)
        return out
    close = None
    if executor == "threads":
        executor = close = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
        blas = single_blas_thread()
        blas.__enter__()
    elif executor == "dask":
        executor, cluster = local_dask()
        close = (executor, cluster)
    try:
        if is_dask_client(executor):
            from distributed import as_completed as dask_completed
            futs = {executor.submit(fn, it, pure=False): i for i, it in enumerate(items)}
            done_iter = dask_completed(list(futs))
        else:
            futs = {executor.submit(fn, it): i for i, it in enumerate(items)}
            done_iter = as_completed(list(futs))
        for done, f in enumerate(done_iter, start=1):
            out[futs[f]] = f.result()
            if progress:
                progress(done, n)
    finally:
        if isinstance(close, ThreadPoolExecutor):
            close.shutdown()
            blas.__exit__(None, None, None)
        elif close is not None:
            close[0].close()
            close[1].close()
    return out
