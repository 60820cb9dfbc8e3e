"""The :class:`Model`: a parsed netlist with its graph and PHS structure."""
from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import sympy as sp

from .common.parallel import paused_collection
from .components import DATUM, REGISTRY, Contribution, couple_inductors
from .components.contribute import contribute
from .components.declared import DeclaredChecks
from .common.bounded import TIMEOUT_ENV, deadline
from .errors import PhsymError, StructureError
from .graph import branches_of, build_graph, check_sources
from .netlist.params import evaluate_parameters, expand_derived, finite_value, prepare_parameters
from .netlist.parser import load_netlist, parse_netlist
from .netlist.spec import Netlist
from .structure.checks import check_structure, latex_model
from .structure.numeric_checks import complex_laws, numeric_checks
from .structure.circuit.data import CircuitData
from .structure.circuit.kinds import record as record_kind
from .structure.dirac import Structure
from .structure.forms import DescriptorForm, ExplicitForm, descriptor, explicit
from .structure.linearize import linearize
from .structure.linear import LinearPHS
from .structure.wellposed import check_regular

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Model", "parse", "load", "SYMBOLIC_LIMIT"]

#: Models of at most this many branches build their symbolic structure at load (``phsym show``,
#: ``check()``, the generated loop read it); larger ones on first use only: the numeric engine
#: (:mod:`phsym.simulation.engines.numeric`) needs none of it.
SYMBOLIC_LIMIT = 400


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
    topology : phsym.graph.BranchGraph
        Branch graph with its normal tree, as plain data (see :func:`phsym.graph.build_graph`).
    graph : networkx.MultiDiGraph
        The same graph as a networkx multigraph (built on first use).
    structure : Structure
        Dirac-form structure (see :mod:`phsym.structure.dirac`).
    defaults : dict of sympy.Symbol to float
        Default value of every parameter symbol.
    """

    def __init__(self, netlist: Netlist):
        with paused_collection():
            self._located(self._build, netlist)
            if len(self.topology.branches) <= SYMBOLIC_LIMIT:
                self._located(lambda: self.structure)     # small models: the structure's errors at load

    def _located(self, build, *args):
        """``build(*args)``, with a :class:`StructureError` pointed at the netlist line of the first
        element it names."""
        try:
            return build(*args)
        except StructureError as exc:
            if exc.location is not None or not exc.elements:
                raise
            where = {e.name.lower(): e.location for e in self.netlist.elements}
            loc = next((where[n.lower()] for n in exc.elements if where.get(n.lower()) is not None), None)
            raise exc.at(loc) from None

    def _build(self, netlist: Netlist) -> None:
        self.netlist = netlist
        defaults = {p.symbol: float(p.default) for p in netlist.parameters.values()}
        self.defaults: Dict[sp.Symbol, float] = defaults
        # declared constraints (positive R, C, ...; |k| < 1) at every parameter set, first: a law of
        # a value outside them (a coupling of k = 1) has no meaning to build
        self._check_values = DeclaredChecks(netlist.elements)
        self._check_values(defaults)
        contrib = Contribution()
        for spec in netlist.elements:
            part = contribute(spec, defaults)
            record_kind(spec, part, defaults)      # a later process builds such elements without sympy
            contrib.extend(part)
        storages = couple_inductors(contrib.storages, contrib.couplings, defaults)
        for st in storages:
            for ic in st.initial:
                if ic is not None and finite_value(sp.sympify(ic), defaults) is None:
                    raise StructureError(f"initial condition IC={ic} is not a finite real number",
                                         list(st.elements), hint="check the IC expression and the parameters it uses")
        self.topology = build_graph(contrib.branches)
        check_sources(self.topology, *branches_of(self.topology), contrib.ports)
        self._records = (storages, contrib.dissipations, contrib.ports, contrib.twoports)

    @cached_property
    def graph(self) -> "nx.MultiDiGraph":
        """The branch graph with its normal tree as a ``networkx.MultiDiGraph`` (see
        :meth:`phsym.graph.BranchGraph.to_networkx`; the model itself works on :attr:`topology`)."""
        return self.topology.to_networkx()

    @cached_property
    def structure(self) -> Structure:
        """The Dirac-form structure (symbolic; built at load for models of at most
        :data:`SYMBOLIC_LIMIT` branches, on first use for larger ones)."""
        def build():
            S = Structure(self.topology, *self._records)
            check_regular(S, self.defaults)
            return S
        return self._located(build)

    @cached_property
    def circuit(self) -> CircuitData:
        """The circuit as data: nodes, branches and element groups (numeric engine; no Dirac structure)."""
        with paused_collection():
            c = self._located(lambda: CircuitData.build(*branches_of(self.topology), *self._records))
        params = self.netlist.parameters
        c.controls = [params[name].symbol for name in self.controls]
        c.derived = {d: e for d, e in expand_derived(params).items() if e.free_symbols & set(c.controls)}
        return c

    @property
    def is_linear(self) -> bool:
        """Quadratic H and linear dissipation laws (without building the structure)."""
        storages, dissipations = self._records[:2]
        return all(st.is_quadratic for st in storages) and all(
            d.linear and not d.couples and not d.reads and not d.nullator for d in dissipations)

    @property
    def index2(self) -> bool:
        """Whether the network constrains a storage (a capacitor in a loop with voltage sources, an
        inductor in a cut set with current sources): the normal tree cannot make it natural."""
        in_tree = {b.name: t for b, t in zip(*branches_of(self.topology))}
        return any(bool(in_tree[b]) != (p == "effort") for st in self._records[0]
                   for b, p in zip(st.branches, st.port_types))

    @property
    def size(self) -> Dict[str, int]:
        """Counts of the model: ``elements``, ``branches``, ``nodes``, ``states``, ``inputs``."""
        g = self.topology
        return {"elements": len(self.netlist.elements), "branches": len(g.branches),
                "nodes": len(g) - 1, "states": len(self._names[0]), "inputs": len(self._names[1])}

    # ------------------------------------------------------------ naming
    @property
    def name(self) -> str:
        """Title of the netlist, or its file name."""
        return self.netlist.title or (Path(self.netlist.file).stem if self.netlist.file else "model")

    @cached_property
    def _names(self) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
        # printing a sympy symbol costs microseconds; a sweep asks per parameter set
        storages, _, ports, _ = self._records
        return tuple(getattr(x, "name", None) or str(x) for st in storages for x in st.states), \
            tuple(p.element for p in ports)

    @cached_property
    def _parameter_order(self) -> tuple:
        return prepare_parameters(self.netlist.parameters, StructureError)

    @property
    def states(self) -> List[str]:
        """Names of the storage states (e.g. ``q_C1``, ``phi_L1``, ``p_M1``)."""
        return list(self._names[0])

    @property
    def inputs(self) -> List[str]:
        """Port inputs, named after their source elements."""
        return list(self._names[1])

    @property
    def outputs(self) -> List[str]:
        """Collocated port outputs ``y(NAME)`` (``y^T u`` = power received)."""
        return [f"y({u})" for u in self._names[1]]

    @property
    def parameters(self) -> Dict[str, float]:
        """Parameter name -> default value."""
        return {name: float(p.default) for name, p in self.netlist.parameters.items()}

    @property
    def controls(self) -> List[str]:
        """Names of the parameters marked ``control`` (``.param pos=0.5 control``): a run can drive them with signals."""
        return [name for name, p in self.netlist.parameters.items() if p.control]

    @property
    def positive_inputs(self) -> Dict[str, str]:
        """Inputs that are absolute quantities and must stay positive (a temperature
        bath to the datum), name -> unit."""
        out = {}
        for spec in self.netlist.elements:
            unit = REGISTRY[spec.kind].absolute_input
            if unit and len(spec.nodes) > 1 and spec.nodes[1] == DATUM:
                out[spec.name] = unit
        return out

    @property
    def parameter_symbols(self) -> Dict[str, sp.Symbol]:
        """Parameter name -> sympy symbol."""
        return dict(self._symbol_items)

    @cached_property
    def _symbol_items(self) -> tuple:
        return tuple((name, p.symbol) for name, p in self.netlist.parameters.items())

    @property
    def hamiltonian(self) -> sp.Expr:
        """Total stored energy H(x) (sympy; the sum of the storages' energies on a large model)."""
        if self.symbolic_ready:
            return self.structure.hamiltonian
        return sp.Add(*(st.hamiltonian for st in self._records[0]))

    @property
    def symbolic_ready(self) -> bool:
        """Whether the symbolic structure is built or cheap to build (at most :data:`SYMBOLIC_LIMIT`
        branches); larger models run on the numeric engine without it."""
        return "structure" in self.__dict__ or self.size["branches"] <= SYMBOLIC_LIMIT

    def _symbolic(self, what: str, symbolic: bool) -> Structure:
        """The structure for ``what``, or a :class:`StructureError` saying how to ask for it on a large model."""
        if symbolic or self.symbolic_ready:
            return self.structure
        raise StructureError(f"{what} works on the symbolic structure, which this model of "
                             f"{self.size['branches']} branches does not build (above SYMBOLIC_LIMIT = "
                             f"{SYMBOLIC_LIMIT}: sympy matrices of the whole circuit take minutes and GBs)",
                             hint=f"pass symbolic=True to build it anyway ({what}(..., symbolic=True), phsym show "
                                  "--symbolic); simulating needs no symbolic structure (the numeric engine)")

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
        values = evaluate_parameters(self.netlist.parameters, params, error=StructureError,
                                     prepared=self._parameter_order)
        if params:
            self._check_values(values)
        return values

    def parameter_values_many(self, rows: Sequence[Mapping[str, float]]) -> List[Union[Dict[sp.Symbol, float], Exception]]:
        """:meth:`parameter_values` of many parameter sets: per set its values or the
        :class:`~phsym.errors.StructureError` it raises.

        The results are those of :meth:`parameter_values` set by set; when
        the sets override the same names, the names are resolved once and
        only the derived parameters and declared checks that depend on them
        are evaluated per set (a sweep of two values of a 10-element
        circuit: a few microseconds a set instead of about fifteen).

        Parameters
        ----------
        rows : sequence of mapping of str to float
            Overrides by parameter name, one mapping per set.
        """
        out: List[Union[Dict[sp.Symbol, float], Exception]] = []

        def single(row):
            try:
                return self.parameter_values(row)
            except (PhsymError, ArithmeticError, ValueError) as exc:
                return exc
        keys = tuple(rows[0]) if rows else ()
        table, order = self._parameter_order
        names = [table.spelling(str(k)) for k in keys]
        if not keys or None in names or len(set(names)) < len(names):
            return [single(row) for row in rows]
        base = single(rows[0])
        if isinstance(base, Exception):
            return [single(row) for row in rows]
        P = self.netlist.parameters
        moved = {P[n].symbol for n in names}
        derived = []        # derived parameters that follow the overridden ones, in evaluation order
        for n in order:
            p = P[n]
            if n not in names and p.expression is not None and p.expression.free_symbols & moved:
                moved.add(p.symbol)
                derived.append(p)
        checks = self._check_values.depending_on(moved)
        symbols = [P[n].symbol for n in names]
        for row in rows:
            if tuple(row) != keys:
                out.append(single(row))
                continue
            try:
                values = dict(base)
                for sym, k in zip(symbols, keys):
                    values[sym] = float(row[k])
                for p in derived:
                    val = finite_value(p.expression, values)
                    if val is None:
                        raise ValueError
                    values[p.symbol] = val
                self._check_values(values, checks)
                out.append(values)
            except (PhsymError, TypeError, ValueError):
                out.append(single(row))     # the error (or value) of the single path
        return out

    # ------------------------------------------------------------ forms
    @cached_property
    def explicit(self) -> Optional[ExplicitForm]:
        """Explicit PHS (see :func:`phsym.structure.forms.explicit`), or ``None``."""
        return explicit(self._symbolic("explicit", False), self.defaults)

    def descriptor(self, symbolic: bool = False) -> DescriptorForm:
        """Symbolic pH-DAE ``E xi' = (J - R) z(xi) + B u``, ``y = B^T z(xi) + (S - N) u`` (linear dissipation).

        Parameters
        ----------
        symbolic : bool
            Build the symbolic structure of a model above :data:`SYMBOLIC_LIMIT` branches (refused
            otherwise, with a :class:`StructureError` saying so).
        """
        return descriptor(self._symbolic("descriptor", symbolic))

    def check(self, symbolic: bool = False) -> Dict[str, bool]:
        """Structure checks (see :func:`phsym.structure.checks.check_structure`), and ``laws real``
        (:meth:`complex_laws`).

        Parameters
        ----------
        symbolic : bool
            Check a model above :data:`SYMBOLIC_LIMIT` branches on its symbolic structure (built for
            it: minutes and GBs); by default such a model is checked numerically, in time linear in
            its size (:func:`phsym.structure.numeric_checks.numeric_checks`), with the same keys.
        """
        if not (symbolic or self.symbolic_ready):
            if "_numeric_checks" not in self.__dict__:
                out = numeric_checks(*branches_of(self.topology), self._records, self.defaults)
                out["laws real"] = not self.complex_laws()
                self.__dict__["_numeric_checks"] = out
            return dict(self.__dict__["_numeric_checks"])
        self._symbolic("check", symbolic)
        return dict(self._checks)

    @cached_property
    def _checks(self) -> Dict[str, bool]:
        # symbolic, seconds on a large circuit: once per model
        with deadline(lambda s: StructureError(f"the symbolic structure checks took more than {s:g} s",
                                               hint=f"simplify the laws, or raise {TIMEOUT_ENV}")):
            out = check_structure(self.structure, self.defaults, self.explicit)
        out["laws real"] = not self.complex_laws()
        return out

    def complex_laws(self) -> Dict[str, List[float]]:
        """Laws not real-valued somewhere at the defaults (``I={log(v)}``, ``v < 0``): element name ->
        those points (:func:`phsym.structure.numeric_checks.complex_laws`); ``check()``'s ``laws real``."""
        return complex_laws(self.netlist.elements, self.defaults)

    def linearize(self, x0: Optional[np.ndarray] = None, u0: Optional[np.ndarray] = None,
                  params: Optional[Mapping[str, float]] = None, symbolic: bool = False) -> LinearPHS:
        """Linearise around an operating point.

        Parameters
        ----------
        x0 : array_like, optional
            Storage state (default: zeros).
        u0 : array_like, optional
            Inputs (default: zeros).
        params : mapping of str to float, optional
            Parameter overrides.
        symbolic : bool
            Build the symbolic structure of a model above :data:`SYMBOLIC_LIMIT` branches (refused
            otherwise, with a :class:`StructureError` saying so).

        Returns
        -------
        LinearPHS
            Descriptor form ``E xi' = (J - R) Q xi + B u``,
            ``y = B^T Q xi + (S - N) u`` in deviations, with
            ``xi = (x, e_w, lambda)`` (``N``: sources that meet directly).
        """
        return linearize(self._symbolic("linearize", symbolic), self.parameter_values(params), x0, u0)

    def to_latex(self, symbolic: bool = False) -> str:
        """LaTeX of H and the Dirac form ``[dx/dt; f_w; 0; -y] = J [dH/dx; e_w; lambda; u]``.

        Parameters
        ----------
        symbolic : bool
            Build the symbolic structure of a model above :data:`SYMBOLIC_LIMIT` branches (refused
            otherwise, with a :class:`StructureError` saying so).
        """
        return latex_model(self._symbolic("to_latex", symbolic))

    def __repr__(self) -> str:
        if "structure" not in self.__dict__:        # a large model: do not build the structure to print it
            n = self.size
            return f"<Model {self.name!r}: {n['states']} states, {n['branches']} branches, {n['inputs']} ports>"
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
    with paused_collection():
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
    with paused_collection():
        return Model(load_netlist(path))
