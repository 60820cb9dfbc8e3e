"""The batch path of phsym.sweep (phsym.simulation.sweeps.batch): every run equal bit for bit
to the same run made alone with Simulator.run, on the Newton loop (diode clipper) and the
linear loop (series RLC); failed sets fail alone, with the single run's error."""
from pathlib import Path

import numpy as np
import pytest
from numba import njit

import phsym
from phsym.codegen.kernels.generic import step_input
from phsym.simulation.initial import state_scales
from phsym.simulation.sweeps.scales_many import state_scales_many
from phsym.simulation.sweeps.batch import run_batch
from phsym.simulation.sweeps.exec import ModelSpec, RunRecord, run_one

ROOT = Path(__file__).resolve().parent.parent
CLIPPER = str(ROOT / "netlists" / "diode_clipper.cir")
RLC = str(ROOT / "netlists" / "rlc.cir")
FS, DUR = 48000.0, 0.004


def _batch(model, params, **options):
    """The batch path called directly (None would mean the sweep took the ordinary path)."""
    sim = phsym.Simulator(model, FS, **options)
    names = list(params)
    values = np.column_stack([np.asarray(params[k], float) for k in names])
    spec = ModelSpec(model, FS, "auto", options, None, DUR, None, None)
    return sim, run_batch(sim, spec, names, values, 2, None, run_one, RunRecord)


def _same_as_single(sim, res, params, labels):
    names = list(params)
    for i in range(len(res)):
        if not res.ok[i]:
            continue
        one = sim.run(duration=DUR, params={k: float(params[k][i]) for k in names})
        for lab in labels:
            sig = one[lab]
            got = res[lab][i, 1:] if sig.shape[0] == one.t.shape[0] - 1 else res[lab][i]
            assert np.array_equal(got, sig), (i, lab)
        assert res.balance[i] == one.max_balance_error
        assert res.iterations_max[i] == np.max(one.iterations, initial=0)
        assert res.iterations_mean[i] == float(np.mean(one.iterations))


@pytest.mark.compiled      # run_many compiled: the sweep's runs in one numba call
def test_newton_batch_is_bit_identical():
    model = phsym.load(CLIPPER)
    params = phsym.sampling(model, 12, {"Rs": 0.3, "C": 0.3}, seed=11)
    # the generated loop named: auto takes it only once this cache records it built (test order)
    sim, got = _batch(model, params, engine="generated")
    assert got is not None and set(got[1]) == {"v(out)", "i(R1)"}
    labels = ["v(out)", "i(R1)", "q_C1", "Vin", "y(Vin)", "H", "P_diss", "P_supplied"]    # every kind of run_many
    res = phsym.sweep(model, FS, params, duration=DUR, outputs=labels, engine="generated")
    assert res.ok.all() and res.info["executor"].startswith("threads")
    _same_as_single(sim, res, params, labels)
    assert np.isnan(res["v(out)"][:, 0]).all() and not np.isnan(res["q_C1"]).any()


def test_linear_batch_is_bit_identical():
    model = phsym.load(RLC)
    params = phsym.sampling(model, 20, {"R": 0.5, "C": 0.5, "L": 0.2}, seed=4)     # linplan.MANY: together
    sim, got = _batch(model, params)
    assert got is not None
    res = phsym.sweep(model, FS, params, duration=DUR, outputs=["v(b)", "i(L1)", "phi_L1", "V1", "P_supplied"])
    assert res.ok.all()
    _same_as_single(sim, res, params, ["v(b)", "i(L1)", "phi_L1", "V1", "P_supplied"])
    assert (res.iterations_max == 0).all()


@pytest.mark.filterwarnings("ignore::phsym.errors.SimulationWarning")
def test_failed_sets_fail_alone_with_the_single_runs_error():
    model = phsym.load(CLIPPER)
    # a negative capacitance fails in the plan; maxit=2 makes Newton fail on the steep sets
    # (the ordinary path retries them in sub-steps and names the step)
    params = {"C": [1e-8, -1e-8, 1e-8, 1e-8], "Rs": [2.2e3, 2.2e3, 10.0, 1e5]}
    res = phsym.sweep(model, FS, params, duration=DUR, maxit=2, u={"Vin": 20.0}, outputs=["v(out)"],
                      engine="generated")
    sim = phsym.Simulator(model, FS, maxit=2, engine="generated")
    for i in range(4):
        p = {k: params[k][i] for k in params}
        try:
            one = sim.run(duration=DUR, params=p, u={"Vin": 20.0})
        except phsym.PhsymError as exc:
            assert not res.ok[i] and type(res.errors[i]) is type(exc) and str(res.errors[i]) == str(exc)
            assert np.isnan(res["v(out)"][i]).all()
        else:
            assert res.ok[i] and np.array_equal(res["v(out)"][i, 1:], one["v(out)"])
    assert not res.ok.all() and res.ok.any()


