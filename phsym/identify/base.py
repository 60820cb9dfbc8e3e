"""What every phsym estimator shares: the scikit-learn estimator conventions.

An estimator's constructor only stores its arguments, unchanged, under the
same names (validation happens in ``fit``); :meth:`Estimator.get_params`
reads them back from the constructor's signature, so
``sklearn.base.clone`` and grid searches work without scikit-learn being a
dependency.  ``fit`` returns ``self``; everything learned from data is an
attribute whose name ends in ``_``; ``predict`` and ``score`` need a fitted
estimator (:meth:`Estimator._check_fitted`).
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, List

from ..errors import IdentificationError

__all__ = ["Estimator", "NotFittedError"]


class NotFittedError(IdentificationError, AttributeError):
    """``predict``/``score`` (or a fitted attribute) used before ``fit``."""


class Estimator:
    """Base class of phsym's estimators (scikit-learn conventions).

    Subclasses list every constructor argument as a keyword with a default
    (positional ones too) and store each as ``self.<name>`` without changing
    it.

    Examples
    --------
    >>> class Demo(Estimator):
    ...     def __init__(self, order=2, *, tol=1e-6):
    ...         self.order = order
    ...         self.tol = tol
    >>> Demo(order=3)
    Demo(order=3)
    >>> Demo().set_params(tol=1e-3).get_params()
    {'order': 2, 'tol': 0.001}
    """

    @classmethod
    def _param_names(cls) -> List[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(n for n, p in sig.parameters.items()
                      if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """Constructor arguments by name (scikit-learn convention).

        Parameters
        ----------
        deep : bool
            Accepted for scikit-learn compatibility (no nested estimators).

        Returns
        -------
        dict of str to object
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> "Estimator":
        """Set constructor arguments; returns ``self``.

        Parameters
        ----------
        **params
            Names of :meth:`get_params` and their new values.

        Raises
        ------
        IdentificationError
            For a name that is not a constructor argument.
        """
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise IdentificationError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                          f"valid: {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def _check_fitted(self, attribute: str = "") -> None:
        """Raise :class:`NotFittedError` unless ``fit`` has run.

        Parameters
        ----------
        attribute : str
            A fitted attribute to look for (default: any name ending in ``_``).
        """
        fitted = (hasattr(self, attribute) if attribute else
                  any(k.endswith("_") and not k.startswith("_") for k in vars(self)))
        if not fitted:
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit() first")

    def __repr__(self) -> str:
        sig = inspect.signature(type(self).__init__)
        parts = []
        for name in self._param_names():
            default = sig.parameters[name].default
            value = getattr(self, name, None)
            if default is inspect.Parameter.empty or not _same(value, default):
                parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:       # arrays and other objects without a plain ==
        return False
