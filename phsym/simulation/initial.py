"""Initial states: netlist ICs, user values, DC operating points; state scales."""
from __future__ import annotations

import weakref
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import sympy as sp

from ..common.crossing import crossing  # noqa: F401  (the state scales' rule, shared with the numeric engine)
from ..errors import SimulationError
from ..netlist.params import finite_value
from ..structure.dirac import Structure
from ..structure.forms import _fill

__all__ = ["initial_from_ic", "state_scales", "dc_operating_point", "dc_solution", "crossing"]


_x = _fill      # parameter values into an expression (one helper, in structure.forms)


def _storage_index(S: Structure) -> Dict[sp.Symbol, int]:
    return {s: i for i, s in enumerate(S.states)}


def _ic_value(ic, values, st) -> float:
    val = finite_value(sp.sympify(ic), values)
    if val is None:
        raise SimulationError(f"initial condition IC={ic} of {', '.join(st.elements)} is not a finite real "
                              "number with these parameter values", quantity=str(st.states[0]))
    return val


def initial_from_ic(S: Structure, values: Mapping[sp.Symbol, float]) -> Tuple[np.ndarray, List[str]]:
    """States whose gradient dH/dx equals the netlist IC (zero elsewhere).

    Linear storages are inverted directly, nonlinear ones by Newton
    (:func:`scipy.optimize.root`) on the storage's own gradient.
    """
    x0 = np.zeros(S.n_x)
    done: List[str] = []
    with_ic = [st for st in S.storages if any(ic is not None for ic in st.initial)]
    if not with_ic:
        return x0, done
    index = _storage_index(S)
    subs = dict(values)
    for st in with_ic:
        idx = [index[s] for s in st.states]
        target = np.array([0.0 if ic is None else _ic_value(ic, subs, st) for ic in st.initial])
        grads = [_x(sp.diff(st.hamiltonian, s), subs) for s in st.states]
        g = sp.lambdify([list(st.states)], grads, "math")
        Jg = sp.lambdify([list(st.states)], sp.Matrix(grads).jacobian(list(st.states)).tolist(), "math")
        guess = np.zeros(len(idx))
        if st.is_quadratic:
            sol = np.linalg.solve(np.array(Jg(guess), dtype=float), target - np.array(g(guess), float))
        else:
            import scipy.optimize as so  # only here: 0.2 s of every cold start otherwise
            # start where the gradient is nonzero-ish: scale by a unit-gradient state
            guess = np.array([max(abs(t), 1.0) * 1e-3 for t in target]) * np.sign(target + 1e-300)
            r = so.root(lambda z: np.array(g(z), float) - target, guess,
                        jac=lambda z: np.array(Jg(z), float), method="hybr", options={"xtol": 1e-14})
            if not r.success or not np.allclose(np.array(g(r.x), float), target, rtol=1e-10, atol=1e-12):
                raise SimulationError(f"cannot invert the initial condition of {', '.join(st.elements)}",
                                      quantity=str(st.states[0]))
            sol = r.x
        x0[idx] = sol
        done += list(st.elements)
    return x0, done


#: Per structure and parameter-symbol set: each state's gradient as a function of the state and the
#: parameters, lambdified once (a sweep builds a plan per parameter set; lambdify costs 0.5 ms a state).
_GRADIENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _gradient_functions(S: Structure, symbols: frozenset) -> List[Tuple[Callable, List[sp.Symbol]]]:
    """``(f(z, *params), params)`` of every state's gradient, the other states at zero."""
    memo = _GRADIENTS.setdefault(S, {})
    if symbols not in memo:
        fns = []
        for s, g in zip(S.states, S.gradients):
            g = sp.sympify(g)
            params = sorted((t for t in g.free_symbols if t in symbols and t != s), key=str)
            g0 = g.xreplace({t: 0 for t in g.free_symbols if t != s and t not in symbols})
            fns.append((sp.lambdify([s] + params, g0, "math"), params))
        memo[symbols] = fns
    return memo[symbols]


def state_scales(S: Structure, values: Mapping[sp.Symbol, float]) -> np.ndarray:
    """Typical magnitude of each state: where its own gradient first reaches 1 in
    magnitude (unit effort), on the positive or the negative side, whichever is nearer.

    Used for Newton tolerances and the small-step branch of divided
    differences; falls back to 1 when the gradient never reaches 1.  The
    crossing is bracketed from 1 by halving or doubling and refined by
    bisection to 1e-6 (a scale needs no more, and scipy.optimize would cost
    0.2 s to import).  Both sides matter for a strongly asymmetric law: a
    diode's junction charge with transit time reaches 1 V only at
    microcoulombs, -1 V at picocoulombs.
    """
    out = np.ones(S.n_x)
    linear = {s for st in S.storages if st.is_quadratic for s in st.states}
    for i, ((gf, params), s) in enumerate(zip(_gradient_functions(S, frozenset(values)), S.states)):
        args = [float(values[t]) for t in params]
        gi = lambda z, gf=gf, args=args: gf(z, *args)  # noqa: E731
        try:
            sides = [lambda z: float(gi(z)) - 1.0]
            if s not in linear:         # a linear gradient is odd: one side suffices
                sides.append(lambda z: -float(gi(-z)) - 1.0)
            found = [z for z in map(crossing, sides) if z is not None and np.isfinite(z) and z > 0]
            if found:
                out[i] = min(found)
        except Exception:  # any evaluation problem: keep the neutral scale
            out[i] = 1.0
    return out