def test_state_scales_of_many_sets_are_the_scalar_ones():
    for path, tol in ((CLIPPER, {"Rs": 0.9, "C": 0.9}), (RLC, {"L": 0.9, "C": 0.9})):
        model = phsym.load(path)
        params = phsym.sampling(model, 40, tol, seed=2, distribution="lognormal")
        values = [model.parameter_values({k: float(params[k][i]) for k in params}) for i in range(40)]
        many = state_scales_many(model.structure, values)
        assert all(np.array_equal(a, state_scales(model.structure, v)) for a, v in zip(many, values))
    # crossings above 1 (doubling brackets), far below (several chunks of halvings), far above
    model = phsym.load(RLC)
    values = [model.parameter_values({"C": c, "L": l}) for c, l in
              ((1e3, 5.0), (5.0, 1e-12), (1e-12, 3e-7), (1e80, 1e-80), (0.75, 1.0), (1.0, 2.0 ** -40))]
    many = state_scales_many(model.structure, values)
    assert all(np.array_equal(a, state_scales(model.structure, v)) for a, v in zip(many, values))


@njit
def run_linear_fused(x, U, k0, k1, inputs, G, Yc, Wc, pd_w, Q, Ec, X, Y, Hh, Pd, Ps, E, rec_e):
    """Dense linear step on ``z = (x, ubar)`` with fused matrices (full rows: the reference of
    :func:`phsym.codegen.kernels.linear_csr.run_linear_csr`, which the dense loop runs).

    ``x_{k+1} = G z``, ``y = Yc z``, dissipative variables ``w = Wc z``
    (``P_diss = sum pd_w w**2``; ``Wc`` may have ``nx`` more columns, on
    ``x_{k+1}``), efforts ``e = Ec z``.  Returns ``-1`` or the first step
    with a non-finite energy.
    """
    nx = x.shape[0]
    nu = U.shape[1]
    nw = Wc.shape[0]
    nz = nx + nu
    ne = Ec.shape[0]
    z = np.empty(nz + nx)
    xn = z[nz:]
    nwc = Wc.shape[1]
    for i in range(nx):
        z[i] = x[i]
    for k in range(k0, k1):
        for i in range(nu):
            z[nx + i] = step_input(U, k, i, inputs)
        ps = 0.0
        for i in range(nu):
            s = 0.0
            for j in range(nz):
                s += Yc[i, j] * z[j]
            Y[k, i] = s
            ps += s * z[nx + i]
        Ps[k] = ps
        if rec_e:
            for i in range(ne):
                s = 0.0
                for j in range(nz):
                    s += Ec[i, j] * z[j]
                E[k, i] = s
        for i in range(nx):
            s = 0.0
            for j in range(nz):
                s += G[i, j] * z[j]
            xn[i] = s
        pdis = 0.0
        for i in range(nw):
            s = 0.0
            for j in range(nwc):
                s += Wc[i, j] * z[j]
            pdis += pd_w[i] * s * s
        Pd[k] = pdis
        hh = 0.0
        for i in range(nx):
            z[i] = xn[i]
            X[k + 1, i] = xn[i]
        for i in range(nx):
            s = 0.0
            for j in range(nx):
                s += Q[i, j] * xn[j]
            hh += 0.5 * xn[i] * s
        Hh[k + 1] = hh
        if not np.isfinite(hh):
            for i in range(nx):
                x[i] = z[i]
            return k
    for i in range(nx):
        x[i] = z[i]
    return -1


