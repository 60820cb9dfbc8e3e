"""A deck's ``.step`` cards and ``.temp`` lists: its transient once per step, one table each.

``.step param R1 1k 10k 1k`` (``LIN``, ``DEC``, ``OCT``, ``LIST``), several
cards nested (the first outermost), run as one parameter sweep
(:func:`phsym.sweep`: one compiled loop for every step); ``.temp 0 27 85``
and ``.step TEMP ...`` read the deck again at each temperature (the
temperature sets the devices' thermal voltages and saturation currents when
the deck is read) and run it as ``phsym simulate`` does.
"""
from __future__ import annotations

import itertools
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import SimulationInputError

__all__ = ["step_sets", "run_steps", "StepRun"]


def step_sets(steps: Sequence) -> List[Dict[str, float]]:
    """The parameter sets of ``.step`` sweeps, the first card outermost (``TEMP`` as ``"temp"``).

    Parameters
    ----------
    steps : sequence of phsym.netlist.analyses.Sweep
        The deck's ``.step`` cards.

    Examples
    --------
    >>> from phsym.netlist.analyses import Sweep
    >>> step_sets([Sweep("R1", "param", (1.0, 2.0)), Sweep("C1", "param", (3.0,))])
    [{'R1': 1.0, 'C1': 3.0}, {'R1': 2.0, 'C1': 3.0}]
    """
    names = [("temp" if s.kind == "temp" else s.name) for s in steps]
    return [dict(zip(names, combo)) for combo in itertools.product(*(s.points for s in steps))]


class StepRun:
    """One step of a stepped deck: its values and its result (a table of its signals).

    Attributes
    ----------
    values : dict of str to float
        The stepped parameters (``temp`` for a temperature).
    t : ndarray
        The time grid.
    signals : dict of str to ndarray
        The deck's saved signals on the grid (step values NaN at ``t[0]``).
    balance : float
        The run's power-balance residual relative to its power scale.
    """

    def __init__(self, values: Dict[str, float], t: np.ndarray, signals: Dict[str, np.ndarray], balance: float):
        self.values, self.t, self.signals, self.balance = values, t, signals, balance

    def save(self, path) -> None:
        """Write the step's table as CSV (``t`` then the signals)."""
        cols = {"t": self.t, **self.signals}
        np.savetxt(path, np.column_stack(list(cols.values())), delimiter=",", header=",".join(cols), comments="")


def run_steps(path, analyses, fs: float, duration: Optional[float], x0, **options) -> List[StepRun]:
    """Run a deck once per ``.step`` set (or ``.temp`` value).

    Parameters
    ----------
    path : str or pathlib.Path
        The deck.
    analyses : phsym.netlist.analyses.Analyses
        Its cards (``steps``, ``temps``).
    fs, duration, x0
        The run's rate, length and start, as ``phsym simulate`` takes them from ``.tran``.
    **options
        Simulator options.

    Raises
    ------
    SimulationInputError
        A deck that steps both its temperature and its parameters.
    """
    from ...model import Model
    from ...netlist import load_netlist
    from ..run import simulate
    from ..sweeps.api import sweep
    sets = step_sets(analyses.steps) if analyses.steps else [{"temp": t} for t in analyses.temps]
    temps = [s.pop("temp") for s in sets if "temp" in s]
    if temps and any(sets):
        raise SimulationInputError(f"{path}: stepping the temperature and parameters together is not supported; "
                                   "step one of them")
    if temps:
        runs = []
        for temp in temps:
            model = Model(load_netlist(path, options={"temp": float(temp)}))
            res = simulate(model, fs, duration=duration, x0=x0, **options)
            signals = {k: _grid(res, k) for k in model.netlist.outputs()}
            runs.append(StepRun({"temp": temp}, res.t, signals, res.max_balance_error))
        return runs
    model = Model(load_netlist(path))
    names = list(sets[0])
    table = {n: [s[n] for s in sets] for n in names}
    res = sweep(model, fs, table, duration=duration, x0=x0, outputs=model.netlist.outputs(), executor="serial",
                **options)
    return [StepRun(dict(zip(res.names, row)), res.t, {k: v[r] for k, v in res.signals.items()}, res.balance[r])
            for r, row in enumerate(res.values)]


def _grid(res, label: str) -> np.ndarray:
    y = np.asarray(res[label], float)
    return y if y.shape[0] == res.t.shape[0] else np.concatenate([[np.nan], y])
