"""Modal Euler-Bernoulli beam: static compliances against the closed forms
of beam theory (F L^3 / (3 E I) at a cantilever's tip, / 48 at the middle of
a pinned beam, / 192 clamped-clamped), resonances at (beta_n L)^2
sqrt(EI/(rho A))/L^2, reciprocity, and the energy balance of the bundled
cantilever."""
from pathlib import Path

import numpy as np
import pytest

import phsym

NET = Path(__file__).resolve().parent.parent / "netlists"
E, I, RHO, A, L = 70e9, 2.5e-12, 2700.0, 30e-6, 0.3


def _model(bc, x1, x2, modes):
    return phsym.parse(f"* beam\nF1 p 0 force\nF2 q 0 force\nBM1 p q beam E={E} I={I} rho={RHO} A={A} L={L} "
                       f"x1={x1} x2={x2} modes={modes} zeta=1m bc={bc}\n")


@pytest.mark.parametrize("bc,x,factor", [("clamped-free", L, 3.0), ("pinned-pinned", L / 2, 48.0),
                                         ("clamped-clamped", L / 2, 192.0)])
def test_static_compliance_converges_to_beam_theory(bc, x, factor):
    m = _model(bc, x, 0.8 * L if bc != "clamped-free" else L / 3, 25)
    s = 1e-4j                                         # far below the first resonance
    Y = m.linearize().transfer(s)
    compliance = complex(Y[0, 0] / s).real             # velocity per force / s
    assert compliance == pytest.approx(L ** 3 / (factor * E * I), rel=2e-3)
    assert complex(Y[0, 1]) == pytest.approx(complex(Y[1, 0]), rel=1e-10)     # reciprocity


BETA = np.array([1.8751040687, 4.6940911330, 7.8547574382, 10.9955407349])   # cos(b) cosh(b) = -1


def test_resonances_of_the_cantilever():
    from scipy.linalg import eigvals
    lin = _model("clamped-free", L, L / 3, 4).linearize()
    lam = eigvals((lin.J - lin.R) @ lin.Q, lin.E)
    w = np.sort(np.abs(lam[np.isfinite(lam)].imag))[::2]
    ref = BETA ** 2 * np.sqrt(E * I / (RHO * A)) / L ** 2
    np.testing.assert_allclose(w, ref, rtol=1e-6)      # zeta = 1e-3 shifts the damped frequencies by 5e-7


def test_bundled_cantilever_against_its_modal_response():
    """Tip velocity: sum_n phi_n(L)**2 s / (M (s**2 + 2 zeta w_n s + w_n**2)), phi_n(L)**2 = 4
    for modes normalised to integral phi**2 = L, driven by the deck's triangular pulse."""
    from scipy import signal
    res = phsym.simulate(NET / "cantilever.cir", warm_start=False)
    assert np.abs(res.balance).max() <= 1e-9 * res.power_scale
    M, zeta, h = RHO * A * L, 2e-3, res.info["h"]
    w = BETA ** 2 * np.sqrt(E * I / (RHO * A)) / L ** 2
    num, den = np.zeros(1), np.ones(1)
    for wn in w:        # sum of second-order sections as one rational function
        d = np.array([1.0, 2 * zeta * wn, wn ** 2])
        num = np.polyadd(np.polymul(num, d), np.polymul([4.0 / M, 0.0], den))
        den = np.polymul(den, d)
    tf = np.arange(0, 0.05, h / 16)
    force = np.clip(1 - np.abs(tf - 1.2e-3) / 0.2e-3, 0, None)
    _, v, _ = signal.lsim((num, den), force, tf)
    ref = np.interp(res.t_step - h / 2, tf, v)          # midpoint-type step values
    assert np.max(np.abs(res["v(tip)"] - ref)) < 1e-2 * np.max(np.abs(ref))


def test_port_on_a_support_is_an_error():
    with pytest.raises(phsym.PhsymError, match="moves in none of the 2 modes"):
        _model("clamped-free", 0.0, L, 2)
