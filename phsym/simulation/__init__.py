"""Simulation of phsym models with structure-preserving schemes.

``Simulator(model, fs, method)`` compiles (or loads from the cache) the step
of a discrete-gradient, midpoint or backward-Euler scheme and runs it;
:func:`simulate` does it in one call (with warm starts of netlist files);
:class:`SimulationResult` holds the arrays with the discrete power balance;
:func:`operating_point` is the DC operating point (``phsym op``),
:func:`dc_sweep` SPICE's ``.dc`` (``phsym dc``), :func:`transfer_function` its
``.tf`` (``phsym tf``) and :func:`ac_analysis` the small-signal response
(``phsym ac``);
:class:`Stream` processes audio block by block (``Simulator.stream``) and
:func:`read_wav` / :func:`write_wav` move WAV files in and out at physical levels;
:func:`sweep` runs many parameter sets (:func:`grid`, :func:`sampling`) on
every core or a dask cluster into a :class:`SweepResult`;
:func:`entropy_balance` books the entropy of a run with thermal elements;
:func:`load_result` reads a run saved as ``.npz`` back as data;
:func:`export_c` / :func:`export_lv2` write the generated loop as a C99 library or an LV2 plugin
(``phsym export``, docs/realtime.md).
"""
from ..common.lazy import attach

__all__ = ["Simulator", "SimulationResult", "simulate", "RunPlan", "operating_point", "OperatingPoint",
           "ac_analysis", "AcResult", "dc_sweep", "DcResult", "transfer_function", "TfResult", "Stream", "read_wav", "write_wav", "sweep", "grid", "sampling",
           "SweepResult", "entropy_balance", "load_result", "SavedResult", "export_c", "export_lv2"]

# the symbolic simulator imports sympy and scipy: only on first use
__getattr__, __dir__ = attach(__name__, attributes={
    "Simulator": "simulator", "SimulationResult": "result", "simulate": "run", "RunPlan": "plan",
    "operating_point": "analyses.op", "OperatingPoint": "analyses.op",
    "ac_analysis": "analyses.ac", "AcResult": "analyses.ac", "dc_sweep": "analyses.dcsweep",
    "DcResult": "analyses.dcsweep", "transfer_function": "analyses.tf", "TfResult": "analyses.tf", "Stream": "stream", "read_wav": "io.audio",
    "write_wav": "io.audio", "sweep": "sweeps.api", "grid": "sweeps.params", "sampling": "sweeps.params",
    "SweepResult": "sweeps.result", "entropy_balance": "thermal",
    "load_result": "io.saved", "SavedResult": "io.saved", "export_c": "export", "export_lv2": "export"})
