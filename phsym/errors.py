"""Exception and warning hierarchy of phsym.

Every error phsym raises on purpose derives from :class:`PhsymError`, so a
caller can catch one type; each also derives from the built-in exception a
caller would catch without knowing phsym (as lark's
``ConfigurationError(LarkError, ValueError)``)::

    PhsymError
    ├── NetlistError           (ValueError)    netlist text: file, line, column, hint
    ├── StructureError         (ValueError)    topology or values: the elements involved
    ├── SimulationError        (RuntimeError)  a run failed: step, time, quantity
    │   ├── SimulationInputError (ValueError)  bad arguments of a run (fs, u, x0, method...)
    │   └── SignalError          (KeyError)    unknown signal label of a result
    ├── IdentificationError    (ValueError)    inconsistent data or estimator settings
    ├── DataFileError          (ValueError)    a data file (CSV, WAV) cannot be read: file, line
    ├── UnknownNameError       (KeyError)      a name looked up in a table of names
    ├── MissingDependencyError (ImportError)   an optional extra is not installed
    └── BuildError             (RuntimeError)  an ahead-of-time build failed or is running elsewhere

    PhsymWarning (UserWarning)
    ├── NetlistWarning         suspicious but legal netlist input
    ├── CacheWarning           a damaged cache entry was removed and rebuilt
    └── ClippingWarning        samples beyond full scale were clipped (integer WAV)

Errors about user input carry enough context to fix the input: netlist
errors show file, line, column, the offending text and a hint; structure
errors name the elements involved; simulation errors name the step, the time
and the offending quantity.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

__all__ = [
    "Location",
    "PhsymError",
    "NetlistError",
    "StructureError",
    "SimulationError",
    "SimulationInputError",
    "SignalError",
    "IdentificationError",
    "UnknownNameError",
    "DataFileError",
    "MissingDependencyError",
    "BuildError",
    "ExportError",
    "ResourceError",
    "PhsymWarning",
    "NetlistWarning",
    "SimulationWarning",
    "CacheWarning",
    "ClippingWarning",
]


@dataclass(frozen=True)
class Location:
    """A position in a netlist source.

    Parameters
    ----------
    file : str or None
        Path of the netlist file, ``None`` for text given directly.
    line : int
        1-based line number.
    column : int
        1-based column number.
    text : str
        The full source line (without newline), shown in messages.
    length : int
        Number of characters of the offending token (for the caret marker).
    """

    file: Optional[str]
    line: int
    column: int
    text: str = ""
    length: int = 1

    def describe(self) -> str:
        """Return ``file:line:column`` (``<netlist>`` when there is no file)."""
        return f"{self.file or '<netlist>'}:{self.line}:{self.column}"

    def excerpt(self) -> str:
        """Return the source line with a caret marker under the offending text."""
        if not self.text:
            return ""
        col = max(self.column, 1)
        marker = " " * (col - 1) + "^" * max(1, min(self.length, max(1, len(self.text) - col + 1)))
        return f"    {self.text}\n    {marker}"


class PhsymError(Exception):
    """Base class of every error raised by phsym."""


class NetlistError(PhsymError, ValueError):
    """A netlist cannot be read: syntax, unknown names, bad values.

    Parameters
    ----------
    message : str
        What is wrong.
    location : Location, optional
        Where (file, line, column and the source line).
    hint : str, optional
        What to do about it.

    Attributes
    ----------
    file, line, column : str or None, int or None, int or None
        Position of the problem (``None`` when not known).
    text : str
        The offending text (token), or the source line when no token applies.
    hint : str
        Suggested fix (may be empty).
    """

    def __init__(self, message: str, location: Optional[Location] = None,
                 hint: str = "", text: Optional[str] = None):
        self.message = message
        self.location = location
        self.hint = hint
        self.file = location.file if location else None
        self.line = location.line if location else None
        self.column = location.column if location else None
        if text is None and location is not None:
            seg = location.text[location.column - 1: location.column - 1 + location.length]
            text = seg or location.text
        self.text = text or ""
        super().__init__(self._format())

    def _format(self) -> str:
        head = f"{self.location.describe()}: {self.message}" if self.location else self.message
        parts = [head]
        if self.location is not None and self.location.text:
            parts.append(self.location.excerpt())
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class StructureError(PhsymError, ValueError):
    """The circuit topology or a constitutive law admits no well-posed PHS.

    Parameters
    ----------
    message : str
        What is wrong.
    elements : sequence of str
        Names of the elements involved (also listed in the message).
    hint : str, optional
        Suggested fix.
    location : Location, optional
        Netlist line of the first element named (set by :class:`phsym.Model`).
    """

    def __init__(self, message: str, elements: Iterable[str] = (), hint: str = "",
                 location: Optional[Location] = None):
        self.message = message
        self.elements: tuple[str, ...] = tuple(elements)
        self.hint = hint
        self.location = location
        text = f"{location.describe()}: {message}" if location else message
        if self.elements:
            text += " [elements: " + ", ".join(self.elements) + "]"
        if location is not None and location.text:
            text += "\n" + location.excerpt()
        if hint:
            text += f"\nhint: {hint}"
        super().__init__(text)

    def at(self, location: Optional[Location]) -> "StructureError":
        """The same error placed at ``location`` (the netlist line of its first element)."""
        return StructureError(self.message, self.elements, self.hint, location)


class SimulationError(PhsymError, RuntimeError):
    """A simulation could not proceed (Newton failure, non-finite values, bad input).

    Parameters
    ----------
    message : str
        What went wrong.
    step : int, optional
        Index of the time step (0 is the first step after the initial state).
    time : float, optional
        Time at the end of the failing step, in seconds.
    quantity : str, optional
        Name of the offending quantity (state, unknown or output).
    """

    def __init__(self, message: str, step: Optional[int] = None,
                 time: Optional[float] = None, quantity: Optional[str] = None):
        self.message = message
        self.step = step
        self.time = time
        self.quantity = quantity
        where = []
        if step is not None:
            where.append(f"step {step}")
        if time is not None:
            where.append(f"t = {time:.9g} s")
        if quantity is not None:
            where.append(f"quantity {quantity}")
        text = message + (f" ({', '.join(where)})" if where else "")
        super().__init__(text)


class SimulationInputError(SimulationError, ValueError):
    """An argument of a simulation is invalid (rate, duration, inputs, initial
    state, scheme, options); raised before any step is taken."""


class UnknownNameError(PhsymError, KeyError):
    """A name that is not defined where it is looked up (a :class:`KeyError` too)."""

    def __str__(self) -> str:      # KeyError would print the message quoted
        return Exception.__str__(self)


class SignalError(SimulationError, UnknownNameError):
    """An unknown signal label of a result (a :class:`KeyError` too, as for any mapping)."""

    def __str__(self) -> str:
        return SimulationError.__str__(self)


class IdentificationError(PhsymError, ValueError):
    """Identification input is inconsistent or an estimator cannot proceed."""


class DataFileError(PhsymError, ValueError):
    """A data file (CSV, WAV) cannot be read; the message names the file and line."""


class MissingDependencyError(PhsymError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


class BuildError(PhsymError, RuntimeError):
    """An ahead-of-time build of a generated loop failed (the reason is kept in
    the cache's ``.failed`` file) or another process holds its lock."""


class ExportError(PhsymError, ValueError):
    """A model cannot be exported as C or as a plugin (a construct the C translation does not cover,
    an input or output that is not in the model, a C compiler that is missing or fails)."""


class ResourceError(PhsymError, MemoryError):
    """A job would not fit in this machine's memory; raised before it starts.

    The message gives the estimate, what it was made of and what is available
    (:mod:`phsym.common.budget`), with a hint of what to change.
    """


class PhsymWarning(UserWarning):
    """Base class of phsym warnings."""


class NetlistWarning(PhsymWarning):
    """Suspicious but legal netlist input (e.g. ``1M`` meaning milli)."""


class SimulationWarning(PhsymWarning):
    """A simulation succeeded with help: e.g. steps that Newton could not take
    at the sample rate were subdivided into sub-steps (listed in ``result.info``)."""


class CacheWarning(PhsymWarning):
    """A damaged cache entry (truncated or garbled file) was removed and rebuilt;
    the result is the same as with a clean cache."""


class ClippingWarning(PhsymWarning):
    """Samples beyond full scale were clipped when writing an integer WAV file
    (float WAV files keep physical levels unclipped)."""


def names(items: Sequence[str]) -> str:
    """Join element names for messages."""
    return ", ".join(items)
