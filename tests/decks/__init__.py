"""The SPICE deck corpus (see corpus.py and README.md)."""
