"""A modal Euler-Bernoulli beam with transverse force/velocity ports.

The beam's transverse motion ``w(x, t) = sum_n phi_n(x) q_n(t)`` is cut to
``N`` modes of the boundary conditions, each a mass-spring-damper in the
mobility analogy: modal mass ``M = rho A L`` (modes normalised to
``integral of phi_n**2 dx = L``), stiffness ``M omega_n**2`` with
``omega_n = (beta_n L)**2 sqrt(E I / (rho A)) / L**2``, damping ``2 zeta M
omega_n``.  A port at position ``x_p`` sees the velocity ``sum_n phi_n(x_p)
dq_n/dt`` and feeds the modal forces ``phi_n(x_p) F_p``: one ideal
transformer of ratio ``phi_n(x_p)`` per mode and port, their primaries in
series between the port's node and the datum.  Everything is lossless but
the modal dampers, so the model is passive and its energy balance exact.
"""
from __future__ import annotations

from functools import lru_cache
from typing import List, Tuple

import numpy as np
import sympy as sp

from ..errors import StructureError
from .base import (EFFORT, FLOW, P_LINEAR, P_STORE_EFFORT, P_STORE_FLOW, P_TWOPORT, Contribution, Dissipation,
                   Storage, TwoPort)
from .component import Choice, Component, Value, register
from .element import DATUM

__all__ = ["Beam", "beam_modes"]

_V = sp.Symbol("v", real=True)

_BC = {"clamped-free": lambda b: np.cos(b) * np.cosh(b) + 1,
       "clamped-clamped": lambda b: np.cos(b) * np.cosh(b) - 1,
       "pinned-pinned": None}


@lru_cache(maxsize=32)
def beam_modes(bc: str, n: int) -> Tuple[Tuple[float, float, float], ...]:
    """``(beta_n L, sigma_n, c_n)`` of the first ``n`` modes of ``bc``.

    The shape on ``xi = x / L`` is ``(cosh(b xi) - cos(b xi) - sigma (sinh(b
    xi) - sin(b xi))) / sqrt(c)`` (clamped ends), or ``sqrt(2) sin(n pi
    xi)`` (pinned-pinned: ``sigma = c = 0``); ``c`` normalises
    ``integral_0^1 phi**2 dxi`` to 1.

    Parameters
    ----------
    bc : str
        ``clamped-free``, ``clamped-clamped`` or ``pinned-pinned``.
    n : int
        Number of modes.
    """
    from scipy.integrate import quad
    from scipy.optimize import brentq
    out = []
    for k in range(1, n + 1):
        if bc == "pinned-pinned":
            out.append((k * np.pi, 0.0, 0.0))
            continue
        centre = (k - 0.5) * np.pi if bc == "clamped-free" else (k + 0.5) * np.pi
        b = brentq(_BC[bc], centre - 1.2, centre + 1.2, xtol=1e-14)
        sigma = (np.cosh(b) + np.cos(b)) / (np.sinh(b) + np.sin(b)) if bc == "clamped-free" else \
            (np.cosh(b) - np.cos(b)) / (np.sinh(b) - np.sin(b))
        c = quad(lambda xi: _shape(b, sigma, 1.0, xi) ** 2, 0, 1, limit=200, epsabs=1e-13)[0]
        out.append((float(b), float(sigma), float(c)))
    return tuple(out)


def _shape(b: float, sigma: float, c: float, xi):
    """Clamped-end mode shape, written without the cancellation of cosh - sigma sinh."""
    one_minus = 1 - sigma
    return ((one_minus * np.exp(b * xi) + (1 + sigma) * np.exp(-b * xi)) / 2
            - np.cos(b * xi) + sigma * np.sin(b * xi)) / np.sqrt(c)


def _shape_expr(b: float, sigma: float, c: float, xi: sp.Expr) -> sp.Expr:
    if c == 0.0:
        return sp.sqrt(2) * sp.sin(sp.Float(b) * xi)
    B, S = sp.Float(b), sp.Float(sigma)
    return (((1 - S) * sp.exp(B * xi) + (1 + S) * sp.exp(-B * xi)) / 2
            - sp.cos(B * xi) + S * sp.sin(B * xi)) / sp.sqrt(sp.Float(c))


