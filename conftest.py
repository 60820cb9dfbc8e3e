"""pytest set-up shared by the doctests in phsym/ and the tests in tests/."""
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

# No detached ahead-of-time compilers during tests (they would compete for the
# CI's two cores); tests/test_sim_warm.py builds one synchronously.
os.environ.setdefault("PHSYM_AOT", "0")
# Generated loops run as Python (phsym.codegen.interpret), the shared kernels they call compiled (once
# per machine): a per-circuit numba compile costs 10-150 s under load, a short interpreted run a second.
# Tests marked ``compiled`` (and their children, which inherit the environment) compile;
# ``PHSYM_JIT=1`` compiles everything, ``PHSYM_JIT=0`` runs the kernels as Python too.
os.environ.setdefault("PHSYM_JIT", "loop")

import pytest  # noqa: E402

#: Generated law kernels that ``phsym cache build --package`` (or a first run's background build)
#: stores in the package: modules to load by their key, not to collect for doctests (one written
#: before a change of the kernels' calling convention does not even import).
collect_ignore_glob = ["phsym/codegen/laws/_library/*"]

#: The xdist worker that compiles the numeric engine for the whole run; the others run their tests
#: meanwhile and wait for it only when one of their tests needs the engine.
COMPILER = "gw0"
_held = []          # the compiling worker's lock file, while it compiles
_waited = []        # another worker: it has waited once
_collected = []     # another worker: its collection is done (gw0 compiles only after everyone's)


def _lock_path(config) -> str:
    return os.path.join(tempfile.gettempdir(), f"phsym-engine-{config.workerinput['testrunuid']}.lock")