def test_compressed_dense_loop_is_the_full_row_loop():
    """The dense loop of a model too large to unroll skips the zeros of its rows: the same floats."""
    from phsym.codegen.kernels.linear_csr import run_linear_csr
    from phsym.simulation.examples import chain_netlist
    sim = phsym.Simulator(phsym.parse(chain_netlist(30)), FS, "midpoint", linear_solver="dense", record_efforts=True)
    loop = sim.plan().loop
    assert loop.key is None and np.count_nonzero(loop.Q) < loop.Q.size // 10
    t = np.arange(401) / FS
    U = np.column_stack([np.sin(2 * np.pi * 300 * t), 0.5 * np.ones_like(t)])
    out = []
    for csr in (False, True):
        x = np.zeros(loop.G.shape[0])
        A = [np.zeros((401, x.size)), np.zeros((400, 2)), np.zeros(401), np.zeros(400), np.zeros(400),
             np.zeros((400, loop.n_e))]
        if csr:
            assert run_linear_csr(x, U, 0, 400, loop.inputs, *loop.compressed(), *A, True) == -1
        else:
            assert run_linear_fused(x, U, 0, 400, loop.inputs, loop.G, loop.Yc, loop.Wc, loop.pw, loop.Q, loop.Ec,
                                    *A, True) == -1
        out.append(A)
    for a, b in zip(*out):
        assert np.array_equal(a, b)
    assert np.abs(out[0][0]).max() > 0


def test_dense_loop_reads_the_dissipation_at_the_state_point():
    """A large dense loop reads each damper at x_theta (one momentum) instead of through the whole
    step: 2 nonzeros per row in place of a full row, the same dissipated power to round-off and the
    energy balance kept."""
    from phsym.simulation.examples import chain_netlist
    m = phsym.parse(chain_netlist(30))
    sim = phsym.Simulator(m, FS, "midpoint", linear_solver="dense")
    loop = sim.plan().loop
    nx, nz = loop.G.shape
    assert loop.Wc.shape == (30, nz + nx) and np.count_nonzero(loop.Wc) <= 2 * 30
    # the fused rows of the same step, for comparison: ext_z + ext_x G
    fused = loop.Wc[:, :nz] + loop.Wc[:, nz:] @ loop.G
    assert np.count_nonzero(fused) > 10 * np.count_nonzero(loop.Wc)
    t = np.arange(2001) / FS
    u = {"F1": np.sin(2 * np.pi * 300 * t), "F2": 0.5 * np.ones_like(t)}
    res = sim.run(u)
    assert res.max_balance_error < 1e-12
    ref = phsym.simulation.engines.linear.loops.DenseLinearLoop(loop.G, loop.Yc, fused, loop.pw, loop.Q, loop.Ec,
                                                        loop.inputs)
    x = np.zeros(nx)
    A = [np.zeros((2001, nx)), np.zeros((2000, 2)), np.zeros(2001), np.zeros(2000), np.zeros(2000),
         np.zeros((2000, loop.n_e))]
    U = np.column_stack([u["F1"], u["F2"]])
    from phsym.codegen.kernels.linear_csr import run_linear_csr
    assert run_linear_csr(x, U, 0, 2000, ref.inputs, *ref.compressed(), *A, False) == -1
    assert np.array_equal(A[0], res.x)                       # the update is the same
    assert np.allclose(res.P_diss, A[3], rtol=1e-10, atol=1e-14 * np.abs(A[3]).max())


def test_runs_needing_the_port_start_take_the_ordinary_path():
    """Heat transfer's entropy law is singular at zero port variables: Newton starts from the ports
    the initial state implies, which only Simulator.run does; the sweep's runs are still the single runs."""
    path = str(ROOT / "netlists" / "heat_transfer.cir")
    params = {"G12": [0.5, 1.0, 2.0], "C1": [5.0, 10.0, 20.0]}
    res = phsym.sweep(path, 10.0, params, duration=2.0, outputs=["v(t1)", "v(t2)"], engine="generated")
    assert res.ok.all()
    sim = phsym.Simulator(phsym.load(path), 10.0, engine="generated")
    assert sim.plan().needs_port_start()
    for i in range(3):
        one = sim.run(duration=2.0, params={k: v[i] for k, v in params.items()})
        assert np.array_equal(res["v(t1)"][i, 1:], one["v(t1)"]) and np.array_equal(res["v(t2)"][i, 1:], one["v(t2)"])


def test_slices_of_plans_give_the_same_sweep(monkeypatch):
    """Plans are built and run slice by slice (memory); any slicing gives the same arrays, a failed
    set in a later slice included, and progress counts every run once."""
    from phsym.simulation.sweeps import batch as sweep_batch
    model = phsym.load(CLIPPER)
    params = phsym.sampling(model, 11, {"Rs": 0.2, "C": 0.2}, seed=8)
    params["C"][7] = -1e-9
    whole = phsym.sweep(model, FS, params, duration=DUR)
    monkeypatch.setattr(sweep_batch, "SLICE", 4)
    seen = []
    sliced = phsym.sweep(model, FS, params, duration=DUR, progress=lambda d, n: seen.append(d))
    assert whole.ok.tolist() == sliced.ok.tolist() == [i != 7 for i in range(11)]
    for lab in whole.signals:
        assert np.array_equal(whole[lab], sliced[lab], equal_nan=True)
    assert np.array_equal(whole.balance, sliced.balance, equal_nan=True)
    assert sorted(seen) == list(range(1, 12)) and str(whole.errors[7]) == str(sliced.errors[7])


