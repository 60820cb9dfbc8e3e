"""Grey-box fit of a diode's junction charge (CJO and TT) from a simulated waveform.

Run from the repository root::

    PYTHONPATH=. python benchmarks/fit_diode_charge.py

+-5 V pulses through 1k into a diode with CJO = 50p and TT = 5n (backward
Euler, 200 MHz, 4 us); ``ParameterEstimator`` fits CJO and TT to v(a) from
30p and 8n.  The sensitivities differentiate the junction charge's energy
``H = Q v(Q) - Phi(v(Q))`` through the parameter derivatives of
``phsym.components.junction.JunctionVoltage``/``JunctionEnergy``.
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import phsym  # noqa: E402
from phsym.identify import ParameterEstimator  # noqa: E402

NET = (".model DSW D(IS=1e-14 N=1 CJO=50p VJ=0.7 M=0.5 FC=0.5 TT=5n)\n"
       "V1 in 0 PULSE(-5 5 0 10n 10n 1u 2u)\nR1 in a 1k\nD1 a 0 DSW\n")


def main() -> None:
    warnings.simplefilter("ignore")
    m = phsym.parse(NET)
    res = phsym.Simulator(m, 2e8, "backward_euler").run(duration=4e-6)
    t0 = time.perf_counter()
    est = ParameterEstimator(m, ["DSW.Cjo", "DSW.Tt"], ["v(a)"],
                             initial={"DSW.Cjo": 30e-12, "DSW.Tt": 8e-9}).fit(res)
    wall = time.perf_counter() - t0
    print(f"fitted {est.params_} (true CJO = 5e-11, TT = 5e-09) in {wall:.1f} s")


if __name__ == "__main__":
    main()
