"""The one table of time-stepping schemes.

Every stage names schemes the same way (the keyword is ``method``
everywhere); this table says what each name means:

===================  =====  ======  =====  ===================================================
name                 theta  inputs  order  energy balance per step
===================  =====  ======  =====  ===================================================
discrete_gradient    1/2    mid     2      exact for any H (Gonzalez / divided differences)
midpoint             1/2    mid     2      exact for quadratic H (= Cayley-Tustin, bilinear)
backward_euler       1      end     1      passive: numerical dissipation >= 0 for convex H
explicit_euler       0      start   1      none (identification of linear models only)
===================  =====  ======  =====  ===================================================

``theta`` is where the step's linear part is evaluated
(``x_theta = x_k + theta (x_{k+1} - x_k)``); ``inputs`` is the input of the
step ``k -> k+1``: ``mid`` = ``(u_k + u_{k+1}) / 2``, ``end`` = ``u_{k+1}``,
``start`` = ``u_k``.  Step quantities (outputs, dissipated power, algebraic
variables) are the values of the step at ``x_theta``.

The bare word ``euler`` is ambiguous (implicit and passive, or explicit and
not) and is refused with a hint.

Stiff storages (``Storage.stiff``: junction charges, modes of picoseconds
to nanoseconds) step by one of :data:`STIFF`: ``backward_euler`` (their
gradient at the step's end whatever the scheme; the numerical dissipation
is booked as ``P_num``), ``scheme`` (as the scheme says), or ``auto``: the
first for steps of at least :data:`STIFF_STEP` (rates up to 1 MHz: audio
and control rates, which resolve none of those modes), the second for
shorter steps (device-level transients, which resolve them):
:func:`stiff_rule`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Type

from ..errors import PhsymError, SimulationInputError

__all__ = ["Scheme", "SCHEMES", "ALIASES", "STIFF", "STIFF_STEP", "NEWTON_SCHEMES", "LINEAR_SCHEMES", "get_scheme",
           "auto_method", "step_inputs", "stiff_rule"]

#: Schemes of the Newton loops (generated and numeric; any model).
NEWTON_SCHEMES = ("discrete_gradient", "midpoint", "backward_euler")
#: Schemes of the linear engine (linear models); explicit Euler is not passive.
LINEAR_SCHEMES = NEWTON_SCHEMES + ("explicit_euler",)

#: How stiff storages step: by the step's length (default), to the end of the step, or as the scheme says.
STIFF = ("auto", "backward_euler", "scheme")
#: Steps at least this long [s] take stiff storages to the end under ``stiff="auto"``.
STIFF_STEP = 1e-6


@dataclass(frozen=True)
class Scheme:
    """A one-step scheme.

    Attributes
    ----------
    name : str
        Canonical name.
    theta : float
        Evaluation point of the linear part within the step.
    inputs : str
        ``"mid"``, ``"end"`` or ``"start"``: the input of a step.
    order : int
        Convergence order.
    energy : str
        What the discrete energy balance is (see the module table).
    """

    name: str
    theta: float
    inputs: str
    order: int
    energy: str


SCHEMES: Dict[str, Scheme] = {s.name: s for s in (
    Scheme("discrete_gradient", 0.5, "mid", 2, "exact"),
    Scheme("midpoint", 0.5, "mid", 2, "exact for quadratic H"),
    Scheme("backward_euler", 1.0, "end", 1, "numerical dissipation >= 0"),
    Scheme("explicit_euler", 0.0, "start", 1, "not passive"),
)}

#: Other spellings accepted for the canonical names.
ALIASES: Dict[str, str] = {
    "dg": "discrete_gradient", "gonzalez": "discrete_gradient",
    "trapezoidal": "midpoint", "tustin": "midpoint", "bilinear": "midpoint", "cayley": "midpoint",
    "implicit_midpoint": "midpoint",
    "be": "backward_euler", "implicit_euler": "backward_euler",
    "forward_euler": "explicit_euler", "fe": "explicit_euler",
}


def get_scheme(method: object, allowed: Optional[Iterable[str]] = None,
               error: Type[PhsymError] = SimulationInputError) -> Scheme:
    """The scheme called ``method`` (any alias; case and ``-`` ignored).

    Parameters
    ----------
    method : str
        A name of :data:`SCHEMES` or :data:`ALIASES`.
    allowed : iterable of str, optional
        Canonical names the caller supports (default: all).
    error : type
        Exception class for an unknown, ambiguous or unsupported name.

    Returns
    -------
    Scheme

    Examples
    --------
    >>> get_scheme("Tustin").name
    'midpoint'
    >>> get_scheme("euler")
    Traceback (most recent call last):
    ...
    phsym.errors.SimulationInputError: method 'euler' is ambiguous: use 'backward_euler' (implicit, passive) or 'explicit_euler'
    """
    names = list(allowed) if allowed is not None else list(SCHEMES)
    if not isinstance(method, str):
        raise error(f"method must be a string (one of {', '.join(names)}), got {method!r}")
    key = method.strip().lower().replace("-", "_").replace(" ", "_")
    if key == "euler":
        raise error(f"method {method!r} is ambiguous: use 'backward_euler' (implicit, passive) "
                    "or 'explicit_euler'")
    key = ALIASES.get(key, key)
    if key not in SCHEMES or key not in names:
        raise error(f"unknown method {method!r}; choose one of {', '.join(names)}")
    return SCHEMES[key]


def auto_method(index2: bool, linear: bool) -> str:
    """The scheme of ``method="auto"``: backward Euler for an index-2 model (its midpoint rings), the
    midpoint rule for a linear one (second order, the same as the discrete gradient there), the
    discrete gradient otherwise.

    Parameters
    ----------
    index2 : bool
        Whether the model has index-2 constraints.
    linear : bool
        Whether every law is linear.

    >>> auto_method(False, True), auto_method(False, False), auto_method(True, False)
    ('midpoint', 'discrete_gradient', 'backward_euler')
    """
    return "backward_euler" if index2 else ("midpoint" if linear else "discrete_gradient")


def step_inputs(U, scheme: Scheme):
    """Input of every step ``k -> k+1`` from grid samples ``U`` (N+1 rows).

    Parameters
    ----------
    U : numpy.ndarray
        Inputs on the grid, one row per sample.
    scheme : Scheme
        The scheme.

    Returns
    -------
    numpy.ndarray
        N rows.
    """
    if scheme.inputs == "mid":
        return 0.5 * (U[:-1] + U[1:])
    return U[1:] if scheme.inputs == "end" else U[:-1]


def stiff_rule(stiff: str, h: float, error: Type[PhsymError] = SimulationInputError) -> str:
    """How stiff storages step at the step ``h``: ``"backward_euler"`` or ``"scheme"``.

    Parameters
    ----------
    stiff : str
        One of :data:`STIFF`.
    h : float
        The step [s].
    error : type
        The :class:`~phsym.errors.PhsymError` raised for an unknown ``stiff``.

    Examples
    --------
    >>> stiff_rule("auto", 1 / 48000), stiff_rule("auto", 1e-9), stiff_rule("scheme", 1 / 48000)
    ('backward_euler', 'scheme', 'scheme')
    """
    if stiff not in STIFF:
        raise error(f"stiff must be one of {', '.join(STIFF)} (got {stiff!r})")
    if stiff == "auto":
        return "backward_euler" if h >= STIFF_STEP else "scheme"
    return stiff
