"""Reference systems for tests and benchmarks.

* :func:`msd_chain`: the single mass-spring-damper chain of the
  port-Hamiltonian benchmark collection, as a :class:`~phsym.structure.LinearPHS`
  (:mod:`phsym.benchmarks.msd`);
* SPICE decks of circuits of any size that ngspice and phsym both read
  unmodified (:mod:`phsym.benchmarks.decks`): chains of TTL NAND gates
  (:func:`ttl_nand_chain`) and of RTL NOR gates and inverters
  (:func:`rtl_chain`), RC meshes (:func:`rc_mesh`) and Cockcroft-Walton
  diode-capacitor ladders (:func:`diode_ladder`); :data:`FAMILIES` lists them
  with their sizes, :func:`deck_size` counts a deck's elements and nodes
  without parsing it, and :func:`write_decks` writes decks named as the
  benchmarks' ``--decks`` arguments.

Names are imported on first use: the deck builders need neither numpy nor
sympy.
"""
from ..common.lazy import attach

__getattr__, __dir__ = attach(
    __name__, submodules=["msd", "decks"],
    attributes={"msd_chain": "msd", "ttl_nand_chain": "decks", "rtl_chain": "decks", "rc_mesh": "decks",
                "diode_ladder": "decks", "deck_size": "decks", "write_decks": "decks", "DeckSize": "decks", "Family": "decks",
                "FAMILIES": "decks"})

__all__ = ["msd_chain", "ttl_nand_chain", "rtl_chain", "rc_mesh", "diode_ladder", "deck_size", "write_decks", "DeckSize",
           "Family", "FAMILIES"]
