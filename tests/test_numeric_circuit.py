"""A circuit described by numbers (phsym.structure.circuit.numeric): its step system is built, and
stepped, in a process that cannot import sympy, with the symbolic path's arrays and samples to the
bit; the facts kept by a form's key (phsym.codegen.laws.facts) and the elements' descriptions
(phsym.structure.circuit.kinds) give the symbolic build's circuit, and are not read when damaged or stale."""
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.codegen.laws import facts
from phsym.codegen.laws.build import UnknownForm, law_kernel
from phsym.simulation.engines.numeric.groups import GROUP_FIELDS
from phsym.simulation.engines.numeric.loop import net_arrays
from phsym.simulation.simulator import Simulator
from phsym.structure.circuit.form import Form
from phsym.structure.circuit import kinds
from phsym.structure.circuit.numeric import numeric_circuit
from phsym.structure.circuit.values import linear_hessians

ROOT = Path(__file__).resolve().parent.parent
DECKS = ["diode_clipper.cir", "rlc.cir", "rc_nonlinear_c.cir", "bjt_common_emitter.cir", "transformer.cir"]

# a child's first lines: sympy's import raises
NO_SYMPY = """
import pickle, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "sympy" or name.startswith("sympy."):
            raise ImportError("sympy is blocked in this process")
sys.meta_path.insert(0, Block())
"""

# the child builds the step system of the pickled circuit and runs it
CHILD = NO_SYMPY + """
from phsym.simulation.engines.numeric.loop import NumericLoop, net_arrays
from phsym.simulation.engines.numeric.step import StepSystem
job = pickle.load(open(sys.argv[1], "rb"))
S = StepSystem(job["circuit"], {}, job["scheme"], job["stiff"])
loop = NumericLoop(S, job["xs"], job["tol"], job["maxit"], False, stiff=job["stiff_rule"])
A, _ = loop.run(job["x"].copy(), job["U"], job["h"], True, carry=loop.carry(job["start"]) if job["start"] else None)
sl = S.slots
out = dict(net=net_arrays(S, job["h"]), slots=(sl.terms, sl.c, sl.c0, sl.vt, sl.kabs, sl.per_h, sl.readers),
           X=A.X, Y=A.Y, IT=A.IT, sympy="sympy" in sys.modules)
pickle.dump(out, open(sys.argv[2], "wb"))
"""


def _in_child(script: str, job, tmp_path):
    """What ``script`` (sympy blocked) pickles from the pickled ``job``; it must not have sympy."""
    (tmp_path / "job.pkl").write_bytes(pickle.dumps(job))
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "job.pkl"), str(tmp_path / "out.pkl")],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert out.returncode == 0, out.stderr[-3000:]
    return pickle.loads((tmp_path / "out.pkl").read_bytes())


def _no_addresses(net):
    """``net_arrays`` less the kernels' addresses (this process's) in the group table."""
    table = np.array(net[9])
    table[:, [GROUP_FIELDS.index("address"), GROUP_FIELDS.index("prepare")]] = 0
    return net[:9] + (table,) + net[10:]


def _flat(obj):
    """Every array in a nest of tuples, in order."""
    if isinstance(obj, (tuple, list)):
        return [a for o in obj for a in _flat(o)]
    return [np.asarray(obj)]


@pytest.mark.parametrize("deck", DECKS)
def test_numeric_circuit_steps_without_sympy_as_the_symbolic_circuit(deck, tmp_path):
    model = phsym.load(str(ROOT / "netlists" / deck))
    sim = Simulator(model, 48000.0, engine="numeric")
    plan = sim.plan()
    loop = plan.loop
    U = plan.inputs(None, 4e-3)
    if not U.any():     # a source without a waveform: drive it
        U[:, 0] = np.sin(2 * np.pi * 1e3 * np.arange(U.shape[0]) / 48000.0)
    x = plan.x_ic.copy()
    start = plan.newton_start(x, U[0, :len(plan.summary.inputs)])
    A, _ = loop.run(x.copy(), U, plan.h, True, carry=loop.carry(start) if start else None)
    S = loop.system
    nc = numeric_circuit(model.circuit, model.parameter_values(None))
    job = dict(circuit=nc, scheme=S.scheme, stiff="backward_euler" if S.end_rule else "scheme", xs=loop.xs,
               tol=loop.tol, maxit=loop.maxit, stiff_rule=loop.stiff, x=x, U=U, h=plan.h, start=start)
    got = _in_child(CHILD, job, tmp_path)
    assert got["sympy"] is False
    sl = S.slots
    ref = dict(net=net_arrays(S, plan.h), slots=(sl.terms, sl.c, sl.c0, sl.vt, sl.kabs, sl.per_h, sl.readers))
    mine, theirs = _flat(_no_addresses(got["net"])) + _flat(got["slots"]), _flat(_no_addresses(ref["net"])) + _flat(ref["slots"])
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a, b)
    for k in ("X", "Y", "IT"):
        np.testing.assert_array_equal(got[k], getattr(A, k))
    assert np.ptp(A.X) > 0      # the run moved


