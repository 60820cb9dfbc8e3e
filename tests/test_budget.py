"""Memory guard: a job that would not fit is refused up front with a ResourceError, nothing allocated."""
import resource
import warnings

import numpy as np
import pytest

import phsym
from phsym.benchmarks.decks import rc_mesh, ttl_nand_chain
from phsym.common import budget
from phsym.errors import NetlistError, PhsymError, ResourceError


def _bomb(levels: int) -> str:
    """``levels`` nested subcircuits of ten instances each: 10**levels resistors."""
    lines = ["* nested instances", "V1 a 0 1"]
    for k in range(levels):
        lines.append(f".subckt s{k} a")
        lines += [f"X{i} a s{k - 1}" if k else f"R{i} a 0 1k" for i in range(10)]
        lines.append(f".ends s{k}")
    lines.append(f"Xtop a s{levels - 1}")
    return "\n".join(lines)


def test_sizes_parse_and_print():
    assert budget.parse_size("2G") == 2 * 2**30
    assert budget.parse_size("512m") == 512 * 2**20
    assert budget.parse_size("1.5GB") == int(1.5 * 2**30)
    assert budget.parse_size("1000") == 1000
    assert budget.human(1536 * 2**20) == "1.5 GB"
    for bad in ("lots", "-1G", "nanM"):
        with pytest.raises(ResourceError, match="PHSYM_MEMORY_LIMIT"):
            budget.parse_size(bad)


def test_budget_comes_from_the_environment_or_the_machine(monkeypatch):
    monkeypatch.setenv(budget.LIMIT_ENV, "3G")
    assert budget.available() == 3 * 2**30
    monkeypatch.delenv(budget.LIMIT_ENV)
    have = budget.available()
    assert have is None or have > 0
    budget.check("nothing", 1.0)        # a byte always fits


def test_error_names_estimate_parts_and_hint(monkeypatch):
    monkeypatch.setenv(budget.LIMIT_ENV, "1G")
    with pytest.raises(ResourceError) as err:
        budget.check("a job", 2 * 2**30, {"states": 2**30, "outputs": 2**30}, hint="do less")
    text = str(err.value)
    assert "a job needs about 2.0 GB (states 1.0 GB, outputs 1.0 GB)" in text
    assert "1.0 GB" in text and "PHSYM_MEMORY_LIMIT" in text and "hint: do less" in text
    assert isinstance(err.value, PhsymError) and isinstance(err.value, MemoryError)


def test_nested_instances_are_counted_before_they_are_built():
    # 10**8 elements: refused from the count, without flattening (not an OOM kill)
    with pytest.raises(NetlistError, match="elements after flattening") as err:
        phsym.parse(_bomb(8))
    loc = err.value.location               # the instance to look at, with its line
    assert "Xtop alone expands" in str(err.value) and loc.text == "Xtop a s7" and loc.column == 1
    assert len(phsym.parse(_bomb(2)).netlist.elements) == 101


def test_large_netlist_refused_under_a_small_budget(monkeypatch):
    monkeypatch.setenv(budget.LIMIT_ENV, "20M")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ResourceError, match=r"a netlist of 2642 elements"):
            phsym.parse(rc_mesh(30, steps=10))


def test_long_run_refused_before_allocation(monkeypatch):
    model = phsym.parse("V1 a 0 SIN(0 1 1k)\nR1 a b 1k\nC1 b 0 1u\n")
    sim = phsym.Simulator(model, 48000.0)
    monkeypatch.setenv(budget.LIMIT_ENV, "200M")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ResourceError, match="a run of .* steps") as err:
        sim.run(duration=3600.0 * 10)      # 1.7e9 steps
    assert "Stream" in str(err.value)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000    # kB: nothing large touched
    monkeypatch.delenv(budget.LIMIT_ENV)
    assert np.isfinite(sim.run(duration=1e-3).x).all()


def test_generated_loop_of_a_large_circuit_refused_up_front(monkeypatch):
    monkeypatch.setenv(budget.LIMIT_ENV, "16G")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = phsym.parse(ttl_nand_chain(9))       # 443 branches: tens of GB to unroll
    with pytest.raises(ResourceError, match="generated loop of a circuit of 443 branches") as err:
        phsym.Simulator(model, 1e10, engine="generated")
    assert "engine='numeric'" in str(err.value)
    assert "structure" not in vars(model)           # refused before any symbolic work
    assert phsym.Simulator(model, 1e10, engine="auto").engine == "numeric"
