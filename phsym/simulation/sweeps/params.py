"""Parameter sets of a sweep: grids, Monte Carlo samples, and their checks.

A sweep takes its runs as a table: one row per run, one column per
parameter.  :func:`parameter_table` turns every accepted form (a dict of
equal-length sequences, zipped; a list of dicts; a pandas DataFrame) into
``(names, values)`` with ``values`` of shape ``(runs, names)``;
:func:`grid` builds the Cartesian product and :func:`sampling` draws
seeded tolerances around the netlist defaults.  :func:`check_names`
rejects unknown and structure-fixed names before any run starts.
"""
from __future__ import annotations

import itertools
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ...common.names import NameTable
from ...errors import SimulationInputError

__all__ = ["grid", "sampling", "parameter_table", "check_names", "DISTRIBUTIONS"]

#: Distributions of :func:`sampling`.
DISTRIBUTIONS = ("uniform", "normal", "lognormal")


def grid(axes: Mapping[str, Sequence[float]]) -> Dict[str, np.ndarray]:
    """Cartesian product of parameter axes, as zipped columns.

    Parameters
    ----------
    axes : mapping of str to sequence of float
        Values of each parameter; the last name varies fastest.

    Returns
    -------
    dict of str to ndarray
        One column per name, ``prod(len(axis))`` rows (pass it to
        :func:`phsym.sweep` as ``params``).

    Examples
    --------
    >>> g = grid({"R": [1.0, 2.0], "C": [1e-6, 2e-6, 3e-6]})
    >>> g["R"].tolist(), g["C"].size
    ([1.0, 1.0, 1.0, 2.0, 2.0, 2.0], 6)
    """
    names = list(axes)
    cols = [_column(n, axes[n]) for n in names]
    rows = list(itertools.product(*cols))
    return {n: np.array([r[j] for r in rows], dtype=float) for j, n in enumerate(names)}


def _column(name: str, values) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise SimulationInputError(f"values of parameter {name!r} are not numbers: {values!r}") from None
    if arr.size == 0:
        raise SimulationInputError(f"parameter {name!r} has no values")
    return arr


def _defaults(model) -> Dict[str, float]:
    if isinstance(model, Mapping):
        return {str(k): float(v) for k, v in model.items()}
    if hasattr(model, "parameters") and isinstance(model.parameters, Mapping):
        return dict(model.parameters)
    from ...netlist.params import evaluate_parameters     # a path: the netlist alone (no structure)
    from ...netlist.parser import load_netlist
    params = load_netlist(model).parameters
    values = evaluate_parameters(params)
    return {name: float(values[p.symbol]) for name, p in params.items()}


def sampling(model, n: int, tol: Union[float, Mapping[str, float]], names: Optional[Sequence[str]] = None,
             distribution: str = "uniform", seed: Optional[int] = None) -> Dict[str, np.ndarray]:
    """Monte Carlo parameter sets: tolerances around the netlist defaults, seeded.

    Parameters
    ----------
    model : Model, str, pathlib.Path or mapping
        The model, a netlist file, or the nominal values by name.
    n : int
        Number of runs.
    tol : float or mapping of str to float
        Relative tolerance (0.05 for 5 %), one for every name or one per name.
    names : sequence of str, optional
        Parameters to vary (default: the keys of ``tol``; required with a float ``tol``).
    distribution : str
        ``"uniform"``: ``nominal * (1 + U(-tol, tol))``; ``"normal"``:
        ``nominal * (1 + N(0, tol / 3))`` (the band holds 99.7 %);
        ``"lognormal"``: ``nominal * exp(N(0, log(1 + tol) / 3))`` (always
        of the nominal's sign).
    seed : int, optional
        Seed of :func:`numpy.random.default_rng` (the same seed gives the same sets).

    Returns
    -------
    dict of str to ndarray
        One column of ``n`` values per name (pass it to :func:`phsym.sweep`).
    """
    if distribution not in DISTRIBUTIONS:
        raise SimulationInputError(f"unknown distribution {distribution!r}: use {', '.join(DISTRIBUTIONS)}")
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise SimulationInputError(f"n must be a positive integer, got {n!r}")
    if isinstance(tol, Mapping):
        tols = {str(k): float(v) for k, v in tol.items()}
        if names is not None:
            tols = {k: tols[k] for k in names}
    else:
        if not names:
            raise SimulationInputError("sampling with one tolerance needs the parameter names")
        tols = {str(k): float(tol) for k in names}
    table = NameTable(_defaults(model), what="parameter")
    rng = np.random.default_rng(seed)
    out = {}
    for name, t in tols.items():
        if not (0 <= t < 1) or not np.isfinite(t):
            raise SimulationInputError(f"tolerance of {name} must be in [0, 1), got {t!r}")
        nominal = table.lookup(name, SimulationInputError)
        if distribution == "uniform":
            out[name] = nominal * (1.0 + rng.uniform(-t, t, int(n)))
        elif distribution == "normal":
            out[name] = nominal * (1.0 + rng.normal(0.0, t / 3.0, int(n)))
        else:
            out[name] = nominal * np.exp(rng.normal(0.0, np.log1p(t) / 3.0, int(n)))
    return out