def test_a_form_known_by_key_alone_without_its_kernel_is_refused():
    ghost = Form(None, 1, 2, "f" * 20)
    with pytest.raises(UnknownForm):
        law_kernel(ghost)
    with pytest.raises(UnknownForm):
        facts.junction_terms(ghost, 0, False, lambda: pytest.fail("derived without expressions"))


def _diode_form():
    model = phsym.load(str(ROOT / "netlists" / "diode_clipper.cir"))
    d = next(d for d in model.circuit.dissipations if not d.linear)
    return d.form


def test_junction_terms_are_kept_by_the_form_key_and_read_back(monkeypatch):
    form = _diode_form()
    monkeypatch.setattr(facts, "_MEMO", {})
    derived = facts.junction_terms(form, 0, False, lambda: _derive(form))
    assert derived and all(len(t) == 3 for t in derived)
    monkeypatch.setattr(facts, "_MEMO", {})
    keyed = Form(None, form.n_vars, form.n_params, form.key)
    assert facts.junction_terms(keyed, 0, False, lambda: None) == derived


@pytest.mark.parametrize("damage", ["garbage", "digest", "code", "other_form", "index", "operation"])
def test_damaged_or_stale_junction_terms_fall_back(damage, monkeypatch):
    form = _diode_form()
    monkeypatch.setattr(facts.library, "LIBRARY", Path(os.devnull) / "none")      # the user's cache alone
    monkeypatch.setattr(facts, "_MEMO", {})
    good = facts.junction_terms(form, 0, False, lambda: _derive(form))
    path = facts.cache_dir() / facts.fact_file(form.key, 0, False)
    meta = json.loads(path.read_text())
    if damage == "garbage":
        text = path.read_text()[:40]
    else:
        if damage == "digest":
            meta["terms"][0][0] = ["n", 123.0]
        elif damage == "code":      # made by other code (another version, an edited install)
            meta["code"] = "0" * 64
        elif damage == "other_form":
            meta["form"] = "0" * 20
        else:      # a tree that is not one encode writes, with a digest that matches it
            meta["terms"][0][0] = ["p", 999] if damage == "index" else ["system", ["n", 1.0]]
            meta["digest"] = facts._digest(meta["terms"])
        text = json.dumps(meta)
    path.write_text(text)
    monkeypatch.setattr(facts, "_MEMO", {})
    keyed = Form(None, form.n_vars, form.n_params, form.key)
    with pytest.raises(UnknownForm):        # never a wrong term: without expressions, no terms
        facts.junction_terms(keyed, 0, False, lambda: None)
    monkeypatch.setattr(facts, "_MEMO", {})
    assert facts.junction_terms(form, 0, False, lambda: _derive(form)) == good     # derived again
    assert json.loads(path.read_text())["terms"] == good        # and written again


def _derive(form):
    from phsym.simulation.engines.numeric.limits import _terms
    return _terms(form.exprs[0], form.variables, 0, False)


def test_encoded_trees_evaluate_as_sympy():
    import sympy as sp
    p0, p1, p2 = sp.symbols("_p0 _p1 _p2", real=True)
    P = [0.3, -2.5, 7.0]
    for e in [p0 * p1 + sp.Rational(1, 3), sp.exp(p0 / p2) - p1 ** 2, sp.Abs(p1) * sp.log(p2), p2 ** sp.Rational(1, 2)]:
        tree = facts.encode(e, 3)
        want = float(e.xreplace(dict(zip((p0, p1, p2), P))))
        assert facts.evaluate(tree, P) == pytest.approx(want, rel=1e-15)
    with pytest.raises(ValueError):
        facts.encode(sp.sin(p0), 3)
    with pytest.raises(ValueError):
        facts.encode(p0 * sp.Symbol("other"), 3)


