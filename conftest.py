"""pytest set-up shared by the doctests in phsym/ and the tests in tests/."""
import os

# No detached ahead-of-time compilers during tests (they would compete for the
# CI's two cores); tests/test_sim_warm.py builds one synchronously.
os.environ.setdefault("PHSYM_AOT", "0")