@register
class Beam(Component):
    """Modal beam ``BM1 p1 p2 beam E=70G I=1p rho=2700 A=1u L=0.3 x1=0.3 [x2=0.1] [modes=4] [zeta=1m] [bc=..]``.

    Euler-Bernoulli beam of Young's modulus ``E``, second moment of area
    ``I``, density ``rho``, cross-section ``A`` and length ``L`` with
    boundary conditions ``bc`` (``clamped-free``: a cantilever clamped at
    ``x = 0``; ``clamped-clamped``; ``pinned-pinned``), cut to ``modes``
    modes with damping ratio ``zeta``.  Ports (mobility analogy): node
    ``p1`` is the transverse velocity at ``x1`` (a force applied to ``p1``
    pushes the beam there), ``p2`` the one at ``x2``; write ``p2 = 0`` for a
    single port.  States ``p_BM1.n`` (modal momenta) and ``x_BM1.n``
    (modal displacements).  A port on a node of a mode does not couple to it
    (no transformer); a port on a support, coupling to no mode, is an error.
    All values but ``modes`` and ``bc`` are parameters (a position that
    moves onto a node of a mode at run time keeps its transformer, of ratio
    zero).

    Examples
    --------
    >>> import phsym
    >>> m = phsym.parse("F1 tip 0 force\\nBM1 tip 0 beam E=70G I=1p rho=2700 A=1u L=0.3 x1=0.3 modes=3\\n")
    >>> len(m.states)
    6
    """

    kind = "beam"
    keywords = ("beam",)
    domain = "translational"
    terminals = ("p1", "p2")
    values = (Value("E", "Pa", "Young's modulus", default=70e9, check="positive"),
              Value("I", "m^4", "second moment of area", default=1e-12, check="positive"),
              Value("rho", "kg/m^3", "density", default=2700.0, check="positive"),
              Value("A", "m^2", "cross-section", default=1e-6, check="positive"),
              Value("L", "m", "length", default=0.3, check="positive"),
              Value("x1", "m", "position of port p1", default=0.3, check="nonnegative"),
              Value("x2", "m", "position of port p2 (unused when p2 is the datum)", default=0.15,
                    check="nonnegative"),
              Value("zeta", "", "modal damping ratio", default=1e-3, check="positive"),
              Value("modes", "", "number of modes", default=4, check="positive", structural=True))
    choices = (Choice("bc", ("clamped-free", "clamped-clamped", "pinned-pinned"),
                      "boundary conditions at x = 0 and x = L"),)
    summary = "modal Euler-Bernoulli beam with force/velocity ports at two positions"

    def contribute(self) -> Contribution:
        n = int(self.value("modes"))
        if not 1 <= n <= 50:
            raise StructureError(f"{self.name}: modes must be 1 to 50, got {n}", [self.name])
        E, I, rho, A, L, zeta = (self.value(k) for k in ("E", "I", "rho", "A", "L", "zeta"))
        M = rho * A * L
        ports = [(self.spec.nodes[0], self.value("x1"))]
        if self.spec.nodes[1] != DATUM:
            ports.append((self.spec.nodes[1], self.value("x2")))
        out = Contribution()
        chains: List[List[Tuple[str, sp.Expr]]] = [[] for _ in ports]
        for k, (b, sigma, c) in enumerate(beam_modes(self.choice("bc"), n), start=1):
            node = f"{self.name}#m{k}"
            omega = sp.Float(b) ** 2 * sp.sqrt(E * I / (rho * A)) / L ** 2
            self._mode(out, k, node, M, M * omega ** 2, 2 * zeta * M * omega)
            for j, (_, x) in enumerate(ports):
                ratio = _shape_expr(b, sigma, c, x / L)
                if abs(float(ratio.xreplace(self.defaults))) > 1e-9:     # a port on a node of the mode: no coupling
                    chains[j].append((node, ratio))
        for j, (_, x) in enumerate(ports):
            if not chains[j]:
                raise StructureError(f"{self.name}: port {j + 1} at x = {float(x.xreplace(self.defaults)):g} moves in "
                                     f"none of the {n} modes (it sits on a support)", [self.name],
                                     hint="move the port off the support")
        for j, ((pnode, _), chain) in enumerate(zip(ports, chains), start=1):
            stops = [pnode] + [f"{self.name}#p{j}c{k}" for k in range(1, len(chain))] + [DATUM]
            for k, (node, ratio) in enumerate(chain, start=1):
                bp = self.branch("twoport", P_TWOPORT, nodes=(stops[k - 1], stops[k]), suffix=f".t{j}_{k}.p")
                bs = self.branch("twoport", P_TWOPORT, nodes=(node, DATUM), suffix=f".t{j}_{k}.s")
                out.branches += [bp, bs]
                out.twoports.append(TwoPort(f"{self.name}.t{j}_{k}", "transformer", bp.name, bs.name, ratio))
        return out

    def _mode(self, out: Contribution, k: int, node: str, M: sp.Expr, K: sp.Expr, C: sp.Expr) -> None:
        """Modal mass, spring and damper of mode ``k`` on ``node`` (mobility analogy)."""
        p = sp.Symbol(f"p_{self.name}.{k}", real=True)
        x = sp.Symbol(f"x_{self.name}.{k}", real=True)
        bm = self.branch("storage", P_STORE_EFFORT, nodes=(node, DATUM), suffix=f".m{k}")
        bk = self.branch("storage", P_STORE_FLOW, nodes=(node, DATUM), suffix=f".k{k}")
        bc = self.branch("dissipation", P_LINEAR, nodes=(node, DATUM), suffix=f".c{k}")
        out.branches += [bm, bk, bc]
        out.storages += [Storage((f"{self.name}.{k}",), (p,), p ** 2 / (2 * M), (bm.name,), (EFFORT,), (None,),
                                 quadratic=True),
                         Storage((f"{self.name}.k{k}",), (x,), K * x ** 2 / 2, (bk.name,), (FLOW,), (None,),
                                 quadratic=True)]
        out.dissipations.append(Dissipation(bc.name, bc.name, "across", C * _V, _V, True))
