"""Human- and machine-readable descriptions of a model (``phsym show``): a
netlist :class:`~phsym.model.Model` or a saved numeric
:class:`~phsym.structure.linear.LinearPHS`.

A netlist is described in its own physics: each element with its kind and
domain, each state, port and probe with its quantity and unit
(:data:`phsym.common.quantities.DOMAINS`; a heat capacity's state is an
entropy in J/K, a thermal node's probe ``T(t1)`` a temperature in K)."""
from __future__ import annotations

import json
from typing import Any, Dict

import numpy as np
import sympy as sp

from .common.quantities import domain_of
from .components import REGISTRY
from .structure.linear import LinearPHS
from .structure.probes import branch_domains, label_quantity, state_quantities

__all__ = ["describe", "describe_text", "describe_json", "checks_pass", "physics"]


def physics(model) -> Dict[str, Any]:
    """The physics of a netlist model: elements with kind and domain; states, ports and probes with
    their quantity and unit.

    Parameters
    ----------
    model : Model
        A netlist model (any size: read from its graph, no symbolic structure needed).

    Returns
    -------
    dict
        ``elements``: name -> ``{kind, domain, nodes}``; ``states``: name -> ``{quantity, unit,
        element, domain}``; ``ports``: source -> ``{domain, input: [quantity, unit], output: [...]}``;
        ``probes``: label -> ``{name, quantity, unit}`` (``name``: the label by quantity, ``T(t1)``).
    """
    g = model.topology
    by_branch, by_element, owner = branch_domains(g), {}, {}
    for b in g.branches:
        owner[b.name] = b.element
        by_element.setdefault(b.element, []).append(by_branch[b.name])
    elements = {}
    for spec in model.netlist.elements:
        doms = list(dict.fromkeys(by_element.get(spec.name, [REGISTRY[spec.kind].domain])))
        elements[spec.name] = {"kind": spec.kind, "domain": ", ".join(doms), "nodes": list(spec.nodes)}
    storages, _, ports, _ = model._records       # the component records the model was built from
    quantity = state_quantities(g, storages)
    states = {}
    for st in storages:
        for x, br in zip(st.states, st.branches):
            q = quantity[str(x)]
            states[str(x)] = {"quantity": q.name, "unit": q.unit, "element": owner.get(br, br),
                              "domain": domain_of(by_branch.get(br)).name}
    port_info = {}
    for p in ports:
        d = domain_of(by_branch.get(p.branch))
        u, y = (d.across, d.through) if p.fixes == "across" else (d.through, d.across)
        port_info[p.element] = {"domain": d.name, "input": [u.name, u.unit], "output": [y.name, y.unit]}
    probes = {}
    for pr in model.probes:
        name, q = label_quantity(g, pr.label)
        probes[pr.label] = {"name": name, "quantity": q.name if q else "", "unit": q.unit if q else ""}
    return {"elements": elements, "states": states, "ports": port_info, "probes": probes}


def _qty(name: str, unit: str) -> str:
    return f"{name} [{unit}]" if unit else name


def _text_physics(ph: Dict[str, Any], inputs, outputs) -> list:
    """Lines of the elements, the ports and the probes in their quantities."""
    out = [f"Elements ({len(ph['elements'])}):"]
    els = ph["elements"]
    wn = max(map(len, els), default=1)
    wk = max((len(e["kind"]) for e in els.values()), default=1)
    wd = max((len(e["domain"]) for e in els.values()), default=1)
    for name, e in els.items():
        out.append(f"  {name:<{wn}}  {e['kind']:<{wk}}  {e['domain']:<{wd}}  {' '.join(e['nodes'])}")
    ports = []
    for u, y in zip(inputs, outputs):
        p = ph["ports"].get(u)
        ports.append(f"{u} -> {y}" if p is None else
                     f"{u} ({_qty(*p['input'])}) -> {y} ({_qty(*p['output'])})")
    out.append("Ports: " + (", ".join(ports) or "none") + "   (y^T u = power received by the system)")
    if ph["probes"]:
        out.append("Probes: " + ", ".join(
            f"{p['name']}" + (f" = {lab}" if p["name"] != lab else "") + (f" [{p['unit']}]" if p["unit"] else "")
            for lab, p in ph["probes"].items()))
    return out


def checks_pass(model) -> bool:
    """Whether every structure check of ``model`` holds.

    Parameters
    ----------
    model : Model or LinearPHS
        The model.
    """
    return all(model.check().values())       # numeric checks on a model above SYMBOLIC_LIMIT


