"""Potentiometer: divider ratios against the hand formula for both tapers,
the position overridden at run time without new code, clear errors."""
import numpy as np
import pytest

import phsym
from phsym.errors import NetlistError

NET = "* pot\nV1 a 0\nP1 a w 0 R=10k pos={pos} taper={taper}\nR2 w 0 1e15\n.probe v(w)\n"


@pytest.mark.parametrize("taper", ["lin", "log"])
@pytest.mark.parametrize("pos", [0.0, 0.25, 0.5, 1.0])
def test_divider_ratio(taper, pos):
    t = pos if taper == "lin" else (81 ** pos - 1) / 80
    ratio = (t + 1e-3) / (1 + 2e-3)                 # end resistances R * rend at both ends
    m = phsym.parse(NET.format(pos=pos, taper=taper))
    res = phsym.Simulator(m, 1000, method="backward_euler").run(u={"V1": 2.0}, duration=0.003)
    np.testing.assert_allclose(res["v(w)"], 2.0 * ratio, rtol=1e-10)
    if taper == "log" and pos == 0.5:
        assert ratio == pytest.approx(0.1, rel=1e-2)     # audio taper: 10 % at mid travel


def test_position_is_a_runtime_parameter():
    m = phsym.parse("* pot\nV1 in 0 SIN(0 1 1k)\nR1 in a 1k\nP1 a w 0 R=10k\nC1 w 0 10n\nD1 w 0\n.probe v(w)\n")
    sim = phsym.Simulator(m, 48000)
    runs = [sim.run(duration=2e-3, params={"P1.pos": p}) for p in (0.2, 0.9)]
    assert runs[0].info["key"] == runs[1].info["key"]              # the same generated loop
    assert runs[1].info["compile_time"] < 0.5
    peaks = [np.max(np.abs(r["v(w)"])) for r in runs]
    assert peaks[0] < peaks[1]
    with pytest.raises(phsym.PhsymError, match="must be in \\[0, 1\\]"):
        sim.run(duration=2e-3, params={"P1.pos": 1.2})


@pytest.mark.parametrize("line,msg", [("P1 a w 0 R=10k pos=1.5", "value pos of P1 must be in \\[0, 1\\]"),
                                      ("P1 a w 0 R=10k taper=exp", "taper= must be one of lin, log"),
                                      ("P1 a w R=10k", "expected node name")])
def test_errors(line, msg):
    with pytest.raises(phsym.PhsymError, match=msg):
        phsym.parse(f"* pot\nV1 a 0\n{line}\n")
