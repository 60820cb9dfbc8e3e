"""phsym show in the netlist's physics: kinds and domains, quantities and units, probes by quantity."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import phsym
from phsym.cli import main
from phsym.report import physics

NET = Path(__file__).resolve().parent.parent / "netlists"


def test_heat_transfer_reads_as_thermal(capsys):
    assert main(["show", str(NET / "heat_transfer.cir")]) == 0
    text = capsys.readouterr().out
    assert "TH1  heat_capacity  thermal" in text
    assert "s_TH1            [TH1]  entropy [J/K] (thermal)" in text
    assert "TA (temperature [K]) -> y(TA) (entropy flow [W/K])" in text
    assert "Probes: T(t1) = v(t1) [K], T(t2) = v(t2) [K]" in text
    doc = json.loads(phsym.report.describe_json(phsym.load(NET / "heat_transfer.cir")))
    assert doc["elements"]["G12"] == {"kind": "heat_transfer", "domain": "thermal", "nodes": ["t1", "t2"]}
    assert doc["states"][0]["unit"] == "J/K" and doc["physics"]["probes"]["v(t1)"]["name"] == "T(t1)"


@pytest.mark.parametrize("deck, states, ports", [
    ("rlc.cir", {"q_C1": ("charge", "C"), "phi_L1": ("flux linkage", "Wb")}, {"V1": ("voltage", "current")}),
    ("msd_mobility.cir", None, None),
    ("msd_impedance.cir", {"p_M1": ("momentum", "N s"), "x_K1": ("displacement", "m")},
     {"F1": ("force", "velocity")}),
    ("magnetic_circuit.cir", {"phi_Xgap": ("magnetic flux", "Wb")}, {"V1": ("voltage", "current")}),
])
def test_states_and_ports_carry_their_quantities(deck, states, ports):
    ph = physics(phsym.load(NET / deck))
    for name, (qty, unit) in (states or {}).items():
        assert (ph["states"][name]["quantity"], ph["states"][name]["unit"]) == (qty, unit)
    for name, (u, y) in (ports or {}).items():
        assert (ph["ports"][name]["input"][0], ph["ports"][name]["output"][0]) == (u, y)
    if deck == "msd_mobility.cir":     # the mobility analogy swaps what masses and springs store against the impedance one
        kinds = {s["element"][0]: s["quantity"] for s in ph["states"].values()}
        assert kinds == {"M": "momentum", "K": "displacement"}


THERMAL = """* two bodies by quantity
TH1 t1 0 heat_capacity C=10 T0=293.15 IC=353.15
TH2 t2 0 heat_capacity C=100 T0=293.15 IC=283.15
G12 t1 t2 heat_transfer G=1
R1 e 0 1k
V1 e 0 DC 1
.probe T(t1) v(t2) sflow(G12) t(t1,t2)
.end
"""


@pytest.mark.parametrize("engine", ["generated", "numeric"])
def test_probes_by_quantity_are_the_spice_probes(engine):
    m = phsym.parse(THERMAL)
    assert [p.label for p in m.probes] == ["T(t1)", "v(t2)", "sflow(G12)", "T(t1,t2)"]
    res = phsym.Simulator(m, 10.0, engine=engine).run(duration=2.0)
    np.testing.assert_array_equal(res["T(t1)"], res["v(t1)"])
    np.testing.assert_array_equal(res["T(t2)"], res["v(t2)"])
    np.testing.assert_array_equal(res["sflow(G12)"], res["i(G12)"])
    np.testing.assert_allclose(res["T(t1,t2)"], res["v(t1)"] - res["v(t2)"], rtol=0, atol=1e-12)
    # a quantity's name on another domain is refused with the names that hold there
    with pytest.raises(phsym.SignalError, match=r"'e' is a node of the electrical domain.*there: v\(\.\.\.\) for the voltage"):
        res["T(e)"]
    with pytest.raises(phsym.NetlistError, match="expected v"):
        phsym.parse(THERMAL.replace("sflow(G12)", "zz(G12)"))