def parameter_table(params) -> Tuple[List[str], np.ndarray]:
    """``(names, values)`` with ``values[run, j]`` the value of ``names[j]`` in a run.

    Parameters
    ----------
    params : mapping, sequence of mappings or pandas.DataFrame
        A dict of name -> sequence (zipped: equal lengths), a list of dicts
        (one per run, the same names in each), or a DataFrame with one row per run.
    """
    if hasattr(params, "columns") and hasattr(params, "to_numpy"):       # a pandas DataFrame
        names = [str(c) for c in params.columns]
        cols = {n: _column(n, params[c].to_numpy()) for n, c in zip(names, params.columns)}
    elif isinstance(params, Mapping):
        names = [str(k) for k in params]
        cols = {n: _column(n, params[k]) for n, k in zip(names, params)}
    elif isinstance(params, Sequence) and not isinstance(params, str):
        rows = list(params)
        if not rows or not all(isinstance(r, Mapping) for r in rows):
            raise SimulationInputError("params as a list needs one dict per run")
        names = [str(k) for k in rows[0]]
        for i, r in enumerate(rows):
            if sorted(map(str, r)) != sorted(names):
                raise SimulationInputError(f"run {i} sets {sorted(map(str, r))}, run 0 sets {sorted(names)}")
        cols = {n: _column(n, [r[n] for r in rows]) for n in names}
    else:
        raise SimulationInputError(f"params must be a dict, a list of dicts or a DataFrame, not "
                                   f"{type(params).__name__}")
    if not names:
        raise SimulationInputError("params names no parameter")
    lengths = {n: c.size for n, c in cols.items()}
    if len(set(lengths.values())) != 1:
        raise SimulationInputError(f"zipped parameters need equal lengths, got {lengths} (use phsym.grid "
                                   "for a Cartesian product)")
    return names, np.column_stack([cols[n] for n in names])


def check_names(model, names: Sequence[str]) -> List[str]:
    """The defined spelling of each name; a clear error for any other.

    Parameters
    ----------
    model : Model or LinearPHS
        The swept model.
    names : sequence of str
        Parameter names of the sweep.

    Raises
    ------
    SimulationInputError
        For a LinearPHS (its matrices are numbers), an unknown name, or a
        name of the structure that is not a parameter (an element whose
        value is an expression of other parameters, a state, a port).
    """
    if not hasattr(model, "netlist"):
        raise SimulationInputError(f"a {type(model).__name__} has no named parameters to sweep (its matrices "
                                   "are numbers): sweep a netlist model")
    table = NameTable(model.parameters, what="parameter")
    out = []
    for name in names:
        spelled = table.spelling(str(name))
        if spelled is None:
            raise SimulationInputError(_not_a_parameter(model, str(name), table))
        if spelled in out:
            raise SimulationInputError(f"parameter {spelled} is given twice")
        out.append(spelled)
    return out


def _not_a_parameter(model, name: str, table: NameTable) -> str:
    known = ", ".join(table) or "none"
    for el in model.netlist.elements:
        if el.name.lower() != name.lower():
            continue
        uses = sorted({str(s) for v in el.values.values() for s in getattr(v, "free_symbols", ())})
        if uses:
            return (f"{el.name} is not a parameter: its value is fixed by the netlist as an expression of "
                    f"{', '.join(uses)}; sweep {' or '.join(uses)} instead")
        return f"{el.name} is not a parameter: the netlist fixes it (no numeric value); parameters: {known}"
    structural = set(model.states) | set(model.inputs) | set(model.outputs)
    if name in structural:
        return f"{name} is a state or port of the structure, not a parameter; parameters: {known}"
    return f"unknown parameter {name!r}; parameters: {known}"
