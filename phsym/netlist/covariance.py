"""``.covariance`` cards: the uncertainty of a fitted learned law, saved with its netlist.

``phsym fit --save`` writes, after each fitted ``learn(...)`` line, ::

    .covariance D1 level=0.95 dof=47981 excited=-0.627..0.627
    + 1.2e-12 3.4e-13 5.6e-13 ...

the lower triangle, row by row, of the covariance of the element's
coefficients in their order (``a l r w1 ... wK``), the confidence level and
the residual degrees of freedom of the band, and the range of the law's port
variable the fitting data excited.  That is what the confidence band of the
curve (:class:`phsym.identify.learned.LearnedCurve`) needs: ``phsym show``
prints and plots the curve with its band from the saved netlist alone.
The card sets no parameter; the element line's values are the law.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..errors import Location, NetlistError
from .numbers import parse_number
from .source import Assign, Statement, Word

__all__ = ["LawCovariance", "covariance_cards", "covariance_card_text", "USAGE"]

USAGE = (".covariance NAME level=0.95 dof=N excited=LO..HI c11 c21 c22 c31 ... (the lower triangle of the "
         "covariance of NAME's coefficients a l r w1 ... wK, row by row; written by phsym fit --save)")


@dataclass(frozen=True)
class LawCovariance:
    """The ``.covariance`` card of a learned element.

    Attributes
    ----------
    element : str
        The element's name (as its line spells it).
    covariance : ndarray (n, n)
        Covariance of its coefficients (``a l r w1 ... wK``).
    level : float
        Confidence level of the band.
    dof : int
        Residual degrees of freedom of the fit (Student t of the band).
    excited : (float, float)
        Range of the port variable the fitting data visited.
    location : Location or None
        Where the card is.
    """

    element: str
    covariance: np.ndarray = field(repr=False)
    level: float
    dof: int
    excited: Tuple[float, float]
    location: Optional[Location] = None


def _number(w: Word, stmt: Statement) -> float:
    if not isinstance(w, Word) or w.kind != "word":
        raise NetlistError("expected a number", stmt.loc(w), hint=USAGE)
    try:
        return parse_number(w.text, stmt.loc(w), warn=False)
    except NetlistError as exc:
        raise NetlistError(exc.message, stmt.loc(w), hint=USAGE) from None


def _card(stmt: Statement, sizes: Dict[str, Tuple[str, int]]) -> LawCovariance:
    items = list(stmt.items)
    if not items or not isinstance(items[0], Word):
        raise NetlistError(".covariance names no element", stmt.loc(stmt.head), hint=USAGE)
    head = items.pop(0)
    found = sizes.get(head.text.lower())
    if found is None:
        raise NetlistError(f".covariance refers to '{head.text}', which is not a learn(...) element",
                           stmt.loc(head), hint="the card follows the fitted line of a learned law")
    name, n = found
    keys: Dict[str, Assign] = {}
    numbers: List[float] = []
    for it in items:
        if isinstance(it, Assign):
            key = it.key.text.lower()
            if key not in ("level", "dof", "excited") or key in keys:
                raise NetlistError(f"unexpected or repeated keyword '{it.key.text}' in .covariance",
                                   stmt.loc(it), hint=USAGE)
            keys[key] = it
        else:
            numbers.append(_number(it, stmt))
    missing = [k for k in ("level", "dof", "excited") if k not in keys]
    if missing:
        raise NetlistError(f".covariance of {name} lacks {', '.join(k + '=' for k in missing)}",
                           stmt.loc(stmt.head), hint=USAGE)
    level = _number(keys["level"].value, stmt)
    dof = _number(keys["dof"].value, stmt)
    if not 0 < level < 1 or dof < 1 or dof != int(dof):
        raise NetlistError("level must lie in (0, 1) and dof be a whole number >= 1", stmt.loc(keys["level"]),
                           hint=USAGE)
    lo, sep, hi = keys["excited"].value.text.partition("..")
    if not sep:
        raise NetlistError("excited must be written LO..HI", stmt.loc(keys["excited"]), hint=USAGE)
    span = (parse_number(lo, stmt.loc(keys["excited"]), warn=False),
            parse_number(hi, stmt.loc(keys["excited"]), warn=False))
    if span[0] > span[1]:
        raise NetlistError("excited must have LO <= HI", stmt.loc(keys["excited"]), hint=USAGE)
    if len(numbers) != n * (n + 1) // 2:
        raise NetlistError(f".covariance of {name} has {len(numbers)} numbers; its {n} coefficients need "
                           f"{n * (n + 1) // 2} (the lower triangle)", stmt.loc(stmt.head), hint=USAGE)
    C = np.zeros((n, n))
    C[np.tril_indices(n)] = numbers
    C = C + np.tril(C, -1).T
    scale = float(np.max(np.abs(np.diag(C)))) or 1.0
    if not np.all(np.isfinite(C)) or np.min(np.linalg.eigvalsh(C)) < -1e-8 * scale:
        raise NetlistError(f".covariance of {name} is not a covariance (not positive semidefinite)",
                           stmt.loc(stmt.head), hint=USAGE)
    return LawCovariance(name, C, float(level), int(dof), span, stmt.loc(stmt.head))


def covariance_cards(stmts: List[Statement], elements) -> Dict[str, LawCovariance]:
    """The ``.covariance`` cards of a deck, checked against its learned elements.

    Parameters
    ----------
    stmts : list of Statement
        The cards.
    elements : list of ElementSpec
        The deck's elements (the card's element must be a ``learn(...)`` element).

    Returns
    -------
    dict
        Element name -> :class:`LawCovariance`.
    """
    from ..components.learnable import Learnable
    sizes = {}
    for el in elements:
        if el.kind == Learnable.kind:
            sizes[el.name.lower()] = (el.name, Learnable(el, {}).family().knots + 3)
    out: Dict[str, LawCovariance] = {}
    for stmt in stmts:
        card = _card(stmt, sizes)
        if card.element in out:
            raise NetlistError(f"a second .covariance card for {card.element}", stmt.loc(stmt.head),
                               hint="keep one per learned element")
        out[card.element] = card
    return out


def covariance_card_text(element: str, covariance: np.ndarray, level: float, dof: int,
                         excited: Tuple[float, float], per_line: int = 6) -> str:
    """The text of a ``.covariance`` card (continuation lines of ``per_line`` numbers).

    Parameters
    ----------
    element : str
        The learned element.
    covariance : ndarray (n, n)
        Covariance of its coefficients.
    level : float
        Confidence level.
    dof : int
        Residual degrees of freedom.
    excited : (float, float)
        Range of the port variable the data excited.
    per_line : int
        Numbers per continuation line.
    """
    C = np.asarray(covariance, float)
    tri = C[np.tril_indices(C.shape[0])]
    lines = [f".covariance {element} level={level:.10g} dof={int(dof)} excited={excited[0]:.17g}..{excited[1]:.17g}"]
    for k in range(0, len(tri), per_line):
        lines.append("+ " + " ".join(f"{v:.17g}" for v in tri[k:k + per_line]))
    return "\n".join(lines)
