"""Decks as they exist in the wild (``tests/decks/wild``): their analyses and ngspice references.

The decks are written the way textbooks, vendors and schematic tools write
them (SPICE2 syntax, upper case, continuation lines, POLY macromodels,
``.ac``/``.dc``/``.tf``/``.meas``/``.four`` cards).  Each runs unmodified
through the CLI; ``refs/NAME.npz`` holds what ngspice-39 computed for each
of its analyses (written by ``make_refs.py``):

* ``tran_t``, ``tran_names``, ``tran_v``: node voltages on 401 uniform
  points over ``[0, TSTOP]``;
* ``ac_f``, ``ac_names``, ``ac_v`` (complex): node voltages per unit of
  the AC sources;
* ``dc_x``, ``dc_names``, ``dc_v``: node voltages and source currents over
  the sweep (nested sweeps: the inner sweep repeated for each outer value);
* ``tf_names``, ``tf_v``: transfer function, input and output resistance;
* ``op_names``, ``op_v``: node voltages and source currents;
* ``meas_names``, ``meas_v``: the ``.meas`` results;
* ``four_names``, ``four_v``: per ``.four`` signal the harmonics' magnitudes
  and phases and the THD;
* ``command`` (the exact ngspice command and control lines), ``ngspice``
  (its version) and ``edits`` (text a deck ngspice cannot read needed,
  with the reason; empty for most decks).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List

import numpy as np

try:                    # as tests.decks.wild_corpus, or next to make_refs.py as a script
    from . import corpus
except ImportError:
    import corpus

WILD = Path(__file__).resolve().parent / "wild"
WILD_REFS = WILD / "refs"

#: decks whose text ngspice-39 cannot read as it is: (old, new, why) replacements for its reference run
REFERENCE_EDITS: Dict[str, list] = {
    "ltspice_clipper_export": [
        ("V1 N001 0 SINE(0 2 1k) Rser=600", "V1 N001 V1S SINE(0 2 1k)\nRV1SER V1S 0 600",
         "ngspice-39 knows no Rser= on a source (LTspice's series resistance)"),
        ("C1 N001 N002 100n Rser=0.5", "C1 N001 C1S 100n\nRC1SER C1S N002 0.5",
         "ngspice-39 knows no Rser= on a capacitor"),
        ("C2 N003 0 10n Rpar=10Meg", "C2 N003 0 10n\nRC2PAR N003 0 10Meg",
         "ngspice-39 knows no Rpar= on a capacitor"),
        (".lib diodes_lt.lib", ".include diodes_lt_ngspice.lib",
         "ngspice-39 reads .lib only with a section name (LTspice: the whole file), and no mfg=/type= "
         "text in a .model card: diodes_lt_ngspice.lib is diodes_lt.lib without them"),
    ],
    "kicad_rc_export": [
        ('.include "diodes_lt.lib"', '.include "diodes_lt_ngspice.lib"',
         "ngspice-39 reads no mfg=/type= text in a .model card"),
    ],
}

#: decks whose transients switch (3 % of the swing, relative RMS); the others are analog (1 %)
SWITCHING: Dict[str, str] = {
    "switch_sample_hold": "a clocked S switch",
    "switch_current_relay": "a W switch closing on the coil current",
    "cmos_inverter_pair": "CMOS inverters; their charges form capacitor loops, so backward Euler (first order)",
}
#: relative RMS of the swing a transient must stay within (analog, switching)
TRAN_RMS = (1e-2, 3e-2)
#: relative power-balance residual of every transient
BALANCE_TOL = 1e-10

#: cards naming an analysis, as ngspice's control commands spell them (the dot removed)
ANALYSES = ("op", "dc", "ac", "tf", "tran")


def wild_paths() -> List[Path]:
    """Every deck of ``tests/decks/wild``, sorted by name."""
    return sorted(WILD.glob("*.cir"))


def analysis_cards(path: Path) -> Dict[str, str]:
    """The deck's analysis cards and ``.four`` by name (``{"tran": ".TRAN 5U 2M", ...}``),
    continuation lines joined, the deck file only (not its includes)."""
    text = path.read_text(encoding="utf-8-sig")
    lines: List[str] = []
    for raw in text.splitlines()[1:]:
        if raw.lstrip().startswith("+") and lines:
            lines[-1] += " " + raw.lstrip()[1:]
        else:
            lines.append(raw)
    out: Dict[str, str] = {}
    for line in lines:
        m = re.match(r"\s*\.(\w+)\b", line)
        if m and m.group(1).lower() in ANALYSES + ("four", "fourier", "step"):
            key = "four" if m.group(1).lower().startswith("four") else m.group(1).lower()
            out.setdefault(key, re.split(r"\s;|\s\$", line)[0].strip())
        if m and m.group(1).lower() == "end":
            break
    return out


def load(path: Path) -> Dict[str, np.ndarray]:
    """The stored reference of a wild deck (arrays by name)."""
    with np.load(WILD_REFS / f"{path.stem}.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def rms_of_swing(ref: np.ndarray, got: np.ndarray, floor: float = 0.1) -> float:
    """RMS of ``got - ref`` relative to the swing of ``ref`` (at least ``floor``)."""
    ok = np.isfinite(got)
    return float(np.sqrt(np.mean((got[ok] - ref[ok]) ** 2)) / max(np.ptp(ref), floor))


def max_of_swing(ref: np.ndarray, got: np.ndarray, floor: float = 0.1) -> float:
    """Largest ``|got - ref|`` relative to the swing of ``ref`` (at least ``floor``)."""
    ok = np.isfinite(got)
    return float(np.max(np.abs(got[ok] - ref[ok])) / max(np.ptp(ref), floor))


def tran_errors(path: Path, res) -> Dict[str, tuple]:
    """``{node: (rms, max)}`` of a phsym transient against the deck's reference, relative to the
    node's swing, on every node not fixed by voltage sources alone."""
    node_waveforms, signal_nodes, source_nodes = corpus.node_waveforms, corpus.signal_nodes, corpus.source_nodes
    ref = load(path)
    names = [str(n)[2:-1] for n in ref["tran_names"]]
    fixed = {n.lower() for n in source_nodes(path)}
    spelled = {n.lower(): n for n in signal_nodes(path)}
    nodes = [n for n in names if n not in fixed and n in spelled]     # not ngspice's own internal nodes
    t = ref["tran_t"]
    got = node_waveforms(res, [spelled.get(n, n) for n in nodes], t)
    out = {}
    for n, row in zip(names, ref["tran_v"]):
        if n in nodes:
            g = got[spelled.get(n, n)]
            out[n] = (rms_of_swing(row, g), max_of_swing(row, g))
    return out



