"""Every public argument of the public API is documented (numpydoc Parameters)."""
import inspect
import re

import pytest

import phsym
from phsym.codegen.newton.module import generate
from phsym.codegen.newton.sensitivity import build_sensitivity
from phsym.common.names import NameTable
from phsym.common.schemes import get_scheme
from phsym.components import Component, Registry, register
from phsym.identify import data, metrics
from phsym.identify.base import Estimator
from phsym.identify.gp import EffortGP, estimate_derivative
from phsym.identify.gp.laws import hamiltonian_expression, law_text
from phsym.identify import mechanical
from phsym.structure import discrete, forms, linearize, probes
from phsym.structure.linear import LinearPHS

PUBLIC = [phsym.Model, LinearPHS, phsym.simulation.Simulator, phsym.simulation.SimulationResult,
          phsym.simulation.RunPlan, phsym.identify.LinearPHSEstimator, phsym.identify.ParameterEstimator,
          Estimator, NameTable, Component, Registry, EffortGP, phsym.identify.MechanicalEstimator]
FUNCTIONS = [phsym.parse, phsym.load, phsym.simulate, forms.explicit, linearize.linearize,
             linearize.operating_point, linearize.descriptor_matrices, discrete.theta_step,
             discrete.state_transition, get_scheme, metrics.r2_score, metrics.nrms, data.measurements,
             data.step_targets, probes.probe_map, build_sensitivity, generate, register, estimate_derivative,
             hamiltonian_expression, law_text, mechanical.midpoint_c2d, mechanical.midpoint_d2c,
             mechanical.discretise, mechanical.network_netlist, mechanical.mechanical_phs]


def _callables():
    for f in FUNCTIONS:
        yield f.__qualname__, f, f
    for cls in PUBLIC:
        yield cls.__name__, cls.__init__, cls
        for name, member in vars(cls).items():
            if name.startswith("_") or not callable(member):
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            yield f"{cls.__name__}.{name}", member, member


def _documented(doc: str):
    names = set()
    for line in doc.splitlines():
        m = re.match(r"\s*\*{0,2}([A-Za-z_][\w, *]*?)\s*:", line)
        if m:
            for part in m.group(1).split(","):
                names.add(part.strip().lstrip("*"))
    return names


@pytest.mark.parametrize("label,func,docsrc", list(_callables()), ids=lambda v: v if isinstance(v, str) else "")
def test_arguments_documented(label, func, docsrc):
    sig = inspect.signature(func)
    args = [p.name for p in sig.parameters.values()
            if p.name not in ("self", "cls") and p.kind is not inspect.Parameter.VAR_POSITIONAL]
    if not args:
        return
    doc = inspect.getdoc(docsrc) or ""
    if docsrc is func and func.__name__ == "__init__":
        doc = ""
    if label in {c.__name__ for c in PUBLIC}:
        doc = (inspect.getdoc(docsrc) or "") + "\n" + (inspect.getdoc(func) or "")
    documented = _documented(doc)
    missing = [a for a in args if a not in documented and f"**{a}" not in doc and a not in ("kwargs", "args")]
    kw = [p.name for p in sig.parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    missing = [a for a in missing if a not in kw or f"**{a}" not in doc]
    assert not missing, f"{label}: undocumented arguments {missing}"
