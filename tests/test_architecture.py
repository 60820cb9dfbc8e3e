"""The layout shows the pipeline: imports run forward only, without cycles, and
every subpackage is reachable from ``import phsym`` without paying for it."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import networkx as nx

import phsym

ROOT = Path(phsym.__file__).resolve().parent

#: Stages in pipeline order; a module may import its own stage and earlier ones.
STAGES = [
    ("errors", "version", "common", "clitools"),
    ("components",),
    ("netlist",),
    ("graph",),
    ("structure",),
    ("model", "benchmarks"),
    ("codegen",),
    ("simulation",),
    ("identify",),
    ("report", "cli", ""),
]
RANK = {name: i for i, names in enumerate(STAGES) for name in names}


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path):
    """phsym modules imported anywhere in the file (inside functions too)."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "phsym":
                    yield a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "phsym":
                continue
            for a in node.names:       # "from . import x" may name a submodule
                sub = f"{target}.{a.name}"
                yield sub if (ROOT.parent / sub.replace(".", "/")).with_suffix(".py").exists() \
                    or (ROOT.parent / sub.replace(".", "/")).is_dir() else target


def _stage(module: str) -> int:
    parts = module.split(".")
    return RANK[parts[1] if len(parts) > 1 else ""]


def _graph():
    g = nx.DiGraph()
    for path in ROOT.rglob("*.py"):
        src = _module(path)
        g.add_node(src)
        for dst in _imports(path):
            if dst != src:
                g.add_edge(src, dst)
    return g


def test_every_module_belongs_to_a_stage():
    for module in _graph().nodes:
        _stage(module)       # KeyError names a module outside the table


def test_imports_run_forward_only():
    back = [(a, b) for a, b in _graph().edges if _stage(b) > _stage(a)]
    assert not back, "imports from a stage to a later one: " + ", ".join(f"{a} -> {b}" for a, b in back)


def test_no_import_cycles():
    g = _graph()
    # a package's __init__ importing its own submodules is not a cycle of the design
    g.remove_edges_from([(a, b) for a, b in list(g.edges) if b.startswith(a + ".")])
    cycles = list(nx.simple_cycles(g))
    assert not cycles, cycles[:5]


def test_modules_stay_small():
    big = {str(p.relative_to(ROOT)): n for p in ROOT.rglob("*.py")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not big, big


_CHILD = """
import json, sys
import phsym
before = set(sys.modules)
names = [phsym.identify.ParameterEstimator.__name__, phsym.simulation.Simulator.__name__,
         phsym.netlist.parse_netlist.__name__, phsym.structure.LinearPHS.__name__, phsym.Simulator.__name__,
         phsym.UnidentifiableParameterWarning.__name__, phsym.components.REGISTRY.__class__.__name__]
print(json.dumps({"names": names, "heavy_at_import": sorted(m for m in ("sympy", "scipy", "numba", "networkx",
                 "numpy", "lark") if m in before)}))
"""


def test_fresh_process_reaches_every_subpackage_lazily():
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=300,
                         cwd=str(ROOT.parent))
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["names"][0] == "ParameterEstimator" and got["names"][-1] == "Registry"
    assert got["heavy_at_import"] == []          # import phsym stays cheap
