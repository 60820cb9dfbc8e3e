"""Analyses besides a transient run, as SPICE's cards ask for them: the DC point they start from
(:mod:`.point`), the DC operating point (:mod:`.op`, ``phsym op``), DC sweeps (:mod:`.dcsweep`,
``phsym dc``), the DC transfer function (:mod:`.tf`, ``phsym tf``), the small-signal response
(:mod:`.ac`, ``phsym ac``) and a deck's ``.step``/``.temp`` runs (:mod:`.steps`)."""
