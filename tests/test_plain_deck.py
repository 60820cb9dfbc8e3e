"""The cold path (phsym.netlist.plain, phsym.simulation.cold): a deck of plain parts is read without sympy
as the symbolic reader reads it, runs on the numeric engine with the symbolic path's file to the byte,
and every deck the cold path cannot take gives the symbolic path's result or error."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.errors import PhsymError
from phsym.netlist import load_netlist, plain_kinds
from phsym.netlist.plain import NotPlain, read_plain
from phsym.simulation import cold
from phsym.simulation.engines.choice import fingerprint, plain_fingerprint
from phsym.simulation.plancache import FixedParts
from phsym.simulation.run import simulate
from phsym.structure.circuit import kinds

ROOT = Path(__file__).resolve().parent.parent
PLAIN = ["diode_clipper.cir", "rlc.cir", "dc_network.cir", "c_parallel_v.cir"]

# inline decks: literal values, values on a diode's line, DC and PULSE sources, node spellings, no .probe
DECKS = {
    "literal.cir": ".title literal values\nV1 IN 0 DC 2\nR1 in Out 1k\nC1 out 0 10n\nD1 out 0 IS=1n N=2\n",
    "pulse.cir": "* a pulse\n.param r=1k\n.model dm d(is=1e-12 cj0=1p m=0.4)\nI1 0 a PULSE(0 1m 1u 0 0 5u 10u)\n"
                 "R1 a 0 r\nDX a 0 dm RS=2\nV2 b 0 SIN(0 1 1K 1M)\nR2 b 0 1\n.probe v(a) i(DX) v(a,0)\n",
}


def _write(tmp_path, name):
    if name in DECKS:
        path = tmp_path / name
        path.write_text(DECKS[name])
        return path
    return ROOT / "netlists" / name


def test_the_kinds_declarations_equal_the_registry():
    from phsym.components import REGISTRY
    assert set(plain_kinds.PLAIN_KINDS) == set(kinds.KINDS)
    for name, decl in plain_kinds.PLAIN_KINDS.items():
        cls = REGISTRY[name]
        assert decl == plain_kinds.PlainKind(
            cls.kind, len(cls.terminals),
            tuple(plain_kinds.PlainValue(v.key, v.default, v.check, v.main, v.optional, v.model_key, tuple(v.aliases))
                  for v in cls.values), cls.model, tuple(f.key for f in cls.laws), bool(cls.ic), bool(cls.source))
        # what a plain line never has: structural values, choices, references, extra terminals, behavioural forms
        assert not any(v.structural for v in cls.values) and not cls.choices and not cls.refs
        assert not cls.optional_terminals and not getattr(cls, "behavioral", ()) and not cls.grounded
    assert plain_kinds.LETTERS == {k: c.kind for k, c in REGISTRY._letters.items()}
    assert plain_kinds.KEYWORDS == {k.lower() for k in REGISTRY.all_keywords()}
    for t, kind in plain_kinds.MODEL_TYPES.items():
        assert [c.kind for c in REGISTRY.by_model(t)] == [kind]


@pytest.mark.parametrize("name", PLAIN + list(DECKS))
def test_a_plain_deck_reads_as_the_symbolic_reader_reads_it(name, tmp_path):
    _compare(_write(tmp_path, name))


def _random_deck(rng) -> str:
    """A plain deck of a few random elements (names, node spellings, numbers, models, sources, probes)."""
    nodes = ["0", "a", "B", "n1", "gnd", "Out"]
    num = lambda: f"{rng.uniform(0.5, 9.9):.3g}{rng.choice(['', 'k', 'm', 'u', 'n', 'meg', 'p'])}"    # noqa: E731
    lines = ["* random plain deck", ".param pa=" + num() + " PB=" + num()]
    if rng.random() < 0.5:
        lines.append(".model dm D(IS=" + num() + rng.choice(["", " N=1.5", " rs=3 CJ=1p", " bv=5 ibv=1m tt=1n"]) + ")")
    lines.append("V1 a 0 " + rng.choice(["", "3", "DC pa", "SIN(0 1 1k)", "sin(pb 2 50 1m)",
                                                                  "PULSE(0 1 0 0 0 1m 2m)", "pulse(-1 1)"]))
    for k in range(int(rng.integers(2, 6))):
        a, b = rng.choice(nodes, 2, replace=False)
        if {a, b} == {"0", "gnd"}:     # shorted: the symbolic reader warns (tested above)
            continue
        kind = rng.choice(["R", "C", "L", "D", "I"])
        if kind == "D":
            value = rng.choice(["dm", "IS=" + num(), "is=1n N=2 RS=" + num()]) if any("dm" in ln for ln in lines) \
                else "IS=" + num()
        elif kind == "I":
            value = rng.choice(["", num(), "SIN(0 1m 100)"])
        else:
            value = rng.choice([num(), "pa", "pb", "PA", f"{kind}={num()}"])
        lines.append(f"{kind}{k} {a} {b} {value}")
    lines.append(".probe " + " ".join(rng.choice(["v(a)", "v(A,0)", "i(V1)", "v(A)", "i(v1)"], 2)))
    return "\n".join(lines) + "\n.end\n"


def test_random_plain_decks_read_as_the_symbolic_reader_reads_them(tmp_path):
    rng = np.random.default_rng(38)
    read = 0
    for i in range(30):
        path = tmp_path / f"r{i}.cir"
        path.write_text(_random_deck(rng))
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                load_netlist(str(path))
        except PhsymError:      # a deck the symbolic reader refuses is not plain either
            seen = [True]
        if any(w is True or issubclass(w.category, phsym.NetlistWarning) for w in seen):
            with pytest.raises(NotPlain):       # nor one it warns about (shorted elements, M for milli)
                read_plain(path)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the graph's (dangling nodes): the cold path's graph gives them too
            try:
                phsym.load(str(path))
            except PhsymError:      # the graph's error (kinds.assemble raises it on the cold path too)
                continue
            _compare(path)
        read += 1
    assert read >= 20


def _compare(path):
    """``read_plain`` gives what the symbolic reader gives of the deck at ``path``."""
    deck = read_plain(path)
    model = phsym.load(str(path))
    nl = model.netlist
    values = model.parameter_values(None)
    assert deck.name == model.name and deck.file == nl.file
    assert deck.parameters == {n: p.default for n, p in nl.parameters.items()}
    assert list(deck.parameters) == list(nl.parameters)
    assert deck.probes == [p.label for p in model.probes] and deck.saved == nl.outputs()
    want = []
    for s in nl.elements:
        wave = None if s.waveform is None else FixedParts.wave(s.waveform, values)
        want.append((s.name, s.kind, s.nodes, {k: float(v.xreplace(values)) for k, v in s.values.items()},
                     {k: str(v) for k, v in s.values.items()},
                     None if wave is None else (wave[0], tuple(wave[1].tolist()))))
    assert [(e.name, e.kind, e.nodes, e.values, e.params, e.waveform) for e in deck.elements] == want
    for scheme in ("discrete_gradient", "midpoint"):
        assert plain_fingerprint(deck, scheme, "scheme") == fingerprint(model, scheme, "scheme")


@pytest.mark.parametrize("text", [
    ".param a=1k b={2*a}\nV1 x 0 1\nR1 x 0 b\n",         # an expression
    ".param a=1k\nV1 x 0 1\nR1 x 0 {a}\n",              # braces
    "V1 x 0 1\nR1 x 0 1k\nC1 x 0 H={q^2}\n",            # a law
    "V1 x 0 1\nR1 x 0 1k\nC1 x 0 1u IC=1\n",            # an initial condition
    "V1 x 0 1\nR1 x 0 1k\nM1 x 0 mass m=1\n",           # another kind
    "V1 x 0 1\nR1 x 0 mass\n",                          # a kind keyword
    "V1 x 0 1\nR1 x 0 1k\n.tran 1u 1m\n",               # a control card
    "V1 x 0 1\nR1 x 0 1k\nR2 x x 1k\n",                 # both terminals on one node (a warning)
    "V1 x 0 SIN(0 1 1k) AC 1\nR1 x 0 1k\n",             # AC next to a waveform
    "V1 x 0 1\nR1 x 0 1k\n.model dm d(is=1n tnom=50)\nD1 x 0 dm\n",      # a thermal .model value
    "V1 x 0 1\nR1 x 0 1M\n",                            # a warning (M is milli)
    "Title line\nV1 x 0 1\nR1 x 0 1k\n",                # line 1: the symbolic reader decides
])
def test_other_decks_are_not_plain(text, tmp_path):
    path = tmp_path / "deck.cir"
    path.write_text("* deck\n" + text if not text.startswith("Title") else text)
    with pytest.raises(NotPlain):
        read_plain(path)


@pytest.fixture
def own_cache(monkeypatch, tmp_path):
    """A cache of this test's own, no package library: only what this test's symbolic builds record."""
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(kinds.library, "LIBRARY", tmp_path / "no-library")
    monkeypatch.setattr(kinds, "_RECORDED", set())
    monkeypatch.delenv("PHSYM_ENGINE", raising=False)
    return tmp_path / "cache"


def _symbolic(monkeypatch, path, **kw):
    monkeypatch.setenv(cold.PLAIN_ENV, "0")
    try:
        return simulate(str(path), 48000.0, duration=5e-3, warm_start=False, **kw)
    finally:
        monkeypatch.delenv(cold.PLAIN_ENV)


def _csv(res, path) -> bytes:
    res.save(path)
    return Path(path).read_bytes()


@pytest.mark.parametrize("name,engine", [("diode_clipper.cir", "auto")] + [(d, "numeric") for d in PLAIN[1:]]
                         + [(d, "numeric") for d in DECKS])
def test_the_cold_path_writes_the_symbolic_paths_file(name, engine, own_cache, monkeypatch, tmp_path):
    path = _write(tmp_path, name)
    options = {} if engine == "auto" else {"engine": engine}
    ref = _symbolic(monkeypatch, path, **options)       # records the elements' descriptions
    got = cold.cold_run(str(path), 48000.0, "auto", options, None, 5e-3, None, None, "grid")
    assert got is not None
    assert got[0].summary().split(" in ")[0] == ref.summary().split(" in ")[0]      # steps, scheme, engine
    assert _csv(got[0], tmp_path / "cold.csv") == _csv(ref, tmp_path / "ref.csv")
    again = simulate(str(path), 48000.0, duration=5e-3, warm_start=False, **options)     # phsym.simulate takes it
    assert _csv(again, tmp_path / "again.csv") == _csv(ref, tmp_path / "ref.csv")


CHILD = """
import json, sys
from pathlib import Path
from phsym.common import library
from phsym.codegen.laws import library as kernels
library.LIBRARY = kernels.LIBRARY = Path(sys.argv[3])     # stands for the package's library
from phsym.cli import main
rc = main(["simulate", sys.argv[1], "--fs", "48k", "--duration", "5m", "--out", sys.argv[2], "--quiet"])
print(json.dumps({"rc": rc, "sympy": "sympy" in sys.modules}))
"""


def _child(path, out, cache, lib, **env):
    env = dict(os.environ, PHSYM_CACHE_DIR=str(cache), PHSYM_AOT="0", **env)
    env.pop("PHSYM_ENGINE", None)
    run = subprocess.run([sys.executable, "-c", CHILD, str(path), str(out), str(lib)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_cold_cli_run_with_empty_user_caches_imports_no_sympy(tmp_path):
    path = ROOT / "netlists" / "diode_clipper.cir"
    # a symbolic run without a library fills a cache that then stands for the package's library
    seed = tmp_path / "seed"
    assert _child(path, tmp_path / "ref.csv", seed, tmp_path / "none", PHSYM_PLAIN="0") == {"rc": 0, "sympy": True}
    assert _child(path, tmp_path / "x.csv", tmp_path / "empty", seed) == {"rc": 0, "sympy": False}
    assert (tmp_path / "x.csv").read_bytes() == (tmp_path / "ref.csv").read_bytes()
    assert list((tmp_path / "empty").glob("phsym_run_*.npz"))       # its warm start for the next run


def _same_as_symbolic(monkeypatch, path, tmp_path, **options):
    """The deck does not take the cold path, and phsym.simulate gives the symbolic path's file."""
    assert cold.cold_run(str(path), 48000.0, "auto", options, None, 5e-3, None, None, "grid") is None
    got = simulate(str(path), 48000.0, duration=5e-3, warm_start=False, **options)
    ref = _symbolic(monkeypatch, path, **options)
    assert _csv(got, tmp_path / "got.csv") == _csv(ref, tmp_path / "ref.csv")


