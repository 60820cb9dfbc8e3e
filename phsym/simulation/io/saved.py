"""Results saved as ``.npz`` (:meth:`SimulationResult.save`) read back as data.

The file holds every array of the run plus a few entries of ``result.info``
under the prefix ``info.`` (the scheme, the rule of stiff storages, the step,
the names of inputs and outputs), so a saved run fitted later says how it was
simulated (``ParameterEstimator(method="auto")`` follows it).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Union

import numpy as np

from ...errors import DataFileError, SignalError

__all__ = ["SavedResult", "load_result", "info_arrays", "PREFIX"]

#: Prefix of the metadata entries in a saved ``.npz``.
PREFIX = "info."
_TEXT = ("scheme", "stiff")


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
    """Read a result saved with ``SimulationResult.save("run.npz")`` (or ``phsym simulate --out run.npz``).

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.npz`` file.

    Returns
    -------
    SavedResult

    Raises
    ------
    DataFileError
        The file is missing, not an ``.npz`` archive or has no time column.
    """
    path = Path(path)
    if path.suffix.lower() != ".npz":
        raise DataFileError(f"{path}: load_result reads .npz files (a CSV table holds no scheme: read it as "
                            "arrays and give the estimator method=...)")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise DataFileError(f"{path}: cannot read ({exc})") from None
    return SavedResult(arrays, str(path))
