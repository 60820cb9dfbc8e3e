""":class:`SimulationResult`: arrays of a run with power-balance bookkeeping."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from ..common.names import NameTable
from ..common.quantities import STATE_NAMES
from ..errors import SignalError, SimulationError

__all__ = ["SimulationResult", "SignalError"]

class SimulationResult:
    """Output of :meth:`phsym.simulation.Simulator.run`.

    State-like arrays live on the grid ``t`` (``N + 1`` samples,
    ``t[0]`` the initial state); step quantities (outputs, algebraic
    variables, powers, probes) belong to the steps ``k -> k + 1`` and live on
    ``t_step = t[1:]`` (``N`` samples).  For the midpoint-type schemes they
    are the step (midpoint) values, for backward Euler end-of-step values.

    Attributes
    ----------
    t : ndarray (N+1,)
    x : ndarray (N+1, n_x)
        Storage states.
    u : ndarray (N+1, n_u)
        Inputs at the grid times.
    t_step : ndarray (N,)
    y : ndarray (N, n_u)
        Collocated outputs of the step (``y . ubar`` = power received).
    H : ndarray (N+1,)
        Stored energy.
    P_diss, P_supplied : ndarray (N,)
        Dissipated power ``sum w z(w)`` of the passive ports and supplied
        power ``y . ubar`` (plus the power the controlled sources inject,
        :attr:`P_active`).
    balance : ndarray (N,)
        Power-balance residual ``(H[k+1] - H[k]) / h + P_diss - P_supplied``
        (zero up to rounding for the discrete-gradient scheme, and for the
        midpoint scheme when H is quadratic; for backward Euler the
        numerical dissipation, >= 0 for convex H).
    iterations : ndarray of int (N,)
        Newton iterations per step (0 for the linear fast path).
    flags : ndarray of int (N,)
        0 = converged; nonzero codes when ``on_error="flag"`` let the run go on.
    efforts : ndarray (N, n_e) or None
        Effort vector ``e`` of every step (when recorded); probes use it.
    info : dict
        Scheme, engine, initial-state description (``x0``), wall time of the
        stepping (``wall_time``; compiling or loading the loop is
        ``compile_time``), how the loop was compiled (``compiled``), cache
        key, parameter ``values`` by name, Newton's start of the first step
        (``newton_start``: port variables by name, or None), ``warm_start`` after a warm start,
        and ``subdivided`` (``{step: number of sub-steps}``) when Newton
        took some steps in sub-steps (:mod:`phsym.simulation.engines.substeps`).

    Parameters
    ----------
    model : Model, LinearPHS or ModelSummary
        The simulated model (after a warm start a
        :class:`~phsym.simulation.summary.ModelSummary`).
    names : ModelSummary
        Names of states, inputs, outputs and declared probes.
    t, x, u, y, H, P_diss, P_supplied, iterations, flags, efforts : ndarray
        The arrays listed under Attributes (built by the simulator); ``t``
        may be a callable returning the grid (built when first asked for).
    probe_vector : callable(label) -> ndarray
        ``signal = efforts @ probe_vector(label)`` for signal labels.
    info : dict
        Run description (see Attributes).
    controls : dict of str to ndarray, optional
        The control signals of the run on the grid (``N + 1`` samples).
    P_control : ndarray (N,), optional
        Power the controls did on the storages per step (part of ``P_supplied``).
    P_num : ndarray (N,), optional
        Numerical dissipation of the stiff storages stepped to the end per
        step (part of ``P_diss``).
    """

    def __init__(self, model, names, t, x, u, y, H, P_diss, P_supplied, iterations, flags, efforts,
                 probe_vector: Callable[[str], np.ndarray], info: Dict,
                 controls: Optional[Dict[str, np.ndarray]] = None, P_control: Optional[np.ndarray] = None,
                 P_num: Optional[np.ndarray] = None):
        self.model = model
        self.names = names
        self._t = t
        self.x = x
        self.u = u
        self.y = y
        self.H = H
        self.P_diss = P_diss
        self.P_supplied = P_supplied
        self.iterations = iterations
        self.flags = flags
        self.efforts = efforts
        self._probe_vector = probe_vector
        self.info = info
        self.controls: Dict[str, np.ndarray] = dict(controls or {})
        self._P_control = P_control
        self._P_num = P_num
        self._balance: Optional[np.ndarray] = None
        self._cache: Dict[str, np.ndarray] = {}
        n = names
        self._lookup = NameTable(what="signal")
        for kind, labels in (("x", n.states), ("u", n.inputs), ("y", n.outputs)):
            for i, label in enumerate(labels):
                self._lookup.set(label, (kind, i))

    @property
    def t(self) -> np.ndarray:
        """Time grid of the ``N + 1`` states, from ``t[0]`` (built on first use when the run gave it as a callable)."""
        if callable(self._t):
            self._t = self._t()
        return self._t

    @property
    def t_step(self) -> np.ndarray:
        """End times of the steps, ``t[1:]``."""
        return self.t[1:]

    @property
    def balance(self) -> np.ndarray:
        """Per-step power-balance residual ``(H[k+1]-H[k])/h + P_diss - P_supplied``
        (computed on first use)."""
        if self._balance is None:
            self._balance = (self.H[1:] - self.H[:-1]) / self.info["h"] + self.P_diss - self.P_supplied
        return self._balance

    @property
    def P_active(self) -> np.ndarray:
        """Power injected by the controlled sources (op-amps, ``E``, ``G``) per
        step, part of :attr:`P_supplied` (zeros without them)."""
        active = self.info.get("active", [])
        out = np.zeros(self.t_step.shape[0])
        for b in active:
            out -= self[f"v({b})"] * self[f"i({b})"]
        return out

    @property
    def P_control(self) -> np.ndarray:
        """Power the control signals did on the storages per step, part of :attr:`P_supplied`
        (zeros without controls, and when no control enters H).

        A control is held at its step value while a step is solved; where it
        enters H, ``H`` jumps between ``H(x_k, c_k)`` and ``H(x_k, c_k+1/2)``
        at each sample, and that work, ``(H(x_k+1, c_k+1) - H(x_k+1,
        c_k+1/2) + H(x_k, c_k+1/2) - H(x_k, c_k)) / h``, is this term.
        """
        if self._P_control is None:
            return np.zeros(self.P_diss.shape[0])
        return self._P_control

    @property
    def P_num(self) -> np.ndarray:
        """Numerical dissipation per step, part of :attr:`P_diss` (zeros unless
        stiff storages, junction charges, were stepped to the end of the step
        under the discrete gradient or the midpoint rule:
        :class:`~phsym.simulation.Simulator` ``stiff``; under backward Euler
        every storage's numerical dissipation stays in :attr:`balance`).

        A storage whose gradient is taken at the step's end gives ``(e_end dx
        - (H(x + dx) - H(x))) / h >= 0`` (H convex; up to rounding) more than
        its energy change: that energy is dissipated by the step, not by an
        element.
        """
        if self._P_num is None:
            return np.zeros(self.P_diss.shape[0])
        return self._P_num

    # ----------------------------------------------------------- scales
    @property
    def power_scale(self) -> float:
        """Scale for relative balance checks: max of ``|dH/dt|``, P_diss, ``|P_supplied|``,
        and at least ``max |H|`` over the run's duration (the power that would move
        the stored energy by its own size during the run: a run at rest then
        measures its round-off against its energy, not round-off against
        round-off); 1 when all are zero."""
        h = self.info["h"]
        dH = np.abs(np.diff(self.H)) / h
        n = self.P_diss.shape[0]
        m = max(np.max(dH, initial=0.0), np.max(np.abs(self.P_diss), initial=0.0),
                np.max(np.abs(self.P_supplied), initial=0.0),
                np.max(np.abs(self.H), initial=0.0) / (n * h) if n else 0.0)
        return float(m) if m > 0 else 1.0

    @property
    def max_balance_error(self) -> float:
        """Maximum ``|balance|`` relative to :attr:`power_scale`."""
        return float(np.max(np.abs(self.balance), initial=0.0) / self.power_scale)

    # ----------------------------------------------------------- access
    def labels(self) -> List[str]:
        """Names accepted by ``res[...]`` (any signal label is accepted too)."""
        n = self.names
        return list(n.states) + list(n.inputs) + list(self.controls) + list(n.outputs) + \
            [p.label for p in n.probes] + list(getattr(n, "saved", ())) + ["H", "P_diss", "P_supplied", "balance"] + \
            (["P_control"] if self.controls else []) + (["P_num"] if self._P_num is not None else [])

    def _probe(self, label: str) -> np.ndarray:
        if self.efforts is None:
            raise SignalError(f"{label}: efforts were not recorded (run with record_efforts=True)")
        E, c = self.efforts, np.asarray(self._probe_vector(label), dtype=float)
        if c.shape != (E.shape[1],):
            return E @ c        # numpy names the mismatch
        # the sum of codegen.sweep_kernels.probe_signal (a sweep's probes), term by term in the same order:
        # the same floats (BLAS's gemv orders its sums by shape and library), and no numba on a warm start
        out = np.zeros(E.shape[0])
        for j, cj in enumerate(c):
            out += E[:, j] * cj
        return out

    def __getitem__(self, key: str) -> np.ndarray:
        if key in self._cache:
            return self._cache[key]
        if key in self._lookup:
            kind, i = self._lookup[key]
            return {"x": self.x, "u": self.u, "y": self.y}[kind][:, i]
        if key in ("H", "P_diss", "P_supplied", "P_control", "P_num", "balance", "t", "t_step", "iterations"):
            return getattr(self, key)
        if key in self.controls:
            return self.controls[key]
        if "(" in key and key.endswith(")"):      # a probe, or a state named x(K1), q(C1)
            state = None
            if key.split("(")[0].strip().lower() in STATE_NAMES:
                from .probes import state_signal      # (sympy: not on a warm run's probe path)
                state = state_signal(self.model, self.names.states, key)
            return self._cache.setdefault(key, self[state] if state is not None else self._probe(key))
        raise SignalError(f"{key!r} is not a state, input, output or probe of {self.names.name}; known: "
                          f"{', '.join(self.labels())}; other probes: v(NODE), v(N1,N2), i(ELEMENT), v(ELEMENT)")

    @property
    def probes(self) -> Dict[str, np.ndarray]:
        """The netlist's ``.probe`` outputs (step grid)."""
        return {p.label: self[p.label] for p in self.names.probes}

    @property
    def saved(self) -> Dict[str, np.ndarray]:
        """The probes and the signals the netlist saves (step grid): every node voltage and
        voltage-source current, or its ``.save``/``.print`` selection; what files hold."""
        return {**self.probes, **{k: self[k] for k in getattr(self.names, "saved", ())}}

    # ----------------------------------------------------------- export
    def to_numpy(self) -> Dict[str, np.ndarray]:
        """Dict of arrays (state grid and step grid) keyed by label."""
        d = {"t": self.t, "t_step": self.t_step, "H": self.H, "P_diss": self.P_diss,
             "P_supplied": self.P_supplied, "balance": self.balance, "iterations": self.iterations}
        for i, s in enumerate(self.names.states):
            d[s] = self.x[:, i]
        for i, s in enumerate(self.names.inputs):
            d[s] = self.u[:, i]
        for i, s in enumerate(self.names.outputs):
            d[s] = self.y[:, i]
        d.update(self.controls)
        if self.controls:
            d["P_control"] = self.P_control
        if self._P_num is not None:
            d["P_num"] = self.P_num
        if self.efforts is not None:
            d.update(self.saved)
        return d

    def _step_table(self) -> Dict[str, np.ndarray]:
        """One table on the grid ``t`` (``N + 1`` rows, the first is the initial
        instant).  States, inputs and H are defined there; a step quantity
        (outputs, probes, powers) stands in the row of its step's end time
        and is missing (NaN; an empty cell in CSV) in the first row."""
        pad = lambda a: np.concatenate([np.full((1,) + a.shape[1:], np.nan), a])
        cols = {"t": self.t}
        for i, s in enumerate(self.names.states):
            cols[s] = self.x[:, i]
        for i, s in enumerate(self.names.inputs):
            cols[s] = self.u[:, i]
        cols.update(self.controls)
        for i, s in enumerate(self.names.outputs):
            cols[s] = pad(self.y[:, i])
        if self.efforts is not None:
            cols.update({k: pad(v) for k, v in self.saved.items()})
        cols["H"] = self.H
        cols["P_diss"] = pad(self.P_diss)
        cols["P_supplied"] = pad(self.P_supplied)
        if self.controls:
            cols["P_control"] = pad(self.P_control)
        if self._P_num is not None:
            cols["P_num"] = pad(self.P_num)
        cols["balance"] = pad(self.balance)
        return cols

    def to_pandas(self):
        """:class:`pandas.DataFrame` on the step grid (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - optional dependency
            raise SimulationError("to_pandas needs pandas (pip install pandas)") from exc
        return pd.DataFrame(self._step_table()).set_index("t")

    def save(self, path: Union[str, Path], signals: Optional[Sequence[str]] = None) -> Path:
        """Write ``.csv`` (step grid table) or ``.npz`` (all arrays).

        Parameters
        ----------
        path : str or pathlib.Path
            Destination; the suffix (``.csv`` or ``.npz``; ``.wav`` calls
            :meth:`to_wav`) selects the format.  An ``.npz`` also holds the scheme,
            the stiff rule and the step, a ``.csv`` has them in a ``# scheme: ...`` comment
            line after its header row (both read back by :func:`phsym.simulation.load_result`).
        signals : sequence of str, optional
            Write ``t`` and these signals only (any label ``res[...]`` takes),
            instead of states, inputs, outputs, saved signals and powers.

        Returns
        -------
        pathlib.Path
        """
        path = Path(path)
        suf = path.suffix.lower()
        pad = lambda a: a if a.shape[0] == self.t.shape[0] else np.concatenate([[np.nan], a])  # noqa: E731
        chosen = None if signals is None else {"t": self.t, **{k: pad(np.asarray(self[k])) for k in signals}}
        if suf == ".npz":         # with how the run was made (phsym.simulation.io.saved reads it back)
            from .io.saved import info_arrays
            np.savez(path, **(chosen or self.to_numpy()),
                     **info_arrays(self.info, self.names.inputs, self.names.outputs))
        elif suf == ".csv":
            from .io.saved import write_csv
            write_csv(path, chosen or self._step_table(), self.info, self.names.inputs, self.names.outputs)
        elif suf == ".wav":
            self.to_wav(path)
        else:
            raise SimulationError(f"unknown result format {suf!r}: use .csv, .npz or .wav")
        return path

    def to_wav(self, path: Union[str, Path], signal: Optional[Union[str, Sequence[str]]] = None,
               normalize: bool = False, format: str = "float32") -> Path:
        """Write signals as a WAV file at the simulation rate, one channel each.

        Levels are physical by default (a float WAV holds volts, amperes...),
        so runs at two drive settings compare by level; with
        ``align="samples"`` runs, N input samples give N output samples
        (see :meth:`~phsym.simulation.Simulator.run`).

        Parameters
        ----------
        path : str or pathlib.Path
            Destination ``.wav`` file.
        signal : str or sequence of str, optional
            Label(s) of the signal(s) (default: the first probe, else the
            first output), e.g. ``"v(out)"`` or ``["v(l)", "v(r)"]``.
        normalize : bool
            Scale the peak to 1 (default False: values as they are).
        format : {"float32", "float64", "int16", "int32"}
            Sample format; integer formats clip beyond full scale with a
            :class:`~phsym.errors.ClippingWarning`.

        Returns
        -------
        pathlib.Path
        """
        from .io.audio import write_wav
        if signal is None:
            signal = self.names.probes[0].label if self.names.probes else self.names.outputs[0]
        labels = [signal] if isinstance(signal, str) else list(signal)
        cols = []
        for lab in labels:
            col = np.asarray(self[lab], dtype=float)
            cols.append(col[1:] if col.shape[0] == self.t.shape[0] else col)   # grid signals: step times
        data = cols[0] if len(cols) == 1 else np.column_stack(cols)
        return write_wav(path, data, 1.0 / self.info["h"], normalize=normalize, format=format)

    def plot(self, signals: Optional[Sequence[str]] = None, path: Optional[Union[str, Path]] = None,
             balance: bool = True):
        """Plot signals and the power balance.

        Parameters
        ----------
        signals : sequence of str, optional
            Labels to plot (default: the probes, else the outputs).  Signals
            of different kinds (voltages, currents, ...) get their own axes.
        path : str or pathlib.Path, optional
            Save the figure there (PNG, PDF, ...) instead of only returning it.
        balance : bool
            Add the power panel (dH/dt, -P_diss, P_supplied) and the
            per-step power-balance residual.

        Returns
        -------
        matplotlib.figure.Figure
        """
        import matplotlib
        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        if signals is None:
            signals = [p.label for p in self.names.probes] if (self.names.probes and self.efforts is not None) \
                else list(self.names.outputs)
        # one axis per kind of signal: v(..), i(..), y(..), states/inputs
        groups: Dict[str, List[str]] = {}
        for s in signals:
            kind = s[:2] if len(s) > 2 and s[1] == "(" else "other"
            groups.setdefault(kind, []).append(s)
        names = {"v(": "across (V, m/s)", "i(": "through (A, N)", "y(": "port outputs", "other": "signals"}
        n = len(groups) + (2 if balance else 0)
        fig, axes = plt.subplots(n, 1, sharex=True, figsize=(8, 2.4 * n), squeeze=False)
        for row, (kind, labels) in enumerate(groups.items()):
            ax = axes[row, 0]
            for s in labels:
                arr = self[s]
                ax.plot(self.t if arr.shape[0] == self.t.shape[0] else self.t_step, arr, label=s)
            ax.legend(loc="upper right")
            ax.set_ylabel(names[kind])
        if balance:
            a1, a2 = axes[len(groups), 0], axes[len(groups) + 1, 0]
            a1.plot(self.t_step, np.diff(self.H) / self.info["h"], label="dH/dt (discrete)")
            a1.plot(self.t_step, -self.P_diss, label="-P_diss")
            a1.plot(self.t_step, self.P_supplied, label="P_supplied")
            a1.legend(loc="best")
            a1.set_ylabel("power")
            a2.plot(self.t_step, self.balance)
            a2.set_ylabel("balance residual")
        axes[-1, 0].set_xlabel("t [s]")
        fig.tight_layout()
        if path is not None:
            fig.savefig(str(path))
        return fig

    def summary(self) -> str:
        """One line: steps, wall time, steps/s, max power-balance residual (numerical
        dissipation for backward Euler), Newton iterations, and whether the run
        started warm."""
        n = len(self.t_step)
        wall = self.info.get("wall_time", float("nan"))
        rate = n / wall if wall and wall > 0 else float("inf")
        # backward Euler's residual is its numerical dissipation (>= 0), not an error
        what = ("numerical dissipation" if self.info["scheme"] == "backward_euler"
                else "power-balance residual")
        text = (f"{self.names.name}: {n} steps ({self.info['scheme']}, {self.info['engine']}) in "
                f"{wall:.3g} s ({rate:.3g} steps/s), max {what} "
                f"{self.max_balance_error:.2e} (relative; "
                f"{float(np.max(np.abs(self.balance), initial=0.0)):.1e} W), "
                f"Newton iterations max {int(np.max(self.iterations, initial=0))}")
        if self.info.get("compile_time", 0.0) >= 0.05:
            text += f"; compiling or loading the loop took {self.info['compile_time']:.2g} s"
        if self.info.get("warm_start"):
            text += f"; warm start ({self.info.get('compiled', 'cached matrices')})"
        return text

    def __repr__(self) -> str:
        return f"<SimulationResult {self.summary()}>"
