"""Parameter sweeps and Monte Carlo studies (``phsym.simulation.sweep``).

:mod:`.api` (:func:`~.api.sweep`), :mod:`.params` (parameter sets:
:func:`~.params.grid`, :func:`~.params.sampling`), :mod:`.exec` (where the
runs execute: threads, any executor, a dask cluster), :mod:`.batch` (the
batch path: many sets through one compiled loop, with :mod:`.sets` and
:mod:`.scales_many` making the numbers of all sets first) and
:mod:`.result` (:class:`~.result.SweepResult`).
"""
