"""Pack ngspice's learned_clipper_{fit,heldout}.txt (48 kHz grid) into small .npz files.

Run after ``ngspice -b learned_clipper_fit.cir`` and ``ngspice -b learned_clipper_heldout.cir``
in this folder (ngspice-39); the .txt files are not committed.  Samples are float32 on the
uniform grid ``t = k / 48000`` (k = 0..N); the held-out record keeps its first 0.25 s.
"""
import numpy as np

for which, seconds in (("fit", 1.0), ("heldout", 0.25)):
    d = np.loadtxt(f"learned_clipper_{which}.txt", skiprows=1)
    assert np.allclose(np.diff(d[:, 0]), 1 / 48000.0, rtol=1e-6)
    n = int(round(seconds * 48000)) + 1
    np.savez_compressed(f"learned_clipper_{which}.npz", fs=48000.0, vin=d[:n, 1].astype(np.float32),
                        vout=d[:n, 2].astype(np.float32),
                        command=f"ngspice -b learned_clipper_{which}.cir (ngspice-39)")