BASE = "* fallback\nV1 in 0 SIN(0 1 1k)\nR1 in out 1k\n"


def test_a_param_expression_takes_the_symbolic_path(own_cache, monkeypatch, tmp_path):
    path = tmp_path / "d.cir"
    path.write_text(BASE + ".param c0=5n c1={2*c0}\nC1 out 0 c1\nD1 out 0 IS=1n\n")
    _same_as_symbolic(monkeypatch, path, tmp_path)


def test_a_user_law_takes_the_symbolic_path(own_cache, monkeypatch, tmp_path):
    path = tmp_path / "d.cir"
    path.write_text(BASE + "C1 out 0 H={q^2/(2*10n) + q^4}\nD1 out 0 IS=1n\n")
    _same_as_symbolic(monkeypatch, path, tmp_path, engine="generated")     # its loop runs as Python here


def test_an_unknown_signature_takes_the_symbolic_path(own_cache, monkeypatch, tmp_path):
    path = tmp_path / "d.cir"
    path.write_text(BASE + "C1 out 0 10n\nD1 out 0 IS=1n CJO=2p\n")     # never built in this cache
    _same_as_symbolic(monkeypatch, path, tmp_path, engine="numeric")
    assert cold.cold_run(str(path), 48000.0, "auto", {"engine": "numeric"}, None, 5e-3, None, None, "grid")


