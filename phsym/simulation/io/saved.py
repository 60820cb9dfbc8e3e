"""Results saved as ``.npz`` or ``.csv`` (:meth:`SimulationResult.save`) read back as data.

An ``.npz`` holds every array of the run plus a few entries of ``result.info``
under the prefix ``info.`` (the scheme, the rule of stiff storages, the step,
the names of inputs and outputs), so a saved run fitted later says how it was
simulated (``ParameterEstimator(method="auto")`` follows it).  A ``.csv``
table carries the same entries in a comment line right after its header row
(:func:`csv_comment`)::

    t,q_C1,Vin,y(Vin),...
    # scheme: midpoint, stiff: backward_euler, h: 2.0833333333333332e-05, inputs: Vin, outputs: y(Vin)
    0,0,0,,...

Placed there, readers that skip ``#`` comments (``numpy.genfromtxt``,
``numpy.loadtxt``, ``pandas.read_csv(path, comment="#")``) still find the
column names in the first line.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Union

import numpy as np

from ...errors import DataFileError, SignalError

__all__ = ["SavedResult", "load_result", "info_arrays", "csv_comment", "csv_info", "write_csv", "PREFIX", "CSV_TAG"]

#: Prefix of the metadata entries in a saved ``.npz``.
PREFIX = "info."
_TEXT = ("scheme", "stiff")
#: How the metadata comment of a ``.csv`` table starts.
CSV_TAG = "# scheme:"


def info_arrays(info: Mapping[str, Any], inputs, outputs) -> Dict[str, np.ndarray]:
    """The metadata entries a saved ``.npz`` carries (strings and the step; no pickles).

    Parameters
    ----------
    info : mapping
        ``SimulationResult.info``.
    inputs, outputs : sequence of str
        Names of the run's inputs and port outputs.
    """
    out = {PREFIX + k: np.array(str(info[k])) for k in _TEXT if info.get(k) is not None}
    if "h" in info:
        out[PREFIX + "h"] = np.array(float(info["h"]))
    out[PREFIX + "inputs"] = np.array(list(inputs), dtype=str)
    out[PREFIX + "outputs"] = np.array(list(outputs), dtype=str)
    return out


def csv_comment(info: Mapping[str, Any], inputs, outputs) -> str:
    """The metadata line of a ``.csv`` table (see the module docstring); empty without a scheme.

    Parameters
    ----------
    info : mapping
        ``SimulationResult.info``.
    inputs, outputs : sequence of str
        Names of the input and port-output columns the table holds.
    """
    if not info.get("scheme"):
        return ""
    parts = [f"{k}: {info[k]}" for k in _TEXT if info.get(k) is not None]
    if "h" in info:
        parts.append(f"h: {float(info['h'])!r}")
    parts += [f"inputs: {' '.join(inputs)}", f"outputs: {' '.join(outputs)}"]
    return "# " + ", ".join(parts) + "\n"


def write_csv(path: Union[str, Path], cols: Mapping[str, np.ndarray], info: Mapping[str, Any], inputs,
              outputs) -> None:
    """Write a result table: the header row, the metadata line (:func:`csv_comment`), then the rows
    (missing step values are empty cells).

    Parameters
    ----------
    path : str or pathlib.Path
        Destination.
    cols : mapping of str to ndarray
        The columns, in order, all of one length.
    info : mapping
        The run's ``info`` (scheme, stiff rule, step).
    inputs, outputs : sequence of str
        The run's input and output names (those among the columns are listed in the metadata).
    """
    names = list(cols)
    data = np.column_stack([cols[n] for n in names])
    with open(path, "w", newline="") as fh:
        fh.write(",".join(names) + "\n")
        fh.write(csv_comment(info, [n for n in inputs if n in cols], [n for n in outputs if n in cols]))
        # Python floats format faster than numpy scalars, to the same digits
        fh.writelines(",".join(["" if v != v else f"{v:.17g}" for v in row]) + "\n" for row in data.tolist())


def csv_info(lines) -> Dict[str, Any]:
    """The entries of a table's metadata line (:func:`csv_comment`) among its first ``lines``;
    empty when there is none (a table not written by phsym).

    Parameters
    ----------
    lines : iterable of str
        The table's first lines (the header row and the comment).

    Returns
    -------
    dict
        ``scheme``, ``stiff`` (str), ``h`` (float), ``inputs``, ``outputs`` (lists of str).
    """
    for line in lines:
        if not line.startswith(CSV_TAG):
            continue
        out: Dict[str, Any] = {}
        for part in line[1:].split(","):
            key, _, value = part.partition(":")
            key, value = key.strip(), value.strip()
            if key in _TEXT and value:
                out[key] = value
            elif key == "h":
                try:
                    out["h"] = float(value)
                except ValueError:
                    pass
            elif key in ("inputs", "outputs"):
                out[key] = value.split()
        return out
    return {}


def _read_csv(path: Path) -> Dict[str, np.ndarray]:
    """Every column of a ``phsym simulate`` table, with its metadata under :data:`PREFIX`."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            header = fh.readline()
            second = fh.readline()
            info = csv_info([second])
            if not info:
                raise DataFileError(f"{path}: no '{CSV_TAG} ...' line after the header; a table not written "
                                    "by phsym holds no scheme: read it as arrays and give the estimator method=...")
            names = [h.strip() for h in header.split(",")]
            data = np.genfromtxt(fh, delimiter=",", comments="#", dtype=float, ndmin=2)
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise DataFileError(f"{path}: cannot read a number ({exc})") from None
    if data.size == 0:
        data = np.zeros((0, len(names)))
    if data.shape[1] != len(names):
        raise DataFileError(f"{path}: {data.shape[1]} columns in the rows, {len(names)} in the header")
    arrays = {n: data[:, j] for j, n in enumerate(names)}
    for k in _TEXT:
        if k in info:
            arrays[PREFIX + k] = np.array(info[k])
    if "h" in info:
        arrays[PREFIX + "h"] = np.array(info["h"])
    for k in ("inputs", "outputs"):
        arrays[PREFIX + k] = np.array([n for n in info.get(k, ()) if n in arrays], dtype=str)
    return arrays


