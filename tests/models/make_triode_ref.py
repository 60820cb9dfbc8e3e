"""Regenerate ``triode_preamp_ngspice.npz`` and ``triode_volume_ngspice.npz``
(not run by CI; needs ngspice on PATH).

Run from this directory::

    ngspice -b triode_preamp_ngspice.cir && python make_triode_ref.py triode_preamp
    ngspice -b triode_volume_ngspice.cir && python make_triode_ref.py triode_volume

The ngspice decks are ``triode_preamp.cir`` and ``netlists/triode_volume.cir``
with the triode written as two B-sources carrying phsym's laws (Koren plate
current, grid current above 0.33 V, GMIN on both ports), and the volume
pot's halves as B-source conductances of ``time``.  Their adaptive time
points (at most 1/50 of the step) are interpolated linearly onto 401
uniform points over the run.
"""
import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main(name: str = "triode_preamp") -> None:
    raw = np.loadtxt(HERE / f"{name}_ngspice.txt", skiprows=1)
    names = ["g", "p", "k", "out"]
    t = np.linspace(0.0, raw[-1, 0], 401)
    v = np.array([np.interp(t, raw[:, 0], raw[:, 1 + i]) for i in range(len(names))])
    version = subprocess.run(["ngspice", "-v"], capture_output=True, text=True).stdout.splitlines()
    np.savez_compressed(HERE / f"{name}_ngspice.npz", t=t, names=np.array(names), v=v,
                        command=f"ngspice -b {name}_ngspice.cir",
                        ngspice=next((ln for ln in version if "ngspice" in ln.lower()), ""))


if __name__ == "__main__":
    import sys
    main(*sys.argv[1:2])
