"""Decks as they exist in the wild (tests/decks/wild), first half: each runs unmodified as the CLI
runs it and matches its ngspice-39 reference (tests/decks/wild_corpus.py says what and how)."""
from tests.decks import wild_corpus as wild

globals().update(wild.deck_tests(wild.group(0, 2)))


def test_warm_start_of_a_dc_start_begins_newton_where_the_cold_run_did():
    # the uA741 macromodel's first step does not converge from zero port variables: a warm start
    # (the stored plan) must start Newton from the stored DC solution, as the cold run did; the
    # generated loop's plans are the ones stored (the numeric engine's are rebuilt from the netlist)
    import numpy as np
    from tests.decks import corpus
    path = wild.WILD / "ua741_inverting.cir"
    first, second = corpus.run_deck(path, engine="generated"), corpus.run_deck(path, engine="generated")
    assert second.info.get("warm_start")
    np.testing.assert_array_equal(first.x, second.x)