def _describe_large(model) -> Dict[str, Any]:
    """What a model above the symbolic limit shows without its symbolic structure."""
    from collections import Counter
    kinds = Counter(el.kind for el in model.netlist.elements)
    return {"name": model.name, "file": model.netlist.file,
            "form": "large circuit: numeric structure only (the symbolic one is not built)",
            "size": model.size, "kinds": dict(sorted(kinds.items())), "states": model.states,
            "inputs": model.inputs, "outputs": model.outputs, "probes": [p.label for p in model.probes],
            "parameters": model.parameters, "controls": model.controls, "checks": {}, "physics": physics(model)}


def _describe_linear(lin: LinearPHS) -> Dict[str, Any]:
    poles = lin.poles()
    return {"name": repr(lin), "form": "linear pH-DAE (descriptor)" if lin.is_descriptor else "linear PHS",
            "states": lin.states, "inputs": lin.inputs, "outputs": lin.outputs,
            "hamiltonian": "x^T Q^T E x / 2",
            "matrices": {k: getattr(lin, k).tolist() for k in ("E", "J", "R", "Q", "B", "S", "N")},
            "poles": [[float(p.real), float(p.imag)] for p in poles],
            "checks": lin.check()}


def _text_linear(lin: LinearPHS, d: Dict[str, Any]) -> str:
    feed = " + (S - N) u" if lin.has_feedthrough else ""
    out = [f"{d['name']}  ({d['form']}: E x' = (J - R) Q x + B u, y = B^T Q x{feed})", ""]
    out.append("States: " + ", ".join(d["states"]))
    out.append("Ports: " + ", ".join(f"{u} -> {y}" for u, y in zip(d["inputs"], d["outputs"]))
               + "   (y^T u = power received by the system)")
    out.append("H = x^T Q^T E x / 2")
    with np.printoptions(precision=6, suppress=True, linewidth=110):
        for k in ("E", "J", "R", "Q", "B") + (("S", "N") if feed else ()):
            out.append(f"{k} =")
            out.extend("    " + line for line in str(getattr(lin, k)).splitlines())
        poles = lin.poles()
        out.append(f"Poles ({poles.size}): slowest real part {poles.real.max(initial=-np.inf):.6g}, "
                   f"fastest |s| {np.abs(poles).max(initial=0.0):.6g}")
    out.append("")
    out.append("Checks:")
    out.extend(f"  {'ok  ' if ok else 'FAIL'} {k}" for k, ok in d["checks"].items())
    return "\n".join(out)


def describe(model) -> Dict[str, Any]:
    """Collect states, ports, parameters, H, the structure and the checks.

    Parameters
    ----------
    model : Model or LinearPHS
        The model.
    """
    if isinstance(model, LinearPHS):
        return _describe_linear(model)
    if not model.symbolic_ready:
        return _describe_large(model)
    S = model.structure
    ex = model.explicit
    ph = physics(model)
    info: Dict[str, Any] = {
        "name": model.name,
        "file": model.netlist.file,
        "form": ("explicit PHS" if ex is not None and S.n_lambda == 0 else
                 "explicit PHS after elimination" if ex is not None else "pH-DAE (index 2 constraints)"),
        "elements": ph["elements"],
        "states": [{"name": str(x), "element": S.variables[i].element,
                    **{k: ph["states"].get(str(x), {}).get(k, "") for k in ("quantity", "unit", "domain")},
                    "gradient": str(S.gradients[i]),
                    "initial": None if S.state_initial[i] is None else str(S.state_initial[i])}
                   for i, x in enumerate(S.states)],
        "dissipative_ports": [{"element": d.element, "w": str(d.w), "z": str(d.z),
                               "orientation": "effort-out (f=w, e=z(w))" if d.effort_out
                               else "flow-out (e=w, f=z(w))", "linear": d.linear, "active": d.active,
                               "reads": [S.dissipative[k].element for k in d.coupled]}
                              for d in S.dissipative],
        "active": [d.element for d in S.dissipative if d.active],
        "algebraic": [v.name for v in S.variables if v.block == "lambda"],
        "inputs": model.inputs,
        "outputs": model.outputs,
        "probes": [p.label for p in model.probes],
        "physics": {"ports": ph["ports"], "probes": ph["probes"]},
        "parameters": model.parameters,
        "controls": model.controls,
        "hamiltonian": str(model.hamiltonian),
        "dirac": {"variables": [v.name for v in S.variables],
                  "J": {f"{r},{c}": str(v) for (r, c), v in sorted(S.J.items())}},
        "checks": model.check(),
    }
    if ex is not None:
        info["explicit"] = {"efforts": [str(e) for e in ex.efforts],
                            "J": [[str(v) for v in row] for row in ex.J.tolist()],
                            "R": [[str(v) for v in row] for row in ex.R.tolist()]}
    return info


