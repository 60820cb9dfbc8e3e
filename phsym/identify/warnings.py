"""Warnings of the estimators."""
from __future__ import annotations

import warnings
from typing import Mapping, Sequence

from ..errors import PhsymWarning

__all__ = ["UnidentifiableParameterWarning", "SchemeMismatchWarning", "check_scheme"]


class UnidentifiableParameterWarning(PhsymWarning):
    """A free parameter is practically unidentifiable from the given outputs.

    Parameters
    ----------
    message : str
        The warning text.
    parameters : sequence of str
        The parameters concerned.

    Attributes
    ----------
    parameters : list of str
        The parameters concerned.
    """

    def __init__(self, message: str, parameters: Sequence[str] = ()):
        super().__init__(message)
        self.parameters = list(parameters)


class SchemeMismatchWarning(PhsymWarning):
    """The data are a simulation made with another scheme than the estimator's: the
    estimate absorbs the difference of the two discretisations (a bias of the
    order of the schemes' error, not of the data's)."""


def check_scheme(info: Mapping[str, object], scheme: str, stiff: str, stacklevel: int = 3) -> None:
    """Warn (:class:`SchemeMismatchWarning`) when simulated data were made with another scheme, or
    another rule for stiff storages, than the fit's.

    Parameters
    ----------
    info : mapping
        The data's ``SimulationResult.info`` (``"scheme"``; ``"stiff"`` when the model has stiff storages).
    scheme : str
        The estimator's canonical scheme name.
    stiff : str
        The estimator's resolved rule for stiff storages (``"backward_euler"`` or ``"scheme"``).
    stacklevel : int
        Of the warning (the caller of ``fit`` by default).
    """
    made = info.get("scheme")
    if made is not None and made != scheme:
        warnings.warn(f"the data were simulated with {made} and are fitted with {scheme}: the estimate absorbs "
                      f"the schemes' difference (give method={made!r})", SchemeMismatchWarning, stacklevel=stacklevel)
        return
    rule = info.get("stiff")
    # under backward Euler both rules step stiff storages alike
    if rule is not None and scheme != "backward_euler" and rule != stiff:
        warnings.warn(f"the data's stiff storages were stepped by the {rule} rule and are fitted by the {stiff} "
                      f"rule: the estimate absorbs the difference (give stiff={rule!r})", SchemeMismatchWarning,
                      stacklevel=stacklevel)
