"""The :class:`Model`: a parsed netlist with its graph and PHS structure."""
from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Union

import numpy as np
import sympy as sp

from .components import Contribution, component_for, couple_inductors
from .errors import StructureError
from .graph import build_graph
from .netlist.params import finite_value
from .netlist.spec import Netlist
from .structure.checks import check_structure
from .structure.dirac import Structure
from .structure.forms import DescriptorForm, ExplicitForm, descriptor, explicit, linearize
from .structure.linear import LinearPHS
from .structure.wellposed import check_regular

__all__ = ["Model", "parse", "load"]

#: Values that must be positive (ratios: non-zero) for each kind.
_POSITIVE = {"resistor": ("R",), "capacitor": ("C",), "inductor": ("L",), "mass": ("m",),
             "spring": ("k",), "damper": ("c",), "inertia": ("J",), "torsion": ("k",),
             "rdamper": ("c",), "transformer": ("n",), "gyrator": ("r",),
             "diode": ("Is", "N", "Vt")}


class Model:
    """A port-Hamiltonian model built from a netlist.

    Parameters
    ----------
    netlist : Netlist
        Parsed netlist (see :func:`parse` and :func:`load`).

    Attributes
    ----------
    netlist : Netlist
        The parsed netlist.
    graph : networkx.MultiDiGraph
        Branch graph (see :func:`phsym.graph.build_graph`).
    structure : Structure
        Dirac-form structure (see :mod:`phsym.structure.dirac`).
    """

    def __init__(self, netlist: Netlist):
        try:
            self._build(netlist)
        except StructureError as exc:
            if exc.location is not None or not exc.elements:
                raise
            # point at the netlist line of the first element the error names
            where = {e.name.lower(): e.location for e in netlist.elements}
            loc = next((where[n.lower()] for n in exc.elements if where.get(n.lower()) is not None), None)
            raise exc.at(loc) from None

    def _build(self, netlist: Netlist) -> None:
        self.netlist = netlist
        self._symbols = {p.symbol: p for p in netlist.parameters.values()}
        defaults = {p.symbol: float(p.default) for p in netlist.parameters.values()}
        self._defaults = defaults
        contrib = Contribution()
        couplings = []
        specs = {}
        for spec in netlist.elements:
            specs[spec.name.lower()] = spec
            if spec.kind == "coupling":
                couplings.append(spec)
                continue
            c = component_for(spec, defaults).contribute()
            for attr in ("branches", "storages", "dissipations", "ports", "twoports"):
                getattr(contrib, attr).extend(getattr(c, attr))
        storages = couple_inductors(contrib.storages, couplings, specs)
        for st in storages:
            for ic in st.initial:
                if ic is not None and finite_value(sp.sympify(ic), defaults) is None:
                    raise StructureError(f"initial condition IC={ic} is not a finite real number",
                                         list(st.elements), hint="check the IC expression and the parameters it uses")
        for k in couplings:
            kval = float(sp.sympify(k.values["k"]).subs(defaults))
            if not -1 < kval < 1:
                raise StructureError(f"coupling coefficient of {k.name} is {kval}; it must lie in (-1, 1) "
                                     "for a positive definite inductance matrix", [k.name])
        self._positive = [(spec.name, key, sp.sympify(spec.values[key]))
                          for spec in netlist.elements
                          for key in _POSITIVE.get(spec.kind, ())
                          if key in spec.values and spec.law is None]
        self._check_values(defaults)
        self.graph = build_graph(contrib.branches)
        self.structure = Structure(contrib.branches, storages, contrib.dissipations,
                                   contrib.ports, contrib.twoports)
        check_regular(self.structure, defaults)

    def _check_values(self, values: Mapping[sp.Symbol, float]) -> None:
        """Physical values that must be positive (R, C, L, m, k, c, J) or non-zero (ratios)."""
        for name, key, expr in self._positive:
            val = expr.xreplace({s: sp.Float(values[s]) for s in expr.free_symbols if s in values})
            try:
                v = float(val)
            except (TypeError, ValueError):
                raise StructureError(f"value {key} of {name} is not a real number: {val}", [name]) from None
            bad = (v == 0) if key in ("n", "r") else not (v > 0)
            if bad or not np.isfinite(v):
                need = "non-zero" if key in ("n", "r") else "positive"
                raise StructureError(f"value {key} of {name} must be {need}, got {v:g}", [name],
                                     hint="a zero or negative value has no passive meaning; "
                                          "remove the element or use a nonlinear law")

    # ------------------------------------------------------------ naming
    @property
    def name(self) -> str:
        """Title of the netlist, or its file name."""
        return self.netlist.title or (Path(self.netlist.file).stem if self.netlist.file else "model")

    @property
    def states(self) -> List[str]:
        """Names of the storage states (e.g. ``q_C1``, ``phi_L1``, ``p_M1``)."""
        return [str(s) for s in self.structure.states]

    @property
    def inputs(self) -> List[str]:
        """Port inputs, named after their source elements."""
        return [str(u) for u in self.structure.inputs]

    @property
    def outputs(self) -> List[str]:
        """Collocated port outputs ``y(NAME)`` (``y^T u`` = power received)."""
        return [f"y({u})" for u in self.structure.inputs]

    @property
    def parameters(self) -> Dict[str, float]:
        """Parameter name -> default value."""
        return {name: float(p.default) for name, p in self.netlist.parameters.items()}

    @property
    def parameter_symbols(self) -> Dict[str, sp.Symbol]:
        """Parameter name -> sympy symbol."""
        return {name: p.symbol for name, p in self.netlist.parameters.items()}

    @property
    def hamiltonian(self) -> sp.Expr:
        """Total stored energy H(x) (sympy)."""
        return self.structure.hamiltonian

    @property
    def probes(self) -> list:
        """``.probe`` specifications of the netlist."""
        return list(self.netlist.probes)

    # ------------------------------------------------------- parameters
    def parameter_values(self, params: Optional[Mapping[str, float]] = None) -> Dict[sp.Symbol, float]:
        """Numeric value of every parameter symbol.

        Parameters
        ----------
        params : mapping of str to float, optional
            Overrides by parameter name (case-insensitive).  Derived
            parameters (``.param b={2*a}``) follow their definition unless
            overridden themselves.

        Returns
        -------
        dict of sympy.Symbol to float

        Raises
        ------
        StructureError
            For an unknown parameter name.
        """
        params = dict(params or {})
        lookup = {n.lower(): n for n in self.netlist.parameters}
        over: Dict[str, float] = {}
        for key, val in params.items():
            name = lookup.get(str(key).lower())
            if name is None:
                raise StructureError(f"unknown parameter {key!r}",
                                     hint="known parameters: " + ", ".join(sorted(self.netlist.parameters)))
            over[name] = float(val)
        values: Dict[sp.Symbol, float] = {}
        pending = dict(self.netlist.parameters)
        for _ in range(len(pending) + 1):
            progressed = False
            for name, p in list(pending.items()):
                if name in over:
                    values[p.symbol] = over[name]
                elif p.expression is None:
                    values[p.symbol] = float(p.default)
                else:
                    if not p.expression.free_symbols <= set(values):
                        continue
                    val = finite_value(p.expression, values)
                    if val is None:
                        given = ", ".join(f"{k}={v:g}" for k, v in over.items())
                        raise StructureError(f"parameter {name} = {p.expression} is not a finite real number "
                                             f"with {given or 'the defaults'}",
                                             hint="choose override values inside the expression's domain")
                    values[p.symbol] = val
                del pending[name]
                progressed = True
            if not pending or not progressed:
                break
        if pending:
            raise StructureError("cyclic parameter definitions: " + ", ".join(sorted(pending)))
        if over:
            self._check_values(values)
        return values

    # ------------------------------------------------------------ forms
    @cached_property
    def explicit(self) -> Optional[ExplicitForm]:
        """Explicit PHS (see :func:`phsym.structure.forms.explicit`), or ``None``."""
        return explicit(self.structure, self._defaults)

    def descriptor(self) -> DescriptorForm:
        """Symbolic pH-DAE ``E xi' = (J - R) z(xi) + B u`` (linear dissipation)."""
        return descriptor(self.structure)

    def check(self) -> Dict[str, bool]:
        """Structure checks (see :func:`phsym.structure.checks.check_structure`)."""
        return check_structure(self)

    def linearize(self, x0: Optional[np.ndarray] = None, u0: Optional[np.ndarray] = None,
                  params: Optional[Mapping[str, float]] = None) -> LinearPHS:
        """Linearise around an operating point.

        Parameters
        ----------
        x0 : array_like, optional
            Storage state (default: zeros).
        u0 : array_like, optional
            Inputs (default: zeros).
        params : mapping of str to float, optional
            Parameter overrides.

        Returns
        -------
        LinearPHS
            Descriptor form ``E xi' = (J - R) Q xi + B u`` in deviations, with
            ``xi = (x, e_w, lambda)``.
        """
        return linearize(self.structure, self.parameter_values(params), x0, u0)

    def simulator(self, fs: float, method: str = "auto", **options):
        """Build a passivity-preserving simulator of this model.

        Parameters
        ----------
        fs : float
            Sampling rate in Hz (step ``h = 1/fs``).
        method : {"auto", "discrete_gradient", "midpoint", "backward_euler"}
            Scheme; ``auto`` picks midpoint for linear models and the
            discrete gradient otherwise (backward Euler for index-2 DAEs).
        **options
            See :class:`phsym.simulation.Simulator`.

        Returns
        -------
        phsym.simulation.Simulator
        """
        from .simulation import Simulator
        return Simulator(self, fs, method, **options)

    def to_latex(self) -> str:
        """LaTeX of H and the Dirac form ``[dx/dt; f_w; 0; -y] = J [dH/dx; e_w; lambda; u]``."""
        from .structure.checks import latex_model
        return latex_model(self)

    def __repr__(self) -> str:
        S = self.structure
        return (f"<Model {self.name!r}: {S.n_x} states, {S.n_w} dissipative ports, "
                f"{S.n_lambda} algebraic, {S.n_u} ports>")


def parse(text: str, file: Optional[str] = None) -> Model:
    """Parse netlist text into a :class:`Model`.

    Parameters
    ----------
    text : str
        Netlist source.
    file : str, optional
        File name used in error messages.
    """
    from .netlist import parse_netlist
    return Model(parse_netlist(text, file=file))


def load(path: Union[str, Path]):
    """Load a netlist file as a :class:`Model` (or a saved ``LinearPHS`` ``.json``).

    Parameters
    ----------
    path : str or pathlib.Path
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        return LinearPHS.load(path)
    from .netlist import load_netlist
    return Model(load_netlist(path))