def _text_large(d: Dict[str, Any]) -> str:
    n = d["size"]
    head = lambda names: ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")  # noqa: E731
    out = [f"{d['name']}  ({d['form']})", "",
           f"{n['elements']} elements, {n['branches']} branches, {n['nodes']} nodes, {n['states']} states, "
           f"{n['inputs']} ports",
           "Kinds: " + ", ".join(f"{k} {v}" for k, v in d["kinds"].items()),
           "States: " + head(d["states"]),
           "Domains: " + ", ".join(sorted({e["domain"] for e in d["physics"]["elements"].values()})),
           "Ports: " + (", ".join(f"{u} -> {y}" for u, y in zip(d["inputs"], d["outputs"])) or "none"),
           f"Parameters: {len(d['parameters'])}" + (f" (controls: {', '.join(d['controls'])})" if d["controls"] else "")]
    if d["probes"]:
        out.append("Probes: " + head(d["probes"]))
    out += ["", "H and the Dirac form are symbolic: not built for a model of this size",
            "(phsym show --symbolic builds them; simulating needs none of it); model.check() runs numerically."]
    return "\n".join(out)


def describe_json(model) -> str:
    """JSON text of :func:`describe`.

    Parameters
    ----------
    model : Model or LinearPHS
        The model.
    """
    return json.dumps(describe(model), indent=2)


def describe_text(model) -> str:
    """Plain-text report.

    Parameters
    ----------
    model : Model or LinearPHS
        The model.
    """
    d = describe(model)
    if isinstance(model, LinearPHS):
        return _text_linear(model, d)
    if "kinds" in d:
        return _text_large(d)
    S = model.structure
    out = [f"{d['name']}  ({d['form']})", ""]
    ph = {"elements": d["elements"], **d["physics"]}
    out.extend(_text_physics(ph, d["inputs"], d["outputs"])[:len(d["elements"]) + 1])
    out.append(f"States ({len(d['states'])}):")
    for s in d["states"]:
        ic = f"  IC: dH/dx = {s['initial']}" if s["initial"] else ""
        what = f"{_qty(s['quantity'], s['unit'])} ({s['domain']})" if s.get("quantity") else ""
        out.append(f"  {s['name']:<16} [{s['element']}]  {what}  dH/dx = {s['gradient']}{ic}")
    out.append(f"Dissipative ports ({len(d['dissipative_ports'])}):")
    for p in d["dissipative_ports"]:
        tag = "   ACTIVE (controlled source)" if p["active"] else ""
        out.append(f"  {p['w']:<16} z(w) = {p['z']}   {p['orientation']}{tag}")
    if d["active"]:
        out.append("Active elements (not passive; their power is injected, P_active): " + ", ".join(d["active"]))
    if d["algebraic"]:
        out.append("Algebraic variables: " + ", ".join(d["algebraic"]))
    out.extend(_text_physics(ph, d["inputs"], d["outputs"])[len(d["elements"]) + 1:])
    out.append("Parameters:")
    for k, v in d["parameters"].items():
        tag = "   CONTROL (a run may drive it: controls=, --control)" if k in d["controls"] else ""
        out.append(f"  {k} = {v:g}{tag}")
    out.append(f"H = {d['hamiltonian']}")
    out.append("")
    out.append("Dirac form  [dx/dt; f_w; 0; -y] = J [dH/dx; e_w; lambda; u]")
    out.append("  variables: " + ", ".join(d["dirac"]["variables"]))
    J = S.J_matrix() if S.size <= 30 else None
    if J is not None:
        out.append("  J =")
        out.extend("    " + line for line in sp.pretty(J, use_unicode=False).splitlines())
    else:
        out.append(f"  J: {S.size}x{S.size}, {len(S.J)} non-zeros (too large to print)")
    if "explicit" in d:
        ex = model.explicit
        out.append("Explicit form  [dx/dt; f_w(nonlinear); -y] = (J - R) e,  e = ["
                   + ", ".join(d["explicit"]["efforts"]) + "]")
        out.extend("    " + line for line in sp.pretty(ex.J - ex.R, use_unicode=False).splitlines())
    out.append("")
    out.append("Checks:")
    for k, ok in d["checks"].items():
        out.append(f"  {'ok  ' if ok else 'FAIL'} {k}")
    return "\n".join(out)