def test_parameter_values_of_many_sets_are_the_single_ones():
    model = phsym.parse(".param a=2 b={3*a} c={a+1}\nV1 x 0 SIN(0 1 1k)\nR1 x y {b}\nC1 y 0 {1u*c}\nR2 y 0 {1k}\n")
    rows = [{"a": 1.0}, {"A": 4.0}, {"a": -5.0}, {"a": 3.0, "c": 7.0}, {"a": float("nan")}, {"a": 2.5}]
    many = model.parameter_values_many(rows)
    for row, got in zip(rows, many):
        try:
            one = model.parameter_values(row)
        except phsym.PhsymError as exc:          # -5: negative R1 (a derived value); NaN: not finite
            assert type(got) is type(exc) and str(got) == str(exc)
        else:
            assert got == one and list(got) == list(one)
    assert isinstance(many[2], phsym.PhsymError) and not isinstance(many[1], Exception)
    assert model.parameter_values_many([]) == []
    assert isinstance(model.parameter_values_many([{"nope": 1.0}])[0], phsym.PhsymError)


def test_probe_signals_are_the_same_sum_everywhere():
    """SimulationResult's probe signals (numpy, column by column) and run_many's
    (sweep_kernels.probe_signal) are the same floats, and numpy's efforts @ c to round-off."""
    from phsym.codegen.kernels.sweep import probe_signal
    res = phsym.Simulator(phsym.load(CLIPPER), FS).run(duration=DUR)
    for p in res.names.probes:
        sig, c = res[p.label], res._probe_vector(p.label)
        out = np.empty_like(sig)
        probe_signal(res.efforts, np.ascontiguousarray(c, dtype=float), out)
        assert np.array_equal(out, sig)
        ref = res.efforts @ c
        assert np.allclose(sig, ref, rtol=1e-13, atol=1e-15 * np.max(np.abs(ref)))


def test_settled_heap_freezes_and_returns_the_objects():
    import gc

    from phsym.common.parallel import settled_heap
    assert gc.get_freeze_count() == 0
    with settled_heap():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    gc.freeze()         # someone else's freeze is left alone
    try:
        n = gc.get_freeze_count()
        with settled_heap():
            assert gc.get_freeze_count() == n
        assert gc.get_freeze_count() == n
    finally:
        gc.unfreeze()


def test_linear_loops_without_shared_stacks_give_the_same_sweep(monkeypatch):
    """The batch indexes the template's stacks when every set is a row of the same stack, and
    stacks the sets' own matrices otherwise: the same runs either way."""
    from phsym.simulation.engines.linear.template import LinearTemplate
    model = phsym.load(RLC)
    params = phsym.sampling(model, 20, {"R": 0.5, "C": 0.5}, seed=5)
    shared = phsym.sweep(model, FS, params, duration=DUR, executor="serial")
    stacks = LinearTemplate.stacks

    def unshared(self, *args, **kwargs):        # every set a stack of its own
        return [e if isinstance(e, Exception) else (tuple(a[e[1]:e[1] + 1].copy() for a in e[0]), 0, e[2])
                for e in stacks(self, *args, **kwargs)]
    monkeypatch.setattr(LinearTemplate, "stacks", unshared)
    alone = phsym.sweep(model, FS, params, duration=DUR, executor="serial")
    assert shared.ok.all() and alone.ok.all()
    for lab in shared.signals:
        assert np.array_equal(shared[lab], alone[lab], equal_nan=True)
    assert np.array_equal(shared.balance, alone.balance)


