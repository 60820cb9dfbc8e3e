"""Acceptance of random R/L/C/K/V/I circuits and agreement with an independent MNA (issue 10, item 4).

Run from the repository root::

    PYTHONPATH=. python benchmarks/random_mna.py --circuits 400
    PYTHONPATH=/path/to/other/checkout python benchmarks/random_mna.py   # another phsym, same circuits

The circuits, the well-posedness rule and the modified nodal analysis are
those of ``tests/test_random_mna.py``.  Prints how many well-posed circuits
phsym accepts, why it rejects the others, and the largest relative
difference of its transfer functions from the MNA reference.
"""
from __future__ import annotations

import argparse
import collections
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))              # PYTHONPATH decides which phsym is measured
sys.path.insert(0, str(ROOT / "tests"))

import phsym  # noqa: E402
from phsym.errors import PhsymError  # noqa: E402
from test_random_mna import MNA, S_POINTS, _build, _order, circuits, netlist, well_posed  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--circuits", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261123)
    args = ap.parse_args()
    t0 = time.perf_counter()
    posed = accepted = wrongly_accepted = 0
    reasons: collections.Counter = collections.Counter()
    worst = 0.0
    for elements, couplings in circuits(args.circuits, args.seed):
        ok = well_posed(elements)
        posed += ok
        try:
            model = _build(netlist(elements, couplings))
            lin = model.linearize()
        except PhsymError as exc:
            if ok:
                reasons[re.sub(r"\[.*?\]", "[...]", exc.message.split(":")[0])[:60]] += 1
            continue
        accepted += ok
        wrongly_accepted += not ok
        ref = MNA(elements, couplings)
        if ok and ref.sources:
            p = _order(model, ref)
            for s in S_POINTS:
                Gr = ref.transfer(s)
                worst = max(worst, float(np.max(np.abs(lin.transfer(s)[np.ix_(p, p)] - Gr))
                                         / max(1.0, np.max(np.abs(Gr)))))
    print(f"phsym {phsym.__version__} from {Path(phsym.__file__).parent}")
    print(f"{args.circuits} circuits (seed {args.seed}), {posed} well posed; accepted {accepted} "
          f"({100.0 * accepted / max(posed, 1):.1f} %), ill-posed accepted {wrongly_accepted}")
    for reason, n in reasons.most_common():
        print(f"  rejected {n:4d}: {reason}")
    print(f"max relative transfer-function difference from MNA: {worst:.2e}")
    print(f"wall time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