def test_a_damaged_description_takes_the_symbolic_path(own_cache, monkeypatch, tmp_path):
    path = tmp_path / "d.cir"
    path.write_text(BASE + "C1 out 0 10n\nD1 out 0 IS=1n\n")
    _symbolic(monkeypatch, path)
    for f in own_cache.glob(f"{kinds.PREFIX}*.json"):
        desc = json.loads(f.read_text())
        if desc["kind"] == "diode":
            f.write_text(f.read_text()[:60])
    monkeypatch.setattr(kinds, "_RECORDED", set())
    _same_as_symbolic(monkeypatch, path, tmp_path)


def test_a_singular_circuit_gives_the_symbolic_paths_error(own_cache, monkeypatch, tmp_path):
    path = tmp_path / "d.cir"
    path.write_text(BASE + "C1 out 0 10n\n")
    _symbolic(monkeypatch, path, engine="numeric")       # records V, R and C
    path.write_text(BASE + "C1 out 0 10n\nV2 in 0 1\n")      # a loop of two voltage sources
    assert cold.cold_run(str(path), 48000.0, "auto", {"engine": "numeric"}, None, 5e-3, None, None, "grid") is None
    errors = []
    for mode in ("1", "0"):
        monkeypatch.setenv(cold.PLAIN_ENV, mode)
        with pytest.raises(PhsymError) as exc:
            simulate(str(path), 48000.0, duration=5e-3, warm_start=False, engine="numeric")
        errors.append((type(exc.value), str(exc.value)))
    assert errors[0] == errors[1]


