"""Switch hysteresis (``VH``) resolved where sources alone set the control voltage
(phsym.netlist.hysteresis), and refused, naming the switch, where the circuit sets it."""
import numpy as np
import pytest

from phsym.errors import NetlistError, PhsymError
from phsym.netlist import parse_netlist
from phsym.netlist.hysteresis import resolve_hysteresis
from phsym.netlist.waveforms import evaluate_waveform

#: a triangle 0 -> 4 V -> 0 every 2 ms through the band 1 V .. 3 V (VT=2, VH=1)
CHOPPER = ("t\nvdrive c 0 pwl(0 0 1m 4 2m 0 3m 4 4m 0)\nvsup sup 0 dc 10\ns1 sup out c 0 hyst\n"
           "rload out 0 1k\n.model hyst sw(vt=2 vh=1 ron=10 roff=1meg)\n.tran 2u 4m\n")


def _state(nl, name, t):
    hidden = nl.element(f"{name}#state")
    return evaluate_waveform(hidden.waveform, np.asarray(t, float))


def test_state_of_a_source_driven_control_turns_on_above_vt_plus_vh_and_off_below_vt_minus_vh():
    nl = parse_netlist(CHOPPER)
    s1 = nl.element("s1")
    assert s1.nodes == ("sup", "out", "s1#state", "0")
    assert float(s1.values["Vt"]) == 0.5 and float(s1.values["Vh"]) == 0.0
    # the triangle crosses 3 V rising at 0.75 ms and 2.75 ms, 1 V falling at 1.75 ms and 3.75 ms;
    # between the thresholds (2 V at 0.5, 1.5, 2.5, 3.5 ms) the switch keeps its last state
    t = [0.0, 0.5e-3, 0.7e-3, 0.8e-3, 1.5e-3, 1.7e-3, 1.8e-3, 2.5e-3, 2.8e-3, 3.5e-3, 3.8e-3, 4e-3]
    np.testing.assert_allclose(_state(nl, "s1", t), [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0])
    # the hidden node is no signal the deck saves
    assert not any("#" in s for s in nl.outputs())


def test_control_through_a_chain_of_sources_and_its_negative_terminal():
    # v(c) - v(d) = (1 + ramp) - 1: the potentials of both control nodes follow sources only
    nl = parse_netlist("t\nvb d 0 1\nvr c d pwl(0 0 1m 4)\nv1 a 0 1\ns1 a 0 c d sm\n"
                       ".model sm sw(vt=2 vh=0.5)\n.tran 10u 1m\n")
    np.testing.assert_allclose(_state(nl, "s1", [0.6e-3, 0.65e-3]), [0, 1])     # on at 2.5 V: 0.625 ms


def test_a_control_the_circuit_sets_is_refused_naming_the_switch():
    text = ("t\nvdrive d 0 pwl(0 0 1m 4)\nrdrive d c 1k\ncdrive c 0 1n\nvsup sup 0 10\n"
            "S7 sup out c 0 hyst\nrload out 0 1k\n.model hyst sw(vt=2 vh=1)\n.tran 2u 1m\n")
    with pytest.raises(PhsymError, match="switch S7: hysteresis") as err:
        parse_netlist(text)
    assert isinstance(err.value, NetlistError)
    assert err.value.location.line == 6 and "set by voltage sources alone" in err.value.hint


def test_hysteresis_without_tran_and_negative_hysteresis_are_refused():
    with pytest.raises(NetlistError, match="switch s1: hysteresis needs the deck's .tran"):
        parse_netlist(CHOPPER.replace(".tran 2u 4m\n", ""))
    with pytest.raises(NetlistError, match="switch s1: negative hysteresis"):
        parse_netlist(CHOPPER.replace("vh=1", "vh=-1"))


def test_switches_without_hysteresis_are_left_as_they_are():
    nl = parse_netlist(CHOPPER.replace("vh=1", "vh=0"))
    values = {p.symbol: p.default for p in nl.parameters.values()}
    assert resolve_hysteresis(list(nl.elements), values, None) == list(nl.elements)
    assert nl.element("s1").nodes == ("sup", "out", "c", "0")