def group(index: int, groups: int) -> List[Path]:
    """Every ``groups``-th wild deck from ``index`` on (test files split the corpus between workers)."""
    return wild_paths()[index::groups]


def check_tran(path: Path) -> Dict[str, tuple]:
    """Run a wild deck's ``.tran`` as ``phsym simulate DECK`` does and hold it to its reference."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # wild decks are expected to warn (ignored cards...)
        res = corpus.run_deck(path)
    if res.info["scheme"] == "backward_euler":
        # capacitor loops (a MOSFET's overlap and junction charges): backward Euler, whose
        # balance residual is numerical dissipation, never energy made
        assert np.max(res.balance, initial=0.0) / res.power_scale <= BALANCE_TOL
    else:
        assert res.max_balance_error <= BALANCE_TOL, res.max_balance_error
    errors = tran_errors(path, res)
    assert errors, f"{path.name}: no node compared"
    limit = TRAN_RMS[path.stem in SWITCHING]
    worst = {n: e for n, e in errors.items() if e[0] > limit}
    assert not worst, f"{path.name}: relative RMS above {limit:g}: {worst}"
    return errors

#: ``.ac`` tolerance (dB) and, where the magnitude is within 60 dB of its largest, the phase's (degrees)
AC_DB, AC_DEG = 0.1, 1.0
#: ``.dc`` and ``.tf`` tolerance, relative to the signal's largest magnitude over the sweep
DC_REL = 1e-2


def _known(path: Path, labels) -> Dict[str, str]:
    """Reference labels phsym's netlist knows (ngspice adds its own internal nodes and branches)."""
    from phsym.netlist import load_netlist
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nl = load_netlist(path)
    nodes = {n.lower() for el in nl.elements for n in el.nodes}
    sources = {el.name.lower() for el in nl.elements if el.kind in ("vsource", "ammeter")}
    out = {}
    for lab in labels:
        lab = str(lab)
        inner = lab[2:-1]
        if (lab.startswith("v(") and inner in nodes) or (lab.startswith("i(") and inner in sources):
            out[lab] = lab
    return out


