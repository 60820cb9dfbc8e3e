"""Analyses besides a transient run: the DC operating point (:mod:`.op`,
``phsym op``) and the small-signal response there (:mod:`.ac`, ``phsym ac``)."""
