"""A circuit described by numbers (phsym.structure.circuit.numeric): its step system is built, and
stepped, in a process that cannot import sympy, with the symbolic path's arrays and samples to the
bit; the facts kept by a form's key (phsym.codegen.laws.facts) fall back when damaged or stale."""
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
from phsym.structure.circuit.numeric import numeric_circuit

ROOT = Path(__file__).resolve().parent.parent
DECKS = ["diode_clipper.cir", "rlc.cir", "rc_nonlinear_c.cir", "bjt_common_emitter.cir", "transformer.cir"]

# the child: sympy's import raises; it builds the step system of the pickled circuit and runs it
CHILD = """
import pickle, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "sympy" or name.startswith("sympy."):
            raise ImportError("sympy is blocked in this process")
sys.meta_path.insert(0, Block())
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
    (tmp_path / "job.pkl").write_bytes(pickle.dumps(job))
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "job.pkl"), str(tmp_path / "out.pkl")],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert out.returncode == 0, out.stderr[-3000:]
    got = pickle.loads((tmp_path / "out.pkl").read_bytes())
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


@pytest.mark.parametrize("damage", ["garbage", "digest", "version", "other_form", "index", "operation"])
def test_damaged_or_stale_junction_terms_fall_back(damage, monkeypatch):
    form = _diode_form()
    monkeypatch.setattr(facts, "_MEMO", {})
    good = facts.junction_terms(form, 0, False, lambda: _derive(form))
    path = facts.cache_dir() / facts.fact_file(form.key, 0, False)
    meta = json.loads(path.read_text())
    if damage == "garbage":
        text = path.read_text()[:40]
    else:
        if damage == "digest":
            meta["terms"][0][0] = ["n", 123.0]
        elif damage == "version":
            meta["version"] = "0.0.0"
        elif damage == "other_form":
            meta["form"] = "0" * 20
        else:      # a tree that is not one encode writes, with a digest that matches it
            meta["terms"][0][0] = ["p", 999] if damage == "index" else ["system", ["n", 1.0]]
            meta["digest"] = facts._digest(meta["terms"])
        text = json.dumps(meta)
    monkeypatch.setattr(facts.library, "LIBRARY", Path(os.devnull) / "none")      # the package's copy neither
    try:
        path.write_text(text)
        monkeypatch.setattr(facts, "_MEMO", {})
        keyed = Form(None, form.n_vars, form.n_params, form.key)
        with pytest.raises(UnknownForm):        # never a wrong term: without expressions, no terms
            facts.junction_terms(keyed, 0, False, lambda: None)
        monkeypatch.setattr(facts, "_MEMO", {})
        assert facts.junction_terms(form, 0, False, lambda: _derive(form)) == good     # derived again
        assert json.loads(path.read_text())["terms"] == good
    finally:
        path.unlink(missing_ok=True)


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