def check_ac(path: Path) -> Dict[str, tuple]:
    """Run a wild deck's ``.ac`` as ``phsym ac DECK`` does; ``{signal: (dB, degrees)}`` worst differences."""
    import warnings
    from phsym.simulation.analyses.ac import ac_analysis
    ref = load(path)
    known = _known(path, ref["ac_names"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ac_analysis(path, ref["ac_f"], signals=list(known))
    out = {}
    for lab, row in zip(ref["ac_names"], ref["ac_v"]):
        if str(lab) not in known:
            continue
        got = res.response[str(lab)]
        big = np.abs(row) > 1e-3 * np.max(np.abs(row))
        if np.max(np.abs(row)) < 1e-9:          # a node the AC sources do not reach
            assert np.max(np.abs(got)) < 1e-7, (lab, np.max(np.abs(got)))
            continue
        ok = np.abs(row) > 1e-12 * np.max(np.abs(row))
        db = np.max(np.abs(20 * np.log10(np.abs(got[ok]) / np.abs(row[ok]))))
        deg = np.max(np.abs(np.degrees(np.angle(got[big] / row[big]))), initial=0.0)
        out[str(lab)] = (float(db), float(deg))
    bad = {k: v for k, v in out.items() if v[0] > AC_DB or v[1] > AC_DEG}
    assert out and not bad, f"{path.name}: beyond {AC_DB} dB / {AC_DEG} deg: {bad}"
    _check_measures(path, ref, res.measure(_cards(path)))
    return out


def check_dc(path: Path) -> Dict[str, float]:
    """Run a wild deck's ``.dc`` as ``phsym dc DECK`` does; ``{signal: worst error / its largest magnitude}``."""
    import warnings
    from phsym.netlist.cards import deck_settings
    from phsym.simulation.analyses.dcsweep import dc_sweep
    ref = load(path)
    known = _known(path, ref["dc_names"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dc_sweep(path, deck_settings(path).analyses.dc, signals=list(known))
    out = {}
    for lab, row in zip(ref["dc_names"], ref["dc_v"]):
        if str(lab) in known:
            got = res.signals[str(lab)]
            assert got.shape == row.shape, (lab, got.shape, row.shape)
            floor = 1e-9 if str(lab).startswith("i(") else 1e-6     # a gate's GMIN current against 0
            out[str(lab)] = float(np.max(np.abs(got - row)) / max(np.max(np.abs(row)), floor))
    bad = {k: v for k, v in out.items() if v > DC_REL}
    assert out and not bad, f"{path.name}: beyond {DC_REL:g} of the largest value: {bad}"
    _check_measures(path, ref, res.measure(_cards(path)))
    return out


def check_tf(path: Path) -> Dict[str, float]:
    """Run a wild deck's ``.tf`` as ``phsym tf DECK`` does; ``{quantity: relative difference}``."""
    import warnings
    from phsym.netlist.cards import deck_settings
    from phsym.simulation.analyses.tf import transfer_function
    ref = load(path)
    tf = deck_settings(path).analyses.tf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = transfer_function(path, tf.output, tf.source).as_dict()
    out = {str(k): abs(got[str(k)] - v) / max(abs(v), 1e-9) for k, v in zip(ref["tf_names"], ref["tf_v"])}
    assert set(out) == set(got) and all(v <= DC_REL for v in out.values()), (path.name, out, got)
    return out


def check_op(path: Path) -> Dict[str, float]:
    """Run a wild deck's ``.op`` as ``phsym op DECK`` does; ``{vector: difference}`` (relative, or absolute
    below 1 uV / 1 nA)."""
    import warnings
    from phsym.simulation import operating_point
    ref = load(path)
    known = _known(path, ref["op_names"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op = operating_point(str(path))
    nodes = {k.lower(): v for k, v in op.nodes.items()}
    currents = {k.lower(): v for k, v in op.currents.items()}
    out = {}
    for lab, val in zip(ref["op_names"], ref["op_v"]):
        lab = str(lab)
        if lab not in known:
            continue
        got = nodes[lab[2:-1]] if lab.startswith("v(") else currents[lab[2:-1]]
        floor = 1e-6 if lab.startswith("v(") else 1e-9
        out[lab] = abs(got - val) / max(abs(val), floor)
    assert out and all(v <= 1e-3 for v in out.values()), (path.name, out)
    return out

#: ``.meas`` tolerance: relative, plus an absolute floor (a mean near 0)
MEAS_REL, MEAS_ABS = 1e-2, 1e-4
#: ``.four``: harmonics within 1 % of the fundamental, the fundamental's phase within 1 degree, THD within 1 %
FOUR_REL, FOUR_DEG = 1e-2, 1.0


def check_meas_four(path: Path) -> Dict[str, float]:
    """A wild deck's ``.meas tran`` and ``.four`` results from its transient against ngspice's."""
    import warnings
    from phsym.simulation.run import simulate
    from phsym.netlist.cards import deck_settings
    ref = load(path)
    deck = deck_settings(path)
    x0 = None if deck.x0 == "ic" else deck.x0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = simulate(str(path), deck.tran.fs, duration=deck.tran.stop, x0=x0, **deck.simulator_options())
    out = _check_measures(path, ref, res.info.get("measures", {}))
    for label, rows, thd in zip(ref.get("four_names", []), ref.get("four_v", []), ref.get("four_thd", [])):
        f = res.info["fourier"][next(k for k in res.info["fourier"] if k.lower() == str(label))]
        a1 = rows[1, 2]
        out[f"{label} harmonics"] = float(np.max(np.abs(f.magnitude - rows[:, 2])) / (FOUR_REL * a1))
        out[f"{label} phase"] = abs(f.phase[1] - rows[1, 3]) / FOUR_DEG
        out[f"{label} THD"] = abs(f.thd - thd) / (FOUR_REL * thd)
    assert out and all(v <= 1 for v in out.values()), (path.name, out)
    return out


def _cards(path: Path):
    from phsym.netlist.cards import deck_settings
    return deck_settings(path).analyses.measures


def _check_measures(path: Path, ref, got: Dict[str, float]) -> Dict[str, float]:
    """The measurements ``got`` (one analysis' cards) against ngspice's of the same names."""
    out = {}
    names = {k.lower(): v for k, v in got.items()}
    for name, val in zip(ref.get("meas_names", []), ref.get("meas_v", [])):
        if str(name) in names:
            out[str(name)] = abs(names[str(name)] - val) / (MEAS_REL * abs(val) + MEAS_ABS)       # <= 1 passes
    assert all(v <= 1 for v in out.values()), (path.name, out)
    return out


def has_tran_measures(path: Path) -> bool:
    """Whether a deck has ``.meas tran`` or ``.four`` cards."""
    return "four" in analysis_cards(path) or any(m.analysis == "tran" for m in _cards(path))


def check_steps(path: Path) -> Dict[str, float]:
    """A wild deck with ``.step`` run as ``phsym simulate DECK`` runs it, each step against ngspice's run
    of that step: ``{"step k v(node)": relative RMS of the swing}``."""
    import warnings
    from phsym.netlist.cards import deck_settings
    from phsym.simulation.analyses.steps import run_steps
    ref = load(path)
    deck = deck_settings(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = run_steps(path, deck.analyses, deck.tran.fs, deck.tran.stop, deck.x0, **deck.simulator_options())
    assert len(runs) == len(ref["step_values"])
    fixed = {n.lower() for n in corpus.source_nodes(path)}
    out = {}
    for k, (run, want, rows) in enumerate(zip(runs, ref["step_values"], ref["tran_v"])):
        np.testing.assert_allclose(list(run.values.values()), want, rtol=1e-12)
        t = run.t[1:] - (run.t[1] - run.t[0]) / 2          # step values at the step's midpoint
        for lab, row in zip(ref["tran_names"], rows):
            node = str(lab)[2:-1]
            if node in fixed:
                continue
            key = next(s for s in run.signals if s.lower() == str(lab))
            got = np.interp(ref["tran_t"], t, run.signals[key][1:], left=np.nan, right=np.nan)
            out[f"step {k + 1} {lab}"] = rms_of_swing(row, got)
    assert out and all(v <= TRAN_RMS[0] for v in out.values()), (path.name, out)
    return out


def deck_tests(decks: List[Path]) -> Dict[str, object]:
    """The test functions of ``decks``, one per analysis, parametrised over the decks that ask for it
    (``globals().update(deck_tests(group(i, n)))`` in a test file: the corpus split between files,
    so that xdist's workers share it, with one definition of what is checked)."""
    import pytest

    def _with(analysis):
        return [p for p in decks if analysis in analysis_cards(p)]

    steps = _with("step")
    plain = {
        "test_transient_matches_ngspice": ([p for p in _with("tran") if p not in steps], check_tran),
        "test_each_step_matches_ngspice_run_at_its_values": (steps, check_steps),
        "test_ac_matches_ngspice_within_a_tenth_of_a_db": (_with("ac"), check_ac),
        "test_dc_sweep_matches_ngspice_within_one_percent": (_with("dc"), check_dc),
        "test_transfer_function_matches_ngspice": (_with("tf"), check_tf),
        "test_operating_point_matches_ngspice": (_with("op"), check_op),
        "test_meas_and_four_match_ngspice": ([p for p in _with("tran") if has_tran_measures(p)], check_meas_four),
    }
    out = {}
    for name, (paths, check) in plain.items():
        def test(path, check=check):
            check(path)
        test.__name__ = test.__qualname__ = name
        out[name] = pytest.mark.parametrize("path", paths, ids=lambda p: p.stem)(test)
    return out
