"""The numeric engine's step kernel of a junction charge solved through its voltage, with its charge
law written in the energy's parameters (:func:`phsym.components.junction.charge_law`) and its
energies through that law's power and exponential (:func:`~phsym.components.junction.energies_from`):
against the float functions of :mod:`phsym.components.junction_charge` (the divided difference of
``H`` through ``v(Q)``) and against the form's own folded charge law."""
import pytest
import sympy as sp

from phsym.codegen.gradients import effort_step
from phsym.codegen.laws import build
from phsym.codegen.laws.source import KernelSpec, split
from phsym.components.junction import charge_law, junction_storage
from phsym.components.junction_charge import charge_energy, charge_voltage
from phsym.structure.circuit.canonical import canonical

#: BJT base-emitter junction of the TTL benchmark (TF, no breakdown), and a diode with TT and BV
BE = (1e-12, 0.9, 0.5, 0.5, 0.2e-9, 1e-16, 0.025, 1e-12, sp.Integer(1), sp.Integer(0))
BV = (0.6e-12, 0.8, 0.4, 0.5, 1e-9, 1e-15, 0.0259, 1e-12, 5.0, 1e-3)


def _form(P):
    q = sp.Symbol("q_x", real=True)
    H, law = junction_storage(q, *P)
    xe = law.template[1].xreplace({law.template[0]: law.effort})
    return canonical([H, xe, law.energy], [q, law.effort])


def _step(form, values):
    """The discrete gradient step kernel's outputs ``(gradient, state increment, their derivatives in
    the effort's increment)`` as a function of ``(d, x, xs, se)``, the placeholders at ``values``."""
    st = build._storage(form, 1)
    V, X, XS = build._syms("d", 1), build._syms("x", 1), build._syms("xs", 1)
    s0 = sp.Symbol("_se0", real=True)
    g, dx = effort_step(st, X[0], V[0], XS[0], s0, "discrete_gradient", {}, False)
    targets, _ = split(KernelSpec("step", V, (), tuple(form.params), (g, dx)))
    f = sp.lambdify(V + X + XS + (s0,) + tuple(form.params), targets, "math")
    return lambda d, x, xs, se: f(d, x, xs, se, *[float(v) for v in values])


@pytest.mark.parametrize("P", [BE, BV], ids=["bjt-junction", "diode-breakdown"])
def test_step_kernel_is_the_divided_difference_of_the_float_energy(P):
    form, values = _form(P)
    assert charge_law(form.exprs[1], form.exprs[2]) is not None
    step = _step(form, values)
    fl = [float(p) for p in P]
    folded = sp.lambdify(form.variables[1:2] + form.params, form.exprs[1], "math")
    numbers = [float(p) for p in values]
    charge = lambda v: folded(v, *numbers)       # noqa: E731
    for se, d in ((-2.0, 0.3), (0.2, 0.25), (0.6, 0.08), (0.7, -0.05), (0.45, 0.001)):
        x0 = charge(se)
        g, dx, dg, ddx = step(d, x0, abs(x0) + 1e-15, se)
        x1 = charge(se + d)
        assert dx == pytest.approx(x1 - x0, rel=1e-10)            # the folded law's increment
        # the energy through v(Q) by the safeguarded Newton of junction_charge, independent of the
        # kernel's energies at the efforts
        v0, v1 = charge_voltage(x0, *fl), charge_voltage(x1, *fl)
        ref = (charge_energy(x1, v1, *fl) - charge_energy(x0, v0, *fl)) / (x1 - x0)
        assert g == pytest.approx(ref, rel=1e-7, abs=1e-9)
        assert min(se, se + d) <= g <= max(se, se + d)             # a mean value of v over the step
        h = 1e-7
        gp, dxp = step(d + h, x0, abs(x0) + 1e-15, se)[:2]
        gm, dxm = step(d - h, x0, abs(x0) + 1e-15, se)[:2]
        assert dg == pytest.approx((gp - gm) / (2 * h), rel=1e-4, abs=1e-6)
        assert ddx == pytest.approx((dxp - dxm) / (2 * h), rel=1e-5)


def test_a_parameter_that_is_zero_keeps_the_folded_law():
    """TT = 0 or IBV = 0 given as numbers drop their terms from the folded law; written in the
    energy's parameters they would stay as ``0 * exp(...)``, NaN once the exponential overflows."""
    for P in (BE[:4] + (0.0,) + BE[5:], BV[:9] + (0.0,)):
        form, _ = _form(P)
        assert charge_law(form.exprs[1], form.exprs[2]) is None
        st = build._storage(form, 1)
        assert st.by_effort.state == form.exprs[1]
    form, _ = _form(BE)
    assert charge_law(form.exprs[1], form.exprs[0]) is None         # not a junction energy
