"""phsym.sweep on other processes: a process pool and a dask LocalCluster of
worker processes give the runs of the in-process sweep (to round-off), with
failures kept per run and the progress callback called as chunks finish."""
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import phsym

ROOT = Path(__file__).resolve().parent.parent
CLIPPER = str(ROOT / "netlists" / "diode_clipper.cir")
RLC = str(ROOT / "netlists" / "rlc.cir")
FS, DUR = 48000.0, 0.004


def _close(a, b):
    assert a.names == b.names and np.array_equal(a.values, b.values)
    assert a.ok.tolist() == b.ok.tolist()
    for lab in a.signals:
        assert np.allclose(a[lab], b[lab], rtol=1e-12, atol=1e-15 * np.nanmax(np.abs(a[lab])), equal_nan=True)


@pytest.fixture(scope="module")
def runs():
    p = phsym.sampling(CLIPPER, 9, {"Rs": 0.1, "C": 0.1}, seed=5)
    p["C"][4] = -1e-9        # one run fails wherever it runs
    return p, phsym.sweep(CLIPPER, FS, p, duration=DUR)


def test_process_pool(runs):
    params, ref = runs
    done = []
    # fork: dask workers below are fresh processes; this pool checks the executor protocol
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        res = phsym.sweep(CLIPPER, FS, params, duration=DUR, executor=pool,
                          progress=lambda d, n: done.append((d, n)))
        # a model without a file travels pickled
        text = phsym.parse(Path(RLC).read_text())
        lin = phsym.sweep(text, FS, {"R": [5.0, 20.0]}, duration=DUR, executor=pool)
    _close(res, ref)
    assert list(res.failures) == [4] and isinstance(res.failures[4], phsym.StructureError)
    assert done[-1] == (9, 9) and [d for d, _ in done] == sorted(d for d, _ in done)
    _close(lin, phsym.sweep(RLC, FS, {"R": [5.0, 20.0]}, duration=DUR))
    assert res.info["executor"] == "ProcessPoolExecutor"


def test_dask_local_cluster(runs):
    distributed = pytest.importorskip("distributed")
    params, ref = runs
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = phsym.sweep(CLIPPER, FS, params, duration=DUR, executor=client)
        # each worker built its simulator once: a second sweep reuses it
        again = phsym.sweep(CLIPPER, FS, params, duration=DUR, executor=client)
        workers = client.run(lambda: len(__import__("phsym.simulation.sweeps.exec",
                                                    fromlist=["_SIMULATORS"])._SIMULATORS))
    _close(res, ref)
    _close(again, ref)
    assert list(res.failures) == [4]
    assert max(workers.values()) == 1 and len(workers) == 2


def test_executor_name_dask_starts_and_closes_a_cluster(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)       # one worker per core: keep it two on big CI machines
    res = phsym.sweep(RLC, FS, {"R": [5.0, 10.0]}, duration=DUR, executor="dask")
    _close(res, phsym.sweep(RLC, FS, {"R": [5.0, 10.0]}, duration=DUR))
    assert res.info["executor"] == "dask"


def test_chunks_cover_the_runs_in_order_within_the_memory_bound():
    """Remote executors get contiguous chunks: one per dask worker, two per pool process, more when
    a chunk's signals would pass CHUNK_BYTES (a long sweep never ships one huge block)."""
    from phsym.simulation.sweeps.exec import CHUNK_BYTES, ModelSpec, _chunks, _run_bytes
    for n, workers, per in ((10, 2, 1), (10, 2, 2), (3, 4, 2), (1000, 3, 1)):
        parts = _chunks(n, workers, per)
        assert np.array_equal(np.concatenate(parts), np.arange(n))
        assert len(parts) == min(n, workers * per)
    spec = ModelSpec("x.cir", 48000.0, "discrete_gradient", {}, duration=1.0, outputs=["v(out)", "i(R1)"])
    assert _run_bytes(spec) == 8 * 48001 * 2
    parts = _chunks(100_000, 2, 1, _run_bytes(spec))
    assert np.array_equal(np.concatenate(parts), np.arange(100_000))
    assert max(len(c) for c in parts) * _run_bytes(spec) <= CHUNK_BYTES
    spec = ModelSpec("x.cir", 10.0, "midpoint", {}, u={"V1": np.zeros(501)})
    assert _run_bytes(spec) == 8 * 501 * 4