def dc_operating_point(S: Structure, values: Mapping[sp.Symbol, float], u0: np.ndarray,
                       x_guess: Optional[np.ndarray] = None, held: Sequence[int] = ()) -> np.ndarray:
    """Storage states of the DC operating point for constant input ``u0``
    (the first part of :func:`dc_solution`).

    Parameters
    ----------
    S : Structure
        The structure.
    values : mapping of sympy.Symbol to float
        Parameter values.
    u0 : ndarray
        Inputs.
    x_guess : ndarray, optional
        Start, and the value of the held states.
    held : sequence of int
        States held at their value in ``x_guess``.
    """
    return dc_solution(S, values, u0, x_guess, held)[0]


def dc_solution(S: Structure, values: Mapping[sp.Symbol, float], u0: np.ndarray,
                x_guess: Optional[np.ndarray] = None,
                held: Sequence[int] = (), guess: Optional[np.ndarray] = None
                ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, w, lambda)`` of the DC operating point for constant input ``u0`` (Newton starts from
    ``x_guess`` and ``guess``, the ports and multipliers of a nearby point: a sweep's last).

    Solves ``(J e)_x = 0`` (no state changes) with the dissipative and
    algebraic rows, unknowns ``(x, w, lambda)``: Newton with junction
    limiting, then gmin stepping, then source stepping
    (:mod:`phsym.simulation.dcsolve`), then a trust-region solver.  States listed in ``held``
    keep their value in ``x_guess`` and their rows are dropped (SPICE's
    ``.ic`` without ``UIC``: the storage is held at its initial condition).
    """
    nx, nw, nl = S.n_x, S.n_w, S.n_lambda
    sc = state_scales(S, values)
    u0 = np.asarray(u0, float)
    x_fix = np.zeros(nx) if x_guess is None else np.asarray(x_guess, float).copy()
    free = np.array([i for i in range(nx) if i not in set(held)], dtype=int)
    nf = free.size
    z0 = np.zeros(nf + nw + nl)
    z0[:nf] = x_fix[free] / sc[free]
    from .portstart import port_start
    # laws singular at zero ports (entropy transfer): start from the ports the state implies
    start = port_start(S, {sym.name: float(v) for sym, v in values.items()}, x_fix, u0) if nw else None
    if start:
        names = [v.name for v in S.variables[nx:nx + nw]]
        for j, name in enumerate(names):
            z0[nf + j] = start.get(name, 0.0)
    if guess is not None:
        z0[nf:] = guess
    from .dcsolve import DCProblem, solve_dc
    # one problem per parameter set, kept on the structure: a DC sweep solves it at many inputs
    key = (tuple(sorted((str(k), float(v)) for k, v in values.items())), tuple(free.tolist()))
    memo = S.__dict__.get("_dc_problem")
    if memo is not None and memo[0] == key:
        problem = memo[1]
        problem.u0, problem.x_fix = u0, x_fix
    else:
        problem = DCProblem(S, values, u0, x_fix, free, sc)
        S.__dict__["_dc_problem"] = (key, problem)
    z, _ = solve_dc(problem, z0)
    if z is not None:
        x = x_fix.copy()
        x[free] = z[:nf] * sc[free]
        return x, z[nf:nf + nw], z[nf + nw:]
    import scipy.optimize as so  # lazy: about 0.2 s of import
    Jn = S.J_numeric(values).toarray()
    subs = dict(values)
    grad = sp.lambdify([S.states], [_x(g, subs) for g in S.gradients] + [0], "math")
    wsyms = [d.w for d in S.dissipative]
    ew = sp.lambdify([wsyms, S.states], [_x(d.effort, subs) for d in S.dissipative] + [0], "math")
    fw = sp.lambdify([wsyms, S.states], [_x(d.flow, subs) for d in S.dissipative] + [0], "math")

    def resid(z):
        x = x_fix.copy()
        x[free] = z[:nf] * sc[free]
        w, lam = z[nf:nf + nw], z[nf + nw:]
        e = np.concatenate([np.array(grad(list(x)), float)[:nx], np.array(ew(list(w), list(x)), float)[:nw], lam,
                            u0])
        f = Jn @ e
        return np.concatenate([f[free], np.array(fw(list(w), list(x)), float)[:nw] - f[nx:nx + nw],
                               f[nx + nw:nx + nw + nl]])

    failed = SimulationError("no DC operating point found (Newton, gmin stepping and source stepping "
                             "failed: the DC problem is singular or has no solution; give x0 explicitly)",
                             step=0, time=0.0)
    try:
        with np.errstate(all="ignore"):     # last resort: a trust-region solver, then least squares
            r = so.root(resid, z0, method="hybr", options={"xtol": 1e-14})
            ok = r.success and np.all(np.isfinite(r.x)) and np.max(np.abs(resid(r.x)), initial=0) < 1e-9
            if not ok:
                r = so.least_squares(resid, r.x if np.all(np.isfinite(r.x)) else z0, xtol=1e-15, ftol=1e-15,
                                     gtol=1e-15)
                if np.max(np.abs(r.fun), initial=0) > 1e-8:
                    raise failed
    except (OverflowError, ValueError, ZeroDivisionError):     # math.exp of a far iterate
        raise failed from None
    x = x_fix.copy()
    x[free] = r.x[:nf] * sc[free]
    return x, r.x[nf:nf + nw], r.x[nf + nw:]
