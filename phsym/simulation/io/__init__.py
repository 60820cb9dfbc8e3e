"""Signals in and out of files: WAV at physical levels (:mod:`.audio`)."""