# ----------------------------------------------------------------------------- element descriptions
def _elements(model):
    """The netlist's elements given by numbers (their values at the defaults)."""
    import sympy as sp
    from phsym.components import REGISTRY
    values = model.parameter_values(None)
    return [kinds.Element(s.name, s.kind, tuple(s.nodes),
                          {k: float(sp.sympify(v).xreplace(values)) for k, v in s.values.items()},
                          {d.key: d.check for d in REGISTRY[s.kind].values if d.check is not None and d.key in s.values})
            for s in model.netlist.elements]


def _same_circuit(a, b):
    assert (a.nodes, a.states, a.inputs, a.branches) == (b.nodes, b.states, b.inputs, b.branches)
    for x, y in ((a.b_from, b.b_from), (a.b_to, b.b_to), (a.in_tree, b.in_tree)):
        np.testing.assert_array_equal(x, y)
    fields = ("record", "branch", "across", "linear", "coefficient", "form", "placeholders", "active", "nullator")
    assert [[getattr(d, f) for f in fields] for d in a.dissipations] == \
        [[getattr(d, f) for f in fields] for d in b.dissipations]
    fields = ("record", "states", "branches", "effort_port", "linear", "form", "placeholders", "by_effort", "stiff")
    assert [[getattr(s, f) for f in fields] for s in a.storages] == [[getattr(s, f) for f in fields] for s in b.storages]
    for qa, qb in zip(linear_hessians(a.storages, {}), linear_hessians(b.storages, {})):
        assert (qa is None and qb is None) or np.array_equal(qa, qb)
    assert [(p.record, p.branch, p.across) for p in a.ports] == [(p.record, p.branch, p.across) for p in b.ports]


@pytest.mark.parametrize("deck", ["diode_clipper.cir", "rlc.cir", "dc_network.cir", "c_parallel_v.cir"])
def test_described_elements_assemble_into_the_symbolic_circuit(deck):
    model = phsym.load(str(ROOT / "netlists" / deck))       # the symbolic build records the descriptions
    c, _, _ = kinds.assemble(_elements(model))
    _same_circuit(c, numeric_circuit(model.circuit, model.parameter_values(None)))


ASSEMBLE = NO_SYMPY + """
from phsym.structure.circuit.kinds import assemble
c, _, _ = assemble(pickle.load(open(sys.argv[1], "rb")))
pickle.dump(dict(circuit=c, sympy="sympy" in sys.modules), open(sys.argv[2], "wb"))
"""


def test_described_elements_assemble_without_sympy(tmp_path):
    model = phsym.load(str(ROOT / "netlists" / "diode_clipper.cir"))
    got = _in_child(ASSEMBLE, _elements(model), tmp_path)
    assert got["sympy"] is False
    _same_circuit(got["circuit"], numeric_circuit(model.circuit, model.parameter_values(None)))


def test_an_element_of_another_signature_is_not_described(monkeypatch, tmp_path):
    monkeypatch.setenv("PHSYM_CACHE_DIR", str(tmp_path))       # only this test's builds are recorded
    monkeypatch.setattr(kinds.library, "LIBRARY", tmp_path / "no-library")
    monkeypatch.setattr(kinds, "_RECORDED", set())
    m = phsym.parse("V1 a 0 1\nR1 a b 1k\nD1 b 0 IS=1n N=2 CJO=0\n")      # CJO given (zero): its own signature
    d = next(e for e in _elements(m) if e.kind == "diode")
    kinds.instantiate(d)        # recorded by that build
    with pytest.raises(kinds.NotDescribed):
        kinds.instantiate(kinds.Element(d.name, d.kind, d.nodes, {**d.values, "Cjo": 1e-12}, d.checks))
    with pytest.raises(kinds.NotDescribed):     # a value its constraint refuses: the symbolic path says why
        kinds.instantiate(kinds.Element(d.name, d.kind, d.nodes, {**d.values, "Is": -1.0}, d.checks))
    with pytest.raises(kinds.NotDescribed):
        kinds.instantiate(kinds.Element("B1", "magnet", ("a", "0"), {}, {}))


