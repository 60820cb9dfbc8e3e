""":class:`SweepResult`: the runs of a parameter sweep as one table and arrays."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

from ...errors import MissingDependencyError, SignalError, SimulationInputError

__all__ = ["SweepResult"]


class SweepResult:
    """Runs of :func:`phsym.sweep`: parameters, signals (runs x samples), summaries, failures.

    Every signal lives on the grid ``t`` (``N + 1`` samples, as a
    :class:`~phsym.simulation.SimulationResult` table): step quantities
    (outputs, probes) stand at their step's end time and are NaN at
    ``t[0]``; a failed run is a row of NaN.

    Attributes
    ----------
    names : list of str
        Swept parameter names.
    values : ndarray (runs, len(names))
        Parameter value of every run.
    t : ndarray (N+1,)
        Time grid.
    signals : dict of str to ndarray (runs, N+1)
        Requested signals by label.
    balance : ndarray (runs,)
        Maximum power-balance residual of each run relative to its power
        scale (:attr:`SimulationResult.max_balance_error`).
    iterations_max, iterations_mean : ndarray (runs,)
        Newton iterations per step (0 on the linear path).
    failed_steps : ndarray of int (runs,)
        Steps flagged with ``on_error="flag"`` (-1 for a failed run).
    wall_time : ndarray (runs,)
        Stepping time of each run in seconds (runs made together in one
        compiled call share its time equally; their signals and summaries
        are part of it).
    errors : list
        ``None`` or the exception that stopped each run.
    info : dict
        Sample rate, scheme options, executor, total wall time.

    Parameters
    ----------
    names : sequence of str
        Parameter names.
    values : ndarray
        Parameter rows.
    records : sequence of RunRecord
        One per run, in run order (:mod:`phsym.simulation.sweeps.exec`).
    info : dict
        Run description.
    blocks : dict of str to ndarray, optional
        Signals already gathered as ``(runs, N + 1)`` arrays (the batch
        path); records with their own signals fill their rows.
    """

    def __init__(self, names: Sequence[str], values: np.ndarray, records: Sequence, info: Dict,
                 blocks: Optional[Dict[str, np.ndarray]] = None):
        self.names = list(names)
        self.values = np.asarray(values, dtype=float)
        self.info = dict(info)
        good = [r for r in records if r.error is None]
        blocks = dict(blocks or {})
        with_own = [r for r in good if r.signals]
        labels = list(blocks) or (list(with_own[0].signals) if with_own else [])
        self.t = np.zeros(0)
        if good:
            first = next((r.t for r in good if r.t is not None), None)
            # the run's grid, computed as RunPlan.run does ((k - 0) * h with h = 1 / fs)
            m = (next(iter(blocks.values())).shape[1] if blocks
                 else len(with_own[0].signals[labels[0]]) if labels else 0)
            self.t = first if first is not None else np.arange(m) * (1.0 / float(info["fs"]))
        n, m = len(records), self.t.shape[0]
        self.signals: Dict[str, np.ndarray] = {lab: blocks.get(lab) if lab in blocks else np.full((n, m), np.nan)
                                               for lab in labels}
        for r in with_own:
            for lab in labels:
                self.signals[lab][r.index] = r.signals[lab]
        self.balance = np.array([r.balance for r in records], dtype=float)
        self.iterations_max = np.array([r.it_max for r in records], dtype=float)
        self.iterations_mean = np.array([r.it_mean for r in records], dtype=float)
        self.failed_steps = np.array([r.failed_steps for r in records], dtype=np.int64)
        self.wall_time = np.array([r.wall_time for r in records], dtype=float)
        self.errors: List[Optional[BaseException]] = [r.error for r in records]

    def __len__(self) -> int:
        return self.values.shape[0]

    @property
    def ok(self) -> np.ndarray:
        """Boolean mask of the runs that finished."""
        return np.array([e is None for e in self.errors], dtype=bool)

    @property
    def failures(self) -> Dict[int, BaseException]:
        """Run number -> the error that stopped it."""
        return {i: e for i, e in enumerate(self.errors) if e is not None}

    @property
    def parameters(self) -> Dict[str, np.ndarray]:
        """Parameter columns by name."""
        return {n: self.values[:, j] for j, n in enumerate(self.names)}

    def __getitem__(self, label: str) -> np.ndarray:
        """Signal ``label`` of every run, shape ``(runs, N + 1)``.

        Parameters
        ----------
        label : str
            A requested signal label.
        """
        if label not in self.signals:
            raise SignalError(f"{label!r} was not recorded by this sweep; recorded: {', '.join(self.signals)} "
                              "(ask for it with outputs=[...])")
        return self.signals[label]

    def summary(self) -> str:
        """One line: runs, failures, wall time, runs/s, worst balance residual."""
        n, bad = len(self), len(self.failures)
        wall = self.info.get("wall_time", float("nan"))
        finite = self.balance[np.isfinite(self.balance)]      # flagged runs may have none
        worst = float(finite.max()) if finite.size else float("nan")
        return (f"{n} runs ({bad} failed) on {self.info.get('executor', '?')} in {wall:.3g} s "
                f"({n / wall if wall > 0 else float('inf'):.3g} runs/s), max power-balance residual {worst:.2e}")

    def __repr__(self) -> str:
        return f"<SweepResult {self.summary()}>"

    # ------------------------------------------------------------ export
    def _table(self) -> Dict[str, np.ndarray]:
        cols: Dict[str, object] = {"run": np.arange(len(self))}
        cols.update(self.parameters)
        cols.update({"balance": self.balance, "iterations_max": self.iterations_max,
                     "iterations_mean": self.iterations_mean, "failed_steps": self.failed_steps,
                     "wall_time": self.wall_time,
                     "error": np.array(["" if e is None else f"{type(e).__name__}: {e}" for e in self.errors],
                                       dtype=object)})
        return cols

    def to_pandas(self, signal: Optional[str] = None):
        """The run table (parameters and summaries), or one signal as time x runs.

        Parameters
        ----------
        signal : str, optional
            Label of a signal: a DataFrame indexed by time with one column per run.

        Returns
        -------
        pandas.DataFrame
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise MissingDependencyError("to_pandas needs pandas (pip install pandas)") from exc
        if signal is not None:
            return pd.DataFrame(self[signal].T, index=pd.Index(self.t, name="t"))
        return pd.DataFrame(self._table()).set_index("run")

    def to_xarray(self):
        """:class:`xarray.Dataset` with dims ``(run, time)``; parameters and summaries are run coordinates.

        Returns
        -------
        xarray.Dataset
        """
        try:
            import xarray as xr
        except ImportError as exc:
            raise MissingDependencyError("to_xarray needs xarray (pip install xarray)") from exc
        table = self._table()
        coords = {"run": table.pop("run"), "time": self.t}
        coords.update({k: ("run", np.asarray(v, dtype=str) if k == "error" else v) for k, v in table.items()})
        ds = xr.Dataset({lab: (("run", "time"), arr) for lab, arr in self.signals.items()}, coords=coords)
        ds.attrs.update({k: v for k, v in self.info.items() if isinstance(v, (int, float, str))})
        return ds

    def save(self, path: Union[str, Path]) -> Path:
        """Write ``.nc`` (xarray/netCDF), ``.npz`` (all arrays) or ``.csv`` (the run table).

        Parameters
        ----------
        path : str or pathlib.Path
            Destination; its suffix selects the format.

        Returns
        -------
        pathlib.Path
        """
        path = Path(path)
        suf = path.suffix.lower()
        if suf == ".nc":
            self.to_xarray().to_netcdf(path)
        elif suf == ".npz":
            table = self._table()
            table["error"] = np.asarray(table["error"], dtype=str)
            np.savez(path, t=self.t, names=np.array(self.names), values=self.values,
                     **{f"signal:{k}": v for k, v in self.signals.items()}, **table)
        elif suf == ".csv":
            table = self._table()
            keys = list(table)
            with open(path, "w", newline="") as fh:
                fh.write(",".join(keys) + "\n")
                for i in range(len(self)):
                    cells = []
                    for k in keys:
                        v = table[k][i]
                        cells.append(f'"{v}"' if k == "error" and v else
                                     (str(v) if k in ("run", "failed_steps", "error") else f"{float(v):.17g}"))
                    fh.write(",".join(cells) + "\n")
        else:
            raise SimulationInputError(f"unknown sweep format {suf!r}: use .nc, .npz or .csv")
        return path

    def plot(self, signal: Optional[str] = None, path: Optional[Union[str, Path]] = None, max_runs: int = 200):
        """Every run of one signal over time, coloured by the first parameter.

        Parameters
        ----------
        signal : str, optional
            Label (default: the first recorded signal).
        path : str or pathlib.Path, optional
            Save the figure there.
        max_runs : int
            Draw at most this many runs (evenly spaced).

        Returns
        -------
        matplotlib.figure.Figure
        """
        import matplotlib
        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        if not self.signals:
            raise SignalError("no run finished: nothing to plot")
        signal = signal or next(iter(self.signals))
        data = self[signal]
        runs = np.flatnonzero(self.ok)
        runs = runs[np.linspace(0, runs.size - 1, min(runs.size, max_runs)).astype(int)] if runs.size else runs
        p = self.values[:, 0]
        span = (np.nanmin(p), np.nanmax(p))
        cmap = plt.get_cmap("viridis")
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(8, 6), gridspec_kw={"height_ratios": [3, 1]})
        for i in runs:
            c = (p[i] - span[0]) / (span[1] - span[0]) if span[1] > span[0] else 0.5
            ax.plot(self.t, data[i], color=cmap(c), lw=0.8, alpha=0.6)
        ax.set_xlabel("t [s]")
        ax.set_ylabel(signal)
        ax.set_title(f"{len(runs)} of {len(self)} runs, colour: {self.names[0]} "
                     f"{span[0]:.3g} .. {span[1]:.3g}")
        ax2.semilogy(np.arange(len(self)), np.maximum(self.balance, 1e-300), ".", ms=3)
        ax2.set_xlabel("run")
        ax2.set_ylabel("balance residual")
        fig.tight_layout()
        if path is not None:
            fig.savefig(str(path))
        return fig
