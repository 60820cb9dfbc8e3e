"""What a deck asks for when it is run: :class:`DeckSettings` (``.tran``, ``.options``, ``.temp``) and
:class:`Analyses` (the analysis and output cards), and :func:`has_control_cards`.

The card readers live in :mod:`phsym.netlist.cards` and
:mod:`phsym.netlist.analyses`; the data is here, in a module that imports
no parser, so that a run of a deck without control cards (most audio
circuits: the rate comes from the command line) learns so from the text
alone and a warm start imports no card reader.

>>> has_control_cards("R1 a 0 1k\\n.probe v(a)\\n.end\\n")
False
>>> has_control_cards("R1 a 0 1k\\n  .TRAN 1u 1m\\n")
True
>>> DeckSettings().run_defaults("deck.cir", 48e3, None, None)
(48000.0, None, None)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..common.physics import thermal_voltage
from ..errors import SimulationInputError

__all__ = ["Tran", "DeckSettings", "Analyses", "OPTION_CARDS", "ANALYSIS_CARDS", "INCLUDE_CARDS", "CONTROL_CARDS",
           "has_control_cards"]

#: Spellings of the options card.
OPTION_CARDS = (".options", ".option", ".opt", ".opts")
#: Analysis and output cards (read by :func:`phsym.netlist.analyses.read_card`).
ANALYSIS_CARDS = (".op", ".ac", ".dc", ".tf", ".four", ".fourier", ".meas", ".measure", ".save", ".print",
                  ".step")
#: Cards that read another file.
INCLUDE_CARDS = (".include", ".inc", ".lib")
#: Every card that :func:`phsym.netlist.cards.deck_settings` reads, and those that may bring one in.
CONTROL_CARDS = (".tran", ".temp") + OPTION_CARDS + ANALYSIS_CARDS + INCLUDE_CARDS
# as split_logical_lines reads a card: the first token of a stripped line, ended by a blank or a ';' comment
_CONTROL = re.compile(r"^\s*(?:%s)(?!\w)" % "|".join(re.escape(c) for c in CONTROL_CARDS),
                      re.IGNORECASE | re.MULTILINE)


def has_control_cards(text: str) -> bool:
    """Whether the deck's text may hold a card that changes its :class:`DeckSettings`.

    Conservative: a line that starts with one of :data:`CONTROL_CARDS` (an
    include too), in any case, counts, wherever it is; without any, the
    deck's settings are ``DeckSettings()``.

    Parameters
    ----------
    text : str
        The deck file's contents.
    """
    return _CONTROL.search(text) is not None


@dataclass(frozen=True)
class Tran:
    """A ``.tran TSTEP TSTOP [TSTART [TMAX]] [UIC]`` card.

    Attributes
    ----------
    step : float
        TSTEP [s]; phsym runs at the fixed rate ``1 / step``.
    stop : float
        TSTOP [s], the simulated duration.
    start : float
        TSTART [s] (the run still starts at 0).
    tmax : float or None
        TMAX [s] (no effect: the step is fixed).
    uic : bool
        ``UIC``: start from the initial conditions, not the DC operating point.
    """

    step: float
    stop: float
    start: float = 0.0
    tmax: Optional[float] = None
    uic: bool = False

    @property
    def fs(self) -> float:
        """Sample rate ``1 / step`` [Hz]."""
        return 1.0 / self.step


@dataclass
class Analyses:
    """The analysis and output cards of a deck, as :mod:`phsym.netlist.analyses` reads them.

    Attributes
    ----------
    op : bool
        ``.op`` is present.
    ac : Ac or None
    dc : list of Sweep
        The ``.dc`` sweeps, inner first (empty: no ``.dc``).
    tf : Tf or None
    four : list of Four
    measures : list of Measure
    saves : list of str
        ``.save`` vectors (``all`` included when written).
    prints : dict of str to list of str
        ``.print`` / ``.probe`` vectors by analysis (``tran``, ``ac``, ``dc``, ``op``).
    steps : list of Sweep
        ``.step`` sweeps, outer first.
    temps : list of float
        A ``.temp`` card's temperatures when it lists several.
    """

    op: bool = False
    ac: Optional["Ac"] = None
    dc: List["Sweep"] = field(default_factory=list)
    tf: Optional["Tf"] = None
    four: List["Four"] = field(default_factory=list)
    measures: List["Measure"] = field(default_factory=list)
    saves: List[str] = field(default_factory=list)
    prints: dict = field(default_factory=dict)
    steps: List["Sweep"] = field(default_factory=list)
    temps: List[float] = field(default_factory=list)


@dataclass(frozen=True)
class DeckSettings:
    """How a deck asks to be run (its control cards).

    Attributes
    ----------
    tran : Tran or None
        The ``.tran`` card.
    options : dict of str to float
        Options phsym uses, by lower-case name (``reltol``, ``gmin``, ``temp``...).
    held : tuple of str
        Storage elements whose initial condition comes from ``.ic``: held
        at it while the DC operating point is solved (as SPICE does).
    analyses : Analyses
        The other analysis and output cards (``.op``, ``.ac``, ``.dc``,
        ``.tf``, ``.four``, ``.meas``, ``.save``, ``.print``, ``.step``, a
        list of ``.temp`` values).
    """

    tran: Optional[Tran] = None
    options: Dict[str, float] = field(default_factory=dict)
    held: tuple = ()
    analyses: Analyses = field(default_factory=Analyses)

    @property
    def x0(self) -> Optional[str]:
        """``"dc"`` when a ``.tran`` card without ``UIC`` asks for the operating point, else None."""
        return "dc" if self.tran is not None and not self.tran.uic else None

    @property
    def thermal_voltage(self) -> Optional[float]:
        """``k T / q`` [V] at ``TEMP`` (None when the deck sets no temperature)."""
        temp = self.options.get("temp")
        return None if temp is None else thermal_voltage(temp)

    def run_defaults(self, source: str, fs: Optional[float], duration: Optional[float], x0) -> tuple:
        """``(fs, duration, x0)`` of a run of this deck: given values win over the ``.tran`` card.

        ``x0`` defaults to ``"dc"`` (a ``.tran`` card without ``UIC``); ``"ic"``
        means the netlist's initial conditions (``None``).

        Parameters
        ----------
        source : str
            The deck's name, for the error message.
        fs, duration : float or None
            Sample rate and duration as given (None: from the card).
        x0 : array_like, dict, str or None
            Initial state as given.

        Raises
        ------
        SimulationInputError
            When ``fs`` is not given and the deck has no ``.tran`` card.
        """
        if fs is None:
            if self.tran is None:
                raise SimulationInputError(f"{source} has no .tran card: give the sample rate (fs, --fs)")
            fs = self.tran.fs
        if duration is None and self.tran is not None:
            duration = self.tran.stop
        if x0 is None:
            x0 = self.x0
        if isinstance(x0, str) and x0.strip().lower() == "ic":
            x0 = None
        return fs, duration, x0

    def simulator_options(self) -> Dict[str, float]:
        """Simulator keyword arguments from the options (``tol``, ``maxit``)."""
        out: Dict[str, float] = {}
        tols = [self.options[k] for k in ("reltol", "abstol", "vntol") if k in self.options]
        if tols:
            out["tol"] = min(tols)
        if "itl4" in self.options:
            out["maxit"] = int(self.options["itl4"])
        return out