@pytest.mark.parametrize("damage", ["garbage", "digest", "code", "tree"])
def test_a_damaged_or_stale_description_is_not_read(damage, monkeypatch):
    m = phsym.parse("V1 a 0 1\nR1 a b 1k\nD1 b 0 IS=3n N=1.5 RS=2\n")
    d = next(e for e in _elements(m) if e.kind == "diode")
    got = kinds.instantiate(d)
    assert [b.name for b in got["branches"]] == ["D1", "D1.rs"]
    path = kinds.cache_dir() / kinds._file(kinds.signature(d.kind, d.values, d.checks))
    desc = json.loads(path.read_text())
    if damage == "garbage":
        text = path.read_text()[:50]
    else:
        if damage == "digest":
            desc["dissipations"][0]["placeholders"][0] = ["n", 1.0]
        elif damage == "code":      # made by other code (another version, an edited install)
            desc["code"] = "0" * 64
            desc["digest"] = kinds._digest(desc)
        else:       # a tree with an operation no description writes, its digest matching
            desc["dissipations"][0]["placeholders"][0] = ["system", ["n", 1.0]]
            desc["digest"] = kinds._digest(desc)
        text = json.dumps(desc)
    monkeypatch.setattr(kinds.library, "LIBRARY", Path(os.devnull) / "none")
    path.write_text(text)
    with pytest.raises(kinds.NotDescribed):
        kinds.instantiate(d)
    monkeypatch.setattr(kinds, "_RECORDED", set())
    phsym.parse("V1 a 0 1\nR1 a b 1k\nD1 b 0 IS=3n N=1.5 RS=2\n")       # a symbolic build writes it again
    again = kinds.instantiate(d)
    assert again["branches"] == got["branches"] and again["dissipations"] == got["dissipations"]


PLAN = NO_SYMPY + """
from phsym.simulation.engines.numeric.planner import NumericPlanner
from phsym.simulation.summary import ModelSummary
job = pickle.load(open(sys.argv[1], "rb"))
planner = NumericPlanner(None, *job["args"], circuit=job["circuit"], summary=ModelSummary(*job["summary"]))
plan = planner.plan(values={}, by_name=job["by_name"])
res = plan.run(duration=job["duration"])
meta, arrays = plan.to_arrays()
pickle.dump(dict(meta=meta, arrays=arrays, y=res.y, x=res.x, sympy="sympy" in sys.modules), open(sys.argv[2], "wb"))
"""


def _comparable(meta, arrays):
    """A plan's description less the kernels' addresses (this process's) and its compiled flags."""
    meta = json.loads(json.dumps(meta, default=str))
    arrays = {k: np.array(v) for k, v in arrays.items()}
    for k, table in arrays.items():        # the group tables (kernels, energies)
        if k.endswith("table") and table.ndim == 2 and table.shape[1] == len(GROUP_FIELDS):
            table[:, [GROUP_FIELDS.index("address"), GROUP_FIELDS.index("prepare")]] = 0
    return meta, arrays


@pytest.mark.parametrize("deck", ["diode_clipper.cir", "bjt_common_emitter.cir"])
def test_a_numeric_circuit_plans_and_runs_without_sympy_as_the_symbolic_plan(deck, tmp_path, monkeypatch):
    from phsym.simulation.plancache import FixedParts
    monkeypatch.setattr(facts, "_MEMO", {})     # this build writes its forms' facts (the child reads them)
    model = phsym.load(str(ROOT / "netlists" / deck))
    sim = Simulator(model, 48000.0, engine="numeric")
    plan = sim.plan()
    ref = plan.run(duration=2e-3)
    values = model.parameter_values(None)
    waves = [None if p.record.waveform is None else FixedParts.wave(p.record.waveform, values)
             for p in model.circuit.ports]
    s = plan.summary
    job = dict(circuit=numeric_circuit(model.circuit, values, waves), duration=2e-3, by_name=plan.values,
               args=(plan.fs, plan.scheme, sim.stiff, sim.tol, sim.maxit, sim.on_error == "flag", sim.record_efforts),
               summary=(s.name, s.states, s.inputs, s.outputs, [p.label for p in s.probes], s.path, s.active,
                        s.controls, s.positive, s.saved))
    got = _in_child(PLAN, job, tmp_path)
    assert got["sympy"] is False
    np.testing.assert_array_equal(got["x"], ref.x)
    np.testing.assert_array_equal(got["y"], ref.y)
    mine, theirs = _comparable(got["meta"], got["arrays"]), _comparable(*plan.to_arrays())
    assert mine[0] == theirs[0]
    assert sorted(mine[1]) == sorted(theirs[1])
    for k in mine[1]:
        np.testing.assert_array_equal(mine[1][k], theirs[1][k], err_msg=k)
