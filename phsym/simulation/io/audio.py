"""WAV files in and out at physical levels.

Reading maps integer formats to ``[-1, 1)`` (8-bit is unsigned with 128 as
zero, the RIFF convention) and keeps every channel.  Writing keeps the
simulated values as they are (volts, amperes...) in a float WAV by default,
so two runs can be compared by level; peak normalisation is an option, and
an integer format clips what exceeds full scale with a
:class:`~phsym.errors.ClippingWarning`.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Tuple, Union

import numpy as np

from ...errors import ClippingWarning, DataFileError, SimulationError

__all__ = ["read_wav", "write_wav", "WAV_FORMATS"]

#: Sample formats :func:`write_wav` writes (name -> numpy type).
WAV_FORMATS = {"float32": np.float32, "float64": np.float64, "int16": np.int16, "int32": np.int32}


def read_wav(path: Union[str, Path]) -> Tuple[int, np.ndarray]:
    """Read a WAV file as floats.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.

    Returns
    -------
    (int, ndarray (n, channels))
        Sample rate in Hz and the samples (float WAVs as stored, integer
        WAVs scaled to ``[-1, 1)``).

    Raises
    ------
    DataFileError
        The file is missing, not a WAV file, or holds non-finite samples.
    """
    from scipy.io import wavfile
    try:
        with warnings.catch_warnings():     # unknown chunks (metadata) are skipped: nothing to report
            warnings.simplefilter("ignore", wavfile.WavFileWarning)
            rate, data = wavfile.read(str(path))
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such file") from None
    except (ValueError, OSError, EOFError) as exc:
        raise DataFileError(f"{path}: not a readable WAV file ({exc})") from None
    data = np.asarray(data)
    if data.dtype.kind == "u":      # 8-bit WAV: unsigned, 128 is zero
        half = (float(np.iinfo(data.dtype).max) + 1.0) / 2.0
        data = (data.astype(float) - half) / half
    elif data.dtype.kind == "i":    # full scale -1 .. 1 - 2**-(bits-1)
        data = data.astype(float) / -float(np.iinfo(data.dtype).min)
    data = np.asarray(data, dtype=float)
    if data.ndim == 1:
        data = data[:, None]
    bad = np.argwhere(~np.isfinite(data))
    if bad.size:
        k, c = (int(v) for v in bad[0])
        raise DataFileError(f"{path}: sample {k} of channel {c + 1} is {data[k, c]}")
    return int(rate), data


def write_wav(path: Union[str, Path], data, fs: float, normalize: bool = False,
              format: str = "float32") -> Path:
    """Write samples to a WAV file.

    Parameters
    ----------
    path : str or pathlib.Path
        Destination.
    data : array_like (n,) or (n, channels)
        Samples at their physical level.
    fs : float
        Sample rate in Hz (rounded to an integer, as WAV stores it).
    normalize : bool
        Scale so that the peak over all channels is 1 (default: write the
        values as they are).
    format : {"float32", "float64", "int16", "int32"}
        Sample format.  Integer formats map ``[-1, 1)`` to full scale and
        clip beyond it, with a :class:`~phsym.errors.ClippingWarning`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    SimulationError
        Non-finite samples (nothing is written) or an unknown format.
    """
    from scipy.io import wavfile
    if format not in WAV_FORMATS:
        raise SimulationError(f"unknown WAV format {format!r}: use one of {sorted(WAV_FORMATS)}")
    x = np.asarray(data, dtype=float)
    if x.ndim not in (1, 2):
        raise SimulationError(f"WAV data must be (samples,) or (samples, channels), not {x.shape}")
    bad = np.argwhere(~np.isfinite(x.reshape(x.shape[0], -1)))
    if bad.size:
        raise SimulationError(f"{path}: sample {int(bad[0][0])} is not finite; nothing written")
    if normalize:
        peak = np.max(np.abs(x), initial=0.0)
        if peak > 0:
            x = x / peak
    kind = WAV_FORMATS[format]
    if np.issubdtype(kind, np.integer):
        full = -float(np.iinfo(kind).min)
        over = np.abs(x) > 1.0
        if over.any():
            warnings.warn(f"{path}: {int(over.sum())} sample(s) beyond full scale (peak "
                          f"{np.max(np.abs(x)):.4g}) clipped in the {format} file; write float32 to keep "
                          f"the level, or normalize=True", ClippingWarning, stacklevel=2)
        x = np.clip(np.round(x * full), -full, full - 1).astype(kind)
    else:
        x = x.astype(kind)
    wavfile.write(str(path), int(round(fs)), x)
    return Path(path)
