"""Warnings of the estimators."""
from __future__ import annotations

from typing import Sequence

from ..errors import PhsymWarning

__all__ = ["UnidentifiableParameterWarning", "SchemeMismatchWarning"]


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
