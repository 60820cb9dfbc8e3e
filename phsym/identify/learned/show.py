"""The learned laws of a saved netlist, printed and plotted (``phsym show``).

A netlist written by ``phsym fit --save`` carries each fitted law on its
``learn(...)`` line and its uncertainty in a ``.covariance`` card
(:mod:`phsym.netlist.covariance`); :func:`saved_laws` reads both back as
:class:`~.curve.LearnedCurve` objects, :func:`laws_text` prints each curve
as a table with its confidence band and excited range, :func:`plot_laws`
draws them.
"""
from __future__ import annotations

from typing import Dict, Iterable

from .curve import LearnedCurve

__all__ = ["saved_laws", "laws_text", "plot_laws"]


def saved_laws(model) -> Dict[str, LearnedCurve]:
    """Each learned element of a loaded netlist as a :class:`~.curve.LearnedCurve`.

    Parameters
    ----------
    model : Model
        A loaded model.
    """
    from ...components.learnable import Learnable
    return {el.name: LearnedCurve.from_model(model, el.name) for el in model.netlist.elements
            if el.kind == Learnable.kind}


def laws_text(model, points: int = 11) -> str:
    """The learned laws of ``model``: trust report and the curve as a table (value and band).

    Parameters
    ----------
    model : Model
        A loaded model.
    points : int
        Rows of each table.
    """
    out = []
    for curve in saved_laws(model).values():
        out += [curve.report(), curve.table(points)]
    return "\n".join(out)


def plot_laws(curves: Iterable[LearnedCurve], path: str) -> None:
    """Write a figure of each law with its band and excited range (matplotlib, one panel per law).

    Parameters
    ----------
    curves : iterable of LearnedCurve
        The laws.
    path : str
        Image file (PNG, SVG, PDF by its suffix).
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    curves = list(curves)
    fig, axes = plt.subplots(1, max(len(curves), 1), figsize=(6 * max(len(curves), 1), 4), squeeze=False)
    for ax, curve in zip(axes[0], curves):
        curve.plot(ax=ax)
        ax.set_title(curve.element)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
