"""Compatibility: the WAV functions live in :mod:`phsym.simulation.io.audio`.

``phsym.simulation.read_wav`` / ``write_wav`` are the public names; this
module keeps ``from phsym.simulation.audio import read_wav, write_wav``
(the import the documentation showed before the move) working.
"""
from .io.audio import WAV_FORMATS, read_wav, write_wav

__all__ = ["read_wav", "write_wav", "WAV_FORMATS"]
