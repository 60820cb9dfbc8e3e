"""Small helpers shared by the command-line subcommands."""
from __future__ import annotations

import argparse
import csv
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TextIO

import numpy as np

from .errors import DataFileError

__all__ = ["Subcommand", "read_csv_columns", "split_names", "ProgressBar", "plot_data_and_fit", "pyplot"]


class Subcommand:
    """A ``phsym`` subcommand declared once: the ``phsym`` parser and the
    module's standalone entry point (``python -m MODULE``) are built from it.

    Parameters
    ----------
    name : str
        Subcommand name (``phsym NAME``).
    help : str
        One line for ``phsym --help``.
    description : str
        Paragraph for ``phsym NAME --help``.
    fill : callable(argparse.ArgumentParser)
        Adds the subcommand's arguments.
    run : callable(argparse.Namespace) -> int
        Executes it; returns the exit code.
    """

    def __init__(self, name: str, help: str, description: str, fill: Callable[[argparse.ArgumentParser], None],
                 run: Callable[[argparse.Namespace], int]):
        self.name, self.help, self.description, self.fill, self.run = name, help, description, fill, run

    def add_parser(self, subparsers: Any) -> argparse.ArgumentParser:
        """Register the subcommand.

        Parameters
        ----------
        subparsers : argparse._SubParsersAction
            Result of ``parser.add_subparsers()``.

        Returns
        -------
        argparse.ArgumentParser
            The subcommand parser (``func`` default set to ``run``).
        """
        p = subparsers.add_parser(self.name, help=self.help, description=self.description)
        self.fill(p)
        p.set_defaults(func=self.run)
        return p

    def build_parser(self) -> argparse.ArgumentParser:
        """The standalone parser (``prog`` is ``phsym NAME``)."""
        p = argparse.ArgumentParser(prog=f"phsym {self.name}", description=self.description)
        self.fill(p)
        p.set_defaults(func=self.run)
        return p

    def main(self, argv: Optional[Sequence[str]] = None) -> int:
        """Standalone entry point.

        Parameters
        ----------
        argv : sequence of str, optional
            Arguments (default: ``sys.argv[1:]``).
        """
        return int(self.run(self.build_parser().parse_args(argv)) or 0)


def split_names(text: Optional[str]) -> List[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]`` (``None`` -> ``[]``).

    Parameters
    ----------
    text : str or None
        Comma-separated names.
    """
    return [s.strip() for s in (text or "").split(",") if s.strip()]


class ProgressBar:
    """Text progress bar on stderr: ``[#####.....] 12/100 steps, cost 1.2e-04, 3.1 s, eta 22 s``.

    Parameters
    ----------
    total : int, optional
        Expected count (a call may give it instead).
    unit : str
        What is counted ("steps", "iterations", "evaluations").
    stream : file-like, optional
        Output stream (default ``sys.stderr``).
    width : int
        Bar width in characters.
    eta : bool
        Show the estimated time left (off when ``total`` is only a cap, as
        for an optimiser's iteration limit).
    """

    def __init__(self, total: Optional[int] = None, unit: str = "steps", stream: Optional[TextIO] = None,
                 width: int = 30, eta: bool = True):
        self.total = total
        self.eta = eta
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.t0 = time.perf_counter()
        self._open = False

    def __call__(self, done: int, total: Optional[int] = None, cost: Optional[float] = None) -> None:
        """Redraw after ``done`` of ``total``, optionally showing the current cost.

        Parameters
        ----------
        done : int
            Count so far.
        total : int, optional
            Expected count (default: the constructor's).
        cost : float, optional
            Current objective value.
        """
        total = max(int(total or self.total or 1), 1)
        frac = min(max(done / total, 0.0), 1.0)
        filled = int(frac * self.width)
        el = time.perf_counter() - self.t0
        eta = el / frac - el if frac > 0 else 0.0
        text = f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} {self.unit}"
        if cost is not None:
            text += f", cost {cost:.4e}"
        self.stream.write(text + f", {el:.1f} s" + (f", eta {eta:.1f} s" if self.eta else ""))
        self.stream.flush()
        self._open = True

    def close(self) -> None:
        """End the bar's line (once)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


def pyplot(what: str):
    """``matplotlib.pyplot``, or a :class:`~phsym.errors.MissingDependencyError` saying what needed it.

    Parameters
    ----------
    what : str
        What is drawn (``"the Bode plot"``), for the message.
    """
    from .errors import MissingDependencyError
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError(f"{what} needs matplotlib (pip install matplotlib)") from None
    return plt


def plot_data_and_fit(path: str, t: np.ndarray, data: Mapping[str, np.ndarray], fit: Mapping[str, np.ndarray],
                      xlabel: str, fit_labels: Optional[Mapping[str, str]] = None) -> None:
    """One panel per signal: measured data (dots) and the fitted model's output.

    Parameters
    ----------
    path : str
        Image file to write.
    t : ndarray
        Sample times.
    data, fit : mapping of str to ndarray
        Measured and fitted signals by name (same keys).
    xlabel : str
        Label of the time axis.
    fit_labels : mapping of str to str, optional
        Legend text of each fitted curve (default "fit").
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(data)
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 2.5 * len(names)), squeeze=False)
    for j, name in enumerate(names):
        ax = axes[j, 0]
        ax.plot(t, data[name], "k.", ms=2, label="data")
        ax.plot(t, fit[name], label=(fit_labels or {}).get(name, "fit"))
        ax.set_ylabel(name)
        ax.legend(loc="upper right")
    axes[-1, 0].set_xlabel(xlabel)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def read_csv_columns(path: str, columns: Sequence[str]) -> Dict[str, np.ndarray]:
    """Read named columns of a CSV file with a header row.

    Parameters
    ----------
    path : str
        CSV file.
    columns : sequence of str
        Column names to return.

    Returns
    -------
    dict of str to numpy.ndarray
        Empty cells are NaN (the first row of step quantities in a
        ``phsym simulate --out`` table); rows starting with ``#`` are
        comments.
    """
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise DataFileError(f"{path} is empty") from None
        missing = [c for c in columns if c not in header]
        if missing:
            raise DataFileError(f"{path}: columns {missing} not found (header: {header})")
        idx = [header.index(c) for c in columns]
        rows: List[List[float]] = []
        for lineno, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
                continue        # blank, or a comment (the '# scheme: ...' line of a phsym table)
            try:     # an empty cell is a missing value (step quantities have none at t[0])
                rows.append([float(row[i]) if row[i].strip() else float("nan") for i in idx])
            except (ValueError, IndexError):
                raise DataFileError(f"{path}:{lineno}: cannot read a number in {row}") from None
    data = np.array(rows, dtype=float).reshape(-1, len(columns))
    return {c: data[:, j] for j, c in enumerate(columns)}