def _wait_for_compiler(path: str) -> None:
    """Block until the compiling worker has released its lock (once per process; not while this
    worker collects: the compiling worker's first test waits for every worker's collection).
    A test of a file listed in :data:`ENGINE_FREE` fails here: the list would be wrong."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[0]
    if test in ENGINE_FREE:
        pytest.fail(f"{test} is listed in conftest.ENGINE_FREE (files that simulate nothing, run while "
                    f"{COMPILER} compiles the numeric engine) but needs the engine or starts a Python "
                    "child: take it off the list", pytrace=False)
    if _waited or not _collected:
        return
    _waited.append(path)
    t0 = time.perf_counter()
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_SH)
        fcntl.flock(f, fcntl.LOCK_UN)
    waited = time.perf_counter() - t0
    if waited > 1.0:
        print(f"\n[waited {waited:.0f} s for {COMPILER}'s compile of the numeric engine]")


def pytest_configure(config):
    """Under xdist, one worker compiles the engine (holding a lock from its start, so no test of
    another worker can come first); the others take the engine from the shared numba cache, and
    wait for it only where a test would compile it, ask whether it is compiled, or start a Python
    child (which would find the cache without it)."""
    worker = getattr(config, "workerinput", None)
    if worker is None:
        if hasattr(config.option, "loadscopereorder"):
            config.option.loadscopereorder = False      # the workers' order (pytest_collection_modifyitems)
        return
    path = _lock_path(config)
    if os.environ.get("PYTEST_XDIST_WORKER") == COMPILER:
        f = open(path, "a")
        fcntl.flock(f, fcntl.LOCK_EX)
        _held.append(f)
        return
    from numba.core import dispatcher
    from phsym.simulation.engines.numeric.loop import NumericLoop
    compile_for_args = dispatcher.Dispatcher._compile_for_args
    ready = NumericLoop.ready

    def _compile_for_args(self, *args, **kws):
        if getattr(self.py_func, "__module__", "").startswith("phsym.simulation.engines.numeric."):
            _wait_for_compiler(path)
        return compile_for_args(self, *args, **kws)

    def _ready():
        _wait_for_compiler(path)
        return ready()
    popen = subprocess.Popen.__init__

    def _popen(self, args, *a, **k):
        if isinstance(args, (list, tuple)) and args and str(args[0]) == sys.executable:
            _wait_for_compiler(path)
        popen(self, args, *a, **k)
    dispatcher.Dispatcher._compile_for_args = _compile_for_args
    NumericLoop.ready = staticmethod(_ready)
    subprocess.Popen.__init__ = _popen


#: Files that simulate nothing, run first under xdist: one worker runs them while gw0 compiles the
#: numeric engine (its first files were engine tests, which waited for that compile: 35 s idle).
#: xdist's loadfile schedule gives gw0 the first and third files and gw1 the second and fourth, then
#: the next file to whichever is free: two short files first for gw0, whose first test compiles the
#: engine (14 s), and the long ones after them for gw1 (before, gw0 took the 7 s of
#: test_structure_netlists.py after its compile while gw1, done with the rest, waited for the engine).
ENGINE_FREE = ("tests/test_netlist_parser.py", "tests/test_structure_netlists.py", "tests/test_netlist_numbers.py",
               "tests/test_structure_fuzz.py", "tests/test_netlist_fuzz.py", "tests/test_diode_charge.py",
               "tests/test_netlist_expressions.py", "tests/test_netlist_malformed.py", "tests/test_docstrings.py",
               "tests/test_docs_site.py", "tests/test_spice_wild_syntax.py", "tests/test_netlist_waveforms.py",
               "tests/test_switch_hysteresis.py", "tests/test_common_symbolic.py")


#: Measured seconds of each file's tests in a full run (``tests/file_seconds.json``, written by
#: ``tests/file_seconds.py`` from a run's ``--durations=0`` report); a file it lacks counts
#: :data:`SECONDS_PER_TEST` a test.
FILE_SECONDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests", "file_seconds.json")
SECONDS_PER_TEST = 0.5


def file_costs(files) -> dict:
    """Each file's expected seconds: :data:`FILE_SECONDS`'s measurement, else its number of tests
    times :data:`SECONDS_PER_TEST`."""
    with open(FILE_SECONDS) as f:
        seconds = json.load(f)["seconds"]
    count = Counter(files)
    return {name: seconds.get(name, SECONDS_PER_TEST * n) for name, n in count.items()}


def pytest_collection_modifyitems(config, items):
    """Under xdist (``--dist loadfile``), :data:`ENGINE_FREE` first, then the other files longest
    first (their measured seconds, :func:`file_costs`), so that the run ends on short files instead of
    one worker idling while the other finishes a long one; the controller turns pytest-xdist's own
    reordering (most tests first) off (:func:`pytest_configure`) so that this order is the schedule's."""
    if getattr(config, "workerinput", None) is None:
        return
    files = [item.nodeid.split("::")[0] for item in items]
    cost = file_costs(files)
    rank = {name: i for i, name in enumerate(ENGINE_FREE)}
    order = {id(item): (rank.get(f, len(rank)), 0.0 if f in rank else -cost[f], f)
             for item, f in zip(items, files)}
    items.sort(key=lambda item: order[id(item)])       # stable: each file's tests stay together, in order


def pytest_collection_finish(session):
    _collected.append(True)


def _release():
    """The compiling worker's lock, released (after its compile, or at its end without tests)."""
    while _held:
        f = _held.pop()
        fcntl.flock(f, fcntl.LOCK_UN)
        f.close()


def pytest_unconfigure(config):
    _release()


@pytest.fixture(scope="session", autouse=True)
def _numeric_engine_compiled(request):
    """engine="auto" runs a small circuit on its own generated loop until the numeric engine is
    compiled on the machine; compile it first, so that every test meets the same rule (the one a
    user meets from the second circuit on).  Under xdist only :data:`COMPILER` compiles it: the
    engine compiled twice cost a minute of the two cores."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is not None and worker != COMPILER:
        return
    from phsym.simulation.engines.numeric.warmup import warm
    try:
        warm()
    finally:
        _release()


def _compiled(node) -> bool:
    return node.get_closest_marker("compiled") is not None


@pytest.fixture(scope="module", autouse=True)
def _jit_of_the_module(request):
    """A module marked ``compiled`` builds its module-scoped fixtures compiled too."""
    if _compiled(request.node):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("PHSYM_JIT", "1")
            yield
    else:
        yield


@pytest.fixture(autouse=True)
def _jit(request, monkeypatch):
    """Tests marked ``compiled`` compile their generated loops (numba), as users' runs do."""
    if _compiled(request.node):
        monkeypatch.setenv("PHSYM_JIT", "1")
