"""pytest set-up shared by the doctests in phsym/ and the tests in tests/."""
import os

# No detached ahead-of-time compilers during tests (they would compete for the
# CI's two cores); tests/test_sim_warm.py builds one synchronously.
os.environ.setdefault("PHSYM_AOT", "0")

import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _numeric_engine_compiled():
    """engine="auto" runs a small circuit on its own generated loop until the numeric engine is
    compiled on the machine; compile it first, so that every test meets the same rule (the one a
    user meets from the second circuit on)."""
    from phsym.simulation.engines.numeric.warmup import warm
    warm()
