"""Small helpers shared by the command-line subcommands."""
from __future__ import annotations

import csv
from typing import Dict, List, Sequence

import numpy as np

__all__ = ["read_csv_columns"]


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
    """
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"{path} is empty") from None
        missing = [c for c in columns if c not in header]
        if missing:
            raise ValueError(f"{path}: columns {missing} not found (header: {header})")
        idx = [header.index(c) for c in columns]
        rows: List[List[float]] = []
        for lineno, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            try:
                rows.append([float(row[i]) for i in idx])
            except (ValueError, IndexError):
                raise ValueError(f"{path}:{lineno}: cannot read a number in {row}") from None
    data = np.array(rows, dtype=float).reshape(-1, len(columns))
    return {c: data[:, j] for j, c in enumerate(columns)}
