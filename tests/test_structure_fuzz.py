"""Random netlists through the whole pipeline: a model whose checks pass, or a PhsymError."""
import os
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import phsym

# CI replays a fixed example sequence (reproducible); local runs explore anew.
IN_CI = os.environ.get("CI", "").lower() == "true"

ELECTRIC = ["0", "a", "b", "c", "d"]
MECH = ["0", "v1", "v2", "v3"]
VALUES = ["1", "1k", "10u", "2.2m", "0", "-1", "{2*P}", "P"]
LAWS = ["I={v/50 + v**3}", "I={2n*(exp(v/0.05)-1)}", "V={i*10 + i**3}", "I={-v}"]
STORE = ["H={q**2/2 + q**4}", "H={q**2}", "H={phi**2/2}"]


def _pair(draw, pool):
    a = draw(st.sampled_from(pool))
    b = draw(st.sampled_from([n for n in pool if n != a]))
    return a, b


@st.composite
def netlists(draw):
    """Mostly well-formed networks: random elements between distinct nodes, and
    (usually) a shunt on every used node so that few netlists are floating."""
    lines = [".param P=3"]
    used = set()
    counter = 0
    ok_val = st.sampled_from(["1", "1k", "10u", "2.2m", "{2*P}", "P"])
    for _ in range(draw(st.integers(1, 6))):
        counter += 1
        kind = draw(st.sampled_from("RRCLVIDTGKBF"))
        e1, e2 = _pair(draw, ELECTRIC)
        m1, m2 = _pair(draw, MECH)
        val = draw(st.one_of(ok_val, ok_val, ok_val, st.sampled_from(["0", "-1"])))
        if kind in "RCLVID":
            used.update({e1, e2})
        if kind == "R":
            lines.append(f"R{counter} {e1} {e2} " + draw(st.sampled_from([val, val] + LAWS)))
        elif kind == "C":
            lines.append(f"C{counter} {e1} {e2} " + draw(st.sampled_from([val, val, STORE[0], STORE[1]])))
        elif kind == "L":
            lines.append(f"L{counter} {e1} {e2} " + draw(st.sampled_from([val, val, STORE[2]])))
        elif kind in "VID":
            lines.append(f"{kind}{counter} {e1} {e2}")
        elif kind == "T":
            used.update({e1, e2})
            lines.append(f"TF{counter} {e1} {e2} {m1} 0 {val}")
            used.add(m1)
        elif kind == "G":
            e3 = draw(st.sampled_from([n for n in ELECTRIC if n not in (e1, e2, "0")] or ["d"]))
            used.update({e1, e2, e3})
            lines.append(f"GY{counter} {e1} {e2} {e3} 0 {val}")
        elif kind == "K":
            used.update({m1, m2})
            lines.append(f"K{counter} {m1} {m2} spring k={val}")
        elif kind == "B":
            used.update({m1, m2})
            lines.append(f"B{counter} {m1} {m2} damper c={val}")
        else:
            used.update({m1, m2})
            lines.append(f"F{counter} {m1} {m2} force")
    for node in sorted(used - {"0"}):
        if draw(st.integers(0, 5)) > 0:
            counter += 1
            if node.startswith("v"):
                lines.append(f"M{counter} {node} 0 mass m=2")
            else:
                lines.append(f"R{counter} {node} 0 " + draw(st.sampled_from(["100", "1", "C"])).replace("C", "10"))
    return "\n".join(lines) + "\n"


@settings(derandomize=IN_CI, max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(netlists())
def test_random_netlists_build_or_raise_phsym_error(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = phsym.parse(text)
        except phsym.PhsymError:
            return
    checks = model.check()
    assert all(checks.values()), (text, checks)
    S = model.structure
    assert all(S.J.get((c, r), 0) + v == 0 for (r, c), v in S.J.items())
    if S.is_linear:
        try:
            lin = model.linearize()
        except phsym.PhsymError:
            return
        assert all(lin.check().values())
        assert np.all(np.isfinite(lin.transfer(1.3 + 0.7j)))