@pytest.mark.parametrize("path,tol", [(CLIPPER, {"Rs": 0.3, "C": 0.3}), (RLC, {"R": 0.5, "C": 0.5, "L": 0.2})])
def test_set_numbers_are_the_plans_numbers(path, tol):
    """What the batch reads of a set (sweep_sets.batch_sets, no plan per set) is what the set's plan
    holds: initial state, waveforms, loop numbers, probe vectors; the reference plan is the plan."""
    from phsym.simulation.sweeps.sets import SetNumbers, batch_sets, reference_plan
    model = phsym.load(path)
    sim = phsym.Simulator(model, FS, engine="generated" if path == CLIPPER else "auto")   # the batch's loops
    params = phsym.sampling(model, 20, tol, seed=8)
    rows = [{k: float(v[i]) for k, v in params.items()} for i in range(20)]
    sets = batch_sets(sim, rows)
    assert all(isinstance(s, SetNumbers) for s in sets)
    for row, s in zip(rows, sets):
        plan = sim._model_plan(row)
        assert np.array_equal(s.x_ic, plan.x_ic) and s.x_ic_desc == plan.x_ic_desc
        assert s.waveforms == plan.waveforms
        if sim.engine == "generated":
            assert np.array_equal(s.loop[0], plan.loop.p) and np.array_equal(s.loop[1], plan.loop.xs)
        else:
            arrays, j, _ = s.loop
            assert all(np.array_equal(a[j], getattr(plan.loop, k)) for a, k in zip(arrays, plan.loop.ARRAYS))
        for lab in (p.label for p in model.probes):
            assert np.array_equal(s.probe_vector(sim, lab), plan.probe_vector(lab))
    ref = reference_plan(sim, rows[0], sets[0])
    assert np.array_equal(ref.run(duration=DUR)["H"], sim.run(duration=DUR, params=rows[0])["H"])


def test_initial_energy_of_a_zero_state_is_zero_without_products():
    """A zero state's energy is +0.0 whatever Q is (the batch skips the products for zero states)."""
    from phsym.simulation.engines.linear.loops import initial_energy
    Q = np.array([[2.0, -1.0], [-1.0, 3.0]])
    zero = initial_energy(Q, np.zeros(2))
    assert zero == 0.0 and not np.signbit(zero)
    x = np.array([0.5, -2.0])       # by hand: (2 * 0.25 + 2 * (-1) * 0.5 * (-2) + 3 * 4) / 2
    assert initial_energy(Q, x) == 7.25


@pytest.mark.compiled      # counts numba's signatures
def test_a_sweep_compiles_no_second_step():
    """run_many calls run with the argument types of a single run (no literal 0 or False, which
    would make numba compile the step again for them)."""
    from phsym.codegen.linear_gen import unrolled_linear
    from phsym.codegen.kernels.sweep import run_summary
    for path, tol in ((CLIPPER, {"Rs": 0.2}), (RLC, {"R": 0.2})):
        model = phsym.load(path)
        engine = "generated" if path == CLIPPER else "auto"
        sim = phsym.Simulator(model, FS, engine=engine)
        sim.run(duration=DUR)
        params = phsym.sampling(model, 20, tol, seed=3)
        phsym.sweep(model, FS, params, duration=DUR, executor="serial", engine=engine)
        if sim.engine == "generated":
            run = sim._gen.module.run
        else:
            loop = sim.plan().loop
            run = unrolled_linear(loop.G.shape[0], 1, loop.Wc.shape[0], loop.n_e, loop.inputs).run
        assert len(run.signatures) == 1, run.signatures
    assert all("Literal" not in str(sig) for sig in run_summary.signatures)


def test_a_slice_with_no_batch_run_fails_each_run_alone():
    """Every set of a slice leaving the batch (here: an unknown state name in x0) gives each run the
    single run's error, not one error for the sweep."""
    model = phsym.load(RLC)
    res = phsym.sweep(model, FS, {"R": [1.0, 2.0, 3.0]}, duration=DUR, x0={"bogus": 1.0}, executor="serial")
    assert not res.ok.any()
    with pytest.raises(phsym.errors.PhsymError) as single:
        phsym.Simulator(model, FS).run(duration=DUR, x0={"bogus": 1.0}, params={"R": 1.0})
    assert all(type(e) is type(single.value) and str(e) == str(single.value) for e in res.errors)


def test_port_start_check_of_a_set_is_its_plans():
    """Whether a set needs Newton's port start (a law singular at zero for some parameter values) is
    decided as its plan decides it."""
    from phsym.simulation.sweeps.sets import batch_sets
    model = phsym.parse(".param k=1\nV1 a 0 SIN(0 1 1k)\nR1 a w 1k\nC1 w 0 10n\nR2 w 0 I={1m*v**k}\n")
    sim = phsym.Simulator(model, FS, engine="generated")
    rows = [{"k": k} for k in (1.0, 3.0, -1.0)]
    got = [s.needs_port_start(sim) for s in batch_sets(sim, rows)]
    assert got == [sim.plan(row).needs_port_start() for row in rows] and got[-1]
