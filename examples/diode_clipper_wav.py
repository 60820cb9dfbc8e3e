"""
Diode clipper to a WAV file
===========================

The clipper of ``netlists/diode_clipper.cir`` (2.2 kOhm, 10 nF, two
antiparallel diodes) driven by a 220 Hz sine whose amplitude rises from 0.1 V
to 4 V, simulated at 48 kHz with the discrete-gradient scheme (one Newton
solve per step), written to ``clipper.wav`` and plotted with its spectrum;
then the same input processed in 256-sample blocks, as an audio loop does.
"""
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy.io import wavfile

import phsym

try:
    NET = Path(__file__).resolve().parent.parent / "netlists"
except NameError:               # sphinx-gallery runs the file in examples/, without __file__
    NET = Path.cwd().parent / "netlists"

fs = 48_000
t = np.arange(int(0.5 * fs)) / fs
vin = np.linspace(0.1, 4.0, t.size) * np.sin(2 * np.pi * 220 * t)

model = phsym.load(NET / "diode_clipper.cir")
sim = phsym.Simulator(model, fs, method="discrete_gradient")
# align="samples": vin is a sampled signal; output sample k is the step ending
# at input sample k, so 24000 samples in give 24000 samples out
res = sim.run(u={"Vin": vin}, align="samples")
print(res.summary())

# %%
# The WAV file holds ``v(out)`` in volts (32-bit float): levels are physical,
# so two drive settings can be compared (``normalize=True`` scales the peak to 1).
out = Path(tempfile.mkdtemp()) / "clipper.wav"
res.to_wav(out, "v(out)")
rate, data = wavfile.read(out)
print(f"{out.name}: {rate} Hz, {data.size} samples ({vin.size} in), {data.dtype}, "
      f"peak {np.max(np.abs(data)):.3f} V")

# %%
# Block processing: a stream keeps the state (and Newton's history) between
# blocks, so 256-sample blocks give exactly the samples of the long run.
stream = sim.stream(signals=["v(out)"])
blocks = [stream.process(vin[k:k + 256]) for k in range(0, vin.size, 256)]
print("blocks equal the long run:", np.array_equal(np.concatenate(blocks), res["v(out)"]))

# %%
# Input and output over the whole sweep, a zoom on the last periods, and the
# spectrum of the last 0.1 s: the symmetric clipping adds odd harmonics of
# 220 Hz only.
vout = res["v(out)"]
ts = res.t_step
fig, ax = plt.subplots(3, 1, figsize=(7, 7))
ax[0].plot(t, vin, lw=0.5, label="v(in)")
ax[0].plot(ts, vout, lw=0.5, label="v(out)")
ax[0].set_xlabel("t [s]")
ax[0].legend(loc="upper left")
last = ts > ts[-1] - 0.01
ax[1].plot(ts[last], vin[last], label="v(in)")
ax[1].plot(ts[last], vout[last], label="v(out)")
ax[1].set_xlabel("t [s]")
seg = vout[ts > ts[-1] - 0.1]
spec = np.abs(np.fft.rfft(seg * np.hanning(seg.size)))
f = np.fft.rfftfreq(seg.size, 1 / fs)
ax[2].semilogy(f, spec / spec.max())
for k in range(1, 10):
    ax[2].axvline(220 * k, color="0.8", lw=0.5, zorder=0)
ax[2].set_xlim(0, 2500)
ax[2].set_ylim(1e-6, 2)
ax[2].set_xlabel("f [Hz]")
ax[2].set_ylabel("|V_out| (normalised)")
fig.tight_layout()
