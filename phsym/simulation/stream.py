"""Block processing: :class:`Stream` runs a plan block by block, as an audio loop does.

A stream keeps everything a run carries from one step to the next (the
state, and for the Newton loop its unknowns and predictor history), so the
samples of successive ``process`` calls are exactly those of one long run
with ``align="samples"`` over the concatenated blocks, whatever the block
sizes (tests/test_audio_io.py checks bit-identity).

Sample ``k`` of a block is the input at ``t_k``; output sample ``k`` is the
step that ends there.  Before the first sample the input is held at that
sample for one step, so ``n`` samples in give ``n`` samples out.
"""
from __future__ import annotations

from typing import Callable, List, Mapping, Optional, Sequence

import numpy as np

from ..errors import SimulationError, SimulationInputError
from .result import SimulationResult
from .signals import check_positive, initial_state, input_array

__all__ = ["Stream"]


class Stream:
    """Run a :class:`~phsym.simulation.plan.RunPlan` block by block.

    Made by :meth:`phsym.simulation.Simulator.stream` (or
    :meth:`RunPlan.stream`); not usually constructed directly.

    Parameters
    ----------
    plan : RunPlan
        The numbers of the run.
    x0 : None, array_like or dict
        Initial state (default: the netlist ICs, zero elsewhere).
    signals : sequence of str, optional
        Labels that :meth:`process` returns (``"v(out)"``, ``"y(V1)"``,
        ``"q_C1"``...); default: the first declared probe, else the outputs.
    dc : callable(u0) -> ndarray or (ndarray, dict), optional
        Initial state computed from the first input sample (a DC operating
        point), used instead of ``x0``; with a dict of Newton starts by
        unknown name (:meth:`NewtonLoop.carry`).
    check : callable(name, value), optional
        Raises for a control value outside its elements' domains (the
        simulator's check; a stream of a stored plan checks only finiteness).

    Attributes
    ----------
    signals : list of str
        The labels returned by :meth:`process`, in column order.
    samples : int
        Samples processed since the start (or the last :meth:`reset`).
    last : SimulationResult or None
        The run of the last block (its grid starts one step before the
        block's first sample): energy balance, Newton iterations, any signal.

    Examples
    --------
    >>> import numpy as np, phsym
    >>> sim = phsym.Simulator(phsym.parse("V1 in 0\\nR1 in out 1k\\nC1 out 0 1u\\n.probe v(out)\\n"), 48000)
    >>> s = sim.stream()
    >>> y = np.concatenate([s.process(np.ones(64)) for _ in range(4)])
    >>> y.shape, s.samples
    ((256,), 256)
    """

    def __init__(self, plan, x0=None, signals: Optional[Sequence[str]] = None,
                 dc: Optional[Callable[[np.ndarray], np.ndarray]] = None,
                 check: Optional[Callable[[str, float], None]] = None):
        self.plan = plan
        self._check = check
        names = plan.summary
        if signals is None:
            signals = [names.probes[0].label] if names.probes else list(names.outputs)
        elif isinstance(signals, str):
            signals = [signals]
        self.signals: List[str] = [str(s) for s in signals]
        if not self.signals:
            raise SimulationInputError("a stream needs at least one signal to return")
        self._x0, self._dc = x0, dc
        self._carry = None
        self.reset()

    def reset(self, x0=None) -> None:
        """Start again from the initial state (or from ``x0``).

        Parameters
        ----------
        x0 : None, array_like or dict
            New initial state (default: the one the stream was made with).
        """
        if x0 is not None:
            self._x0, self._dc = x0, None
        self._x, self._desc = initial_state(self.plan.x_ic, self.plan.x_ic_desc, self.plan.summary.states,
                                            None if self._dc is not None else self._x0)
        self._carry = self.plan.loop.carry()
        self._u_prev: Optional[np.ndarray] = None
        # controls not given in a block hold their last value (at first: the parameter's)
        self._held = [float(self.plan.values[c]) for c in self.plan.summary.controls]
        self._broken: Optional[SimulationError] = None
        self.samples = 0
        self.last: Optional[SimulationResult] = None

    @property
    def state(self) -> np.ndarray:
        """The state after the last processed sample (a copy)."""
        return np.array(self._x)

    @property
    def time(self) -> float:
        """Time of the next sample, in seconds."""
        return self.samples * self.plan.h

    def process(self, block, controls: Optional[Mapping[str, object]] = None) -> np.ndarray:
        """Run the samples of one block; returns the signals at those samples.

        Parameters
        ----------
        block : array_like or dict
            Input samples: an array ``(n,)`` (one input) or ``(n, n_u)`` in
            input order, or a dict name -> array / number / callable(t);
            inputs not given follow their netlist waveform (or zero) at the
            stream's time.
        controls : dict, optional
            Control signals over the block by name (array of the block's
            length, number or callable(t)); a control not given holds its
            last value (a potentiometer turned between blocks).

        Returns
        -------
        ndarray
            ``(n,)`` for one signal, else ``(n, len(signals))``.

        Raises
        ------
        SimulationError
            A step failed (the message gives the sample counted from the
            start of the stream); the stream must be :meth:`reset` after it.
        """
        if self._broken is not None:
            raise SimulationError(f"the stream stopped at a failed step ({self._broken}); call reset() first")
        plan = self.plan
        n = None
        if not isinstance(block, Mapping):
            block = np.asarray(block, dtype=float)
            if block.ndim == 1 and len(plan.summary.inputs) != 1:
                raise SimulationInputError(f"a 1-D block needs a model with one input; this one has "
                                           f"{plan.summary.inputs}: give (samples, inputs) or a dict")
            if block.shape[0] == 0:
                return np.zeros((0,) if len(self.signals) == 1 else (0, len(self.signals)))
        else:
            lens = [len(v) for v in block.values() if not callable(v) and np.ndim(v) == 1]
            n = min(lens) if lens else None
            if n is None:
                raise SimulationInputError("a dict block needs at least one input array (its length is the block's)")
        S = input_array(plan.summary.inputs, block, n, plan.h, plan._waveform, first=self.samples)
        check_positive(S, plan.summary.inputs, plan.summary.positive, plan.h, first=self.samples)
        if plan.summary.controls:
            held = lambda i, t: np.full(t.shape, self._held[i])      # noqa: E731
            C = input_array(plan.summary.controls, controls, S.shape[0], plan.h, held, first=self.samples,
                            what="control")
            if self._check is not None and controls:
                for j, name in enumerate(plan.summary.controls):
                    for v in {float(C[:, j].min()), float(C[:, j].max())}:
                        self._check(name, v)
            S = np.hstack([S, C])
        elif controls:
            plan.control_rows(controls, 0)      # names the error: no controls in this model
        if self._dc is not None and self.samples == 0:
            found = self._dc(S[0, :len(plan.summary.inputs)])
            x, start = found if isinstance(found, tuple) else (found, None)
            self._x = np.asarray(x, dtype=float).copy()
            if start:
                self._carry = plan.loop.carry(start)
            self._desc = "dc operating point for the first input sample"
        elif self.samples == 0:
            # Newton's start as Simulator.run takes it (laws singular at zero ports, the numeric engine's potentials)
            start = plan.newton_start(self._x, S[0, :len(plan.summary.inputs)])
            if start:
                self._carry = plan.loop.carry(start)
        U = np.vstack([S[:1] if self._u_prev is None else self._u_prev[None, :], S])
        try:
            A, wall = plan.loop.run(self._x, U, plan.h, True, carry=self._carry)
        except SimulationError as exc:
            if isinstance(exc, SimulationInputError) or exc.step is None:
                raise
            k = self.samples + exc.step
            self._broken = SimulationError(exc.message, k, k * plan.h, exc.quantity)
            raise self._broken from None
        t = (self.samples - 1 + np.arange(U.shape[0])) * plan.h
        info = {"h": plan.h, "fs": plan.fs, "scheme": plan.scheme, "engine": plan.loop.KIND, "x0": self._desc,
                "values": dict(plan.values), "key": plan.loop.key, "compiled": plan.loop.compiled,
                "wall_time": wall, "compile_time": plan.loop.compile_time,
                "failed_steps": int(np.count_nonzero(A.FL)), "align": "samples", "stream_start": self.samples}
        if getattr(plan.loop, "stiff", None):
            info["stiff"] = plan.loop.stiff
        sub = getattr(plan.loop, "subdivided", {})
        if sub:     # steps that needed sub-steps, counted from the start of the stream
            info["subdivided"] = {self.samples + k: n for k, n in sub.items()}
        n_u = len(plan.summary.inputs)
        ctl = {c: U[:, n_u + j] for j, c in enumerate(plan.summary.controls)}
        self.last = SimulationResult(plan.model, plan.summary, t, A.X, U[:, :n_u], A.Y, A.Hh, A.Pd, A.Ps, A.IT,
                                     A.FL, A.E, plan.probe_vector, info, controls=ctl,
                                     P_control=A.Pc if ctl else None,
                                     P_num=A.Pn if getattr(plan.loop, "numerical", False) else None)
        self._u_prev = S[-1].copy()
        self._held = [float(v) for v in S[-1, n_u:]]
        self.samples += S.shape[0]
        cols = [np.asarray(self.last[s], dtype=float)[-S.shape[0]:] for s in self.signals]
        return cols[0] if len(cols) == 1 else np.column_stack(cols)
