"""A deck's generated Newton loop for the tools that time or edit it (profile_step, loop_floor, bench_module_ab).

phsym is imported inside the functions: a tool may set ``NUMBA_CACHE_DIR``
before numba is first imported.
"""
from __future__ import annotations

import warnings


def newton_simulator(deck: str, fs: float, tool: str):
    """The simulator of ``deck`` at ``fs`` and its DC state, or a one-line exit naming ``tool``.

    The tools read and replace the simulator's generated step module, so the deck must step
    through a Newton loop (a nonlinear element, or a control).
    """
    import phsym
    from phsym.errors import PhsymError
    warnings.simplefilter("ignore")
    try:
        sim = phsym.Simulator(phsym.load(deck), fs=fs)
        if sim._gen is None or getattr(sim._gen.module, "KIND", "") != "newton":
            raise SystemExit(f"{tool}: {deck} steps through the linear engine: it has no Newton loop to measure")
        return sim, sim.run(duration=1 / fs, x0="dc").x[0]
    except PhsymError as exc:
        raise SystemExit(f"{tool}: {exc}")


def use_module(sim, module) -> None:
    """Make ``sim`` step with ``module`` (a generated module, or anything with its ``run``)."""
    sim._gen.module = module
    for plan in sim._plans.values():
        plan.loop.module = module