class SavedResult:
    """A run read back from ``.npz``: the signals and ``info`` of a :class:`~phsym.simulation.SimulationResult`.

    Estimators take it as they take the result itself (``est.fit(load_result("run.npz"))``).

    Parameters
    ----------
    arrays : mapping of str to ndarray
        The file's entries.
    path : str
        Where they came from (for messages).

    Attributes
    ----------
    t, t_step : ndarray
        Grid (N+1) and step (N) times.
    u : ndarray (N+1, n_u)
        Inputs on the grid.
    y : ndarray (N, n_y)
        Port outputs of the steps.
    info : dict
        ``scheme``, ``stiff`` and ``h`` as the run recorded them (absent from files
        written before they were saved).
    """

    def __init__(self, arrays: Mapping[str, np.ndarray], path: str = "<arrays>"):
        self.path = path
        self._arrays = {k: v for k, v in arrays.items() if not k.startswith(PREFIX)}
        meta = {k[len(PREFIX):]: v for k, v in arrays.items() if k.startswith(PREFIX)}
        if "t" not in self._arrays:
            raise DataFileError(f"{path}: no time column 't'; not a saved phsym result")
        self.info: Dict[str, Any] = {k: str(meta[k]) for k in _TEXT if k in meta}
        self.t = np.asarray(self._arrays["t"], float)
        self.info["h"] = float(meta["h"]) if "h" in meta else float(np.mean(np.diff(self.t)))
        self.t_step = self.t[1:]
        self.inputs: List[str] = [str(s) for s in meta.get("inputs", ())]
        self.outputs: List[str] = [str(s) for s in meta.get("outputs", ())]
        self.u = np.column_stack([self[k] for k in self.inputs]) if self.inputs else np.zeros((self.t.size, 0))
        self.y = np.column_stack([self[k] for k in self.outputs]) if self.outputs \
            else np.zeros((self.t.size - 1, 0))

    def labels(self) -> List[str]:
        """Names accepted by ``saved[...]``."""
        return list(self._arrays)

    def __getitem__(self, key: str) -> np.ndarray:
        low = {k.lower(): k for k in self._arrays}
        k = key if key in self._arrays else low.get(key.lower())
        if k is None:
            raise SignalError(f"{self.path}: no signal {key!r}; saved: {', '.join(self._arrays)}")
        a = np.asarray(self._arrays[k], float)
        # a file written with save(signals=...) pads step quantities with a leading NaN
        return a[1:] if a.shape[0] == self.t.size and a.size and np.isnan(a[0]) else a

    def __repr__(self) -> str:
        return f"SavedResult({self.path!r}, {self.t.size - 1} steps, scheme={self.info.get('scheme')!r})"


def load_result(path: Union[str, Path]) -> SavedResult:
    """Read a result saved with ``SimulationResult.save("run.npz")`` or ``save("run.csv")`` (or
    ``phsym simulate --out run.npz``/``run.csv``).

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.npz`` file, or a ``.csv`` table with phsym's metadata line (:func:`csv_comment`).

    Returns
    -------
    SavedResult

    Raises
    ------
    DataFileError
        The file is missing, not an ``.npz`` archive or a table with the metadata line, or has no
        time column.
    """
    path = Path(path)
    if path.suffix.lower() == ".csv":
        return SavedResult(_read_csv(path), str(path))
    if path.suffix.lower() != ".npz":
        raise DataFileError(f"{path}: load_result reads .npz files and .csv tables written by phsym")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise DataFileError(f"{path}: cannot read ({exc})") from None
    return SavedResult(arrays, str(path))