def test_a_failed_run_takes_the_symbolic_path(own_cache, monkeypatch, tmp_path):
    path = ROOT / "netlists" / "diode_clipper.cir"
    ref = _symbolic(monkeypatch, path)

    def fails(*a, **k):
        raise np.linalg.LinAlgError("singular step")
    monkeypatch.setattr(cold, "_plan", fails)
    assert cold.cold_run(str(path), 48000.0, "auto", {}, None, 5e-3, None, None, "grid") is None
    got = simulate(str(path), 48000.0, duration=5e-3, warm_start=False)
    assert _csv(got, tmp_path / "got.csv") == _csv(ref, tmp_path / "ref.csv")


def test_the_package_warm_up_deck_describes_the_clippers_elements(own_cache):
    from phsym.simulation.engines.numeric import warmup
    phsym.parse(warmup.DECK)        # what `phsym cache build --package` records into the package's library
    for e in read_plain(ROOT / "netlists" / "diode_clipper.cir").elements:
        kinds.instantiate(kinds.Element(e.name, e.kind, e.nodes, e.values, e.checks))     # NotDescribed otherwise


def test_a_cold_run_asks_the_generated_loops_build_to_move_its_snapshot(own_cache, monkeypatch, tmp_path):
    from phsym.simulation.engines import choice
    from phsym.simulation.warm import UPGRADE_PREFIX, upgrade_request
    path = tmp_path / "clipper.cir"
    path.write_text((ROOT / "netlists" / "diode_clipper.cir").read_text())
    _symbolic(monkeypatch, path)        # records the descriptions (a run without warm start: no snapshot)
    started = []
    monkeypatch.setattr(choice, "start_generated_build", lambda *a: started.append(a) or True)
    monkeypatch.setenv("PHSYM_AOT", "background")
    res = simulate(str(path), 48000.0, duration=5e-3)
    assert "numeric" in res.summary() and not res.info.get("warm_start")
    assert started == [(str(path), "discrete_gradient", "auto", 48000.0)]
    requests = list(own_cache.glob(f"{UPGRADE_PREFIX}*.json"))
    assert len(requests) == 1
    # the fingerprint the background build computes from the model (phsym.simulation.engines.build_generated)
    assert upgrade_request(requests[0])["fp"] == fingerprint(phsym.load(str(path)), "discrete_gradient",
                                                             "backward_euler")


@pytest.mark.parametrize("name", ["diode_clipper.cir", "pulse.cir"])
def test_a_cold_run_from_the_dc_point_writes_the_symbolic_paths_file(name, own_cache, monkeypatch, tmp_path):
    path = _write(tmp_path, name)
    ref = _symbolic(monkeypatch, path, x0="dc", engine="numeric")
    got = cold.cold_run(str(path), 48000.0, "auto", {"engine": "numeric"}, None, 5e-3, "dc", None, "grid")
    assert got is not None and got[0].info["x0"] == ref.info["x0"]
    assert _csv(got[0], tmp_path / "cold.csv") == _csv(ref, tmp_path / "ref.csv")
